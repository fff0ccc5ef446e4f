"""The ray caster's compiled kernels: numba functions that index the static scene in a grid and
cast every beam of a batch of scans (the Python API, which calls them, is
:mod:`sim_server.core.sensing.raycast`; the hit rules are explained there).

Units: metres for coordinates, ranges and cell sizes, radians for angles; ``t`` along a ray is
in metres, since every ray's direction is a unit vector. Arrays are float64 or int64 (int32 for
grid items, int8 for segment kinds), C-contiguous and writeable, exactly as compiled: the
Python API converts anything else (:func:`sim_server.core.compiled.typed`).

Every function here is compiled with :func:`sim_server.core.compiled.jit` (on-disk cache, NumPy's
error model: every division that could be by zero is guarded). They compile into one another,
and numba checks a cached function against its defining file only, so they all live in this one
file: editing it recompiles them all, at the next warm-up
(:func:`sim_server.core.sensing.raycast.warm_up`). The constants below are read at compile time
(changing one means editing this file, so the cache follows).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from sim_server.core.compiled import jit, jit_parallel

#: Hits closer together than this (m) count as one: the tags of both are merged.
TIE_TOLERANCE = 1e-9
#: Kinds of static segments: axis-aligned ones (every edge of a map image) take a cheaper test.
GENERAL, HORIZONTAL, VERTICAL = 0, 1, 2
#: Directions around a laser are cut into this many sectors; a moving shape is listed in the
#: sectors its bounding circle spans, so that a beam tests only the shapes of its own sector.
ANGLE_SECTORS = 256
#: With fewer moving shapes near a scan than this, every beam tests all of them (listing the
#: shapes by sector and finding each beam's sector cost more than a few bounding-circle tests).
SECTOR_MIN_SHAPES = 8
#: Stands for the sector lists of a scan that has none (no allocation per scan).
_NO_SECTORS = np.zeros(1, dtype=np.int64)
#: Most cells along one side of the grid that sorts moving shapes for culling.
MAX_MOVING_GRID_SIDE = 1024
#: Cells along one side of that grid per square root of the shapes it holds: about four cells a
#: shape in all, however short the sensors' range (a grid of the range's cells, 5 cm in a 100 m
#: world, was a million cells built on every cast: 19 ms a step).
MOVING_GRID_SIDE_PER_ROOT_SHAPE = 2.0


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
def _cast_scan(ox, oy, heading, first_beam, end_beam, max_range, mask, beams, walls, fixed, moving, near,
               out):  # pragma: no cover - compiled
    """Beams ``first_beam:end_beam`` of one scan from (ox, oy) (m) turned by ``heading`` (rad),
    up to ``max_range`` (m), seeing what shares a bit with ``mask``: each beam's closest hit's
    range (m) and tag (inf and -1 for none) into ``out`` (ranges, tags).

    ``beams`` is ``(local_cos, local_sin, local_angles)`` of every beam, relative to the heading;
    ``walls``, ``fixed`` and ``moving`` are the scene as :func:`_cast_scans` takes it. Of the
    moving shapes only those listed in ``near``, ``(near_polygons, near_polygon_count,
    near_circles, near_circle_count)``, are tested (their masks already checked).
    """
    local_cos, local_sin, local_angles = beams
    (segments, segment_kinds, segment_axis, segment_bits, segment_tags, x0, y0, cell, nx, ny, starts, walk_grid,
     clearance, all_segment_bits) = walls
    (fixed_polygons, fixed_counts, fixed_polygon_bits, fixed_polygon_tags, polygon_starts, polygon_items,
     fixed_circles, fixed_circle_bits, fixed_circle_tags, circle_starts, circle_items) = fixed
    polygons, polygon_counts, polygon_tags, polygon_radii = moving[0], moving[1], moving[3], moving[4]
    circles, circle_tags = moving[5], moving[7]
    near_polygons, near_polygon_count, near_circles, near_circle_count = near
    out_ranges, out_tags = out
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
    side = min(MAX_MOVING_GRID_SIDE, max(1.0, MOVING_GRID_SIDE_PER_ROOT_SHAPE * math.sqrt(n)))
    cell = max(cell, extent / side)
    nx = int(math.floor((boxes[:, 2].max() - x0) / cell)) + 1 if n else 1
    ny = int(math.floor((boxes[:, 3].max() - y0) / cell)) + 1 if n else 1
    starts, items = _build_box_grid(boxes, x0, y0, cell, nx, ny)
    return x0, y0, cell, nx, ny, starts, items


@jit
def _near_shapes(scan, ox, oy, reach, mask, moving, moving_grid, near_polygons, near_circles, seen):  # pragma: no cover
    """The moving shapes scan ``scan`` from (ox, oy) can see (bounding circle within ``reach``
    m, mask shared), found in ``moving_grid`` (:func:`_moving_grid`): their indices into
    ``near_polygons`` and ``near_circles`` in index order (so that ties between moving shapes
    resolve the same however they are found), and their counts. ``seen`` (one entry a shape) is
    stamped with ``scan + 1``: scans must come in increasing order."""
    polygons, polygon_bits, polygon_radii = moving[0], moving[2], moving[4]
    circles, circle_bits = moving[5], moving[6]
    gx0, gy0, gcell, gnx, gny, gstarts, gitems = moving_grid
    n_polygons = polygons.shape[0]
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
    near_polygons[:near_polygon_count].sort()
    near_circles[:near_circle_count].sort()
    return near_polygon_count, near_circle_count


@jit
def _cast_beam_range(first_beam, end_beam, scans, walls, fixed, moving, out, moving_grid):  # pragma: no cover - compiled
    """Beams ``first_beam:end_beam`` of :func:`_cast_scans` (of one scan or several), the moving
    shapes sorted into ``moving_grid`` (:func:`_moving_grid`); scratch arrays of its own, so
    that ranges of beams can run on different threads. A beam's range is the same whichever
    range it is cast in: each beam is cast on its own, against the same shapes."""
    origins_x, origins_y, headings, beam_starts, local_cos, local_sin, local_angles, max_ranges, masks = scans
    beams = (local_cos, local_sin, local_angles)
    near_polygons = np.empty(moving[0].shape[0], dtype=np.int64)
    near_circles = np.empty(moving[5].shape[0], dtype=np.int64)
    seen = np.zeros(moving[0].shape[0] + moving[5].shape[0], dtype=np.int64)
    count = origins_x.shape[0]
    scan = np.int64(np.searchsorted(beam_starts[:count], first_beam, side="right")) - 1
    scan = max(scan, np.int64(0))
    while scan < count and beam_starts[scan] < end_beam:
        begin = max(first_beam, beam_starts[scan])
        end = min(end_beam, beam_starts[scan + 1])
        if begin < end:
            ox = origins_x[scan]
            oy = origins_y[scan]
            near_polygon_count, near_circle_count = _near_shapes(
                scan, ox, oy, max_ranges[scan], masks[scan], moving, moving_grid, near_polygons, near_circles, seen
            )
            _cast_scan(
                ox, oy, headings[scan], begin, end, max_ranges[scan], masks[scan], beams, walls, fixed, moving,
                (near_polygons, near_polygon_count, near_circles, near_circle_count), out,
            )
        scan += 1


@jit
def _cast_scans(scans, walls, fixed, moving, out):  # pragma: no cover - compiled
    """Every beam of every scan into ``out`` (ranges in m, ``inf`` for no hit; tags, -1 for none).

    ``scans`` is ``(origins_x, origins_y, headings, beam_starts, local_cos, local_sin,
    local_angles, max_ranges, masks)``: scan ``i`` casts beams ``beam_starts[i]:beam_starts[i +
    1]`` (local directions ``local_cos, local_sin``) turned by ``headings[i]`` (rad) from its
    origin (m), up to ``max_ranges[i]`` (m), seeing what shares a bit with ``masks[i]``. The
    scene: ``walls`` (:meth:`~sim_server.core.sensing.raycast.StaticScene.walls`), ``fixed``
    (:meth:`~sim_server.core.sensing.raycast.StaticScene.fixed_shapes`) and ``moving``
    (:meth:`~sim_server.core.sensing.raycast.MovingShapes.arrays`); each scan sees the moving
    shapes within its range."""
    max_ranges = scans[7]
    reach_cell = max_ranges.max() if max_ranges.shape[0] else 1.0
    moving_grid = _moving_grid(moving[0], moving[4], moving[5], reach_cell)
    _cast_beam_range(0, scans[3][scans[0].shape[0]], scans, walls, fixed, moving, out, moving_grid)


@jit_parallel
def _cast_scans_parallel(scans, walls, fixed, moving, out, chunks):  # pragma: no cover - compiled
    """:func:`_cast_scans` with the beams cut into ``chunks`` runs of consecutive beams (of one
    scan or several) that numba's threads share out; every beam's range is the same as in the
    serial cast."""
    max_ranges = scans[7]
    reach_cell = max_ranges.max() if max_ranges.shape[0] else 1.0
    moving_grid = _moving_grid(moving[0], moving[4], moving[5], reach_cell)
    total = scans[3][scans[0].shape[0]]
    for chunk in prange(chunks):
        _cast_beam_range(chunk * total // chunks, (chunk + 1) * total // chunks, scans, walls, fixed, moving, out,
                         moving_grid)


@jit
def _place_shapes(poses, polygons, polygon_body, circles, circle_body):  # pragma: no cover - compiled
    """See :func:`sim_server.core.sensing.raycast.place_shapes`."""
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

