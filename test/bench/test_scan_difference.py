"""The reference's wall model of bench.scan_difference on a grid whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from bench.scan_difference import pixel_boundary_walls, reference_walls

RESOLUTION = 0.5


def _room(walls: np.ndarray) -> tuple[float, float, float, float]:
    """min x, min y, max x, max y of the walls strictly inside the 4 m x 3.5 m image (the room's)."""
    xs, ys = walls[:, [0, 2]], walls[:, [1, 3]]
    inside = (xs.min(axis=1) > 0.0) & (xs.max(axis=1) < 4.0) & (ys.min(axis=1) > 0.0) & (ys.max(axis=1) < 3.5)
    xs, ys = xs[inside], ys[inside]
    return float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())


def test_the_reference_loses_one_pixel_of_free_space_on_the_plus_x_and_minus_y_sides() -> None:
    occupied = np.ones((7, 8), dtype=bool)
    occupied[2:5, 2:6] = False  # free: columns 2-5, rows 2-4 (rows count down from the top)
    ours = pixel_boundary_walls(occupied, RESOLUTION, (0.0, 0.0))
    theirs = reference_walls(occupied, RESOLUTION, (0.0, 0.0))
    # Ours: x from column 2 to the end of column 5, y from the bottom of row 4 to the top of row 2.
    assert _room(ours) == pytest.approx((1.0, 1.0, 3.0, 2.5))
    # The reference's: a pixel less on the right (+x) and at the bottom (-y).
    assert _room(theirs) == pytest.approx((1.0, 1.5, 2.5, 2.5))
