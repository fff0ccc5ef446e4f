"""A PNG of a benchmark result, drawn with Pillow (no plotting library needed).

Three panels: every target's margin (figure against bound, log scale, met at 1 and beyond);
the cost of a step per robot by robot count; and the margins of the main targets over the
earlier results in the same folder, so runs can be compared over time.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from bench.targets import MAX_MARGIN, TARGETS, Result

WIDTH = 1000
PANEL_GAP = 30
MARGIN_LEFT = 250
BAR_HEIGHT = 18
BACKGROUND = (255, 255, 255)
INK = (30, 30, 30)
GRID = (200, 200, 200)
MET = (60, 150, 80)
MISSED = (200, 60, 50)
#: Colours of the history lines, one per target followed over time.
LINE_COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75)]
#: Targets followed over time in the history panel.
HISTORY_TARGETS = (
    "reference scene",
    "office, laser idle",
    "laser throughput",
    "swarm, 1000 robots",
    "10k models streamed vs small",
    "10k models streamed vs whole",
)
#: Smallest margin drawn (log scale).
MIN_MARGIN = 0.1


def _margin_fraction(margin: float) -> float:
    """Where a margin sits on the drawn log scale, 0 (MIN_MARGIN) to 1 (MAX_MARGIN)."""
    clipped = min(max(margin, MIN_MARGIN), MAX_MARGIN)
    return (math.log10(clipped) - math.log10(MIN_MARGIN)) / (math.log10(MAX_MARGIN) - math.log10(MIN_MARGIN))


def _log_x(margin: float, left: int, right: int) -> int:
    return int(left + (right - left) * _margin_fraction(margin))


def _targets_panel(draw: ImageDraw.ImageDraw, font, result: Result, top: int) -> int:
    left, right = MARGIN_LEFT, WIDTH - 120
    draw.text((10, top), "targets: figure against bound (log scale; met at 1 and beyond)", fill=INK, font=font)
    top += 25
    for tick in (0.1, 0.3, 1, 3, 10):
        x = _log_x(tick, left, right)
        draw.line([(x, top), (x, top + len(TARGETS) * (BAR_HEIGHT + 6))], fill=INK if tick == 1 else GRID)
        draw.text((x - 8, top + len(TARGETS) * (BAR_HEIGHT + 6) + 4), f"{tick:g}", fill=INK, font=font)
    for index, target in enumerate(TARGETS):
        y = top + index * (BAR_HEIGHT + 6)
        draw.text((10, y + 3), target.name, fill=INK, font=font)
        margin = target.margin(result)
        value = target.value(result)
        if margin is None or value is None:
            draw.text((left + 5, y + 3), "not measured", fill=MISSED, font=font)
            continue
        colour = MET if target.met(result) else MISSED
        draw.rectangle([(left, y), (_log_x(margin, left, right), y + BAR_HEIGHT)], fill=colour)
        draw.text((right + 8, y + 3), f"{value:.3g} {target.unit}", fill=INK, font=font)
    return top + len(TARGETS) * (BAR_HEIGHT + 6) + 25


def _axes(draw: ImageDraw.ImageDraw, font, box: tuple[int, int, int, int], title: str) -> None:
    left, top, right, bottom = box
    draw.text((10, top - 22), title, fill=INK, font=font)
    draw.rectangle([(left, top), (right, bottom)], outline=INK)


def _scaling_panel(draw: ImageDraw.ImageDraw, font, result: Result, top: int) -> int:
    scaling = result.get("scale", {}).get("scaling")
    box = (MARGIN_LEFT, top + 25, WIDTH - 120, top + 205)
    _axes(draw, font, box, "cost of a step per robot (us) by robot count, in-process")
    if not scaling:
        return box[3] + PANEL_GAP
    left, upper, right, bottom = box
    counts = sorted(int(count) for count in scaling)
    values = [scaling[str(count)]["us_per_robot_step"] for count in counts]
    highest = max(values) * 1.2
    span = max(math.log10(counts[-1]), 1.0)
    points = []
    for count, value in zip(counts, values):
        x = int(left + (right - left) * math.log10(count) / span)
        y = int(bottom - (bottom - upper) * value / highest)
        points.append((x, y))
        draw.ellipse([(x - 4, y - 4), (x + 4, y + 4)], fill=LINE_COLOURS[0])
        draw.text((x - 10, bottom + 4), str(count), fill=INK, font=font)
        draw.text((x + 6, y - 14), f"{value:.1f}", fill=INK, font=font)
    draw.line(points, fill=LINE_COLOURS[0], width=2)
    draw.text((10, upper + 5), f"0 .. {highest:.0f} us", fill=INK, font=font)
    return bottom + PANEL_GAP + 10


def _history_panel(draw: ImageDraw.ImageDraw, font, history: list[Result], top: int) -> int:
    box = (MARGIN_LEFT, top + 25, WIDTH - 120, top + 225)
    _axes(draw, font, box, f"margins over the last {len(history)} results (log scale; met at 1 and beyond)")
    left, upper, right, bottom = box
    by_name = {target.name: target for target in TARGETS}

    def y_of(margin: float) -> int:
        return int(bottom - (bottom - upper) * _margin_fraction(margin))

    draw.line([(left, y_of(1.0)), (right, y_of(1.0))], fill=INK)
    for index, name in enumerate(HISTORY_TARGETS):
        colour = LINE_COLOURS[index % len(LINE_COLOURS)]
        draw.text((10, upper + 5 + 16 * index), name, fill=colour, font=font)
        points = []
        for run, result in enumerate(history):
            margin = by_name[name].margin(result)
            if margin is None:
                continue
            x = left + (right - left) * (run + 0.5) / max(len(history), 1)
            points.append((int(x), y_of(margin)))
        if len(points) > 1:
            draw.line(points, fill=colour, width=2)
        for x, y in points:
            draw.ellipse([(x - 3, y - 3), (x + 3, y + 3)], fill=colour)
    return bottom + PANEL_GAP


def render(result: Result, out: Path, history: list[Result] | None = None) -> Path:
    """Draw ``result`` (and the ``history`` of earlier results, oldest first) into ``out``."""
    history = (history or []) + [result]
    height = 60 + len(TARGETS) * (BAR_HEIGHT + 6) + 60 + 240 + 260
    image = Image.new("RGB", (WIDTH, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    draw.text((10, 8), f"sim_server benchmark: {result.get('machine', '')}, Python {result.get('python', '')}, "
              f"medians of {result.get('repeats', '?')} runs", fill=INK, font=font)
    top = _targets_panel(draw, font, result, 30)
    top = _scaling_panel(draw, font, result, top)
    _history_panel(draw, font, history[-20:], top)
    image.save(out)
    return out


def earlier_results(folder: Path, before: Path) -> list[Result]:
    """The results in ``folder`` older than ``before`` (by their timestamped names), oldest first."""
    results = []
    for path in sorted(folder.glob("*.json")):
        if path.name >= before.name:
            continue
        try:
            results.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue  # a damaged or foreign file does not stop the plot
    return results
