"""``plot.panels`` drawn as a small SVG document, for the playground (no matplotlib in a browser).

The same panels as ``schedlang plot`` (one per schedule name, the files overlaid, a
difference panel ``A - B`` for two files, breakpoints dotted), drawn with polylines
whose coordinates are rounded to 0.1 px, so the text is deterministic for the same
values.  Every piece of text that reaches the document goes through ``_text`` (XML
escaping): labels carry file and schedule names.
"""

from __future__ import annotations

import html
import math

from .plot import Panel

WIDTH = 640
PANEL_HEIGHT, DIFFERENCE_HEIGHT = 190, 100
LEFT, RIGHT, TOP, GAP, BOTTOM = 72, 16, 40, 30, 34
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _text(value) -> str:
    return html.escape(str(value), quote=True)


def _number(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def _label(v: float) -> str:
    return f"{v:.3g}"


def ticks(first, last, most: int = 7) -> list[int]:
    """Round steps from ``first`` to ``last`` to label the step axis: multiples of 1, 2 or 5
    times a power of ten, as many as fit in ``most`` (a reader finds step 40k, not 41_350)."""
    first, last = int(first), int(last)
    if last <= first:
        return [first]
    stride = 1
    while True:
        for factor in (1, 2, 5):
            if (last - first) // (stride * factor) + 1 <= most:
                stride *= factor
                return list(range(-(-first // stride) * stride, last + 1, stride))
        stride *= 10


def step_label(step: int) -> str:
    """A step as an axis shows it: 500, 2.5k, 150k, 1.2M."""
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if abs(step) >= size:
            return f"{step / size:g}{suffix}"
    return str(step)


def svg(panel_list: list[Panel], steps, heading: str) -> str:
    """The panels over ``steps`` as one ``<svg>`` element (text)."""
    steps = list(steps)
    heights = [DIFFERENCE_HEIGHT if p.difference else PANEL_HEIGHT for p in panel_list]
    total = TOP + sum(heights) + GAP * (len(panel_list) - 1) + BOTTOM
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="schedlang-plot" viewBox="0 0 {WIDTH} {total}" '
           f'width="{WIDTH}" height="{total}" font-family="sans-serif" font-size="11">',
           f'<text x="{WIDTH // 2}" y="15" text-anchor="middle" font-size="12" style="white-space: pre">'
           f'{_text(heading)}</text>']
    first, last = (steps[0], steps[-1]) if steps else (0, 1)
    span_x = (last - first) or 1
    inner = WIDTH - LEFT - RIGHT

    def x_of(step):
        return LEFT + (step - first) / span_x * inner

    y0 = TOP
    for panel, height in zip(panel_list, heights):
        out += _panel(panel, steps, x_of, y0, height)
        y0 += height + GAP
    bottom = y0 - GAP
    for tick in ticks(first, last):
        x = _number(x_of(tick))
        out.append(f'<line x1="{x}" y1="{bottom}" x2="{x}" y2="{bottom + 4}" stroke="#999"/>')
        out.append(f'<text class="x-tick" x="{x}" y="{bottom + 15}" text-anchor="middle">'
                   f'{_text(step_label(tick))}</text>')
    out.append(f'<text x="{LEFT + inner // 2}" y="{bottom + 28}" text-anchor="middle">step</text>')
    out.append("</svg>")
    return "\n".join(out)


def _panel(panel: Panel, steps, x_of, top: int, height: int) -> list[str]:
    values = [v for _, vs in panel.lines for v in vs if math.isfinite(v)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if high == low:  # a constant: centre it
        low, high = low - (abs(low) or 1.0) * 0.5, high + (abs(high) or 1.0) * 0.5
    pad = (high - low) * 0.05
    low, high = low - pad, high + pad
    right = WIDTH - RIGHT

    def y_of(v):
        return top + (high - v) / (high - low) * height

    out = [f'<g class="panel" data-title="{_text(panel.title)}">',
           f'<rect x="{LEFT}" y="{top}" width="{right - LEFT}" height="{height}" fill="none" stroke="#999"/>',
           f'<text x="{LEFT}" y="{top - 6}" font-weight="bold">{_text(panel.title)}</text>']
    for v in (high - pad, (high + low) / 2, low + pad):
        y = _number(y_of(v))
        out.append(f'<line x1="{LEFT - 4}" y1="{y}" x2="{LEFT}" y2="{y}" stroke="#999"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y}" dy="0.35em" text-anchor="end">{_text(_label(v))}</text>')
    for b in panel.breakpoints:
        if steps and steps[0] <= b <= steps[-1]:
            x = _number(x_of(b))
            out.append(f'<line class="breakpoint" x1="{x}" y1="{top}" x2="{x}" y2="{top + height}" '
                       'stroke="#888" stroke-dasharray="2,3"/>')
    for k, (label, vs) in enumerate(panel.lines):
        color = "#000" if panel.difference else COLORS[k % len(COLORS)]
        dash = ' stroke-dasharray="6,4"' if k else ""
        for run in _runs(steps, vs):
            points = " ".join(f"{_number(x_of(s))},{_number(y_of(v))}" for s, v in run)
            out.append(f'<polyline class="line" data-label="{_text(label)}" fill="none" stroke="{color}" '
                       f'stroke-width="1.5"{dash} points="{points}"/>')
        if len(panel.lines) > 1:  # the legend, above the frame: one entry per line, from the right
            x, y = right - 130 * (len(panel.lines) - k), top - 6
            out.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 20}" y2="{y - 4}" '
                       f'stroke="{color}" stroke-width="1.5"{dash}/>')
            out.append(f'<text x="{x + 24}" y="{y}">{_text(label)}</text>')
    out.append("</g>")
    return out


def _runs(steps, values):
    """Consecutive (step, value) pairs with finite values: a NaN (a log hole) breaks the line."""
    run = []
    for s, v in zip(steps, values):
        if math.isfinite(v):
            run.append((s, v))
        elif run:
            yield run
            run = []
    if run:
        yield run
