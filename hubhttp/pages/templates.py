"""The public pages' documents: the shell, the sandboxed frame's documents, the preview card.

The shell is the hub's own page (its script and style from `/assets`, no inline script, a CSP that
lets it load nothing else and connect nowhere). The frame holds the untrusted artifact, served with a
CSP of its own (DESIGN section 5): nothing from anywhere but its inline scripts and styles and the
hub's mermaid by its full URL, images only as `data:`/`blob:`, no connections, and the `sandbox
allow-scripts` directive so it stays sandboxed even when opened on its own. Every value an agent
wrote is escaped here.
"""

from __future__ import annotations

import base64
import hashlib
import re
import textwrap
from dataclasses import dataclass
from html import escape

import orjson

from hubhttp.pages.assets import assets
from hubhttp.pages.markdown import Rendered

SHELL_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-src 'self'; "
    "connect-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
CARD_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"


# The bidirectional embeddings, overrides and isolates: one U+202E turns "gnp.exe" round to look like
# "exe.png". In what an agent wrote they are shown as visible marks, never applied (the app's
# `visible` in pwa/js/dom.js does the same).
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with each bidi control shown as a mark (`⟨U+202E⟩`) instead of applied."""
    return BIDI_CONTROLS.sub(lambda m: f"\u27e8U+{ord(m.group()):04X}\u27e9", text)


# Only the hub's own pages may hold a frame (the app's viewer, the public and share pages).
FRAME_ANCESTORS = "frame-ancestors 'self'"


def script_hash(script: str) -> str:
    """A CSP hash source for an inline script's exact text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def frame_csp(origin: str, *, scripts: bool = True, hub_script: str | None = None) -> str:
    """The frame's CSP. `scripts` False: none of the artifact's scripts runs (that is what keeps
    WebRTC off the network, `hubcore.services.artifacts.scripts`): `hub_script` given, only that one
    inline script of the hub's (pinned by its SHA-256: it reports the reader's selection to the
    viewer) runs; without it, `script-src 'none'` and the CSP sandbox without `allow-scripts`."""
    mermaid = f"{origin}/assets/{assets().mermaid}"
    if scripts:
        script_src, sandbox = f"'unsafe-inline' {mermaid}", "sandbox allow-scripts"
    elif hub_script is not None:
        script_src, sandbox = script_hash(hub_script), "sandbox allow-scripts"
    else:
        script_src, sandbox = "'none'", "sandbox"
    return (
        "default-src 'none'; "
        f"script-src {script_src}; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; "
        f"media-src data: blob:; connect-src 'none'; form-action 'none'; base-uri 'none'; {FRAME_ANCESTORS}; "
        f"{sandbox}"
    )


@dataclass(frozen=True)
class Shell:
    artifact_id: str  # or a share page's own key: what the browser files a remembered key under
    title: str
    description: str
    kind: str
    version: int
    versions: list[int]  # offered by the picker; empty for a share link (pinned to one version)
    label: str | None
    updated_at: str
    frame: str  # the frame's address (the share's, or the artifact's with version and pass)
    og_image: str  # absolute: link previews fetch it from elsewhere
    protected: bool
    live: bool  # a draft the agent is still changing in place
    content: str  # the ciphertext of a protected version, else empty (the frame serves the rest)
    envelope: dict[str, object] | None


def fingerprint(ciphertext: str) -> str:
    """What the gate shows of the ciphertext: the first 16 bytes of its SHA-256, in groups of four hex."""
    digest = hashlib.sha256(ciphertext.encode("ascii", "replace")).hexdigest()[:32]
    return " ".join(digest[i : i + 4] for i in range(0, 32, 4))


def _json_script(value: object) -> str:
    # `<` never appears raw, so no value can close the data element or open a comment.
    return orjson.dumps(value).decode().replace("<", "\\u003c").replace("&", "\\u0026")


