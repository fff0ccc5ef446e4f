"""The walls pedestrians keep away from: wall segments indexed in a grid, nearest-point queries
and the rule that no pedestrian steps into a wall.

A :class:`WallIndex` holds segments ``x1, y1, x2, y2`` (m, world frame: the loaded pieces of the
layers a crowd walks in) sorted into square cells by their bounding boxes. The compiled queries
look only at the cells within reach of a point and mark the segments they have seen, so a
segment spanning many cells counts once. A map image gives thousands of short segments (the
office's 5,242), so the wall force, which wants the nearest wall within metres, reads a
nearest-wall map instead (:meth:`WallIndex.nearest_map`, :func:`nearest_wall`); the exact query
stays for the short reach of :func:`keep_out_of_walls`.
"""

from __future__ import annotations

import math

import numpy as np

from sim_server.core.compiled import jit, typed
from sim_server.core.crowd.neighbors import cell_span, fit_cells

#: Side (m) of the index's cells (walls are queried within a few metres).
WALL_CELL = 1.0
#: Most cells of one index: larger extents get larger cells.
MAX_WALL_CELLS = 4_000_000
#: Side (m) of the cells of the nearest-wall map, and the most cells it may have.
NEAREST_CELL = 0.1
MAX_NEAREST_CELLS = 4_000_000
#: Free space (m) the nearest-wall map covers around the walls.
NEAREST_MARGIN = 4.0


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
    cell, nx, ny = fit_cells(x1 - x0, y1 - y0, cell, max_cells)
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


@jit
def _take(points, best, cx, cy, ox, oy, x0, y0, cell, nx, ny):  # pragma: no cover - compiled
    """Give cell (cx, cy) the nearest point of cell (ox, oy) where it is nearer to its centre."""
    if ox < 0 or oy < 0 or ox >= nx or oy >= ny:
        return
    qx, qy = points[oy, ox, 0], points[oy, ox, 1]
    if qx != qx:  # NaN: none yet
        return
    px, py = x0 + (cx + 0.5) * cell, y0 + (cy + 0.5) * cell
    d = (px - qx) ** 2 + (py - qy) ** 2
    if d < best[cy, cx]:
        best[cy, cx] = d
        points[cy, cx, 0], points[cy, cx, 1] = qx, qy


@jit
def _nearest_wall_map(segments, x0, y0, cell, nx, ny):  # pragma: no cover - compiled
    """Per cell, the point of the walls nearest to the cell's centre: exact in the cells along
    each segment and their neighbours, then carried to the other cells by two sweeps that take
    a neighbour's point where it is nearer (a vector distance transform: within a cell or so of
    exact; each sweep also runs each row backwards). Returns (ny, nx, 2) points (NaN: none found)."""
    points = np.full((ny, nx, 2), np.nan)
    best = np.full((ny, nx), np.inf)
    for s in range(segments.shape[0]):
        ax, ay, bx, by = segments[s, 0], segments[s, 1], segments[s, 2], segments[s, 3]
        length = math.hypot(bx - ax, by - ay)
        samples = int(length / (0.5 * cell)) + 1
        for k in range(samples + 1):
            t = k / samples
            sx = int(math.floor((ax + t * (bx - ax) - x0) / cell))
            sy = int(math.floor((ay + t * (by - ay) - y0) / cell))
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    cx, cy = sx + dx, sy + dy
                    if cx < 0 or cy < 0 or cx >= nx or cy >= ny:
                        continue
                    px, py = x0 + (cx + 0.5) * cell, y0 + (cy + 0.5) * cell
                    qx, qy = closest_point(px, py, ax, ay, bx, by)
                    d = (px - qx) ** 2 + (py - qy) ** 2
                    if d < best[cy, cx]:
                        best[cy, cx] = d
                        points[cy, cx, 0], points[cy, cx, 1] = qx, qy
    for sweep in range(2):
        step = 1 if sweep == 0 else -1
        y_range = range(ny) if sweep == 0 else range(ny - 1, -1, -1)
        for cy in y_range:
            x_range = range(nx) if sweep == 0 else range(nx - 1, -1, -1)
            for cx in x_range:
                # the neighbours already swept: behind in the row, and the three of the row before
                for k in range(4):
                    ox = -step if k <= 1 else (0 if k == 2 else step)
                    oy = 0 if k == 0 else -step
                    _take(points, best, cx, cy, cx + ox, cy + oy, x0, y0, cell, nx, ny)
            # then the row backwards, from the neighbour ahead
            x_range = range(nx - 1, -1, -1) if sweep == 0 else range(nx)
            for cx in x_range:
                _take(points, best, cx, cy, cx + step, cy, x0, y0, cell, nx, ny)
    return points


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
        self._nearest: tuple | None = None

    def arrays(self) -> tuple:
        """The index as the compiled kernels take it, one tuple: segments (n, 4: x1, y1, x2, y2,
        m), the grid's x0, y0 (m), cell (m), nx, ny, its starts and items (segments by cell) and
        the stamps (the query that last saw each segment)."""
        return self.segments, self.x0, self.y0, self.cell, self.nx, self.ny, self.starts, self.items, self.stamps

    def nearest_map(self) -> tuple:
        """The nearest-wall map (made on first use): points (ny, nx, 2; NaN without a wall), x0,
        y0, cell (m) -- per cell the wall point nearest to its centre, within a cell or so."""
        if self._nearest is None:
            if not len(self.segments):
                self._nearest = (np.full((1, 1, 2), np.nan), 0.0, 0.0, 1.0)
            else:
                low = np.minimum(self.segments[:, 0:2], self.segments[:, 2:4]).min(axis=0) - NEAREST_MARGIN
                high = np.maximum(self.segments[:, 0:2], self.segments[:, 2:4]).max(axis=0) + NEAREST_MARGIN
                cell = NEAREST_CELL
                while math.ceil((high[0] - low[0]) / cell) * math.ceil((high[1] - low[1]) / cell) > MAX_NEAREST_CELLS:
                    cell *= 1.25
                nx, ny = int(math.ceil((high[0] - low[0]) / cell)), int(math.ceil((high[1] - low[1]) / cell))
                points = _nearest_wall_map(self.segments, float(low[0]), float(low[1]), cell, nx, ny)
                self._nearest = (points, float(low[0]), float(low[1]), float(cell))
        return self._nearest


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
def walls_within(px, py, reach, stamp, index, out, limit):  # pragma: no cover - compiled
    """Into ``out[k] = (distance, qx, qy)``, the point of each segment of the wall index
    ``index`` (:meth:`WallIndex.arrays`) nearest to (px, py) where it is within ``reach`` (m),
    nearest first, at most ``limit``; returns their count. ``stamp`` must differ from every
    earlier query's on this index (it marks segments seen)."""
    segments, x0, y0, cell, nx, ny, starts, items, stamps = index
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
def nearest_wall(px, py, points, x0, y0, cell):  # pragma: no cover - compiled
    """(distance, qx, qy) of the nearest-wall map's point for (px, py) (m); distance inf where
    the map has none (beyond its margin)."""
    ny, nx = points.shape[0], points.shape[1]
    cx, cy = int(math.floor((px - x0) / cell)), int(math.floor((py - y0) / cell))
    if cx < 0 or cy < 0 or cx >= nx or cy >= ny:
        return math.inf, 0.0, 0.0
    qx, qy = points[cy, cx, 0], points[cy, cx, 1]
    if qx != qx:
        return math.inf, 0.0, 0.0
    return math.hypot(px - qx, py - qy), qx, qy


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
