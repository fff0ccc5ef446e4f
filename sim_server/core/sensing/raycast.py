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

Compiling takes some 15 to 45 s, so it never happens in a step: :func:`warm_up` compiles every
specialisation the simulator uses before the first one (a world's first laser calls it as the
world loads; the server at start-up), and numba keeps the result in its on-disk cache (in
``__pycache__`` here, or ``NUMBA_CACHE_DIR``), which ``make setup`` fills (``python -m
sim_server.warm_up``): later processes load it in a few tenths of a second. The Python
functions below hand the compiled ones arrays of exactly the types compiled (float64 or int64,
C-contiguous, writeable; others are converted), since any other type would compile anew.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from time import perf_counter
from typing import Callable

import numpy as np
from numba import get_num_threads, njit, prange

LOGGER = logging.getLogger("sim_server")

#: Options of every compiled function: cached on disk; NumPy's error model, since every division
#: that could be by zero is guarded (Python's model checks each division: about 5 % slower).
JIT_OPTIONS = {"cache": True, "error_model": "numpy"}
#: Whether numba found a writable place for its on-disk cache (``__pycache__`` next to this file,
#: else ``NUMBA_CACHE_DIR`` or the user's cache directory); without one every process compiles.
CACHED = True


def jit(function, **options):
    """``njit`` with :data:`JIT_OPTIONS` (and ``options``); without the on-disk cache when numba
    finds nowhere to write it (it raises at decoration then), rather than failing the import."""
    global CACHED
    try:
        return njit(**JIT_OPTIONS, **options)(function)
    except RuntimeError:  # "cannot cache function ...: no locator available for file ..."
        CACHED = False
        return njit(**{**JIT_OPTIONS, **options, "cache": False})(function)


def _jit_parallel(function):
    """:func:`jit` with ``parallel=True``: ``prange`` loops share their iterations out among
    numba's threads (``NUMBA_NUM_THREADS``, default one per core)."""
    return jit(function, parallel=True)


def _typed(array, dtype) -> np.ndarray:
    """``array`` as the compiled functions take it: a C-contiguous, aligned, writeable array of
    ``dtype``. It is returned as is when it is one already (the usual case, so no copy), else
    copied: numba compiles a new specialisation for any other dtype, layout or a read-only
    array, and that would happen in the middle of a step."""
    if (
        isinstance(array, np.ndarray)
        and array.dtype == dtype
        and array.flags.c_contiguous
        and array.flags.aligned
        and array.flags.writeable
    ):
        return array
    return np.array(array, dtype=dtype, order="C")  # always a fresh, writeable copy


#: No hit: the range written for a beam that hits nothing.
NO_HIT = math.inf
#: Tag of a beam that hits nothing.
NO_TAG = -1
#: Grid cells (m) are chosen so that a cell holds a segment or so, within these bounds.
MIN_CELL_SIZE = 0.05
MAX_CELL_SIZE = 8.0
#: A cell's side is this times the side of the square each segment would have to itself. Rays
#: leap over empty space (see :func:`_clearance`), so small cells pay: measured best on the
#: office map between 0.3 and 0.5.
CELL_SCALE = 0.4
#: Most cells in the grid (memory: about 40 bytes per cell); larger scenes get larger cells.
MAX_GRID_CELLS = 16_000_000
#: Box2D polygons have at most 8 vertices.
MAX_VERTICES = 8
#: Hits closer together than this (m) count as one: the tags of both are merged.
TIE_TOLERANCE = 1e-9
#: Kinds of static segments: axis-aligned ones (every edge of a map image) take a cheaper test.
GENERAL, HORIZONTAL, VERTICAL = 0, 1, 2


@jit
def _axis_start(offset, direction, cell_index, cell):  # pragma: no cover - compiled
    """Along one grid axis, for a line at ``offset`` from the grid origin moving ``direction`` per
    unit of t: the t of the first cell boundary ahead and the t between boundaries."""
    if direction == 0.0:
        return math.inf, math.inf
    boundary = (cell_index + (1 if direction > 0 else 0)) * cell
    return (boundary - offset) / direction, cell / abs(direction)


@jit
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


@jit
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


@jit
def _box_cells(box, x0, y0, cell, nx, ny):  # pragma: no cover - compiled
    """The range of grid cells (first column, first row, last column, last row) a box overlaps."""
    cx0 = min(max(int(math.floor((box[0] - x0) / cell)), 0), nx - 1)
    cy0 = min(max(int(math.floor((box[1] - y0) / cell)), 0), ny - 1)
    cx1 = min(max(int(math.floor((box[2] - x0) / cell)), 0), nx - 1)
    cy1 = min(max(int(math.floor((box[3] - y0) / cell)), 0), ny - 1)
    return cx0, cy0, cx1, cy1


@jit
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


@jit
def _clearance(starts, polygon_starts, circle_starts, nx, ny):  # pragma: no cover - compiled
    """Per cell, the Chebyshev distance (in cells) to the nearest cell holding anything: 0 for an
    occupied cell; a ray in a cell of clearance k crosses only empty cells for (k - 1) cells."""
    far = nx + ny + 1
    distance = np.empty(nx * ny, dtype=np.int32)
    for c in range(nx * ny):
        occupied = starts[c + 1] > starts[c] or polygon_starts[c + 1] > polygon_starts[c] or circle_starts[c + 1] > circle_starts[c]
        distance[c] = 0 if occupied else far
    for cy in range(ny):  # forward pass: neighbours above and to the left
        for cx in range(nx):
            c = cy * nx + cx
            best = distance[c]
            if cx > 0:
                best = min(best, distance[c - 1] + 1)
            if cy > 0:
                best = min(best, distance[c - nx] + 1)
                if cx > 0:
                    best = min(best, distance[c - nx - 1] + 1)
                if cx < nx - 1:
                    best = min(best, distance[c - nx + 1] + 1)
            distance[c] = best
    for cy in range(ny - 1, -1, -1):  # backward pass: neighbours below and to the right
        for cx in range(nx - 1, -1, -1):
            c = cy * nx + cx
            best = distance[c]
            if cx < nx - 1:
                best = min(best, distance[c + 1] + 1)
            if cy < ny - 1:
                best = min(best, distance[c + nx] + 1)
                if cx < nx - 1:
                    best = min(best, distance[c + nx + 1] + 1)
                if cx > 0:
                    best = min(best, distance[c + nx - 1] + 1)
            distance[c] = best
    return distance