def _version_line(s: Shell) -> str:
    label = f" · {escape(visible(s.label))}" if s.label else ""
    newest = f" of {max(s.versions)}" if s.versions else ""
    protected = " · protected" if s.protected else ""
    live = " · live draft" if s.live else ""
    return (
        f"Version {s.version}{newest}{label}{live} · {escape(s.kind)}{protected} · updated {escape(s.updated_at[:10])}"
    )


def _picker(s: Shell) -> str:
    if not s.versions:
        return ""
    options = "".join(
        f'<option value="{v}"{" selected" if v == s.version else ""}>Version {v}</option>' for v in reversed(s.versions)
    )
    return f'<label>Version <select id="version-picker" aria-label="Version">{options}</select></label>'


def _gate(s: Shell) -> str:
    if not s.protected:
        return ""
    return f"""<form id="gate">
<h2>This artifact is protected</h2>
<p>Fingerprint <code id="fingerprint">{fingerprint(s.content)}</code></p>
<label for="password">Password</label>
<input type="password" id="password" autocomplete="current-password" required>
<label><input type="checkbox" id="remember"> Remember on this device</label>
<button type="submit" id="unlock">Open</button>
<p id="gate-error" role="alert" hidden></p>
</form>"""


def shell_page(s: Shell) -> str:
    a = assets()
    title, description = escape(visible(s.title)), escape(visible(s.description[:300]))
    data = {
        "key": s.artifact_id,
        "title": visible(s.title),
        "kind": s.kind,
        "version": s.version,
        "frame": s.frame,
        "protected": s.protected,
    }
    if s.protected:
        data |= {"ciphertext": s.content, "envelope": s.envelope}
    return f"""<!doctype html>
<html lang="en" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{title} · Agent Hub</title>
<meta name="description" content="{description}">
<meta property="og:type" content="article">
<meta property="og:title" content="{title}">
<meta property="og:description" content="{description}">
<meta property="og:image" content="{escape(s.og_image)}">
<meta property="og:image:type" content="image/svg+xml">
<meta name="twitter:card" content="summary_large_image">
<meta name="twitter:title" content="{title}">
<meta name="twitter:image" content="{escape(s.og_image)}">
<link rel="stylesheet" href="/assets/{a.viewer_css}">
<script src="/assets/{a.viewer_js}" defer></script>
</head>
<body>
<header class="bar">
<button id="back" type="button" hidden>← Back</button>
<h1 id="title">{title}</h1>
{_picker(s)}
<button id="theme-toggle" type="button" aria-pressed="false">Dark theme</button>
<p id="version-line">{_version_line(s)}</p>
</header>
<main id="stage">
{_gate(s)}
</main>
<script type="application/json" id="artifact-data">{_json_script(data)}</script>
</body>
</html>
"""


MARKDOWN_STYLE = """
:root { color-scheme: light; --bg: #fff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --code: #f6f8fa; }
:root[data-theme="dark"] { color-scheme: dark; --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d;
  --code: #151b23; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.6 system-ui, -apple-system, "Segoe UI", sans-serif; }
article { max-width: 52rem; margin: 0 auto; padding: 1.5rem; overflow-wrap: anywhere; }
a { color: #0969da; } table { border-collapse: collapse; margin: 1rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: .35rem .7rem; } th { background: var(--code); }
pre, code { background: var(--code); border-radius: 6px; font-family: ui-monospace, monospace; font-size: .9em; }
pre { padding: .8rem; overflow-x: auto; } pre code { background: none; }
pre.mermaid { background: #fff; color: #1f2328; text-align: center; }
blockquote { margin: 0; padding: 0 1rem; border-left: 4px solid var(--line); color: var(--muted); }
.markdown-alert { padding: .5rem 1rem; margin: 1rem 0; border-left: 4px solid var(--line); border-radius: 4px; }
.markdown-alert-title { font-weight: 600; margin: 0 0 .25rem; }
.markdown-alert-note { border-color: #0969da; } .markdown-alert-tip { border-color: #1a7f37; }
.markdown-alert-important { border-color: #8250df; } .markdown-alert-warning { border-color: #9a6700; }
.markdown-alert-caution { border-color: #d1242f; }
.task-list-item { list-style: none; } .contains-task-list { padding-left: 1.2rem; }
img { max-width: 100%; }
"""

