"""Who is near whom: points sorted into a grid of square cells, for range queries in compiled code.

The crowd models look at the agents within some range of each agent (10 m for the social force,
as pedsim; RVO2's ``neighborDist`` for ORCA). Testing every pair costs N^2: a thousand agents make
a million pairs. A :class:`CellGrid` sorts the points into cells of at least the range (a counting
sort, O(N)), so that a query looks only at the 3 x 3 cells around a point.

The grid covers the points' bounding box. Its cell count is bounded (:data:`CELLS_PER_POINT`
cells a point, at most): a few points kilometres apart get larger cells, not a huge array.
"""

from __future__ import annotations

import math

import numpy as np

from sim_server.core.compiled import jit

#: Most cells of a grid per point it holds (and at least :data:`MIN_CELLS`): bounds the grid's
#: memory whatever the spread of the points.
CELLS_PER_POINT = 4
MIN_CELLS = 64


@jit
def fit_cells(width, height, cell, max_cells):  # pragma: no cover - compiled
    """(cell, nx, ny): square cells of side ``cell`` (m), doubled until a ``width`` x
    ``height`` (m) box needs at most ``max_cells`` of them."""
    while True:
        nx = int(width / cell) + 1
        ny = int(height / cell) + 1
        if nx * ny <= max_cells:
            return cell, nx, ny
        cell *= 2.0


@jit
def build_grid(points, count, cell):  # pragma: no cover - compiled
    """Sort ``points[:count]`` (x, y; m) into square cells of side at least ``cell`` (m).

    Returns ``(x0, y0, cell, nx, ny, starts, items)``: the grid's corner and cell side (m),
    its size in cells, and the points of cell ``(ix, iy)`` as
    ``items[starts[iy * nx + ix]:starts[iy * nx + ix + 1]]``, in index order.
    """
    if count == 0:
        return 0.0, 0.0, cell, 1, 1, np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int64)
    x0, y0 = points[0, 0], points[0, 1]
    x1, y1 = x0, y0
    for i in range(1, count):
        x0 = min(x0, points[i, 0])
        y0 = min(y0, points[i, 1])
        x1 = max(x1, points[i, 0])
        y1 = max(y1, points[i, 1])
    cell, nx, ny = fit_cells(x1 - x0, y1 - y0, cell, max(MIN_CELLS, CELLS_PER_POINT * count))
    starts = np.zeros(nx * ny + 1, dtype=np.int64)
    cells = np.empty(count, dtype=np.int64)
    for i in range(count):
        ix = min(int((points[i, 0] - x0) / cell), nx - 1)
        iy = min(int((points[i, 1] - y0) / cell), ny - 1)
        cells[i] = iy * nx + ix
        starts[cells[i] + 1] += 1
    for c in range(nx * ny):
        starts[c + 1] += starts[c]
    fill = starts[:-1].copy()
    items = np.empty(count, dtype=np.int64)
    for i in range(count):
        items[fill[cells[i]]] = i
        fill[cells[i]] += 1
    return x0, y0, cell, nx, ny, starts, items


@jit
def cell_span(x, y, reach, x0, y0, cell, nx, ny):  # pragma: no cover - compiled
    """The cells (ix_low, ix_high, iy_low, iy_high, inclusive) that a disc of radius ``reach``
    (m) about (x, y) may touch."""
    ix_low = max(int(math.floor((x - reach - x0) / cell)), 0)
    ix_high = min(int(math.floor((x + reach - x0) / cell)), nx - 1)
    iy_low = max(int(math.floor((y - reach - y0) / cell)), 0)
    iy_high = min(int(math.floor((y + reach - y0) / cell)), ny - 1)
    return ix_low, ix_high, iy_low, iy_high


@jit
def nearest_within(points, x, y, self_index, reach, x0, y0, cell, nx, ny, starts, items, limit, out_index, out_distance_sq,
                   copies, copy):  # pragma: no cover - compiled
    """The at most ``limit`` points nearest to (x, y) within ``reach`` (m), ``self_index``
    excluded and only those whose ``copies`` entry is ``copy``, nearest first, into
    ``out_index`` and ``out_distance_sq``; returns their count. Ties keep the lower index first
    (the order does not depend on the grid)."""
    found = 0
    reach_sq = reach * reach
    ix_low, ix_high, iy_low, iy_high = cell_span(x, y, reach, x0, y0, cell, nx, ny)
    for iy in range(iy_low, iy_high + 1):
        for ix in range(ix_low, ix_high + 1):
            c = iy * nx + ix
            for k in range(starts[c], starts[c + 1]):
                j = items[k]
                if j == self_index or copies[j] != copy:
                    continue
                dx = points[j, 0] - x
                dy = points[j, 1] - y
                distance_sq = dx * dx + dy * dy
                if distance_sq > reach_sq:
                    continue
                if found == limit and (
                    distance_sq > out_distance_sq[found - 1]
                    or (distance_sq == out_distance_sq[found - 1] and j > out_index[found - 1])
                ):
                    continue
                # Insertion into the sorted list (limit is small: RVO2's maxNeighbors).
                position = found if found < limit else limit - 1
                while position > 0 and (
                    out_distance_sq[position - 1] > distance_sq
                    or (out_distance_sq[position - 1] == distance_sq and out_index[position - 1] > j)
                ):
                    if position < limit:
                        out_distance_sq[position] = out_distance_sq[position - 1]
                        out_index[position] = out_index[position - 1]
                    position -= 1
                out_distance_sq[position] = distance_sq
                out_index[position] = j
                if found < limit:
                    found += 1
    return found


@jit
def nearest_centres(points, centres, out):  # pragma: no cover - compiled
    """``out[i]`` = the index of the centre (x, y; m) nearest to ``points[i]`` (the lower index
    on a tie)."""
    for i in range(points.shape[0]):
        best = 0
        best_sq = math.inf
        for c in range(centres.shape[0]):
            dx = points[i, 0] - centres[c, 0]
            dy = points[i, 1] - centres[c, 1]
            distance_sq = dx * dx + dy * dy
            if distance_sq < best_sq:
                best_sq = distance_sq
                best = c
        out[i] = best
