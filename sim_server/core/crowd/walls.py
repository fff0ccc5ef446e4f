"""The walls pedestrians keep away from: wall segments indexed in a grid, nearest-point queries
and the rule that no pedestrian steps into a wall.

A :class:`WallIndex` holds segments ``x1, y1, x2, y2`` (m, world frame: the loaded pieces of the
layers a crowd walks in) sorted into square cells by their bounding boxes. The compiled queries
look only at the cells within reach of a point and mark the segments they have seen, so a
segment spanning many cells counts once.
"""

from __future__ import annotations

import math

import numpy as np

from sim_server.core.compiled import jit, typed
from sim_server.core.crowd.neighbors import cell_span

#: Side (m) of the index's cells (walls are queried within a few metres).
WALL_CELL = 1.0
#: Most cells of one index: larger extents get larger cells.
MAX_WALL_CELLS = 4_000_000


@jit
def _box_cells(segments, i, x0, y0, cell, nx, ny):  # pragma: no cover - compiled
    """The cells (ix_low, ix_high, iy_low, iy_high) of segment ``i``'s bounding box."""
    ix0 = min(int((min(segments[i, 0], segments[i, 2]) - x0) / cell), nx - 1)
    ix1 = min(int((max(segments[i, 0], segments[i, 2]) - x0) / cell), nx - 1)
    iy0 = min(int((min(segments[i, 1], segments[i, 3]) - y0) / cell), ny - 1)
    iy1 = min(int((max(segments[i, 1], segments[i, 3]) - y0) / cell), ny - 1)
    return ix0, ix1, iy0, iy1


@jit
def _index_segments(segments, cell, max_cells):  # pragma: no cover - compiled
    n = segments.shape[0]
    x0 = min(segments[0, 0], segments[0, 2])
    y0 = min(segments[0, 1], segments[0, 3])
    x1, y1 = x0, y0
    for i in range(n):
        x0 = min(x0, min(segments[i, 0], segments[i, 2]))
        y0 = min(y0, min(segments[i, 1], segments[i, 3]))
        x1 = max(x1, max(segments[i, 0], segments[i, 2]))
        y1 = max(y1, max(segments[i, 1], segments[i, 3]))
    while True:
        nx = int((x1 - x0) / cell) + 1
        ny = int((y1 - y0) / cell) + 1
        if nx * ny <= max_cells:
            break
        cell *= 2.0
    counts = np.zeros(nx * ny + 1, dtype=np.int64)
    for i in range(n):
        ix0, ix1, iy0, iy1 = _box_cells(segments, i, x0, y0, cell, nx, ny)
        for iy in range(iy0, iy1 + 1):
            for ix in range(ix0, ix1 + 1):
                counts[iy * nx + ix + 1] += 1
    for c in range(nx * ny):
        counts[c + 1] += counts[c]
    items = np.empty(counts[nx * ny], dtype=np.int64)
    fill = counts[:-1].copy()
    for i in range(n):
        ix0, ix1, iy0, iy1 = _box_cells(segments, i, x0, y0, cell, nx, ny)
        for iy in range(iy0, iy1 + 1):
            for ix in range(ix0, ix1 + 1):
                c = iy * nx + ix
                items[fill[c]] = i
                fill[c] += 1
    return x0, y0, cell, nx, ny, counts, items


