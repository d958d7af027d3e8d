"""Draw the web app's icons: `pwa/icons/icon-192.png`, `icon-512.png`, `icon-maskable-512.png` and
`icon.svg`, from one shape (a hub: a ring with three spokes on a blue square), with the standard
library only (zlib PNG encoder, 4x4 supersampling). Run: `python tools/make_icons.py`.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "pwa" / "icons"
BLUE = (31, 95, 191)
WHITE = (255, 255, 255)
SPOKES = (90.0, 210.0, 330.0)  # degrees, counter-clockwise from the x axis


def inside(x: float, y: float, maskable: bool) -> tuple[float, float, float, float]:
    """The colour at (x, y) in the unit square, as RGBA floats."""
    radius = 0.0 if maskable else 0.18  # a maskable icon is full bleed: the launcher crops it
    dx, dy = max(radius - x, 0.0, x - (1 - radius)), max(radius - y, 0.0, y - (1 - radius))
    if dx * dx + dy * dy > radius * radius:
        return (0.0, 0.0, 0.0, 0.0)
    scale = 0.8 if maskable else 1.0  # keep the glyph inside the maskable safe zone
    cx, cy = (x - 0.5) / scale, (y - 0.5) / scale
    r = math.hypot(cx, cy)
    glyph = abs(r - 0.12) < 0.035
    for deg in SPOKES:
        ex, ey = 0.3 * math.cos(math.radians(deg)), -0.3 * math.sin(math.radians(deg))
        if math.hypot(cx - ex, cy - ey) < 0.075:
            glyph = True
        t = max(0.0, min(1.0, (cx * ex + cy * ey) / (ex * ex + ey * ey)))
        if r > 0.12 and math.hypot(cx - t * ex, cy - t * ey) < 0.025:
            glyph = True
    colour = WHITE if glyph else BLUE
    return (colour[0], colour[1], colour[2], 255.0)


def render(size: int, maskable: bool = False, samples: int = 4) -> bytes:
    rows = bytearray()
    step = 1.0 / (size * samples)
    for py in range(size):
        rows.append(0)  # filter: none
        for px in range(size):
            acc = [0.0, 0.0, 0.0, 0.0]
            for sy in range(samples):
                for sx in range(samples):
                    r, g, b, a = inside((px * samples + sx + 0.5) * step, (py * samples + sy + 0.5) * step, maskable)
                    acc[0] += r * a
                    acc[1] += g * a
                    acc[2] += b * a
                    acc[3] += a
            n = samples * samples
            alpha = acc[3] / n
            colour = [round(c / acc[3]) if acc[3] else 0 for c in acc[:3]]
            rows += bytes([*colour, round(alpha)])
    return png(size, bytes(rows))


def png(size: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


SVG = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">
<rect width="100" height="100" rx="18" fill="rgb{blue}"/>
<g fill="none" stroke="#fff" stroke-width="5"><circle cx="50" cy="50" r="12" stroke-width="7"/>{lines}</g>
<g fill="#fff">{dots}</g>
</svg>
"""


def svg() -> str:
    lines, dots = [], []
    for deg in SPOKES:
        c, s = math.cos(math.radians(deg)), -math.sin(math.radians(deg))
        lines.append(
            f'<line x1="{50 + 12 * c:.1f}" y1="{50 + 12 * s:.1f}" x2="{50 + 30 * c:.1f}" y2="{50 + 30 * s:.1f}"/>'
        )
        dots.append(f'<circle cx="{50 + 30 * c:.1f}" cy="{50 + 30 * s:.1f}" r="7.5"/>')
    return SVG.format(blue=BLUE, lines="".join(lines), dots="".join(dots))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "icon-192.png").write_bytes(render(192))
    (OUT / "icon-512.png").write_bytes(render(512))
    (OUT / "icon-maskable-512.png").write_bytes(render(512, maskable=True))
    (OUT / "icon.svg").write_text(svg(), encoding="utf-8")


if __name__ == "__main__":
    main()
