"""Tests of the polygon checks that protect Box2D."""

from __future__ import annotations

import pytest

from sim_server.core.format.shape_validation import ShapeError, normalize_polygon, polygon_signed_area

SQUARE_CCW = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


def test_counter_clockwise_is_kept() -> None:
    assert normalize_polygon(SQUARE_CCW) == tuple(SQUARE_CCW)


def test_clockwise_is_reversed() -> None:
    result = normalize_polygon(list(reversed(SQUARE_CCW)))
    assert polygon_signed_area(result) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("points", "reason"),
    [
        ([(0, 0), (1, 0), (2, 0)], "no area"),
        ([(0, 0), (1, 0), (1, 1), (0.5, 0.2), (0, 1)], "not convex"),
        ([(0, 0), (3, 0), (0, 1), (1, 1)], "not convex"),
        ([(0, 0), (0.001, 0), (0, 1)], "closer than"),
        ([(0, 0), (1, 0)], "3 to 8 points"),
        ([(i, i * i) for i in range(9)], "3 to 8 points"),
    ],
)
def test_invalid_polygons(points, reason: str) -> None:
    with pytest.raises(ShapeError, match=reason):
        normalize_polygon(points)


def test_pentagram_is_rejected() -> None:
    import math

    star = [(math.cos(a), math.sin(a)) for a in (i * 4 * math.pi / 5 for i in range(5))]
    with pytest.raises(ShapeError, match="not convex"):
        normalize_polygon(star)
