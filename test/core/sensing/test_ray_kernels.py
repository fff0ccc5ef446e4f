"""The ray caster's grid of moving shapes: sized by the shapes it holds, not by the range."""

from __future__ import annotations

import numpy as np
import pytest

from sim_server.core.sensing.ray_kernels import MAX_MOVING_GRID_SIDE, _moving_grid


@pytest.mark.parametrize("count", [1, 10, 100, 1000, 100_000])
@pytest.mark.parametrize("cell", [1e-300, 1e-3, 0.05, 5.0])
def test_the_moving_grid_has_a_few_cells_a_shape_whatever_the_sensors_range(count: int, cell: float) -> None:
    rng = np.random.default_rng(count)
    circles = np.column_stack([rng.uniform(0, 100, (count, 2)), np.full(count, 0.2)])
    polygons, radii = np.zeros((0, 8, 2)), np.zeros(0)
    x0, y0, grid_cell, nx, ny, starts, items = _moving_grid(polygons, radii, circles, cell)
    assert nx * ny <= max(4 * count + 4 * int(np.sqrt(count)) + 1, 4)  # a 5 cm sensor built 10^6 cells a cast
    assert nx <= MAX_MOVING_GRID_SIDE + 1 and ny <= MAX_MOVING_GRID_SIDE + 1
    assert grid_cell >= cell
    # every shape is listed in the cell of its centre
    for index in rng.choice(count, min(count, 50), replace=False):
        ix = int((circles[index, 0] - x0) // grid_cell)
        iy = int((circles[index, 1] - y0) // grid_cell)
        c = iy * nx + ix
        assert index in items[starts[c]:starts[c + 1]]