@jit
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


@jit
def _slab(offset, direction, inverse, size, t_enter, t_leave):  # pragma: no cover - compiled
    """Narrow the ray's span [t_enter, t_leave] to where it lies within [0, size] along one axis
    (``offset`` from the grid's origin, ``direction`` and its ``inverse``); empty: t_leave < 0."""
    if direction != 0.0:
        ta = (0.0 - offset) * inverse
        tb = (size - offset) * inverse
        return max(t_enter, min(ta, tb)), min(t_leave, max(ta, tb))
    if offset < 0.0 or offset > size:
        return t_enter, -1.0
    return t_enter, t_leave


@jit
def _ray_axis_segment(origin, direction, inverse, origin_along, direction_along, level, low, high):  # pragma: no cover
    """Distance along the unit ray to an axis-aligned segment, or inf: the segment lies on the line
    where one coordinate is ``level`` (the ray's ``origin``, ``direction`` and its ``inverse``
    along that axis) and spans [``low``, ``high``] in the other (``origin_along``,
    ``direction_along``). One multiplication instead of the general solve; map edges are all
    axis-aligned."""
    if direction == 0.0:
        return math.inf  # parallel: no hit, as in Box2D
    t = (level - origin) * inverse
    if t < 0.0:
        return math.inf
    crossing = origin_along + t * direction_along
    if low <= crossing <= high:
        return t
    return math.inf


@jit
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


@jit
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


#: Directions around a laser are cut into this many sectors; a moving shape is listed in the
#: sectors its bounding circle spans, so that a beam tests only the shapes of its own sector.
ANGLE_SECTORS = 256
#: With fewer moving shapes near a scan than this, every beam tests all of them (listing the
#: shapes by sector and finding each beam's sector cost more than a few bounding-circle tests).
SECTOR_MIN_SHAPES = 8
#: Batches of scans with at least this many beams in all are cast on several threads (one
#: 1081-beam scan, about 0.2 ms, is not worth waking them for).
PARALLEL_MIN_BEAMS = 8192
#: Runs of scans per thread in a parallel cast (scans differ in cost: more runs than threads
#: even the load out).
PARALLEL_CHUNKS_PER_THREAD = 4
#: Held while a parallel cast runs (see :func:`cast_scans`).
_PARALLEL_CAST = threading.Lock()
#: Stands for the sector lists of a scan that has none (no allocation per scan).
_NO_SECTORS = np.zeros(1, dtype=np.int64)


@jit
def _sectors(ox, oy, xs, ys, radii, count, sector_count):  # pragma: no cover - compiled
    """For items ``0..count-1`` with bounding circles (xs, ys, radii): per direction sector
    around (ox, oy), the items whose circle a ray in that sector may meet, in item order, as
    ``(starts, items)`` (sector ``b`` lists ``items[starts[b]:starts[b + 1]]``). Each item's
    sectors take one more on either side, so rounding in a beam's angle never loses it; an item
    whose circle holds the origin is in every sector."""
    per_radian = sector_count / (2.0 * math.pi)
    low = np.empty(count, dtype=np.int64)
    high = np.empty(count, dtype=np.int64)
    starts = np.zeros(sector_count + 1, dtype=np.int64)
    for k in range(count):
        to_x = xs[k] - ox
        to_y = ys[k] - oy
        distance = math.hypot(to_x, to_y)
        first = np.int64(0)
        last = np.int64(sector_count - 1)
        if distance > radii[k] * (1.0 + 1e-9) + 1e-12:
            half = math.asin(radii[k] / distance)
            direction = math.atan2(to_y, to_x)
            first = np.int64(math.floor((direction - half) * per_radian)) - 1
            last = np.int64(math.floor((direction + half) * per_radian)) + 1
            if last - first + 1 >= sector_count:
                first = np.int64(0)
                last = np.int64(sector_count - 1)
        low[k] = first
        high[k] = last
        for b in range(first, last + 1):
            starts[b % sector_count + 1] += 1
    for b in range(sector_count):
        starts[b + 1] += starts[b]
    items = np.empty(starts[sector_count], dtype=np.int64)
    filled = starts[:sector_count].copy()
    for k in range(count):
        for b in range(low[k], high[k] + 1):
            sector = b % sector_count
            items[filled[sector]] = k
            filled[sector] += 1
    return starts, items


