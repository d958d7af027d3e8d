"""A diff artifact's public page body (issue 29): the file list with counts, then each file's hunks,
unified and wrapped, built here from the parsed diff with every path and line escaped. It holds no
script at all: the frame it is served in (`templates.frame_csp`) shows it read-only."""

from __future__ import annotations

from html import escape

from hubcore.services.artifacts import diffs

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;padding:12px;color:#1b1f24;background:#fff}
@media (prefers-color-scheme: dark){body{color:#e6e6e6;background:#16181b}.add{background:#12361f!important}
.del{background:#3d1518!important}.hunk{background:#1f2630!important}th,.files li{border-color:#333!important}}
h1{font-size:1.2rem;margin:0 0 8px}ul.files{list-style:none;padding:0;margin:0 0 16px}
.files li{padding:4px 0;border-bottom:1px solid #ddd;display:flex;gap:8px;flex-wrap:wrap}
.files a{color:inherit;overflow-wrap:anywhere}.n-add{color:#1a7f37}.n-del{color:#cf222e}.st{opacity:.7}
section{margin:0 0 20px}h2{font-size:1rem;overflow-wrap:anywhere;margin:0 0 6px}
table{border-collapse:collapse;width:100%;font:12px/1.5 ui-monospace,monospace;table-layout:fixed}
td{vertical-align:top;padding:0 6px}td.no{width:3.2em;text-align:right;opacity:.6;user-select:none}
td.code{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word}
.add{background:#e6ffec}.del{background:#ffebe9}.hunk{background:#ddf4ff}.bin{opacity:.7}
"""
LINES_MAX = 20_000  # beyond this the page says the rest is in the app or the raw text


def _file_row(index: int, f: diffs.FileDiff) -> str:
    moved = f" ← {escape(f.old_path)}" if f.status in ("renamed", "copied") and f.old_path else ""
    return (
        f'<li><a href="#f{index}">{escape(f.path)}</a>{moved} <span class="st">{f.status}</span> '
        f'<span class="n-add">+{f.added}</span> <span class="n-del">−{f.removed}</span></li>'
    )


def _hunk_rows(h: diffs.Hunk) -> list[str]:
    rows = [
        f'<tr class="hunk"><td class="no"></td><td class="no"></td><td class="code">'
        f"@@ -{h.old_start},{h.old_count} +{h.new_start},{h.new_count} @@ {escape(h.section)}</td></tr>"
    ]
    for line in h.lines:
        cls = {"+": "add", "-": "del"}.get(line.kind, "ctx")
        rows.append(
            f'<tr class="{cls}"><td class="no">{line.old or ""}</td><td class="no">{line.new or ""}</td>'
            f'<td class="code">{escape(line.kind + line.text)}</td></tr>'
        )
    return rows


def diff_page(content: str, title: str) -> str:
    parsed = diffs.parse(content, files_max=1 << 30, hunks_max=1 << 30)
    parts, shown = [], 0
    for i, f in enumerate(parsed.files):
        moved = f" (from {escape(f.old_path)})" if f.status in ("renamed", "copied") and f.old_path else ""
        parts.append(f'<section id="f{i}"><h2>{escape(f.path)}{moved}</h2>')
        if f.binary:
            parts.append('<p class="bin">Binary file: not shown.</p>')
        elif shown < LINES_MAX:
            rows = [r for h in f.hunks for r in _hunk_rows(h)]
            shown += len(rows)
            parts.append(f'<table aria-label="{escape(f.path)}">{"".join(rows)}</table>')
        else:
            parts.append("<p>Not shown here: the diff is long. Open the raw text.</p>")
        parts.append("</section>")
    files = "".join(_file_row(i, f) for i, f in enumerate(parsed.files))
    total_add, total_del = sum(f.added for f in parsed.files), sum(f.removed for f in parsed.files)
    return f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{STYLE}</style></head>
<body><main><h1>{escape(title)}</h1>
<p>{len(parsed.files)} files · <span class="n-add">+{total_add}</span> <span class="n-del">−{total_del}</span></p>
<ul class="files">{files}</ul>
{"".join(parts)}</main></body>
</html>
"""
