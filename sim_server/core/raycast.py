"""Batch ray casting, compiled with numba: all beams of a scan in one call, exact against Box2D.

The static scene (wall segments of the layers, and the footprints of models that never move) is
indexed in a uniform grid; a ray walks the grid cell by cell (Amanatides-Woo) and stops as soon
as its closest hit lies within the cells walked. Moving shapes (footprints of the other models:
convex polygons and circles) are few and tested directly. Hit rules follow Box2D's ray casts,
so ranges agree with ``b2World.RayCast``:

* segments are two-sided; a ray parallel to a segment does not hit it;
* a polygon or circle is hit only when the ray enters it from outside (a sensor inside a
  robot's own footprint does not see that footprint);
* a shape is seen only when its collision bits share a bit with the ray's mask.

Every hit reports the *tag* of the shape hit, a bit set (collision bits, say), so callers can
tell what was hit (e.g. for intensities); coincident nearest hits report the union of their tags.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

#: No hit: the range written for a beam that hits nothing.
NO_HIT = math.inf
#: Tag of a beam that hits nothing.
NO_TAG = -1
#: Grid cells (m) are chosen so that a cell holds a few segments, within these bounds.
MIN_CELL_SIZE = 0.25
MAX_CELL_SIZE = 8.0
#: A cell's side is this times the side of the square each segment would have to itself (measured
#: best on the office map: 1.5 to 2).
CELL_SCALE = 2.0
#: Box2D polygons have at most 8 vertices.
MAX_VERTICES = 8
#: Hits closer together than this (m) count as one: the tags of both are merged.
TIE_TOLERANCE = 1e-9


@njit(cache=True)
def _axis_start(offset, direction, cell_index, cell):  # pragma: no cover - compiled
    """Along one grid axis, for a line at ``offset`` from the grid origin moving ``direction`` per
    unit of t: the t of the first cell boundary ahead and the t between boundaries."""
    if direction == 0.0:
        return math.inf, math.inf
    boundary = (cell_index + (1 if direction > 0 else 0)) * cell
    return (boundary - offset) / direction, cell / abs(direction)


@njit(cache=True)
def _cells_of_segment(x1, y1, x2, y2, x0, y0, cell, nx, ny, out):  # pragma: no cover - compiled
    """Write the indices of the grid cells a segment passes through into ``out``; return the count."""
    count = 0
    cx = int(math.floor((x1 - x0) / cell))
    cy = int(math.floor((y1 - y0) / cell))
    ex = int(math.floor((x2 - x0) / cell))
    ey = int(math.floor((y2 - y0) / cell))
    cx = min(max(cx, 0), nx - 1)
    cy = min(max(cy, 0), ny - 1)
    ex = min(max(ex, 0), nx - 1)
    ey = min(max(ey, 0), ny - 1)
    dx = x2 - x1
    dy = y2 - y1
    step_x = 1 if dx > 0 else -1
    step_y = 1 if dy > 0 else -1
    t_max_x, t_delta_x = _axis_start(x1 - x0, dx, cx, cell)
    t_max_y, t_delta_y = _axis_start(y1 - y0, dy, cy, cell)
    while True:
        out[count] = cy * nx + cx
        count += 1
        if (cx == ex and cy == ey) or count >= out.shape[0]:
            break
        if t_max_x < t_max_y:
            if t_max_x > 1.0:
                break
            cx += step_x
            t_max_x += t_delta_x
        else:
            if t_max_y > 1.0:
                break
            cy += step_y
            t_max_y += t_delta_y
        if cx < 0 or cy < 0 or cx >= nx or cy >= ny:
            break
    return count


@njit(cache=True)
def _build_grid(segments, x0, y0, cell, nx, ny):  # pragma: no cover - compiled
    """CSR grid index: ``starts[c]:starts[c+1]`` of ``items`` are the segments in cell ``c``."""
    n = segments.shape[0]
    scratch = np.empty(nx + ny + 4, dtype=np.int64)
    counts = np.zeros(nx * ny + 1, dtype=np.int64)
    for i in range(n):
        k = _cells_of_segment(segments[i, 0], segments[i, 1], segments[i, 2], segments[i, 3], x0, y0, cell, nx, ny, scratch)
        for j in range(k):
            counts[scratch[j] + 1] += 1
    starts = np.cumsum(counts)
    fill = starts[:-1].copy()
    items = np.empty(starts[-1], dtype=np.int32)
    for i in range(n):
        k = _cells_of_segment(segments[i, 0], segments[i, 1], segments[i, 2], segments[i, 3], x0, y0, cell, nx, ny, scratch)
        for j in range(k):
            c = scratch[j]
            items[fill[c]] = i
            fill[c] += 1
    return starts, items


@njit(cache=True)
def _box_cells(box, x0, y0, cell, nx, ny):  # pragma: no cover - compiled
    """The range of grid cells (first column, first row, last column, last row) a box overlaps."""
    cx0 = min(max(int(math.floor((box[0] - x0) / cell)), 0), nx - 1)
    cy0 = min(max(int(math.floor((box[1] - y0) / cell)), 0), ny - 1)
    cx1 = min(max(int(math.floor((box[2] - x0) / cell)), 0), nx - 1)
    cy1 = min(max(int(math.floor((box[3] - y0) / cell)), 0), ny - 1)
    return cx0, cy0, cx1, cy1


@njit(cache=True)
def _build_box_grid(boxes, x0, y0, cell, nx, ny):  # pragma: no cover - compiled
    """CSR grid index of boxes (K, 4: x_min, y_min, x_max, y_max): each in every cell it overlaps."""
    n = boxes.shape[0]
    counts = np.zeros(nx * ny + 1, dtype=np.int64)
    for i in range(n):
        cx0, cy0, cx1, cy1 = _box_cells(boxes[i], x0, y0, cell, nx, ny)
        for cy in range(cy0, cy1 + 1):
            for cx in range(cx0, cx1 + 1):
                counts[cy * nx + cx + 1] += 1
    starts = np.cumsum(counts)
    fill = starts[:-1].copy()
    items = np.empty(starts[-1], dtype=np.int32)
    for i in range(n):
        cx0, cy0, cx1, cy1 = _box_cells(boxes[i], x0, y0, cell, nx, ny)
        for cy in range(cy0, cy1 + 1):
            for cx in range(cx0, cx1 + 1):
                c = cy * nx + cx
                items[fill[c]] = i
                fill[c] += 1
    return starts, items


@njit(cache=True)
def _ray_segment(px, py, dx, dy, x1, y1, x2, y2):  # pragma: no cover - compiled
    """Distance along the unit ray to a two-sided segment, or inf (Box2D edge semantics)."""
    ex = x2 - x1
    ey = y2 - y1
    denominator = dx * ey - dy * ex
    if denominator == 0.0:
        return math.inf
    wx = x1 - px
    wy = y1 - py
    t = (wx * ey - wy * ex) / denominator
    if t < 0.0:
        return math.inf
    s = (wx * dy - wy * dx) / denominator
    if s < 0.0 or s > 1.0:
        return math.inf
    return t


@njit(cache=True)
def _ray_polygon(px, py, dx, dy, verts, count, limit):  # pragma: no cover - compiled
    """Entry distance of the unit ray into a counter-clockwise convex polygon, or inf."""
    lower = 0.0
    upper = limit
    index = -1
    for i in range(count):
        ax = verts[i, 0]
        ay = verts[i, 1]
        j = i + 1 if i + 1 < count else 0
        nx_ = verts[j, 1] - ay
        ny_ = ax - verts[j, 0]
        numerator = nx_ * (ax - px) + ny_ * (ay - py)
        denominator = nx_ * dx + ny_ * dy
        if denominator == 0.0:
            if numerator < 0.0:
                return math.inf
        elif denominator < 0.0 and numerator < lower * denominator:
            lower = numerator / denominator
            index = i
        elif denominator > 0.0 and numerator < upper * denominator:
            upper = numerator / denominator
        if upper < lower:
            return math.inf
    if index >= 0:
        return lower
    return math.inf


@njit(cache=True)
def _ray_circle(px, py, dx, dy, cx, cy, radius):  # pragma: no cover - compiled
    """Entry distance of the unit ray into a circle, or inf (no hit from inside)."""
    sx = px - cx
    sy = py - cy
    b = sx * sx + sy * sy - radius * radius
    c = sx * dx + sy * dy
    sigma = c * c - b
    if sigma < 0.0:
        return math.inf
    a = -(c + math.sqrt(sigma))
    if a < 0.0:
        return math.inf
    return a


@njit(cache=True)
def _cast(
    ox, oy, angles, max_range, mask,
    segments, segment_bits, segment_tags, x0, y0, cell, nx, ny, starts, items, walk_grid,
    fixed_polygons, fixed_counts, fixed_polygon_bits, fixed_polygon_tags, polygon_starts, polygon_items,
    fixed_circles, fixed_circle_bits, fixed_circle_tags, circle_starts, circle_items,
    polygons, polygon_counts, polygon_bits, polygon_tags,
    circles, circle_bits, circle_tags,
    out_ranges, out_tags,
):  # pragma: no cover - compiled
    n_beams = angles.shape[0]
    grid_w = nx * cell
    grid_h = ny * cell
    for beam in range(n_beams):
        dx = math.cos(angles[beam])
        dy = math.sin(angles[beam])
        best = max_range
        best_tag = -1
        # Moving shapes first: their hits bound the grid walk.
        for p in range(polygons.shape[0]):
            if polygon_bits[p] & mask:
                t = _ray_polygon(ox, oy, dx, dy, polygons[p], polygon_counts[p], best)
                if t < best:
                    best = t
                    best_tag = polygon_tags[p]
        for c in range(circles.shape[0]):
            if circle_bits[c] & mask:
                t = _ray_circle(ox, oy, dx, dy, circles[c, 0], circles[c, 1], circles[c, 2])
                if t <= best:
                    best = t
                    best_tag = circle_tags[c]
        if walk_grid:
            # Clip the ray to the grid's box (slab method).
            t_enter = 0.0
            t_leave = best
            lx = ox - x0
            ly = oy - y0
            if dx != 0.0:
                ta = (0.0 - lx) / dx
                tb = (grid_w - lx) / dx
                t_enter = max(t_enter, min(ta, tb))
                t_leave = min(t_leave, max(ta, tb))
            elif lx < 0.0 or lx > grid_w:
                t_leave = -1.0
            if dy != 0.0:
                ta = (0.0 - ly) / dy
                tb = (grid_h - ly) / dy
                t_enter = max(t_enter, min(ta, tb))
                t_leave = min(t_leave, max(ta, tb))
            elif ly < 0.0 or ly > grid_h:
                t_leave = -1.0
            if t_enter <= t_leave:
                sx = lx + t_enter * dx
                sy = ly + t_enter * dy
                cx = min(max(int(math.floor(sx / cell)), 0), nx - 1)
                cy = min(max(int(math.floor(sy / cell)), 0), ny - 1)
                step_x = 1 if dx > 0 else -1
                step_y = 1 if dy > 0 else -1
                t_max_x, t_delta_x = _axis_start(lx, dx, cx, cell)
                t_max_y, t_delta_y = _axis_start(ly, dy, cy, cell)
                while True:
                    c = cy * nx + cx
                    for k in range(starts[c], starts[c + 1]):
                        s = items[k]
                        if segment_bits[s] & mask:
                            t = _ray_segment(ox, oy, dx, dy, segments[s, 0], segments[s, 1], segments[s, 2], segments[s, 3])
                            if t < best - TIE_TOLERANCE:
                                best = t
                                best_tag = segment_tags[s]
                            elif t <= best + TIE_TOLERANCE:
                                # As close as the best: both are hit (tags are bit sets, merged).
                                if t < best:
                                    best = t
                                best_tag = segment_tags[s] if best_tag < 0 else best_tag | segment_tags[s]
                    for k in range(polygon_starts[c], polygon_starts[c + 1]):
                        p = polygon_items[k]
                        if fixed_polygon_bits[p] & mask:
                            t = _ray_polygon(ox, oy, dx, dy, fixed_polygons[p], fixed_counts[p], best)
                            if t < best:
                                best = t
                                best_tag = fixed_polygon_tags[p]
                    for k in range(circle_starts[c], circle_starts[c + 1]):
                        q = circle_items[k]
                        if fixed_circle_bits[q] & mask:
                            t = _ray_circle(ox, oy, dx, dy, fixed_circles[q, 0], fixed_circles[q, 1], fixed_circles[q, 2])
                            if t <= best:
                                best = t
                                best_tag = fixed_circle_tags[q]
                    t_exit = min(t_max_x, t_max_y)
                    if best <= t_exit or t_exit > t_leave:
                        break
                    if t_max_x < t_max_y:
                        cx += step_x
                        t_max_x += t_delta_x
                        if cx < 0 or cx >= nx:
                            break
                    else:
                        cy += step_y
                        t_max_y += t_delta_y
                        if cy < 0 or cy >= ny:
                            break
        if best_tag < 0:
            out_ranges[beam] = math.inf
        else:
            out_ranges[beam] = best
        out_tags[beam] = best_tag


@dataclass
class StaticScene:
    """Wall segments and fixed shapes (world frame) with their collision bits and tags, in a grid.

    Args:
        segments: (N, 4) ``x1, y1, x2, y2`` in metres.
        bits: (N,) collision category bits of each segment.
        tags: (N,) a number reported for beams that hit the segment (e.g. its layer index).
        fixed: footprints that never move (static models), indexed with the segments.
    """

    segments: np.ndarray
    bits: np.ndarray
    tags: np.ndarray
    fixed: "MovingShapes | None" = None

    def __post_init__(self) -> None:
        self.segments = np.ascontiguousarray(self.segments, dtype=np.float64).reshape(-1, 4)
        self.bits = np.ascontiguousarray(self.bits, dtype=np.int64)
        self.tags = np.ascontiguousarray(self.tags, dtype=np.int64)
        fixed = self.fixed if self.fixed is not None else MovingShapes.empty()
        self.fixed = fixed
        polygon_boxes = np.column_stack(
            [fixed.polygons[:, :, 0].min(axis=1), fixed.polygons[:, :, 1].min(axis=1),
             fixed.polygons[:, :, 0].max(axis=1), fixed.polygons[:, :, 1].max(axis=1)]
        ).reshape(-1, 4)
        circles = fixed.circles
        circle_boxes = np.column_stack(
            [circles[:, 0] - circles[:, 2], circles[:, 1] - circles[:, 2], circles[:, 0] + circles[:, 2], circles[:, 1] + circles[:, 2]]
        ).reshape(-1, 4)
        corners = [self.segments[:, :2], self.segments[:, 2:], polygon_boxes[:, :2], polygon_boxes[:, 2:],
                   circle_boxes[:, :2], circle_boxes[:, 2:]]
        points = np.vstack(corners)
        count = len(self.segments) + len(polygon_boxes) + len(circle_boxes)
        if count:
            low = points.min(axis=0)
            high = points.max(axis=0)
        else:
            low = np.zeros(2)
            high = np.ones(2)
        extent = np.maximum(high - low, 1e-6)
        cell = float(
            np.clip(CELL_SCALE * math.sqrt(extent[0] * extent[1] / max(count, 1)), MIN_CELL_SIZE, MAX_CELL_SIZE)
        )
        self.cell = cell
        self.x0 = float(low[0]) - cell
        self.y0 = float(low[1]) - cell
        self.nx = int(math.ceil(extent[0] / cell)) + 2
        self.ny = int(math.ceil(extent[1] / cell)) + 2
        self.starts, self.items = _build_grid(self.segments, self.x0, self.y0, self.cell, self.nx, self.ny)
        self.polygon_starts, self.polygon_items = _build_box_grid(
            np.ascontiguousarray(polygon_boxes), self.x0, self.y0, self.cell, self.nx, self.ny
        )
        self.circle_starts, self.circle_items = _build_box_grid(
            np.ascontiguousarray(circle_boxes), self.x0, self.y0, self.cell, self.nx, self.ny
        )
        self.walk_grid = count > 0


@dataclass
class MovingShapes:
    """Shapes gathered for one scan (world frame): convex polygons and circles.

    Attributes:
        polygons: (P, 8, 2) vertices, counter-clockwise, padded.
        polygon_counts: (P,) vertex counts.
        polygon_bits, polygon_tags: (P,) collision bits and tags.
        circles: (C, 3) centre x, y and radius.
        circle_bits, circle_tags: (C,) collision bits and tags.
    """

    polygons: np.ndarray
    polygon_counts: np.ndarray
    polygon_bits: np.ndarray
    polygon_tags: np.ndarray
    circles: np.ndarray
    circle_bits: np.ndarray
    circle_tags: np.ndarray

    @classmethod
    def empty(cls) -> "MovingShapes":
        """No shapes."""
        return cls(
            np.zeros((0, MAX_VERTICES, 2)),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros((0, 3)),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
        )


def cast_rays(
    origin_x: float,
    origin_y: float,
    angles: np.ndarray,
    max_range: float,
    mask: int,
    scene: StaticScene,
    shapes: MovingShapes | None = None,
    out_ranges: np.ndarray | None = None,
    out_tags: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cast one ray per world-frame angle (rad) from the origin (m), up to ``max_range`` (m).

    Returns:
        ranges: distance to the closest hit, ``inf`` for no hit within ``max_range``.
        tags: tag of the shape hit, :data:`NO_TAG` for none.
    """
    shapes = shapes or MovingShapes.empty()
    n = len(angles)
    out_ranges = np.empty(n, dtype=np.float64) if out_ranges is None else out_ranges
    out_tags = np.empty(n, dtype=np.int64) if out_tags is None else out_tags
    _cast(
        float(origin_x), float(origin_y), np.ascontiguousarray(angles, dtype=np.float64), float(max_range), int(mask),
        scene.segments, scene.bits, scene.tags, scene.x0, scene.y0, scene.cell, scene.nx, scene.ny,
        scene.starts, scene.items, scene.walk_grid,
        scene.fixed.polygons, scene.fixed.polygon_counts, scene.fixed.polygon_bits, scene.fixed.polygon_tags,
        scene.polygon_starts, scene.polygon_items,
        scene.fixed.circles, scene.fixed.circle_bits, scene.fixed.circle_tags, scene.circle_starts, scene.circle_items,
        shapes.polygons, shapes.polygon_counts, shapes.polygon_bits, shapes.polygon_tags,
        shapes.circles, shapes.circle_bits, shapes.circle_tags,
        out_ranges, out_tags,
    )
    return out_ranges, out_tags