# Follows the shell's theme toggle. The message carries a word, never markup.
THEME_SCRIPT = """addEventListener("message", function (e) {
  if (e.source === parent && e.data && (e.data.hubTheme === "dark" || e.data.hubTheme === "light"))
    document.documentElement.dataset.theme = e.data.hubTheme;
});"""

# Tells the viewer what the reader selected, so the app can open a comment on that passage: the
# text (cut to 4000 characters: a quote's limit is 2000), and where it sits as fractions of the
# page's width and height (the point anchor of a protected version). The parent cannot read a
# sandboxed frame's selection (docs/decisions.md, issue 25): the frame has to say it. The text goes
# into a form field in the app, never into markup. `installSelection(doc)` is called again for a
# document the protected loader writes in. Interfaces are reached through their own names (own
# properties of the window), which an element's id cannot shadow.
SELECTION_FUNCTION = """function installSelection(doc) {
  var timer = 0;
  var report = function () {
    timer = 0;
    var s = getSelection(), text = s ? String(s).slice(0, 4000) : "", x = 0.5, y = 0.5;
    try {
      var r = s.getRangeAt(0).getBoundingClientRect(), root = doc.scrollingElement;
      x = (r.left + r.width / 2 + scrollX) / Math.max(1, root.scrollWidth);
      y = (r.top + r.height / 2 + scrollY) / Math.max(1, root.scrollHeight);
    } catch (e) { /* no range: the middle */ }
    parent.postMessage({hubSelection: {text: text, x: x, y: y}}, "*");
  };
  EventTarget.prototype.addEventListener.call(doc, "selectionchange", function () {
    if (!timer) timer = setTimeout(report, 250);
  });
}"""
SELECTION_SCRIPT = f"(function () {{\n{SELECTION_FUNCTION}\ninstallSelection(document);\n}})();"

# Mermaid (3.5 MB) is fetched only once a diagram is on the frame's screen or within a screen of it,
# so a page with a diagram paints its text as soon as one without; each diagram is drawn as it comes
# near. `MERMAID` is the hub's copy by its full address (the frame's CSP names it).
MERMAID_SCRIPT = """(function () {
  var pending = [], loading = false, ready = false;
  var draw = function () {
    var nodes = pending.splice(0);
    if (nodes.length) mermaid.run({nodes: nodes});
  };
  var fetchMermaid = function () {
    var s = document.createElement("script");
    s.src = MERMAID;
    s.onload = function () {
      mermaid.initialize({startOnLoad: false, securityLevel: "strict", theme: "default"});
      ready = true;
      draw();
    };
    document.head.appendChild(s);
  };
  // After the frame that paints the text: its parse and compile never hold the first paint back.
  var load = function () {
    if (loading) return;
    loading = true;
    requestAnimationFrame(function () { setTimeout(fetchMermaid, 0); });
  };
  var seen = new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (!e.isIntersecting) return;
      seen.unobserve(e.target);
      pending.push(e.target);
    });
    if (ready) draw(); else if (pending.length) load();
  }, {root: document, rootMargin: "100% 0px"});
  document.querySelectorAll("pre.mermaid").forEach(function (n) { seen.observe(n); });
})();"""

