"""The compiled segment rasterizer: where it draws, how it blends, what it skips."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim_server.core.pictures.raster import IDENTITY, Shapes, draw_segments

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


FILL = (0, 0, 255, 255)
LINE = (255, 255, 0, 255)


def shapes_picture(add, size: int = 40) -> np.ndarray:
    canvas = np.zeros((size, size, 3), dtype=np.uint8)
    shapes = Shapes()
    add(shapes)
    shapes.draw(canvas, IDENTITY)
    return canvas


def inside_convex(px: float, py: float, corners: np.ndarray) -> float:
    """The signed distance inside a counter-clockwise convex polygon (negative outside)."""
    distances = []
    for (x0, y0), (x1, y1) in zip(corners, np.roll(corners, -1, axis=0)):
        length = math.hypot(x1 - x0, y1 - y0)
        distances.append(((x1 - x0) * (py - y0) - (y1 - y0) * (px - x0)) / length)
    return min(distances)


@pytest.mark.parametrize("seed", range(20))
def test_generated_polygons_cover_their_inside_and_nothing_far_outside(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(5):
        angles = np.sort(rng.uniform(0, 2 * math.pi, rng.integers(3, 9)))
        radius = rng.choice([0.4, 5.0, 30.0, 1e6])
        centre = rng.uniform(-10, 50, 2)
        corners = centre + radius * np.column_stack((np.cos(angles), np.sin(angles)))
        picture = shapes_picture(lambda s: s.polygon(corners, FILL, LINE))
        for row in range(40):
            for column in range(40):
                depth = inside_convex(column + 0.5, row + 0.5, corners)
                colour = tuple(picture[row, column])
                if depth > 1e-6:
                    assert colour in (FILL[:3], LINE[:3]), (row, column)
                elif depth < -1.0:
                    assert colour == (0, 0, 0), (row, column)


@pytest.mark.parametrize("seed", range(10))
def test_generated_ellipses_cover_their_inside_with_an_outline(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(5):
        cx, cy = rng.uniform(-10, 50, 2)
        radius = rng.choice([0.3, 3.0, 15.0, 1e6])
        picture = shapes_picture(lambda s: s.circle(cx, cy, radius, FILL, LINE))
        for row in range(40):
            for column in range(40):
                distance = math.hypot(column + 0.5 - cx, row + 0.5 - cy)
                colour = tuple(picture[row, column])
                if distance < radius - 1.5:
                    assert colour == FILL[:3], (row, column)
                elif distance < radius:
                    assert colour in (FILL[:3], LINE[:3])
                elif distance > radius + 1.0:
                    assert colour == (0, 0, 0)


def test_shapes_smaller_than_a_pixel_still_show() -> None:
    picture = shapes_picture(lambda s: s.circle(10.3, 20.6, 0.2, FILL, LINE))
    assert drawn(picture) == {(20, 10)} and tuple(picture[20, 10]) == LINE[:3]
    sliver = shapes_picture(lambda s: s.polygon([(5.2, 5.2), (30.0, 5.3), (30.0, 5.35)], FILL, LINE))
    assert {column for _, column in drawn(sliver)} == set(range(5, 31))


def test_a_view_inside_a_huge_shape_is_all_fill() -> None:
    for add in (lambda s: s.circle(20.0, 20.0, 1e12, FILL, LINE),
                lambda s: s.polygon([(-1e12, -1e12), (1e12, -1e12), (0.0, 1e12)], FILL, LINE)):
        picture = shapes_picture(add)
        assert (picture == FILL[:3]).all()


def test_a_translucent_fill_is_blended_and_the_outline_opaque() -> None:
    canvas = np.full((20, 20, 3), 100, dtype=np.uint8)
    shapes = Shapes()
    shapes.polygon([(2.0, 2.0), (18.0, 2.0), (18.0, 18.0), (2.0, 18.0)], (200, 0, 0, 128), (200, 0, 0, 255))
    shapes.draw(canvas, IDENTITY)
    alpha = 128 / 255
    assert tuple(canvas[10, 10]) == tuple(round(v) for v in (100 + (200 - 100) * alpha, 100 * (1 - alpha), 100 * (1 - alpha)))
    assert tuple(canvas[2, 10]) == (200, 0, 0) and tuple(canvas[0, 0]) == (100, 100, 100)


def test_non_finite_shapes_draw_nothing() -> None:
    for add in (lambda s: s.circle(math.nan, 1.0, 2.0, FILL, LINE), lambda s: s.circle(1.0, 1.0, math.inf, FILL, LINE),
                lambda s: s.polygon([(0.0, 0.0), (math.inf, 1.0), (1.0, 5.0)], FILL, LINE)):
        assert not shapes_picture(add).any()