@jit
def _cast_scan(
    ox, oy, heading, first_beam, end_beam, local_cos, local_sin, local_angles, max_range, mask,
    segments, segment_kinds, segment_axis, segment_bits, segment_tags, x0, y0, cell, nx, ny, starts, walk_grid,
    clearance, all_segment_bits,
    fixed_polygons, fixed_counts, fixed_polygon_bits, fixed_polygon_tags, polygon_starts, polygon_items,
    fixed_circles, fixed_circle_bits, fixed_circle_tags, circle_starts, circle_items,
    polygons, polygon_counts, polygon_tags, polygon_radii, near_polygons, near_polygon_count,
    circles, circle_tags, near_circles, near_circle_count,
    out_ranges, out_tags,
):  # pragma: no cover - compiled
    """Beams ``first_beam:end_beam`` of one scan from (ox, oy): each beam's closest hit's range
    and tag (inf and -1 for none) into ``out_ranges`` and ``out_tags``.

    Of the moving shapes only those listed in ``near_polygons[:near_polygon_count]`` and
    ``near_circles[:near_circle_count]`` are tested (their masks already checked). Beam
    directions are the beams' local unit vectors rotated by the heading.
    """
    grid_w = nx * cell
    grid_h = ny * cell
    has_fixed = fixed_polygons.shape[0] > 0 or fixed_circles.shape[0] > 0
    inv_cell = 1.0 / cell
    # Segments' masks need checking only when this laser does not see every layer.
    check_bits = (all_segment_bits & ~mask) != 0
    lx = ox - x0
    ly = oy - y0
    origin_inside = 0.0 <= lx < grid_w and 0.0 <= ly < grid_h
    origin_cx = min(max(int(math.floor(lx * inv_cell)), 0), nx - 1)
    origin_cy = min(max(int(math.floor(ly * inv_cell)), 0), ny - 1)
    cos_h = math.cos(heading)
    sin_h = math.sin(heading)
    # Moving shapes by direction sector, when there are enough of them to pay for it.
    sectored = near_polygon_count + near_circle_count >= SECTOR_MIN_SHAPES
    per_radian = ANGLE_SECTORS / (2.0 * math.pi)
    polygon_sector_starts = _NO_SECTORS
    polygon_sector_items = _NO_SECTORS
    circle_sector_starts = _NO_SECTORS
    circle_sector_items = _NO_SECTORS
    if sectored:
        centers_x = np.empty(near_polygon_count)
        centers_y = np.empty(near_polygon_count)
        bounds = np.empty(near_polygon_count)
        for k in range(near_polygon_count):
            p = near_polygons[k]
            centers_x[k] = polygons[p, 0, 0]
            centers_y[k] = polygons[p, 0, 1]
            bounds[k] = polygon_radii[p]
        polygon_sector_starts, polygon_sector_items = _sectors(
            ox, oy, centers_x, centers_y, bounds, near_polygon_count, ANGLE_SECTORS
        )
        centers_x = np.empty(near_circle_count)
        centers_y = np.empty(near_circle_count)
        bounds = np.empty(near_circle_count)
        for k in range(near_circle_count):
            c = near_circles[k]
            centers_x[k] = circles[c, 0]
            centers_y[k] = circles[c, 1]
            bounds[k] = circles[c, 2]
        circle_sector_starts, circle_sector_items = _sectors(
            ox, oy, centers_x, centers_y, bounds, near_circle_count, ANGLE_SECTORS
        )
    for beam in range(first_beam, end_beam):
        dx = local_cos[beam] * cos_h - local_sin[beam] * sin_h
        dy = local_sin[beam] * cos_h + local_cos[beam] * sin_h
        inv_dx = 1.0 / dx if dx != 0.0 else 0.0
        inv_dy = 1.0 / dy if dy != 0.0 else 0.0
        best = max_range
        best_tag = -1
        # Moving shapes first: their hits bound the grid walk.
        first_polygon, end_polygon = np.int64(0), near_polygon_count
        first_circle, end_circle = np.int64(0), near_circle_count
        if sectored:
            # The beam's direction is heading + local angle (the same as atan2(dy, dx) but for
            # rounding, which the sectors' one-sector margin absorbs), without an arctangent.
            sector = np.int64(math.floor((heading + local_angles[beam]) * per_radian)) % ANGLE_SECTORS
            first_polygon, end_polygon = polygon_sector_starts[sector], polygon_sector_starts[sector + 1]
            first_circle, end_circle = circle_sector_starts[sector], circle_sector_starts[sector + 1]
        for e in range(first_polygon, end_polygon):
            p = near_polygons[polygon_sector_items[e] if sectored else e]
            # Bounding circle first (about the first vertex): most beams pass wide of a robot.
            to_x = polygons[p, 0, 0] - ox
            to_y = polygons[p, 0, 1] - oy
            along = to_x * dx + to_y * dy
            radius = polygon_radii[p]
            if along + radius < 0.0 or along - radius > best:
                continue
            across = to_x * dy - to_y * dx
            if across * across > radius * radius:
                continue
            t = _ray_polygon(ox, oy, dx, dy, polygons[p], polygon_counts[p], best)
            if t < best:
                best = t
                best_tag = polygon_tags[p]
        for e in range(first_circle, end_circle):
            c = near_circles[circle_sector_items[e] if sectored else e]
            t = _ray_circle(ox, oy, dx, dy, circles[c, 0], circles[c, 1], circles[c, 2])
            if t <= best:
                best = t
                best_tag = circle_tags[c]
        if walk_grid:
            t_enter = 0.0
            t_leave = best
            if not origin_inside:
                # Clip the ray to the grid's box (slab method). From inside the grid, leaving it
                # is caught by the walk's bounds checks.
                t_enter, t_leave = _slab(lx, dx, inv_dx, grid_w, t_enter, t_leave)
                t_enter, t_leave = _slab(ly, dy, inv_dy, grid_h, t_enter, t_leave)
            if t_enter <= t_leave:
                if origin_inside:
                    cx = origin_cx
                    cy = origin_cy
                else:
                    cx = min(max(int(math.floor((lx + t_enter * dx) * inv_cell)), 0), nx - 1)
                    cy = min(max(int(math.floor((ly + t_enter * dy) * inv_cell)), 0), ny - 1)
                step_x = 1 if dx > 0 else -1
                step_y = 1 if dy > 0 else -1
                t_max_x = math.inf if dx == 0.0 else ((cx + (1 if dx > 0.0 else 0)) * cell - lx) * inv_dx
                t_max_y = math.inf if dy == 0.0 else ((cy + (1 if dy > 0.0 else 0)) * cell - ly) * inv_dy
                t_delta_x = cell * abs(inv_dx) if dx != 0.0 else math.inf
                t_delta_y = cell * abs(inv_dy) if dy != 0.0 else math.inf
                t_cell = t_enter  # where the ray entered the current cell
                while True:
                    c = cy * nx + cx
                    room = clearance[c] - 1
                    if room >= 1:
                        # The square of cells within ``room`` rings is empty: leap to where the
                        # ray leaves it, into the cell beyond.
                        t_x = math.inf
                        if dx > 0.0:
                            t_x = ((cx + room + 1) * cell - lx) * inv_dx
                        elif dx < 0.0:
                            t_x = ((cx - room) * cell - lx) * inv_dx
                        t_y = math.inf
                        if dy > 0.0:
                            t_y = ((cy + room + 1) * cell - ly) * inv_dy
                        elif dy < 0.0:
                            t_y = ((cy - room) * cell - ly) * inv_dy
                        if t_x <= t_y:
                            t_cell = t_x
                            cx += step_x * (room + 1)
                            cy = int(math.floor((ly + t_cell * dy) * inv_cell))
                        else:
                            t_cell = t_y
                            cy += step_y * (room + 1)
                            cx = int(math.floor((lx + t_cell * dx) * inv_cell))
                        if t_cell >= best or t_cell > t_leave or cx < 0 or cy < 0 or cx >= nx or cy >= ny:
                            break
                        t_max_x = math.inf if dx == 0.0 else ((cx + (1 if dx > 0.0 else 0)) * cell - lx) * inv_dx
                        t_max_y = math.inf if dy == 0.0 else ((cy + (1 if dy > 0.0 else 0)) * cell - ly) * inv_dy
                        continue
                    for s in range(starts[c], starts[c + 1]):  # segment data is stored per item
                        if check_bits and not segment_bits[s] & mask:
                            continue
                        kind = segment_kinds[s]
                        if kind == HORIZONTAL:
                            t = _ray_axis_segment(
                                oy, dy, inv_dy, ox, dx, segment_axis[s, 0], segment_axis[s, 1], segment_axis[s, 2]
                            )
                        elif kind == VERTICAL:
                            t = _ray_axis_segment(
                                ox, dx, inv_dx, oy, dy, segment_axis[s, 0], segment_axis[s, 1], segment_axis[s, 2]
                            )
                        else:
                            t = _ray_segment(ox, oy, dx, dy, segments[s, 0], segments[s, 1], segments[s, 2], segments[s, 3])
                        if t < best - TIE_TOLERANCE:
                            best = t
                            best_tag = segment_tags[s]
                        elif t <= best + TIE_TOLERANCE:
                            # As close as the best: both are hit (tags are bit sets, merged).
                            if t < best:
                                best = t
                            best_tag = segment_tags[s] if best_tag < 0 else best_tag | segment_tags[s]
                    if has_fixed:
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
                    t_cell = t_exit
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