# The frame of a protected version: the shell decrypts, then hands the document over once, and the
# loader writes it in place of itself. Without the human's yes the loader is served with a CSP that
# lets only its own text run (pinned by hash), so no script in the decrypted document runs; with it,
# they run as an HTML artifact's own do. Either way the selection is reported to the viewer.
LOADER_SCRIPT = """(function () {
SELECTION
  var done = false;
  addEventListener("message", function (e) {
    if (done || e.source !== parent || !e.data || typeof e.data.hubDocument !== "string") return;
    done = true;
    document.open(); document.write(e.data.hubDocument); document.close();
    installSelection(document);
  });
  parent.postMessage({hubReady: true}, "*");
})();""".replace("SELECTION", SELECTION_FUNCTION)


def markdown_frame(rendered: Rendered, title: str, origin: str) -> str:
    mermaid = ""
    if rendered.diagrams:
        src = orjson.dumps(f"{origin}/assets/{assets().mermaid}").decode().replace("<", "\\u003c")
        mermaid = f"\n<script>{MERMAID_SCRIPT.replace('MERMAID', src)}</script>"
    return f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(visible(title))}</title><style>{MARKDOWN_STYLE}</style></head>
<body><article class="markdown">
{rendered.html}</article>
<script>{THEME_SCRIPT}</script>
<script>{SELECTION_SCRIPT}</script>{mermaid}
</body>
</html>
"""


def html_frame(content: str) -> str:
    """An HTML artifact as stored, with the hub's selection script after it (after `</html>` the
    parser still puts it in the body)."""
    return f"{content}\n<script>{SELECTION_SCRIPT}</script>"


def loader_frame() -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Protected artifact</title></head>
<body><script>{LOADER_SCRIPT}</script></body></html>
"""


# What a person opening a page that cannot be shown reads: a sentence, never a status code or a
# problem document. A revoked link and one that never existed read the same (no oracle).
MISSING_SHARE = (
    "This link no longer opens anything: it was revoked, or the artifact was deleted. "
    "Ask whoever sent it for a new link."
)
MISSING_ARTIFACT = (
    "There is no artifact at this address: it was deleted, that version is not kept, or the address is wrong."
)
BAD_ADDRESS = "This address asks for a version that is not a whole number: check the link."


def missing_page(sentence: str) -> str:
    """The page shown in place of an artifact's page that cannot be opened."""
    a = assets()
    return f"""<!doctype html>
<html lang="en" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Not available · Agent Hub</title>
<link rel="stylesheet" href="/assets/{a.viewer_css}">
</head>
<body>
<main id="missing">
<h1>Nothing to show here</h1>
<p>{escape(sentence)}</p>
</main>
</body>
</html>
"""


def missing_frame(sentence: str) -> str:
    """The same sentence inside a frame (an old version or a pass that lapsed, opened in the viewer)."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not available</title>
<style>body{{font:16px/1.5 system-ui,sans-serif;margin:1.5rem;color:#1f2328;background:#fff}}</style></head>
<body><p>{escape(sentence)}</p></body></html>
"""


def og_card(title: str, kind: str, version: int, protected: bool) -> str:
    title = visible(title)
    lines = textwrap.wrap(title, 30)[:3] or ["Untitled"]
    if len(textwrap.wrap(title, 30)) > 3:
        lines[-1] = lines[-1][:28] + "…"
    spans = "".join(f'<tspan x="80" dy="{0 if i == 0 else 80}">{escape(line)}</tspan>' for i, line in enumerate(lines))
    tail = f"{kind} · version {version}" + (" · protected" if protected else "")
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="630" viewBox="0 0 1200 630">
<rect width="1200" height="630" fill="#0d1117"/>
<rect x="0" y="0" width="16" height="630" fill="#4493f8"/>
<text x="80" y="110" fill="#9198a1" font-family="system-ui, sans-serif" font-size="34">Agent Hub · artifact</text>
<text x="80" y="250" fill="#e6edf3" font-family="system-ui, sans-serif" font-size="64" font-weight="700">{spans}</text>
<text x="80" y="560" fill="#9198a1" font-family="system-ui, sans-serif" font-size="32">{escape(tail)}</text>
</svg>
"""
