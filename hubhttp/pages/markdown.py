"""The hub's one markdown renderer for artifact pages (DESIGN section 5).

markdown-it-py with mdit-py-plugins' GFM set: tables, strikethrough, task lists, footnotes, autolinks
and the five `> [!NOTE]` callouts. `html: False` escapes raw HTML and the link validator refuses
`javascript:` and other unsafe links, so untrusted text never becomes markup. A fenced block whose
info is `mermaid` becomes `<pre class="mermaid">` (its text escaped: mermaid reads `textContent`),
which the frame draws with the hub's vendored mermaid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from mdit_py_plugins.gfm import gfm_plugin


@dataclass(frozen=True)
class Rendered:
    html: str
    diagrams: bool  # holds a mermaid block: the frame loads mermaid


@cache
def _parser() -> MarkdownIt:
    """Built once: the parser holds no per-document state (`env` carries it)."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).use(gfm_plugin)
    default = cast(RendererHTML, md.renderer).rules["fence"]

    def fence(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        token = tokens[idx]
        if token.info.strip().split(" ")[0].lower() == "mermaid":
            env["diagrams"] = True
            return f'<pre class="mermaid">{escapeHtml(token.content)}</pre>\n'
        return str(default(tokens, idx, options, env))

    md.add_render_rule("fence", fence)
    return md


def render(text: str) -> Rendered:
    env: dict[str, Any] = {}
    html = _parser().render(text, env)
    return Rendered(html, bool(env.get("diagrams")))