#: Most cells along one side of the grid that sorts moving shapes for culling.
MAX_MOVING_GRID_SIDE = 1024


@jit
def _moving_grid(polygons, polygon_radii, circles, cell):  # pragma: no cover - compiled
    """Moving shapes sorted into a grid of ``cell``-sized squares by their bounding circles.

    Shape ``i`` is polygon ``i`` when ``i < P``, else circle ``i - P``. Returns the grid's
    origin, size, cell and CSR index (``starts``, ``items``).
    """
    n_polygons = polygons.shape[0]
    n = n_polygons + circles.shape[0]
    boxes = np.empty((n, 4))
    for i in range(n):
        if i < n_polygons:
            x = polygons[i, 0, 0]
            y = polygons[i, 0, 1]
            r = polygon_radii[i]
        else:
            x = circles[i - n_polygons, 0]
            y = circles[i - n_polygons, 1]
            r = circles[i - n_polygons, 2]
        boxes[i, 0] = x - r
        boxes[i, 1] = y - r
        boxes[i, 2] = x + r
        boxes[i, 3] = y + r
    if n == 0:
        x0 = 0.0
        y0 = 0.0
        extent = 1.0
    else:
        x0 = boxes[:, 0].min()
        y0 = boxes[:, 1].min()
        extent = max(boxes[:, 2].max() - x0, boxes[:, 3].max() - y0, 1e-6)
    cell = max(cell, extent / MAX_MOVING_GRID_SIDE)
    nx = int(math.floor((boxes[:, 2].max() - x0) / cell)) + 1 if n else 1
    ny = int(math.floor((boxes[:, 3].max() - y0) / cell)) + 1 if n else 1
    starts, items = _build_box_grid(boxes, x0, y0, cell, nx, ny)
    return x0, y0, cell, nx, ny, starts, items


@jit
def _cast_scan_range(
    first_scan, end_scan,
    origins_x, origins_y, headings, beam_starts, local_cos, local_sin, local_angles, max_ranges, masks,
    segments, segment_kinds, segment_axis, segment_bits, segment_tags, x0, y0, cell, nx, ny, starts, walk_grid,
    clearance, all_segment_bits,
    fixed_polygons, fixed_counts, fixed_polygon_bits, fixed_polygon_tags, polygon_starts, polygon_items,
    fixed_circles, fixed_circle_bits, fixed_circle_tags, circle_starts, circle_items,
    polygons, polygon_counts, polygon_bits, polygon_tags, polygon_radii,
    circles, circle_bits, circle_tags,
    out_ranges, out_tags,
    gx0, gy0, gcell, gnx, gny, gstarts, gitems,
):  # pragma: no cover - compiled
    """Scans ``first_scan:end_scan`` of :func:`_cast_scans`, the moving shapes sorted into the
    grid ``gx0 .. gitems`` (:func:`_moving_grid`); scratch arrays of its own, so that ranges of
    scans can run on different threads."""
    n_polygons = polygons.shape[0]
    near_polygons = np.empty(n_polygons, dtype=np.int64)
    near_circles = np.empty(circles.shape[0], dtype=np.int64)
    seen = np.zeros(n_polygons + circles.shape[0], dtype=np.int64)
    for scan in range(first_scan, end_scan):
        ox = origins_x[scan]
        oy = origins_y[scan]
        reach = max_ranges[scan]
        mask = masks[scan]
        # The moving shapes this scan can see: bounding circle within reach, mask shared.
        # Counters typed int64 from the start: a literal 0 would make numba compile _cast_scan a
        # second time, for a count of the literal type, doubling the cold compile.
        near_polygon_count = np.int64(0)
        near_circle_count = np.int64(0)
        window = np.array((ox - reach, oy - reach, ox + reach, oy + reach))
        cx0, cy0, cx1, cy1 = _box_cells(window, gx0, gy0, gcell, gnx, gny)
        for gy in range(cy0, cy1 + 1):
            for gx in range(cx0, cx1 + 1):
                c = gy * gnx + gx
                for k in range(gstarts[c], gstarts[c + 1]):
                    i = gitems[k]
                    if seen[i] == scan + 1:
                        continue
                    seen[i] = scan + 1
                    if i < n_polygons:
                        if polygon_bits[i] & mask:
                            distance = math.hypot(polygons[i, 0, 0] - ox, polygons[i, 0, 1] - oy)
                            if distance - polygon_radii[i] <= reach:
                                near_polygons[near_polygon_count] = i
                                near_polygon_count += 1
                    else:
                        j = i - n_polygons
                        if circle_bits[j] & mask:
                            distance = math.hypot(circles[j, 0] - ox, circles[j, 1] - oy)
                            if distance - circles[j, 2] <= reach:
                                near_circles[near_circle_count] = j
                                near_circle_count += 1
        # In index order, so ties between moving shapes resolve the same however they are found.
        near_polygons[:near_polygon_count].sort()
        near_circles[:near_circle_count].sort()
        _cast_scan(
            ox, oy, headings[scan], beam_starts[scan], beam_starts[scan + 1], local_cos, local_sin, local_angles, reach, mask,
            segments, segment_kinds, segment_axis, segment_bits, segment_tags, x0, y0, cell, nx, ny, starts, walk_grid,
            clearance, all_segment_bits,
            fixed_polygons, fixed_counts, fixed_polygon_bits, fixed_polygon_tags, polygon_starts, polygon_items,
            fixed_circles, fixed_circle_bits, fixed_circle_tags, circle_starts, circle_items,
            polygons, polygon_counts, polygon_tags, polygon_radii, near_polygons, near_polygon_count,
            circles, circle_tags, near_circles, near_circle_count,
            out_ranges, out_tags,
        )