class WallIndex:
    """Wall segments (N, 4: x1, y1, x2, y2 in m, world frame) in a grid of cells.

    Attributes:
        segments: the segments.
        x0, y0, cell, nx, ny: the grid's corner (m), cell side (m) and size in cells.
        starts, items: segment ``items[k]`` for ``starts[c] <= k < starts[c + 1]`` overlaps cell
            ``c = iy * nx + ix`` (by its bounding box).
    """

    def __init__(self, segments: np.ndarray) -> None:
        self.segments = typed(np.asarray(segments, dtype=np.float64).reshape(-1, 4), np.float64)
        if len(self.segments):
            x0, y0, cell, nx, ny, starts, items = _index_segments(self.segments, WALL_CELL, MAX_WALL_CELLS)
        else:
            x0, y0, cell, nx, ny = 0.0, 0.0, WALL_CELL, 1, 1
            starts, items = np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int64)
        self.x0, self.y0, self.cell, self.nx, self.ny = float(x0), float(y0), float(cell), int(nx), int(ny)
        self.starts, self.items = starts, items
        #: Scratch of the compiled queries: the query that last saw each segment.
        self.stamps = np.zeros(len(self.segments), dtype=np.int64)

    def arrays(self) -> tuple:
        """What the compiled kernels take: segments, x0, y0, cell, nx, ny, starts, items, stamps."""
        return self.segments, self.x0, self.y0, self.cell, self.nx, self.ny, self.starts, self.items, self.stamps


@jit
def closest_point(px, py, x1, y1, x2, y2):  # pragma: no cover - compiled
    """The point of segment (x1, y1)-(x2, y2) nearest to (px, py)."""
    dx, dy = x2 - x1, y2 - y1
    length_sq = dx * dx + dy * dy
    t = 0.0
    if length_sq > 0.0:
        t = min(max(((px - x1) * dx + (py - y1) * dy) / length_sq, 0.0), 1.0)
    return x1 + t * dx, y1 + t * dy


@jit
def walls_within(px, py, reach, stamp, segments, x0, y0, cell, nx, ny, starts, items, stamps, out, limit):  # pragma: no cover - compiled
    """Into ``out[k] = (distance, qx, qy)``, the point of each segment nearest to (px, py) where
    it is within ``reach`` (m), nearest first, at most ``limit``; returns their count.
    ``stamp`` must differ from every earlier query's on this index (it marks segments seen)."""
    found = 0
    if segments.shape[0] == 0:
        return 0
    ix_low, ix_high, iy_low, iy_high = cell_span(px, py, reach, x0, y0, cell, nx, ny)
    for iy in range(iy_low, iy_high + 1):
        for ix in range(ix_low, ix_high + 1):
            c = iy * nx + ix
            for k in range(starts[c], starts[c + 1]):
                s = items[k]
                if stamps[s] == stamp:
                    continue
                stamps[s] = stamp
                qx, qy = closest_point(px, py, segments[s, 0], segments[s, 1], segments[s, 2], segments[s, 3])
                distance = math.hypot(px - qx, py - qy)
                if distance > reach:
                    continue
                if found == limit and distance >= out[found - 1, 0]:
                    continue
                position = found if found < limit else limit - 1
                while position > 0 and out[position - 1, 0] > distance:
                    out[position, 0] = out[position - 1, 0]
                    out[position, 1] = out[position - 1, 1]
                    out[position, 2] = out[position - 1, 2]
                    position -= 1
                out[position, 0] = distance
                out[position, 1] = qx
                out[position, 2] = qy
                if found < limit:
                    found += 1
    return found


@jit
def keep_out_of_walls(px, py, vx, vy, radius, dt, walls, count):  # pragma: no cover - compiled
    """The velocity (vx, vy) (m/s) of a disc of ``radius`` (m) at (px, py), cut so that over
    ``dt`` (s) it comes no nearer than ``radius`` to any of the wall points ``walls[:count]``
    (distance, qx, qy): the part of the velocity towards a wall beyond what closes the gap is
    removed (twice round, for corners). A disc already too near may only move away."""
    for _ in range(2):
        for k in range(count):
            distance = walls[k, 0]
            if distance <= 0.0:
                continue
            nx = (px - walls[k, 1]) / distance
            ny = (py - walls[k, 2]) / distance
            approach = -(vx * nx + vy * ny)
            allowed = max(distance - radius, 0.0) / dt
            if approach > allowed:
                vx += (approach - allowed) * nx
                vy += (approach - allowed) * ny
    return vx, vy
