"""ORCA's obstacles: wall segments as RVO2's obstacle vertices, and a grid to find them.

RVO2 (``RVOSimulator::addObstacle``) takes an obstacle as a closed polygon, its vertices in
counterclockwise order. Each vertex starts an *edge* to the next vertex; an agent sees an edge
only from its right side (outside a counterclockwise polygon), and a vertex is *convex* where the
polygon turns left or goes straight there (``leftOf(previous, vertex, next) >= 0``): a convex
vertex pokes into the free space, its corner is rounded by the agent's radius, while a concave
one is covered by its two edges. A polygon of two vertices is a two-sided segment: the edge
``a -> b`` faces one side, ``b -> a`` the other, and both vertices are convex.

A world's walls are loose segments (line files, the outlines of map images), not polygons.
:meth:`OrcaObstacles.from_segments` turns them into RVO2's vertices so that every wall is
two-sided:

* segments are joined where their end points are equal (exactly: the map's outlines and a line
  file's shared corners are the same numbers); zero-length, repeated and non-finite segments
  are dropped;
* each segment gives two edges, one along each of its sides, and the edges are linked into
  closed loops that walk round the walls with the free space on their right: at a shared end
  point the loop turns into the next segment counterclockwise (a planar graph's faces). A lone
  segment becomes the loop ``a, b`` (RVO2's two-vertex obstacle); an open polyline
  ``p0 ... pn`` the loop ``p0, p1, ..., pn, pn-1, ..., p1``, up one side and back down the other;
  a closed outline two loops, one seen from inside and one from outside; at a junction of three
  or more segments each corner between two of them is one loop's vertex;
* convexity is RVO2's rule on each loop: where a polyline bends, its vertex is convex on the
  outer side of the bend and concave on the inner one; the ends of a polyline (where the loop
  turns back: ``leftOf`` is 0 there) are convex, rounded like a lone segment's; a vertex where
  two segments continue in a straight line (within :data:`STRAIGHT_SINE`) is dropped, the two
  edges merged into one (as two obstacles, RVO2 would round each piece's end).

Segments that cross without a shared end point are not split: each stays two-sided with its own
rounded ends, which only adds constraints. :meth:`OrcaObstacles.from_polygons` takes RVO2's own
input (counterclockwise polygons, or two-vertex segments) unchanged.

The edges are indexed in a grid of square cells (each in the cells of its bounding box, an edge
and its twin, the edge back along it, as one item with the edge's numbers stored in it); the
ORCA kernel (:mod:`~sim_server.core.crowd.orca`) visits the cells within an agent's obstacle
range and takes an item in the first of its cells it meets, so no edge is seen twice and the
query writes nothing; the side of the edge the agent is on picks the edge or its twin.

Units: m.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from sim_server.core.compiled import jit, typed
from sim_server.core.crowd.neighbors import fit_cells

#: Cells of the edge grid across an agent's obstacle range (the grid's cell is range / this).
CELLS_PER_RANGE = 4.0
#: Smallest side (m) of the edge grid's cells.
MIN_OBSTACLE_CELL = 0.25
#: Most cells of the edge grid: larger extents get larger cells.
MAX_OBSTACLE_CELLS = 1_000_000
#: Two edges meeting at a vertex continue in a straight line (the vertex is dropped) where the
#: sine of the angle between them is at most this.
STRAIGHT_SINE = 1.0e-9


@jit
def _index_pieces(points, next_vertex, pieces, cell, max_cells):  # pragma: no cover - compiled
    """Sort the edges ``pieces[:, 0]`` (``points[v] -> points[next_vertex[v]]``) into square
    cells by their bounding boxes. Returns ``(x0, y0, cell, nx, ny, starts, items, edges,
    first)``: the grid's corner, cell (m) and size; the items of cell ``c = iy * nx + ix``,
    ``starts[c]`` to ``starts[c + 1]``, each a row of ``pieces`` (``items``), its edge (``edges``:
    start x, y, vector x, y in m, and the vector's inverse squared length) and the first cell
    (ix, iy) of its box (``first``), in item order, so that a query reads them in sequence."""
    count = pieces.shape[0]
    x0, y0 = points[0, 0], points[0, 1]
    x1, y1 = x0, y0
    for v in range(points.shape[0]):
        x0 = min(x0, points[v, 0])
        y0 = min(y0, points[v, 1])
        x1 = max(x1, points[v, 0])
        y1 = max(y1, points[v, 1])
    cell, nx, ny = fit_cells(x1 - x0, y1 - y0, cell, max_cells)
    boxes = np.empty((count, 4), dtype=np.int64)
    starts = np.zeros(nx * ny + 1, dtype=np.int64)
    for p in range(count):
        v = pieces[p, 0]
        w = next_vertex[v]
        boxes[p, 0] = min(int((min(points[v, 0], points[w, 0]) - x0) / cell), nx - 1)
        boxes[p, 1] = min(int((min(points[v, 1], points[w, 1]) - y0) / cell), ny - 1)
        boxes[p, 2] = min(int((max(points[v, 0], points[w, 0]) - x0) / cell), nx - 1)
        boxes[p, 3] = min(int((max(points[v, 1], points[w, 1]) - y0) / cell), ny - 1)
        for iy in range(boxes[p, 1], boxes[p, 3] + 1):
            for ix in range(boxes[p, 0], boxes[p, 2] + 1):
                starts[iy * nx + ix + 1] += 1
    for c in range(nx * ny):
        starts[c + 1] += starts[c]
    total = starts[nx * ny]
    items = np.empty((total, 2), dtype=np.int64)
    edges = np.empty((total, 5))
    first = np.empty((total, 2), dtype=np.int64)
    fill = starts[:-1].copy()
    for p in range(count):
        v = pieces[p, 0]
        w = next_vertex[v]
        ex, ey = points[w, 0] - points[v, 0], points[w, 1] - points[v, 1]
        for iy in range(boxes[p, 1], boxes[p, 3] + 1):
            for ix in range(boxes[p, 0], boxes[p, 2] + 1):
                k = fill[iy * nx + ix]
                fill[iy * nx + ix] += 1
                items[k, 0], items[k, 1] = pieces[p, 0], pieces[p, 1]
                edges[k, 0], edges[k, 1], edges[k, 2], edges[k, 3] = points[v, 0], points[v, 1], ex, ey
                edges[k, 4] = 1.0 / (ex * ex + ey * ey)
                first[k, 0], first[k, 1] = boxes[p, 0], boxes[p, 1]
    return x0, y0, cell, nx, ny, starts, items, edges, first


@jit
def _skip_straight(following, keep):  # pragma: no cover - compiled
    """For each kept half-edge, the next kept one along ``following`` (-1 for the others)."""
    count = following.shape[0]
    result = np.full(count, -1, dtype=np.int64)
    for h in range(count):
        if not keep[h]:
            continue
        k = following[h]
        steps = 0
        while not keep[k] and steps < count:
            k = following[k]
            steps += 1
        result[h] = k
    return result


def corner_numbers(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct points of (N, 2) ``points`` (m; -0.0 as 0.0), sorted, and each point's
    number among them (what ``np.unique(points, axis=0, return_inverse=True)`` gives, faster)."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2) + 0.0
    order = np.lexsort((points[:, 1], points[:, 0]))
    ordered = points[order]
    new = np.ones(len(points), dtype=bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    numbers = np.empty(len(points), dtype=np.int64)
    numbers[order] = np.cumsum(new) - 1
    return ordered[new], numbers


def left_of(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """RVO2's ``leftOf``: ``det(a - c, b - a)`` of (..., 2) points (m^2); positive where ``c``
    lies left of the line from ``a`` to ``b``."""
    return (a[..., 0] - c[..., 0]) * (b[..., 1] - a[..., 1]) - (a[..., 1] - c[..., 1]) * (b[..., 0] - a[..., 0])


class OrcaObstacles:
    """RVO2's obstacle vertices and the grid of their edges.

    Vertex ``v`` starts the edge from ``points[v]`` to ``points[next_vertex[v]]``.

    Args:
        points: (V, 2) the vertices (m).
        next_vertex: (V,) each vertex's successor on its loop.
        convex: (V,) whether each vertex is convex.
        obstacle_range: the obstacle range (m) of the agents that will query it (RVO2's
            ``timeHorizonObst * maxSpeed + radius``): the grid's cells are a quarter of it.

    Attributes:
        points, next_vertex, previous_vertex: the vertices and their loops.
        directions: (V, 2) the unit direction of each vertex's edge.
        convex: (V,) 1 where the vertex is convex, else 0.
        twin: (V,) the vertex whose edge runs back along each vertex's (-1: none).
        x0, y0, cell, nx, ny, starts, items, item_edges, item_first: the grid of the edges, an
            edge and its twin one item (see :func:`_index_pieces`).
    """

    def __init__(self, points: np.ndarray, next_vertex: np.ndarray, convex: np.ndarray, obstacle_range: float) -> None:
        self.points = typed(np.asarray(points, dtype=np.float64).reshape(-1, 2), np.float64)
        self.next_vertex = typed(np.asarray(next_vertex, dtype=np.int64).reshape(-1), np.int64)
        self.convex = typed(np.asarray(convex, dtype=np.uint8).reshape(-1), np.uint8)
        count = len(self.points)
        self.previous_vertex = np.empty(count, dtype=np.int64)
        self.previous_vertex[self.next_vertex] = np.arange(count)
        edges = self.points[self.next_vertex] - self.points
        lengths = np.hypot(edges[:, 0], edges[:, 1])
        self.directions = typed(edges / np.where(lengths > 0.0, lengths, 1.0)[:, None], np.float64)
        self.twin = self._twins()
        order = np.arange(count)
        pieces = np.column_stack([order, self.twin])[(self.twin < 0) | (order < self.twin)]
        pieces = pieces[lengths[pieces[:, 0]] > 0.0]
        cell = max(float(obstacle_range) / CELLS_PER_RANGE, MIN_OBSTACLE_CELL) if math.isfinite(obstacle_range) else 1.0
        if len(pieces):
            x0, y0, cell, nx, ny, starts, items, item_edges, item_first = _index_pieces(
                self.points, self.next_vertex, typed(pieces, np.int64), cell, MAX_OBSTACLE_CELLS)
        else:
            x0, y0, nx, ny = 0.0, 0.0, 1, 1
            starts, items = np.zeros(2, dtype=np.int64), np.zeros((0, 2), dtype=np.int64)
            item_edges, item_first = np.zeros((0, 5)), np.zeros((0, 2), dtype=np.int64)
        self.x0, self.y0, self.cell, self.nx, self.ny = float(x0), float(y0), float(cell), int(nx), int(ny)
        self.starts, self.items, self.item_edges, self.item_first = starts, items, item_edges, item_first

    def _twins(self) -> np.ndarray:
        """Each vertex's twin: the vertex whose edge joins the same two points the other way
        (where several do, one pair only)."""
        count = len(self.points)
        if not count:
            return np.zeros(0, dtype=np.int64)
        _, corner = corner_numbers(self.points)
        corners = int(corner.max()) + 1
        start, end = corner, corner[self.next_vertex]
        keys = start * corners + end
        order = np.argsort(keys, kind="stable")
        place = np.minimum(np.searchsorted(keys[order], end * corners + start), count - 1)
        twin = np.where((keys[order][place] == end * corners + start) & (start != end), order[place], -1)
        paired = (twin >= 0) & (twin[np.maximum(twin, 0)] == np.arange(count))
        return np.where(paired, twin, -1)

    def __len__(self) -> int:
        return len(self.points)

    def arrays(self) -> tuple:
        """What :func:`~sim_server.core.crowd.orca.orca_step` takes: points, next, previous,
        directions, convex, x0, y0, cell, nx, ny, starts, items, item_edges, item_first."""
        return (self.points, self.next_vertex, self.previous_vertex, self.directions, self.convex,
                self.x0, self.y0, self.cell, self.nx, self.ny, self.starts, self.items, self.item_edges, self.item_first)

    def loop_vertices(self) -> list[np.ndarray]:
        """Each loop's vertex numbers in order, from its lowest one, loops by their lowest."""
        seen = np.zeros(len(self.points), dtype=bool)
        loops = []
        for start in range(len(self.points)):
            if seen[start]:
                continue
            loop, v = [], start
            while not seen[v]:
                seen[v] = True
                loop.append(v)
                v = int(self.next_vertex[v])
            loops.append(np.array(loop, dtype=np.int64))
        return loops

    def loops(self) -> list[np.ndarray]:
        """The obstacles as RVO2's ``addObstacle`` takes them: each loop's points (k, 2; m) in
        order (:meth:`loop_vertices`)."""
        return [self.points[loop].copy() for loop in self.loop_vertices()]

    @classmethod
    def from_polygons(cls, polygons: Sequence[np.ndarray], obstacle_range: float) -> "OrcaObstacles":
        """RVO2's obstacles as ``addObstacle`` makes them: each polygon's vertices (k >= 2, m)
        in counterclockwise order; two vertices make a two-sided segment (both convex), more a
        polygon whose vertex is convex where ``leftOf(previous, vertex, next) >= 0``."""
        points, following, convex = [], [], []
        first = 0
        for polygon in polygons:
            vertices = np.asarray(polygon, dtype=np.float64).reshape(-1, 2)
            count = len(vertices)
            if count < 2:
                continue
            order = np.arange(count)
            points.append(vertices)
            following.append(first + (order + 1) % count)
            if count == 2:
                convex.append(np.ones(2, dtype=bool))
            else:
                convex.append(left_of(vertices[order - 1], vertices, vertices[(order + 1) % count]) >= 0.0)
            first += count
        if not points:
            return cls(np.zeros((0, 2)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool), obstacle_range)
        return cls(np.vstack(points), np.concatenate(following), np.concatenate(convex), obstacle_range)

    @classmethod
    def from_segments(cls, segments: np.ndarray, obstacle_range: float) -> "OrcaObstacles":
        """Two-sided obstacles of wall segments (N, 4: x1, y1, x2, y2 in m), as the module's
        docstring describes."""
        segments = np.asarray(segments, dtype=np.float64).reshape(-1, 4)
        segments = segments[np.isfinite(segments).all(axis=1)]
        ends = segments.reshape(-1, 2)
        if not len(ends):
            return cls.from_polygons([], obstacle_range)
        corners, which = corner_numbers(ends)
        pairs = which.reshape(-1, 2)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        pairs = np.unique(np.sort(pairs, axis=1), axis=0)  # each wall once, whatever its direction
        if not len(pairs):
            return cls.from_polygons([], obstacle_range)
        # half-edge 2k runs along segment k from its first corner, 2k + 1 back; twins differ in bit 0
        origin = pairs.reshape(-1)
        target = pairs[:, ::-1].reshape(-1)
        offset = corners[target] - corners[origin]
        angle = np.arctan2(offset[:, 1], offset[:, 0])
        # round each corner counterclockwise: the half-edge after each one leaving the same corner
        order = np.lexsort((angle, origin))
        sorted_origin = origin[order]
        group_start = np.searchsorted(sorted_origin, sorted_origin, side="left")
        group_end = np.searchsorted(sorted_origin, sorted_origin, side="right")
        rank = np.arange(len(order))
        successor = np.empty(len(order), dtype=np.int64)
        successor[order] = order[np.where(rank + 1 < group_end, rank + 1, group_start)]
        # the free space on the right: from u -> v turn into the edge after v -> u round v
        following = successor[np.arange(len(order)) ^ 1]
        preceding = np.empty_like(following)
        preceding[following] = np.arange(len(following))
        incoming, outgoing = offset[preceding], offset
        cross = incoming[:, 0] * outgoing[:, 1] - incoming[:, 1] * outgoing[:, 0]
        dot = incoming[:, 0] * outgoing[:, 0] + incoming[:, 1] * outgoing[:, 1]
        scale = np.hypot(incoming[:, 0], incoming[:, 1]) * np.hypot(outgoing[:, 0], outgoing[:, 1])
        keep = ~((np.abs(cross) <= STRAIGHT_SINE * scale) & (dot > 0.0))
        kept_next = _skip_straight(following, keep)
        kept = np.flatnonzero(keep)
        number = np.full(len(keep), -1, dtype=np.int64)
        number[kept] = np.arange(len(kept))
        next_vertex = number[kept_next[kept]]
        points = corners[origin[kept]]
        previous_vertex = np.empty_like(next_vertex)
        previous_vertex[next_vertex] = np.arange(len(next_vertex))
        convex = left_of(points[previous_vertex], points, points[next_vertex]) >= 0.0
        return cls(points, next_vertex, convex, obstacle_range)