@jit
def _cast_scans(
    origins_x, origins_y, headings, beam_starts, local_cos, local_sin, local_angles, max_ranges, masks,
    segments, segment_kinds, segment_axis, segment_bits, segment_tags, x0, y0, cell, nx, ny, starts, walk_grid,
    clearance, all_segment_bits,
    fixed_polygons, fixed_counts, fixed_polygon_bits, fixed_polygon_tags, polygon_starts, polygon_items,
    fixed_circles, fixed_circle_bits, fixed_circle_tags, circle_starts, circle_items,
    polygons, polygon_counts, polygon_bits, polygon_tags, polygon_radii,
    circles, circle_bits, circle_tags,
    out_ranges, out_tags,
):  # pragma: no cover - compiled
    """Every beam of every scan: scan ``i`` casts beams ``beam_starts[i]:beam_starts[i + 1]``
    (local directions ``local_cos, local_sin``) turned by ``headings[i]`` from its origin, seeing
    the moving shapes within its range."""
    reach_cell = max_ranges.max() if max_ranges.shape[0] else 1.0
    gx0, gy0, gcell, gnx, gny, gstarts, gitems = _moving_grid(polygons, polygon_radii, circles, reach_cell)
    _cast_scan_range(
        0, origins_x.shape[0],
        origins_x, origins_y, headings, beam_starts, local_cos, local_sin, local_angles, max_ranges, masks,
        segments, segment_kinds, segment_axis, segment_bits, segment_tags, x0, y0, cell, nx, ny, starts, walk_grid,
        clearance, all_segment_bits,
        fixed_polygons, fixed_counts, fixed_polygon_bits, fixed_polygon_tags, polygon_starts, polygon_items,
        fixed_circles, fixed_circle_bits, fixed_circle_tags, circle_starts, circle_items,
        polygons, polygon_counts, polygon_bits, polygon_tags, polygon_radii,
        circles, circle_bits, circle_tags,
        out_ranges, out_tags,
        gx0, gy0, gcell, gnx, gny, gstarts, gitems,
    )


@_jit_parallel
def _cast_scans_parallel(
    origins_x, origins_y, headings, beam_starts, local_cos, local_sin, local_angles, max_ranges, masks,
    segments, segment_kinds, segment_axis, segment_bits, segment_tags, x0, y0, cell, nx, ny, starts, walk_grid,
    clearance, all_segment_bits,
    fixed_polygons, fixed_counts, fixed_polygon_bits, fixed_polygon_tags, polygon_starts, polygon_items,
    fixed_circles, fixed_circle_bits, fixed_circle_tags, circle_starts, circle_items,
    polygons, polygon_counts, polygon_bits, polygon_tags, polygon_radii,
    circles, circle_bits, circle_tags,
    out_ranges, out_tags,
    chunks,
):  # pragma: no cover - compiled
    """:func:`_cast_scans` with the scans cut into ``chunks`` runs of consecutive scans that
    numba's threads share out (each scan's beams are the same as in the serial cast)."""
    reach_cell = max_ranges.max() if max_ranges.shape[0] else 1.0
    gx0, gy0, gcell, gnx, gny, gstarts, gitems = _moving_grid(polygons, polygon_radii, circles, reach_cell)
    scans = origins_x.shape[0]
    for chunk in prange(chunks):
        _cast_scan_range(
            chunk * scans // chunks, (chunk + 1) * scans // chunks,
            origins_x, origins_y, headings, beam_starts, local_cos, local_sin, local_angles, max_ranges, masks,
            segments, segment_kinds, segment_axis, segment_bits, segment_tags, x0, y0, cell, nx, ny, starts, walk_grid,
            clearance, all_segment_bits,
            fixed_polygons, fixed_counts, fixed_polygon_bits, fixed_polygon_tags, polygon_starts, polygon_items,
            fixed_circles, fixed_circle_bits, fixed_circle_tags, circle_starts, circle_items,
            polygons, polygon_counts, polygon_bits, polygon_tags, polygon_radii,
            circles, circle_bits, circle_tags,
            out_ranges, out_tags,
            gx0, gy0, gcell, gnx, gny, gstarts, gitems,
        )


