"""The compiled segment rasterizer: where it draws, how it blends, what it skips."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim_server.rendering.raster import draw_segments

#: Pixels are world units: column = x, row = y.
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0])
WHITE = (255, 255, 255, 255)


def drawn(canvas: np.ndarray) -> set[tuple[int, int]]:
    rows, columns = np.nonzero(canvas.any(axis=2))
    return set(zip(rows.tolist(), columns.tolist()))


def connected(pixels: set[tuple[int, int]]) -> bool:
    """Whether the pixels form one 8-connected piece."""
    if not pixels:
        return True
    start = next(iter(pixels))
    seen, todo = {start}, [start]
    while todo:
        row, column = todo.pop()
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                near = (row + dr, column + dc)
                if near in pixels and near not in seen:
                    seen.add(near)
                    todo.append(near)
    return len(seen) == len(pixels)


def distance_to_segment(px: float, py: float, x0: float, y0: float, x1: float, y1: float) -> float:
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0.0 else min(1.0, max(0.0, ((px - x0) * dx + (py - y0) * dy) / length2))
    return math.hypot(px - (x0 + t * dx), py - (y0 + t * dy))


def test_a_segment_covers_the_pixels_it_crosses() -> None:
    canvas = np.zeros((10, 20, 3), dtype=np.uint8)
    count = draw_segments(canvas, np.array([(2.5, 4.5, 15.5, 4.5)]), IDENTITY, (255, 0, 0, 255))
    assert drawn(canvas) == {(4, column) for column in range(2, 16)}
    assert count == 14
    assert tuple(canvas[4, 2]) == (255, 0, 0)


@pytest.mark.parametrize("seed", range(20))
def test_generated_segments_are_unbroken_and_close(seed: int) -> None:
    """Random segments (some far beyond the image): every pixel drawn is within a pixel's
    diagonal of the segment, the pixels form one piece, and both ends inside are drawn."""
    rng = np.random.default_rng(seed)
    for _ in range(10):
        reach = rng.choice([30.0, 1e3, 1e7])
        x0, y0, x1, y1 = rng.uniform(-reach, reach, 4) + 20.0
        canvas = np.zeros((40, 40, 3), dtype=np.uint8)
        draw_segments(canvas, np.array([(x0, y0, x1, y1)]), IDENTITY, WHITE)
        pixels = drawn(canvas)
        assert connected(pixels)
        for row, column in pixels:
            assert distance_to_segment(column + 0.5, row + 0.5, x0, y0, x1, y1) <= math.sqrt(0.5) + 1e-6
        for x, y in ((x0, y0), (x1, y1)):
            if 0 <= x < 40 and 0 <= y < 40:
                assert (int(y), int(x)) in pixels


def test_a_long_segment_through_the_picture_has_no_gaps() -> None:
    canvas = np.zeros((50, 50, 3), dtype=np.uint8)
    draw_segments(canvas, np.array([(-1e9, -1e9 + 0.5, 1e9, 1e9 + 0.5)]), IDENTITY, WHITE)
    assert all((row, row) in drawn(canvas) or (row, row - 1) in drawn(canvas) for row in range(1, 50))


def test_a_translucent_colour_is_blended_once_per_pixel() -> None:
    """Overlapping segments of one call blend each pixel once; a second call blends again."""
    canvas = np.zeros((5, 5, 3), dtype=np.uint8)
    crossing = np.array([(0.5, 2.5, 4.5, 2.5), (2.5, 0.5, 2.5, 4.5), (0.5, 2.5, 4.5, 2.5)])
    draw_segments(canvas, crossing, IDENTITY, (200, 100, 0, 128))
    alpha = 128 / 255
    assert tuple(canvas[2, 2]) == tuple(round(v * alpha) for v in (200, 100, 0))
    assert tuple(canvas[2, 0]) == tuple(canvas[2, 2])
    draw_segments(canvas, crossing[:1], IDENTITY, (200, 100, 0, 128))
    assert canvas[2, 2, 0] == round(200 * alpha + 200 * alpha * (1 - alpha))


def test_the_transform_maps_the_world_to_pixels() -> None:
    """column = 10 x + 5, row = -10 y + 5: the world's point (0.1, 0.2) is pixel (6, 3)."""
    canvas = np.zeros((10, 10, 3), dtype=np.uint8)
    draw_segments(canvas, np.array([(0.1, 0.2, 0.1, 0.2)]), np.array([10.0, 0.0, 5.0, 0.0, -10.0, 5.0]), WHITE)
    assert drawn(canvas) == {(3, 6)}


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_segments_and_segments_outside_are_skipped(bad: float) -> None:
    canvas = np.zeros((10, 10, 3), dtype=np.uint8)
    segments = np.array([(bad, 1.0, 5.0, 5.0), (1.0, 1.0, 5.0, bad), (20.0, 20.0, 30.0, 30.0), (-5.0, 3.0, -1.5, 3.0)])
    assert draw_segments(canvas, segments, IDENTITY, WHITE) == 0
    assert not canvas.any()
    assert draw_segments(canvas, np.empty((0, 4)), IDENTITY, WHITE) == 0
