"""Finding the way: a grid of where a pedestrian's body fits, and distance fields to goals.

A :class:`WalkingGrid` rasterises the walls a crowd walks among (every piece of its layers, the
streamed ones too) into square cells: a cell is blocked where a body of the crowd's radius, centred
there, would touch a wall. Its free cells are labelled by connected region, so that a goal out of
reach (another room with no door, inside a closed wall, beyond the outer walls of a building) is
found as the world loads, not by people walking into walls for ever. The grid reaches far enough
beyond the walls that its edge is free all round: the open space beyond is one region with the
cells along the edge (:attr:`WalkingGrid.outside`).

A distance field holds, for every free cell, the length (m) of the shortest 8-connected path to
one goal (Dijkstra's algorithm; no diagonal step squeezes between two blocked cells), steps near
walls weighted heavier, so that ways keep clear of walls where there is room and pass doors in
the middle. Fields are
computed when a goal is first used and kept (least recently used dropped beyond
:data:`~sim_server.core.limits.MAX_NAVIGATION_FIELD_BYTES`).

:func:`walking_directions` gives every pedestrian its direction in one compiled call: straight
at the goal where the field says the straight way is as short as any (the distance equals the
free-space octile distance), otherwise towards the cell a few steps down the field.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections import OrderedDict
from typing import Callable

import numpy as np

from sim_server.core import limits
from sim_server.core.compiled import jit, typed

LOGGER = logging.getLogger("sim_server")

#: Free space (m) around the walls' extent that the grid covers (at least a body's radius and a
#: cell more).
GRID_MARGIN = 2.0
#: How far (m) a pedestrian looks ahead along the field when the way bends (at least 3 cells).
LOOKAHEAD = 1.0
#: Paths keep this far (m) from where a body would touch a wall, where there is room: a step
#: within it costs up to :data:`CLEARANCE_WEIGHT` times more the nearer it is. Without it the
#: shortest ways graze wall ends and door posts, where the walls' force pushes people back.
CLEARANCE = 1.0
CLEARANCE_WEIGHT = 3.0
#: Relative and absolute (m) slack of the test "the straight way is a shortest way".
STRAIGHT_RELATIVE = 1.0e-4
STRAIGHT_ABSOLUTE = 1.0e-3
#: The field's value of cells that cannot reach the goal.
UNREACHABLE = np.float32(np.inf)

_NEIGHBORS = np.array([(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)], dtype=np.int64)


@jit
def _rasterize(segments, clearance, x0, y0, cell, nx, ny, blocked):  # pragma: no cover - compiled
    """Mark the cells whose centre lies within ``clearance`` (m) of a segment."""
    for s in range(segments.shape[0]):
        ax, ay, bx, by = segments[s, 0], segments[s, 1], segments[s, 2], segments[s, 3]
        ix0 = max(int(math.floor((min(ax, bx) - clearance - x0) / cell)), 0)
        ix1 = min(int(math.floor((max(ax, bx) + clearance - x0) / cell)), nx - 1)
        iy0 = max(int(math.floor((min(ay, by) - clearance - y0) / cell)), 0)
        iy1 = min(int(math.floor((max(ay, by) + clearance - y0) / cell)), ny - 1)
        dx, dy = bx - ax, by - ay
        length_sq = dx * dx + dy * dy
        for iy in range(iy0, iy1 + 1):
            cy = y0 + (iy + 0.5) * cell
            for ix in range(ix0, ix1 + 1):
                cx = x0 + (ix + 0.5) * cell
                t = 0.0
                if length_sq > 0.0:
                    t = min(max(((cx - ax) * dx + (cy - ay) * dy) / length_sq, 0.0), 1.0)
                ex, ey = ax + t * dx - cx, ay + t * dy - cy
                if ex * ex + ey * ey < clearance * clearance:
                    blocked[iy, ix] = 1


@jit
def _label(blocked, labels):  # pragma: no cover - compiled
    """Number the 8-connected regions of free cells (blocked cells get -1); returns the count."""
    ny, nx = blocked.shape
    labels[:, :] = -1
    stack = np.empty(nx * ny, dtype=np.int64)
    count = 0
    for start in range(nx * ny):
        sy, sx = start // nx, start % nx
        if blocked[sy, sx] or labels[sy, sx] >= 0:
            continue
        labels[sy, sx] = count
        top = 0
        stack[top] = start
        top += 1
        while top > 0:
            top -= 1
            c = stack[top]
            cy, cx = c // nx, c % nx
            for k in range(8):
                qx, qy = cx + _NEIGHBORS[k, 0], cy + _NEIGHBORS[k, 1]
                if qx < 0 or qy < 0 or qx >= nx or qy >= ny or blocked[qy, qx] or labels[qy, qx] >= 0:
                    continue
                if k >= 4 and (blocked[cy, qx] or blocked[qy, cx]):
                    continue
                labels[qy, qx] = count
                stack[top] = qy * nx + qx
                top += 1
        count += 1
    return count


@jit
def _clearance(blocked, cell):  # pragma: no cover - compiled
    """Per cell, the distance (m) to the nearest blocked cell (chamfer transform, two passes)."""
    ny, nx = blocked.shape
    far = np.inf
    distance = np.empty((ny, nx))
    for y in range(ny):
        for x in range(nx):
            distance[y, x] = 0.0 if blocked[y, x] else far
    diagonal = math.sqrt(2.0)
    for y in range(ny):
        for x in range(nx):
            d = distance[y, x]
            if y > 0:
                d = min(d, distance[y - 1, x] + 1.0)
                if x > 0:
                    d = min(d, distance[y - 1, x - 1] + diagonal)
                if x < nx - 1:
                    d = min(d, distance[y - 1, x + 1] + diagonal)
            if x > 0:
                d = min(d, distance[y, x - 1] + 1.0)
            distance[y, x] = d
    for y in range(ny - 1, -1, -1):
        for x in range(nx - 1, -1, -1):
            d = distance[y, x]
            if y < ny - 1:
                d = min(d, distance[y + 1, x] + 1.0)
                if x < nx - 1:
                    d = min(d, distance[y + 1, x + 1] + diagonal)
                if x > 0:
                    d = min(d, distance[y + 1, x - 1] + diagonal)
            if x < nx - 1:
                d = min(d, distance[y, x + 1] + 1.0)
            distance[y, x] = d
    return distance * cell


@jit
def _distance_field(blocked, clearance, goal_x, goal_y, cell, field):  # pragma: no cover - compiled
    """Dijkstra from cell (goal_x, goal_y) over the free cells, 8-connected, into the float32
    ``field``: path lengths (m), each step weighted by up to ``1 + CLEARANCE_WEIGHT`` within
    :data:`CLEARANCE` of the blocked cells (``clearance``: the distance to them). The search runs
    in float64: a float32 queue would drop entries whose value rounded below the popped one."""
    ny, nx = blocked.shape
    distances = np.full((ny, nx), np.inf)
    distances[goal_y, goal_x] = 0.0
    heap = [(0.0, goal_y * nx + goal_x)]
    diagonal = cell * math.sqrt(2.0)
    while len(heap) > 0:
        distance, c = heapq.heappop(heap)
        cy, cx = c // nx, c % nx
        if distance > distances[cy, cx]:
            continue
        for k in range(8):
            qx, qy = cx + _NEIGHBORS[k, 0], cy + _NEIGHBORS[k, 1]
            if qx < 0 or qy < 0 or qx >= nx or qy >= ny or blocked[qy, qx]:
                continue
            if k >= 4 and (blocked[cy, qx] or blocked[qy, cx]):
                continue
            room = clearance[qy, qx]
            weight = 1.0 + CLEARANCE_WEIGHT * (1.0 - room / CLEARANCE) if room < CLEARANCE else 1.0
            candidate = distance + (diagonal if k >= 4 else cell) * weight
            if candidate < distances[qy, qx]:
                distances[qy, qx] = candidate
                heapq.heappush(heap, (candidate, qy * nx + qx))
    for y in range(ny):
        for x in range(nx):
            field[y, x] = distances[y, x]


@jit
def walking_directions(
    positions, goals, field_ids, fields, x0, y0, cell, nx, ny, out_directions, out_distances,
):  # pragma: no cover - compiled
    """For each pedestrian, the unit direction to walk in and the straight distance (m) to its
    goal. ``field_ids[i]`` is the index in ``fields`` of the distance field of agent i's goal, or
    -1 (walk straight: no walls, or no field). Outside the grid, straight. A goal beyond the grid
    has the field of the edge cell nearest to it: inside the grid people walk to that cell (round
    the walls), from there straight on."""
    for i in range(positions.shape[0]):
        px, py = positions[i, 0], positions[i, 1]
        gx, gy = goals[i, 0] - px, goals[i, 1] - py
        distance = math.sqrt(gx * gx + gy * gy)
        out_distances[i] = distance
        if distance == 0.0:
            out_directions[i, 0], out_directions[i, 1] = 0.0, 0.0
            continue
        tx, ty = goals[i, 0], goals[i, 1]
        f = field_ids[i]
        ix = int(math.floor((px - x0) / cell))
        iy = int(math.floor((py - y0) / cell))
        if f >= 0 and 0 <= ix < nx and 0 <= iy < ny:
            field = fields[f]
            here = field[iy, ix]
            # the goal's cell (the nearest edge cell for a goal beyond the grid), for the octile
            # distance between cell centres
            goal_ix = int(math.floor((goals[i, 0] - x0) / cell))
            goal_iy = int(math.floor((goals[i, 1] - y0) / cell))
            beyond = not (0 <= goal_ix < nx and 0 <= goal_iy < ny)
            goal_ix, goal_iy = min(max(goal_ix, 0), nx - 1), min(max(goal_iy, 0), ny - 1)
            ax, ay = abs(goal_ix - ix), abs(goal_iy - iy)
            octile = cell * (max(ax, ay) + (math.sqrt(2.0) - 1.0) * min(ax, ay))
            straight = here <= octile * (1.0 + STRAIGHT_RELATIVE) + STRAIGHT_ABSOLUTE
            if straight and beyond and (ax > 0 or ay > 0):
                # straight to the edge cell, not to the goal: the way beyond it may cross walls
                tx = x0 + (goal_ix + 0.5) * cell
                ty = y0 + (goal_iy + 0.5) * cell
            elif not straight:
                # down the field a few cells (from the best neighbour where this cell is blocked)
                cx, cy = ix, iy
                best = here
                for _ in range(max(3, int(LOOKAHEAD / cell + 0.5))):
                    step_x, step_y = cx, cy
                    for k in range(8):
                        qx, qy = cx + _NEIGHBORS[k, 0], cy + _NEIGHBORS[k, 1]
                        if qx < 0 or qy < 0 or qx >= nx or qy >= ny:
                            continue
                        if field[qy, qx] < best:
                            best = field[qy, qx]
                            step_x, step_y = qx, qy
                    if step_x == cx and step_y == cy:
                        break
                    cx, cy = step_x, step_y
                if cx != ix or cy != iy:
                    tx = x0 + (cx + 0.5) * cell
                    ty = y0 + (cy + 0.5) * cell
        dx, dy = tx - px, ty - py
        norm = math.sqrt(dx * dx + dy * dy)
        if norm > 0.0:
            out_directions[i, 0], out_directions[i, 1] = dx / norm, dy / norm
        else:
            out_directions[i, 0], out_directions[i, 1] = gx / distance, gy / distance


class WalkingGrid:
    """Where a body of ``radius`` fits among ``segments`` (N, 4: x1, y1, x2, y2 in m, world
    frame), on cells of ``cell`` m (larger where the extent needs more than
    :data:`~sim_server.core.limits.MAX_NAVIGATION_CELLS`), and distance fields to goals.

    Attributes:
        x0, y0, cell, nx, ny: the grid's corner (m), cell side (m) and size in cells.
        blocked: (ny, nx) uint8, 1 where a body would touch a wall.
        clearance: (ny, nx) distance (m) from each cell to the nearest blocked one.
        labels: (ny, nx) int64, the free cell's connected region (-1 blocked).
    """

    def __init__(self, segments: np.ndarray, radius: float, cell: float) -> None:
        segments = typed(np.asarray(segments, dtype=np.float64).reshape(-1, 4), np.float64)
        if len(segments):
            box_low = np.minimum(segments[:, 0:2], segments[:, 2:4]).min(axis=0)
            box_high = np.maximum(segments[:, 0:2], segments[:, 2:4]).max(axis=0)
        else:
            box_low, box_high = np.zeros(2), np.zeros(2)
        wanted = cell
        while True:
            # every edge cell's centre lies more than a radius beyond the walls' box: the edge
            # is free all round, one region with the open space beyond
            margin = max(GRID_MARGIN, radius + cell)
            low, high = box_low - margin, box_high + margin
            size = high - low
            if math.ceil(size[0] / cell) * math.ceil(size[1] / cell) <= limits.MAX_NAVIGATION_CELLS:
                break
            cell *= 1.25
        if cell != wanted:
            LOGGER.warning(
                "the walls span %.0f x %.0f m: the crowd's walking grid uses %.2f m cells instead of %.2f m "
                "(at most %d cells)", size[0], size[1], cell, wanted, limits.MAX_NAVIGATION_CELLS,
            )
        self.x0, self.y0, self.cell = float(low[0]), float(low[1]), float(cell)
        self.nx, self.ny = int(math.ceil(size[0] / cell)), int(math.ceil(size[1] / cell))
        self.radius = radius
        self.blocked = np.zeros((self.ny, self.nx), dtype=np.uint8)
        if len(segments):
            _rasterize(segments, radius, self.x0, self.y0, self.cell, self.nx, self.ny, self.blocked)
        self.clearance = _clearance(self.blocked, self.cell)
        self.labels = np.empty((self.ny, self.nx), dtype=np.int64)
        self.region_count = _label(self.blocked, self.labels)
        #: The region of the open space beyond the grid: that of the (free) cells along its edge.
        self.outside = int(self.labels[0, 0])
        #: Goal cell -> index in :attr:`fields` (least recently used first).
        self._field_of: OrderedDict[int, int] = OrderedDict()
        self.fields = np.empty((0, self.ny, self.nx), dtype=np.float32)
        self.max_fields = max(1, limits.MAX_NAVIGATION_FIELD_BYTES // max(1, self.nx * self.ny * 4))

    def cell_of(self, x: float, y: float) -> tuple[int, int] | None:
        """The cell (ix, iy) holding the point (m), None outside the grid."""
        ix, iy = int(math.floor((x - self.x0) / self.cell)), int(math.floor((y - self.y0) / self.cell))
        if 0 <= ix < self.nx and 0 <= iy < self.ny:
            return ix, iy
        return None

    def region_at(self, x: float, y: float) -> int:
        """The connected region of the point's cell: -1 where a body would touch a wall,
        :attr:`outside` beyond the grid (the open space beyond the walls)."""
        cell = self.cell_of(x, y)
        if cell is None:
            return self.outside
        return int(self.labels[cell[1], cell[0]])

    def nearest_cell(self, x: float, y: float) -> tuple[int, int]:
        """The cell (ix, iy) holding the point (m), or the edge cell nearest to it beyond the grid."""
        ix, iy = int(math.floor((x - self.x0) / self.cell)), int(math.floor((y - self.y0) / self.cell))
        return min(max(ix, 0), self.nx - 1), min(max(iy, 0), self.ny - 1)

    def field_id(self, x: float, y: float, in_use: "Callable[[], set[int]]") -> int:
        """The index in :attr:`fields` of the distance field to the point (m; beyond the grid,
        to the edge cell nearest to it), computed now if needed; -1 where that cell is blocked.
        ``in_use()`` gives the field indices still needed (never dropped), asked only when one
        must go."""
        cell = self.nearest_cell(x, y)
        if self.blocked[cell[1], cell[0]]:
            return -1
        key = cell[1] * self.nx + cell[0]
        index = self._field_of.get(key)
        if index is not None:
            self._field_of.move_to_end(key)
            return index
        if len(self._field_of) < self.max_fields:
            index = len(self._field_of)
            if index >= len(self.fields):
                grown = np.empty((min(self.max_fields, max(4, 2 * len(self.fields))), self.ny, self.nx), dtype=np.float32)
                grown[: len(self.fields)] = self.fields
                self.fields = grown
        else:
            used = in_use()
            victim = next((k for k, v in self._field_of.items() if v not in used), None)
            if victim is None:
                return -1  # every kept field is in use: walk straight
            index = self._field_of.pop(victim)
        _distance_field(self.blocked, self.clearance, cell[0], cell[1], self.cell, self.fields[index])
        self._field_of[key] = index
        return index

    def arrays(self) -> tuple:
        """What :func:`walking_directions` takes after the agents' arrays: fields, x0, y0, cell, nx, ny."""
        return self.fields, self.x0, self.y0, self.cell, self.nx, self.ny