def _axis_aligned(segments: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each segment's kind (:data:`GENERAL`, :data:`HORIZONTAL`, :data:`VERTICAL`) and, for the
    axis-aligned ones, (fixed coordinate, lowest, highest coordinate along the segment)."""
    x1, y1, x2, y2 = segments.T
    horizontal = (y1 == y2) & (x1 != x2)
    vertical = (x1 == x2) & (y1 != y2)
    kinds = np.full(len(segments), GENERAL, dtype=np.int8)
    kinds[horizontal] = HORIZONTAL
    kinds[vertical] = VERTICAL
    axis = np.zeros((len(segments), 3))
    axis[horizontal] = np.column_stack([y1, np.minimum(x1, x2), np.maximum(x1, x2)])[horizontal]
    axis[vertical] = np.column_stack([x1, np.minimum(y1, y2), np.maximum(y1, y2)])[vertical]
    return kinds, axis


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
        self.segments = _typed(np.reshape(self.segments, (-1, 4)), np.float64)
        self.segment_kinds, self.segment_axis = _axis_aligned(self.segments)
        self.bits = _typed(self.bits, np.int64)
        self.tags = _typed(self.tags, np.int64)
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
        cell = max(cell, math.sqrt(extent[0] * extent[1] / MAX_GRID_CELLS))
        self.cell = cell
        self.x0 = float(low[0]) - cell
        self.y0 = float(low[1]) - cell
        self.nx = int(math.ceil(extent[0] / cell)) + 2
        self.ny = int(math.ceil(extent[1] / cell)) + 2
        self.starts, self.items = _build_grid(self.segments, self.x0, self.y0, self.cell, self.nx, self.ny)
        self.polygon_starts, self.polygon_items = _build_box_grid(
            _typed(polygon_boxes, np.float64), self.x0, self.y0, self.cell, self.nx, self.ny
        )
        self.circle_starts, self.circle_items = _build_box_grid(
            _typed(circle_boxes, np.float64), self.x0, self.y0, self.cell, self.nx, self.ny
        )
        self.walk_grid = count > 0
        # The walk reads each cell's segments in a row: their data is copied in cell order.
        self.item_segments = np.ascontiguousarray(self.segments[self.items])
        self.item_kinds = np.ascontiguousarray(self.segment_kinds[self.items])
        self.item_axis = np.ascontiguousarray(self.segment_axis[self.items])
        self.item_bits = np.ascontiguousarray(self.bits[self.items])
        self.item_tags = np.ascontiguousarray(self.tags[self.items])
        #: Every segment's bits together (-1 when one has none, which forces the per-segment test).
        self.all_segment_bits = -1 if (self.bits == 0).any() else int(np.bitwise_or.reduce(self.bits, initial=0))
        self.clearance = _clearance(self.starts, self.polygon_starts, self.circle_starts, self.nx, self.ny)


@dataclass
class MovingShapes:
    """Shapes in the world frame that are tested directly, not through the grid: convex polygons
    and circles.

    Attributes:
        polygons: (P, 8, 2) vertices, counter-clockwise, padded.
        polygon_counts: (P,) vertex counts.
        polygon_bits, polygon_tags: (P,) collision bits and tags.
        circles: (C, 3) centre x, y and radius.
        circle_bits, circle_tags: (C,) collision bits and tags.
        polygon_radii: (P,) distance from each polygon's first vertex to its farthest (a bounding
            circle about the first vertex; rigid motion keeps it), computed when not given.
    """

    polygons: np.ndarray
    polygon_counts: np.ndarray
    polygon_bits: np.ndarray
    polygon_tags: np.ndarray
    circles: np.ndarray
    circle_bits: np.ndarray
    circle_tags: np.ndarray
    polygon_radii: np.ndarray | None = None

    def __post_init__(self) -> None:
        # Arrays already of the compiled functions' types (all the simulator's are) are kept as
        # they are: the level statics update their bits in place.
        self.polygons = _typed(self.polygons, np.float64)
        self.polygon_counts = _typed(self.polygon_counts, np.int64)
        self.polygon_bits = _typed(self.polygon_bits, np.int64)
        self.polygon_tags = _typed(self.polygon_tags, np.int64)
        self.circles = _typed(self.circles, np.float64)
        self.circle_bits = _typed(self.circle_bits, np.int64)
        self.circle_tags = _typed(self.circle_tags, np.int64)
        if self.polygon_radii is None:
            self.polygon_radii = bounding_radii(self.polygons)
        self.polygon_radii = _typed(self.polygon_radii, np.float64)

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


def place_shapes(
    poses: np.ndarray, polygons: np.ndarray, polygon_body: np.ndarray, circles: np.ndarray, circle_body: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Shapes given in body frames, placed at their bodies' poses (``poses``: (K, 3) x, y, yaw;
    ``polygons`` (P, 8, 2) and ``circles`` (C, 3) on bodies ``polygon_body`` and ``circle_body``).

    Returns the world-frame polygons (P, 8, 2) and circles (C, 3).
    """
    return _place_shapes(
        _typed(poses, np.float64), _typed(polygons, np.float64), _typed(polygon_body, np.int64),
        _typed(circles, np.float64), _typed(circle_body, np.int64),
    )


@jit
def _place_shapes(poses, polygons, polygon_body, circles, circle_body):  # pragma: no cover - compiled
    """See :func:`place_shapes`."""
    cos_t = np.cos(poses[:, 2])
    sin_t = np.sin(poses[:, 2])
    placed_polygons = np.empty_like(polygons)
    for p in range(polygons.shape[0]):
        b = polygon_body[p]
        for v in range(polygons.shape[1]):
            lx = polygons[p, v, 0]
            ly = polygons[p, v, 1]
            placed_polygons[p, v, 0] = poses[b, 0] + cos_t[b] * lx - sin_t[b] * ly
            placed_polygons[p, v, 1] = poses[b, 1] + sin_t[b] * lx + cos_t[b] * ly
    placed_circles = np.empty_like(circles)
    for c in range(circles.shape[0]):
        b = circle_body[c]
        lx = circles[c, 0]
        ly = circles[c, 1]
        placed_circles[c, 0] = poses[b, 0] + cos_t[b] * lx - sin_t[b] * ly
        placed_circles[c, 1] = poses[b, 1] + sin_t[b] * lx + cos_t[b] * ly
        placed_circles[c, 2] = circles[c, 2]
    return placed_polygons, placed_circles


def bounding_radii(polygons: np.ndarray) -> np.ndarray:
    """(P,) distance (m) from each padded polygon's first vertex to its farthest vertex."""
    if not len(polygons):
        return np.zeros(0)
    return np.sqrt(((polygons - polygons[:, :1, :]) ** 2).sum(axis=2).max(axis=1))


@dataclass
class ScanBatch:
    """Several scans cast in one call: scan ``i`` casts beams ``beam_starts[i]:beam_starts[i+1]``.

    Attributes:
        beam_starts: (S + 1,) first beam of each scan, then the total.
        local_angles: (B,) beam angles (rad) relative to their scan's heading.
        max_ranges: (S,) range of each scan (m).
        masks: (S,) collision bits each scan sees.
    """

    beam_starts: np.ndarray
    local_angles: np.ndarray
    max_ranges: np.ndarray
    masks: np.ndarray

    def __post_init__(self) -> None:
        self.beam_starts = _typed(self.beam_starts, np.int64)
        self.local_angles = _typed(self.local_angles, np.float64)
        self.max_ranges = _typed(self.max_ranges, np.float64)
        self.masks = _typed(self.masks, np.int64)
        self.local_cos = np.cos(self.local_angles)
        self.local_sin = np.sin(self.local_angles)

    @classmethod
    def of(cls, scans: "list[tuple[np.ndarray, float, int]]") -> "ScanBatch":
        """From ``(local angles, max range, mask)`` per scan."""
        counts = [len(angles) for angles, _, _ in scans]
        return cls(
            np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            np.ascontiguousarray(np.concatenate([angles for angles, _, _ in scans]), dtype=np.float64)
            if scans else np.zeros(0),
            np.array([max_range for _, max_range, _ in scans], dtype=np.float64),
            np.array([mask for _, _, mask in scans], dtype=np.int64),
        )

    @property
    def beam_count(self) -> int:
        """Beams of all scans together."""
        return int(self.beam_starts[-1])


def cast_scans(
    batch: ScanBatch,
    origins_x: np.ndarray,
    origins_y: np.ndarray,
    headings: np.ndarray,
    scene: StaticScene,
    shapes: MovingShapes | None = None,
    out_ranges: np.ndarray | None = None,
    out_tags: np.ndarray | None = None,
    parallel: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cast every beam of a batch of scans from their origins (m) and headings (rad) in one call.

    Each scan sees the static scene and those of ``shapes`` within its range. A batch of
    :data:`PARALLEL_MIN_BEAMS` beams or more is shared out among numba's threads when there are
    several (``parallel``: force one way or the other); the ranges are the same either way.

    Returns:
        ranges: (B,) distance to the closest hit, ``inf`` for no hit within range.
        tags: (B,) tag of the shape hit, :data:`NO_TAG` for none.
    """
    shapes = shapes or MovingShapes.empty()
    n = batch.beam_count
    ranges = np.empty(n, dtype=np.float64) if out_ranges is None else _typed(out_ranges, np.float64)
    tags = np.empty(n, dtype=np.int64) if out_tags is None else _typed(out_tags, np.int64)
    scans = len(batch.max_ranges)
    if parallel is None:
        parallel = n >= PARALLEL_MIN_BEAMS and scans > 1 and get_num_threads() > 1
    # One parallel cast at a time in a process: numba's fallback thread pool ("workqueue", where
    # neither TBB nor OpenMP is found) aborts the process on concurrent use; a second caller
    # casts serially meanwhile.
    if parallel and not _PARALLEL_CAST.acquire(blocking=False):
        parallel = False
    try:
        chunks = min(scans, PARALLEL_CHUNKS_PER_THREAD * get_num_threads()) if parallel else 0
        _cast(chunks, batch, origins_x, origins_y, headings, scene, shapes, ranges, tags)
    finally:
        if parallel:
            _PARALLEL_CAST.release()
    if out_ranges is not None and ranges is not out_ranges:
        out_ranges[...] = ranges  # a buffer of another type: filled all the same
        ranges = out_ranges
    if out_tags is not None and tags is not out_tags:
        out_tags[...] = tags
        tags = out_tags
    return ranges, tags


def _cast(chunks: int, batch: ScanBatch, origins_x: np.ndarray, origins_y: np.ndarray, headings: np.ndarray,
          scene: StaticScene, shapes: MovingShapes, ranges: np.ndarray, tags: np.ndarray) -> None:
    """The compiled cast of :func:`cast_scans` into ``ranges`` and ``tags``: on threads in
    ``chunks`` runs of scans, serially when ``chunks`` is 0."""
    fixed = scene.fixed
    # Every argument of the types warm_up() compiled (scalars too: a NumPy float32 would not be).
    (_cast_scans_parallel if chunks else _cast_scans)(
        _typed(origins_x, np.float64), _typed(origins_y, np.float64), _typed(headings, np.float64),
        batch.beam_starts, batch.local_cos, batch.local_sin, batch.local_angles, batch.max_ranges, batch.masks,
        scene.item_segments, scene.item_kinds, scene.item_axis, scene.item_bits, scene.item_tags,
        float(scene.x0), float(scene.y0), float(scene.cell), int(scene.nx), int(scene.ny),
        scene.starts, bool(scene.walk_grid), scene.clearance, int(scene.all_segment_bits),
        fixed.polygons, fixed.polygon_counts, fixed.polygon_bits, fixed.polygon_tags,
        scene.polygon_starts, scene.polygon_items,
        fixed.circles, fixed.circle_bits, fixed.circle_tags, scene.circle_starts, scene.circle_items,
        shapes.polygons, shapes.polygon_counts, shapes.polygon_bits, shapes.polygon_tags, shapes.polygon_radii,
        shapes.circles, shapes.circle_bits, shapes.circle_tags,
        ranges, tags,
        *((chunks,) if chunks else ()),
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
    batch = ScanBatch(
        np.array([0, len(angles)], dtype=np.int64),
        np.ascontiguousarray(angles, dtype=np.float64),
        np.array([max_range], dtype=np.float64),
        np.array([mask], dtype=np.int64),
    )
    origin = np.array([origin_x, origin_y, 0.0], dtype=np.float64)
    return cast_scans(batch, origin[0:1], origin[1:2], origin[2:3], scene, shapes, out_ranges, out_tags)


# ---------------------------------------------------------------------------------- warm-up
#: A warm-up slower than this (s) is logged: it compiled (or loaded its cache from a slow disk).
SLOW_WARM_UP = 1.0
#: The compiled functions the simulator calls from Python; the others are compiled into them.
ENTRY_POINTS = (_place_shapes, _build_grid, _build_box_grid, _clearance, _cast_scans, _cast_scans_parallel)
#: How often a warm-up step is tried when writing the cache fails (the code compiled is kept in
#: memory, so the next try goes on from there).
WARM_UP_TRIES = 4

_warm = False


def _cache_counts() -> tuple[int, int]:
    """(Specialisations loaded from numba's cache, compiled) so far, over :data:`ENTRY_POINTS`."""
    hits = misses = 0
    for function in ENTRY_POINTS:
        stats = getattr(function, "stats", None)  # plain functions under NUMBA_DISABLE_JIT
        if stats is not None:
            hits += sum(stats.cache_hits.values())
            misses += sum(stats.cache_misses.values())
    return hits, misses


def _warm_up_steps() -> list[Callable[[], object]]:
    """Calls of every entry point on a tiny scene, with arguments of exactly the types the
    simulator passes (built the way :mod:`sim_server.core.sensing.laser_scanner` builds them): the
    small functions first, so a cold compile is announced before the long one."""
    square = [(-0.2, -0.2), (0.2, -0.2), (0.2, 0.2), (-0.2, 0.2)]
    body_polygons = np.array([square + [square[0]] * (MAX_VERTICES - 4)], dtype=np.float64).reshape(-1, MAX_VERTICES, 2)
    body_circles = np.array([(0.3, 0.0, 0.1)], dtype=np.float64).reshape(-1, 3)
    one_body = np.zeros(1, dtype=np.int64)
    counts = np.array([4], dtype=np.int64)
    bits = np.ones(1, dtype=np.int64)
    state: dict[str, object] = {}

    def place() -> None:
        poses = np.array([(1.0, 1.0, 0.5)], dtype=np.float64)
        state["placed"] = place_shapes(poses, body_polygons, one_body, body_circles, one_body)

    def index() -> None:
        polygons, circles = state["placed"]
        fixed = MovingShapes(polygons, counts, bits, bits, circles, bits, bits)
        walls = np.array([(-2.0, -2.0, 2.0, -2.0), (2.0, -2.0, 2.0, 2.0), (2.0, 2.0, -2.0, -1.0)])
        state["scene"] = StaticScene(walls, np.array([1, 1, 2]), np.array([1, 1, 2]), fixed)

    def cast() -> None:
        polygons, circles = place_shapes(
            np.array([(-1.0, 0.0, 0.0)], dtype=np.float64), body_polygons, one_body, body_circles, one_body
        )
        moving = MovingShapes(polygons, counts, bits, bits, circles, bits, bits)
        angles = -1.0 + 0.25 * np.arange(9, dtype=np.float64)
        batch = ScanBatch.of([(angles, 5.0, 1), (angles, 3.0, 3)])
        origins = np.array([(0.0, 0.0, 0.0), (0.5, -0.5, 1.0)], dtype=np.float64).T.copy()
        cast_scans(batch, origins[0], origins[1], origins[2], state["scene"], moving, parallel=False)
        cast_scans(batch, origins[0], origins[1], origins[2], state["scene"], moving, parallel=True)

    return [place, index, cast]


def _notice(message: str) -> None:
    """Log ``message`` on the ``sim_server`` logger at INFO where INFO is shown (the server routes
    it to its ROS logger), else as a warning: a pause of half a minute must not go unexplained."""
    LOGGER.log(logging.INFO if LOGGER.isEnabledFor(logging.INFO) else logging.WARNING, message)


def warm_up(log: Callable[[str], None] | None = None) -> float:
    """Compile every specialisation of the ray caster the simulator uses, or load it from
    numba's on-disk cache, by casting on a tiny scene: afterwards no scan compiles.

    The first run after an install or an update of this file compiles (some 15 to 45 s) and
    writes the cache (``__pycache__`` next to this file, or ``NUMBA_CACHE_DIR``); later runs load
    it (a few tenths of a second). Only the first call in a process does anything.

    Args:
        log: where to say so when it takes more than :data:`SLOW_WARM_UP` seconds (default: the
            ``sim_server`` logger, see :func:`_notice`).

    Returns:
        The seconds it took.
    """
    global _warm
    start = perf_counter()
    if _warm:
        return perf_counter() - start
    log = log or _notice
    announced = False
    write_failed = False
    steps = _warm_up_steps()
    for number, step in enumerate(steps):
        for attempt in range(WARM_UP_TRIES):
            try:
                step()
                break
            except OSError as error:  # writing the cache failed (disk full, say)
                if attempt == WARM_UP_TRIES - 1:
                    raise
                if not write_failed:
                    LOGGER.warning(f"could not write numba's cache of the ray caster ({error}); going on without")
                    write_failed = True
        elapsed = perf_counter() - start
        if not announced and elapsed > SLOW_WARM_UP and number < len(steps) - 1 and _cache_counts()[1]:
            log(
                "compiling the ray caster (first run after install; cached afterwards)"
                if CACHED else
                "compiling the ray caster (numba has no writable cache directory, so every run compiles; "
                "set NUMBA_CACHE_DIR to a writable one)"
            )
            announced = True
    _warm = True
    elapsed = perf_counter() - start
    if elapsed > SLOW_WARM_UP:
        hits, misses = _cache_counts()
        if misses:
            cached = " and cached it on disk" if CACHED and not write_failed else ""
            log(f"compiled the ray caster in {elapsed:.1f} s{cached}")
        else:
            log(f"loaded the compiled ray caster from numba's cache in {elapsed:.1f} s")
    return elapsed
