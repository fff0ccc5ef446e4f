"""ORCA: optimal reciprocal collision avoidance (van den Berg, Guy, Lin and Manocha 2011).

Each agent picks the velocity nearest to its preferred one that, for ``time_horizon`` seconds,
collides with none of its nearest neighbours, each taking half the responsibility (a robot,
which does not take part, none: the agent takes all of it), and for
``time_horizon_obstacles`` seconds with no wall. The constraints are half-planes of velocity
(ORCA lines); the velocity is found by RVO2's incremental linear programs
(``linearProgram1..3``: where the lines leave no room, the velocity that violates the agents'
lines least, the walls' lines kept). Everything follows RVO2's ``Agent::computeNewVelocity``,
written here after the paper and RVO2's published algorithm, for every agent in one compiled
call, in float64 (RVO2 computes in float32).

Walls are RVO2's obstacles (:mod:`~sim_server.core.crowd.orca_obstacles`: the wall segments as
two-sided loops of vertices). Every edge an agent sees (it lies on the edge's right) within its
obstacle range ``time_horizon_obstacles * max_speed + radius`` (RVO2's ``computeNeighbors``) is
taken, nearest first (equal distances: lower vertex number first), and gives one line unless
lines already made cover it (both its ends, shrunk by the time horizon, lie at least
``radius / time_horizon_obstacles`` beyond one of them). An edge within the radius gives a line
that only lets the agent move away; else its velocity obstacle is the truncated cone of the edge
widened by the radius: two legs (tangents to the rounded convex ends; a concave end's leg runs
along the cut-off line; a leg that points into the neighbouring edge is replaced by that edge,
and the line it would give is left to that edge) and the cut-off line of the edge seen after
``time_horizon_obstacles``, with its rounded ends. The current velocity is projected onto the
nearest of these, and the tangent there is the line (obstacles take all the responsibility).
RVO2 sorts the edges by inserting each into a list; here they go into buckets of distance, and
only those the lines of nearer buckets leave uncovered are sorted (:func:`_obstacle_lines`): the
same lines in the same order. Neighbours are found in square rings of grid cells round each
agent, stopping where the farthest of a full list is nearer (:func:`nearest_neighbors`), as
RVO2's k-D tree narrows its range.

Where RVO2's lines can all be met within the speed limit, a step keeps every body at least its
radius from every wall. Where they cannot (a body pressed into a corner or into a door narrower
than it), RVO2's last program keeps the velocity that violates them least, and RVO2 never looks
at a segment whose line passes through the agent's centre (it is on neither side). So a last
check stays: the step is swept against the wall segments themselves, and only one that would
bring the body nearer than its radius (:data:`ENTRY_TOLERANCE`) is cut
(:func:`~sim_server.core.crowd.walls.keep_out_of_walls`); where RVO2's answer is safe, it is
RVO2's.

Units: m, s, m/s.
"""

from __future__ import annotations

import math
import numpy as np

from sim_server.core.compiled import jit
from sim_server.core.format.crowd_file import OrcaParameters
from sim_server.core.crowd.neighbors import cell_span
from sim_server.core.crowd.walls import closest_point, keep_out_of_walls, walls_within

#: RVO2's epsilon of parallel lines (and of its "already covered" test).
EPSILON = 1.0e-5
#: Cells of the agents' grid across the neighbour distance (:func:`neighbor_cell`).
NEIGHBOR_CELLS_PER_RANGE = 4.0
#: Smallest side (m) of the agents' grid's cells.
MIN_NEIGHBOR_CELL = 0.5
#: Most walls the last check of a step looks at (the nearest within one step's reach).
MAX_STEP_WALLS = 8
#: Slack (m) added to one step's reach when finding the walls of the last check.
STEP_REACH_SLACK = 0.05
#: How far (m) a step may bring a body within its radius of a wall before the last check cuts
#: it: RVO2's lines let a body slide along a wall at exactly its radius, which rounding may
#: undercut by far less.
ENTRY_TOLERANCE = 1.0e-9


__all__ = ["OrcaParameters", "orca_step", "orca_lines", "neighbor_cell", "nearest_neighbors", "obstacle_neighbors"]

_NEIGHBOR_DISTANCE, _MAX_NEIGHBORS, _HORIZON, _HORIZON_OBSTACLES, _MULTIPLIER, _STOP = range(6)


#: Preferred velocities are turned this much (rad) clockwise, to the right (:func:`keep_right`).
#: Walking straight at a standing body, ORCA only slows (its half-plane faces the body head-on)
#: and never passes: RVO2's examples perturb preferred velocities at random by up to 1e-4 m/s
#: for this; a fixed turn to the right does it deterministically, and people pass on the right,
#: as the social force's tie has them do (:data:`~sim_server.core.crowd.social_force.ROBOT_TIE`).
ORCA_KEEP_RIGHT = 1e-3
_KEEP_RIGHT = np.array([[math.cos(ORCA_KEEP_RIGHT), -math.sin(ORCA_KEEP_RIGHT)],
                        [math.sin(ORCA_KEEP_RIGHT), math.cos(ORCA_KEEP_RIGHT)]])


def keep_right(preferred: np.ndarray) -> np.ndarray:
    """The preferred velocities (N, 2) (m/s) turned clockwise by :data:`ORCA_KEEP_RIGHT`."""
    return preferred @ _KEEP_RIGHT


def neighbor_cell(neighbor_distance: float) -> float:
    """The side (m) of the cells of the agents' grid (:func:`~sim_server.core.crowd.neighbors.build_grid`)
    that :func:`orca_step` searches best for neighbours within ``neighbor_distance`` (m)."""
    return max(neighbor_distance / NEIGHBOR_CELLS_PER_RANGE, MIN_NEIGHBOR_CELL)


@jit
def _det(ax, ay, bx, by):  # pragma: no cover - compiled
    return ax * by - ay * bx


@jit
def _program1(lines, line_no, radius, opt_x, opt_y, direction_opt, result):  # pragma: no cover - compiled
    """Best velocity on line ``line_no`` within the speed circle and lines before it (RVO2's
    linearProgram1); False where there is none. Lines are rows (point x, y, direction x, y)."""
    px, py, dx, dy = lines[line_no, 0], lines[line_no, 1], lines[line_no, 2], lines[line_no, 3]
    dot = px * dx + py * dy
    discriminant = dot * dot + radius * radius - (px * px + py * py)
    if discriminant < 0.0:
        return False
    root = math.sqrt(discriminant)
    t_left, t_right = -dot - root, -dot + root
    for i in range(line_no):
        denominator = _det(dx, dy, lines[i, 2], lines[i, 3])
        numerator = _det(lines[i, 2], lines[i, 3], px - lines[i, 0], py - lines[i, 1])
        if abs(denominator) <= EPSILON:
            if numerator < 0.0:
                return False
            continue
        t = numerator / denominator
        if denominator >= 0.0:
            t_right = min(t_right, t)
        else:
            t_left = max(t_left, t)
        if t_left > t_right:
            return False
    if direction_opt:
        t = t_right if opt_x * dx + opt_y * dy > 0.0 else t_left
    else:
        t = dx * (opt_x - px) + dy * (opt_y - py)
        t = min(max(t, t_left), t_right)
    result[0] = px + t * dx
    result[1] = py + t * dy
    return True


@jit
def _program2(lines, count, radius, opt_x, opt_y, direction_opt, result):  # pragma: no cover - compiled
    """Velocity nearest to the optimum within the speed circle and ``lines[:count]`` (RVO2's
    linearProgram2); returns the first line it failed on, ``count`` when none."""
    if direction_opt:
        result[0], result[1] = opt_x * radius, opt_y * radius
    elif opt_x * opt_x + opt_y * opt_y > radius * radius:
        norm = math.sqrt(opt_x * opt_x + opt_y * opt_y)
        result[0], result[1] = opt_x / norm * radius, opt_y / norm * radius
    else:
        result[0], result[1] = opt_x, opt_y
    for i in range(count):
        if _det(lines[i, 2], lines[i, 3], lines[i, 0] - result[0], lines[i, 1] - result[1]) > 0.0:
            saved_x, saved_y = result[0], result[1]  # scalars: an array here cost an allocation a call
            if not _program1(lines, i, radius, opt_x, opt_y, direction_opt, result):
                result[0], result[1] = saved_x, saved_y
                return i
    return count


@jit
def _program3(lines, count, obstacle_lines, begin, radius, result, projected):  # pragma: no cover - compiled
    """Where the agents' lines cannot all be met: the velocity that violates them least, the
    walls' lines kept (RVO2's linearProgram3)."""
    distance = 0.0
    for i in range(begin, count):
        if _det(lines[i, 2], lines[i, 3], lines[i, 0] - result[0], lines[i, 1] - result[1]) > distance:
            projected[:obstacle_lines] = lines[:obstacle_lines]
            size = obstacle_lines
            for j in range(obstacle_lines, i):
                determinant = _det(lines[i, 2], lines[i, 3], lines[j, 2], lines[j, 3])
                if abs(determinant) <= EPSILON:
                    if lines[i, 2] * lines[j, 2] + lines[i, 3] * lines[j, 3] > 0.0:
                        continue
                    px = 0.5 * (lines[i, 0] + lines[j, 0])
                    py = 0.5 * (lines[i, 1] + lines[j, 1])
                else:
                    along = _det(lines[j, 2], lines[j, 3], lines[i, 0] - lines[j, 0], lines[i, 1] - lines[j, 1]) / determinant
                    px = lines[i, 0] + along * lines[i, 2]
                    py = lines[i, 1] + along * lines[i, 3]
                dx = lines[j, 2] - lines[i, 2]
                dy = lines[j, 3] - lines[i, 3]
                norm = math.sqrt(dx * dx + dy * dy)
                if norm > 0.0:
                    dx, dy = dx / norm, dy / norm
                projected[size, 0], projected[size, 1], projected[size, 2], projected[size, 3] = px, py, dx, dy
                size += 1
            saved_x, saved_y = result[0], result[1]
            if _program2(projected, size, radius, -lines[i, 3], lines[i, 2], True, result) < size:
                result[0], result[1] = saved_x, saved_y
            distance = _det(lines[i, 2], lines[i, 3], lines[i, 0] - result[0], lines[i, 1] - result[1])


@jit
def obstacle_neighbors(px, py, range_sq, ox0, oy0, ocell, onx, ony, ostarts, oitems, oedges, ofirst, found_vertex,
                       found_distance_sq):  # pragma: no cover - compiled
    """The edges seen from (px, py) (m; it lies on their right) nearer than ``range_sq`` (m^2),
    in no order, into ``found_vertex`` and ``found_distance_sq`` (RVO2's
    ``computeObstacleNeighbors``); returns their count. The grid is
    :meth:`~sim_server.core.crowd.orca_obstacles.OrcaObstacles.arrays`' (an item is an edge and
    its twin, stored with it)."""
    found = 0
    reach = math.sqrt(range_sq)
    ix_low, ix_high, iy_low, iy_high = cell_span(px, py, reach, ox0, oy0, ocell, onx, ony)
    for iy in range(iy_low, iy_high + 1):
        for ix in range(ix_low, ix_high + 1):
            c = iy * onx + ix
            for k in range(ostarts[c], ostarts[c + 1]):
                if ix != max(ofirst[k, 0], ix_low) or iy != max(ofirst[k, 1], iy_low):
                    continue  # met in an earlier cell
                ax, ay, ex, ey = oedges[k, 0], oedges[k, 1], oedges[k, 2], oedges[k, 3]
                left = (ax - px) * ey - (ay - py) * ex
                if left < 0.0:  # the agent is on the edge's right
                    v = oitems[k, 0]
                elif left > 0.0 and oitems[k, 1] >= 0:  # on its twin's right
                    v = oitems[k, 1]
                else:
                    continue
                along = min(max(((px - ax) * ex + (py - ay) * ey) * oedges[k, 4], 0.0), 1.0)
                qx, qy = ax + along * ex - px, ay + along * ey - py
                distance_sq = qx * qx + qy * qy
                if distance_sq < range_sq:
                    found_vertex[found] = v
                    found_distance_sq[found] = distance_sq
                    found += 1
    return found


@jit
def _add_line(lines, size, px, py, dx, dy):  # pragma: no cover - compiled
    """Write line ``size`` (a point and a direction; the allowed side on its left); returns
    ``size + 1``."""
    lines[size, 0], lines[size, 1], lines[size, 2], lines[size, 3] = px, py, dx, dy
    return size + 1


@jit
def _covered(lines, size, rx1, ry1, rx2, ry2, inverse_horizon, radius):  # pragma: no cover - compiled
    """RVO2's "already covered": whether both ends of an edge (relative to the agent, m), shrunk
    by the time horizon, lie at least ``radius * inverse_horizon`` beyond one of ``lines[:size]``."""
    reach = inverse_horizon * radius
    for j in range(size):
        x, y, dx, dy = lines[j, 0], lines[j, 1], lines[j, 2], lines[j, 3]
        first = (inverse_horizon * rx1 - x) * dy - (inverse_horizon * ry1 - y) * dx - reach
        second = (inverse_horizon * rx2 - x) * dy - (inverse_horizon * ry2 - y) * dx - reach
        if first >= -EPSILON and second >= -EPSILON:
            return True
    return False


@jit
def _edge_line(px, py, vx, vy, radius, inverse_horizon, first, points, next_vertex, previous_vertex, directions, convex,
               lines, size):  # pragma: no cover - compiled
    """Add the ORCA line of the edge of vertex ``first`` for an agent of ``radius`` (m) at (px,
    py) moving at (vx, vy) (m/s), ``inverse_horizon`` the inverse of ``time_horizon_obstacles``
    (1/s), unless ``lines[:size]`` cover it (RVO2's obstacle part of ``computeNewVelocity``, for
    one edge); returns the new count."""
    radius_sq = radius * radius
    second = next_vertex[first]
    rx1, ry1 = points[first, 0] - px, points[first, 1] - py
    rx2, ry2 = points[second, 0] - px, points[second, 1] - py
    if _covered(lines, size, rx1, ry1, rx2, ry2, inverse_horizon, radius):
        return size
    distance_sq1 = rx1 * rx1 + ry1 * ry1
    distance_sq2 = rx2 * rx2 + ry2 * ry2
    ex, ey = rx2 - rx1, ry2 - ry1
    along = (-rx1 * ex - ry1 * ey) / (ex * ex + ey * ey)
    gx, gy = -rx1 - along * ex, -ry1 - along * ey
    distance_sq_line = gx * gx + gy * gy
    # the body touches the edge: a line through the origin, moving away allowed
    if along < 0.0 and distance_sq1 <= radius_sq:
        norm = math.sqrt(distance_sq1)
        if convex[first] and norm > 0.0:
            size = _add_line(lines, size, 0.0, 0.0, -ry1 / norm, rx1 / norm)
        return size
    if along > 1.0 and distance_sq2 <= radius_sq:
        norm = math.sqrt(distance_sq2)
        if convex[second] and rx2 * directions[second, 1] - ry2 * directions[second, 0] >= 0.0 and norm > 0.0:
            size = _add_line(lines, size, 0.0, 0.0, -ry2 / norm, rx2 / norm)
        return size
    if 0.0 <= along <= 1.0 and distance_sq_line <= radius_sq:
        size = _add_line(lines, size, 0.0, 0.0, -directions[first, 0], -directions[first, 1])
        return size
    # the legs; seen obliquely, both come from one end
    if along < 0.0 and distance_sq_line <= radius_sq:
        if not convex[first]:
            return size
        second = first
        leg = math.sqrt(distance_sq1 - radius_sq)
        lx = (rx1 * leg - ry1 * radius) / distance_sq1
        ly = (rx1 * radius + ry1 * leg) / distance_sq1
        rgx = (rx1 * leg + ry1 * radius) / distance_sq1
        rgy = (-rx1 * radius + ry1 * leg) / distance_sq1
    elif along > 1.0 and distance_sq_line <= radius_sq:
        if not convex[second]:
            return size
        first = second
        leg = math.sqrt(distance_sq2 - radius_sq)
        lx = (rx2 * leg - ry2 * radius) / distance_sq2
        ly = (rx2 * radius + ry2 * leg) / distance_sq2
        rgx = (rx2 * leg + ry2 * radius) / distance_sq2
        rgy = (-rx2 * radius + ry2 * leg) / distance_sq2
    else:
        if convex[first]:
            leg = math.sqrt(distance_sq1 - radius_sq)
            lx = (rx1 * leg - ry1 * radius) / distance_sq1
            ly = (rx1 * radius + ry1 * leg) / distance_sq1
        else:  # a concave end: the leg runs along the cut-off line
            lx, ly = -directions[first, 0], -directions[first, 1]
        if convex[second]:
            leg = math.sqrt(distance_sq2 - radius_sq)
            rgx = (rx2 * leg + ry2 * radius) / distance_sq2
            rgy = (-rx2 * radius + ry2 * leg) / distance_sq2
        else:
            rgx, rgy = directions[first, 0], directions[first, 1]
    # a leg pointing into the neighbouring edge is that edge ("foreign": no line of its own)
    left_foreign = False
    right_foreign = False
    neighbour = previous_vertex[first]
    if convex[first] and lx * -directions[neighbour, 1] - ly * -directions[neighbour, 0] >= 0.0:
        lx, ly = -directions[neighbour, 0], -directions[neighbour, 1]
        left_foreign = True
    if convex[second] and rgx * directions[second, 1] - rgy * directions[second, 0] <= 0.0:
        rgx, rgy = directions[second, 0], directions[second, 1]
        right_foreign = True
    # the cut-off centres, and where the velocity projects
    cx1, cy1 = inverse_horizon * (points[first, 0] - px), inverse_horizon * (points[first, 1] - py)
    cx2, cy2 = inverse_horizon * (points[second, 0] - px), inverse_horizon * (points[second, 1] - py)
    cut_x, cut_y = cx2 - cx1, cy2 - cy1
    one_end = first == second
    if one_end:
        t = 0.5
    else:
        t = ((vx - cx1) * cut_x + (vy - cy1) * cut_y) / (cut_x * cut_x + cut_y * cut_y)
    t_left = (vx - cx1) * lx + (vy - cy1) * ly
    t_right = (vx - cx2) * rgx + (vy - cy2) * rgy
    shift = radius * inverse_horizon
    if (t < 0.0 and t_left < 0.0) or (one_end and t_left < 0.0 and t_right < 0.0):
        size = _cutoff_circle_line(lines, size, vx, vy, cx1, cy1, rx1, ry1, shift)
        return size
    if t > 1.0 and t_right < 0.0:
        size = _cutoff_circle_line(lines, size, vx, vy, cx2, cy2, rx2, ry2, shift)
        return size
    if t < 0.0 or t > 1.0 or one_end:
        distance_sq_cutoff = math.inf
    else:
        ux, uy = vx - (cx1 + t * cut_x), vy - (cy1 + t * cut_y)
        distance_sq_cutoff = ux * ux + uy * uy
    if t_left < 0.0:
        distance_sq_left = math.inf
    else:
        ux, uy = vx - (cx1 + t_left * lx), vy - (cy1 + t_left * ly)
        distance_sq_left = ux * ux + uy * uy
    if t_right < 0.0:
        distance_sq_right = math.inf
    else:
        ux, uy = vx - (cx2 + t_right * rgx), vy - (cy2 + t_right * rgy)
        distance_sq_right = ux * ux + uy * uy
    if distance_sq_cutoff <= distance_sq_left and distance_sq_cutoff <= distance_sq_right:
        dx, dy = -directions[first, 0], -directions[first, 1]
        size = _add_line(lines, size, cx1 - shift * dy, cy1 + shift * dx, dx, dy)
    elif distance_sq_left <= distance_sq_right:
        if not left_foreign:
            size = _add_line(lines, size, cx1 - shift * ly, cy1 + shift * lx, lx, ly)
    elif not right_foreign:
        size = _add_line(lines, size, cx2 + shift * rgy, cy2 - shift * rgx, -rgx, -rgy)
    return size


@jit
def _obstacle_lines(px, py, vx, vy, radius, inverse_horizon, found, found_vertex, found_distance_sq, points,
                    next_vertex, previous_vertex, directions, convex, order_vertex, order_distance_sq, buckets,
                    lines):  # pragma: no cover - compiled
    """The ORCA lines of the edges ``found_vertex[:found]`` (in any order; their squared
    distances ``found_distance_sq``, m^2) for an agent of ``radius`` (m) at (px, py) moving at
    (vx, vy) (m/s), ``inverse_horizon`` the inverse of ``time_horizon_obstacles`` (1/s), into
    ``lines``; returns their count. RVO2 takes the edges nearest first (equal distances: here
    by vertex number), each giving a line unless the lines before cover it. The same lines come
    with less sorting: the edges go into buckets of squared distance (a counting sort into
    ``order_vertex``, ``order_distance_sq``, ``buckets`` scratch), and in each bucket, nearest
    first, only those the lines so far leave uncovered are sorted and taken (an edge covered by
    the lines of nearer edges is covered by any more of them)."""
    count = found // 8 + 1
    starts, fill = buckets[: count + 1], buckets[count + 1: 2 * count + 1]
    starts[:] = 0
    scale = count / max(found_distance_sq[:found].max(), 1e-300) * (1.0 - 1e-12) if found else 0.0
    for k in range(found):
        starts[min(int(found_distance_sq[k] * scale), count - 1) + 1] += 1
    for b in range(count):
        starts[b + 1] += starts[b]
    fill[:] = starts[:count]
    for k in range(found):
        b = min(int(found_distance_sq[k] * scale), count - 1)
        order_vertex[fill[b]] = found_vertex[k]
        order_distance_sq[fill[b]] = found_distance_sq[k]
        fill[b] += 1
    size = 0
    for b in range(count):
        kept = starts[b]
        for k in range(starts[b], starts[b + 1]):
            v, d = order_vertex[k], order_distance_sq[k]
            w = next_vertex[v]
            if _covered(lines, size, points[v, 0] - px, points[v, 1] - py, points[w, 0] - px, points[w, 1] - py,
                        inverse_horizon, radius):
                continue
            position = kept  # insertion among the kept, by distance, then vertex number
            while position > starts[b] and (order_distance_sq[position - 1] > d or (
                    order_distance_sq[position - 1] == d and order_vertex[position - 1] > v)):
                order_vertex[position] = order_vertex[position - 1]
                order_distance_sq[position] = order_distance_sq[position - 1]
                position -= 1
            order_vertex[position] = v
            order_distance_sq[position] = d
            kept += 1
        for k in range(starts[b], kept):
            size = _edge_line(px, py, vx, vy, radius, inverse_horizon, order_vertex[k], points, next_vertex,
                              previous_vertex, directions, convex, lines, size)
    return size


@jit
def _cutoff_circle_line(lines, size, vx, vy, cx, cy, rx, ry, shift):  # pragma: no cover - compiled
    """Add the line tangent to the cut-off circle about (cx, cy) (radius ``shift``, m/s) where
    the velocity (vx, vy) projects onto it (``rx, ry``: the vertex relative to the agent, whose
    opposite direction stands in where the velocity is the centre); returns the new count."""
    wx, wy = vx - cx, vy - cy
    norm = math.sqrt(wx * wx + wy * wy)
    if norm == 0.0:
        wx, wy = -rx, -ry
        norm = math.sqrt(wx * wx + wy * wy)
        if norm == 0.0:
            return size
    wx, wy = wx / norm, wy / norm
    return _add_line(lines, size, cx + shift * wx, cy + shift * wy, wy, -wx)


@jit
def _segment_gap_sq(px, py, mx, my, ax, ay, bx, by):  # pragma: no cover - compiled
    """The squared distance (m^2) between the segment from (px, py) along (mx, my) and the
    segment (ax, ay)-(bx, by) (0 where they cross)."""
    ex, ey = bx - ax, by - ay
    denominator = mx * ey - my * ex
    if denominator != 0.0:
        s = ((ax - px) * ey - (ay - py) * ex) / denominator
        t = ((ax - px) * my - (ay - py) * mx) / denominator
        if 0.0 <= s <= 1.0 and 0.0 <= t <= 1.0:
            return 0.0
    qx, qy = closest_point(px, py, ax, ay, bx, by)
    best = (px - qx) ** 2 + (py - qy) ** 2
    qx, qy = closest_point(px + mx, py + my, ax, ay, bx, by)
    best = min(best, (px + mx - qx) ** 2 + (py + my - qy) ** 2)
    qx, qy = closest_point(ax, ay, px, py, px + mx, py + my)
    best = min(best, (ax - qx) ** 2 + (ay - qy) ** 2)
    qx, qy = closest_point(bx, by, px, py, px + mx, py + my)
    return min(best, (bx - qx) ** 2 + (by - qy) ** 2)


@jit
def _step_enters_wall(px, py, mx, my, clearance, stamp, index):  # pragma: no cover - compiled
    """Whether a body at (px, py) moving by (mx, my) (m) comes nearer than ``clearance`` (m) to
    any of the segments of the wall index ``index``
    (:meth:`~sim_server.core.crowd.walls.WallIndex.arrays`; the swept disc, exactly); ``stamp``
    marks the segments seen, as :func:`~sim_server.core.crowd.walls.walls_within`'s."""
    segments, x0, y0, cell, nx, ny, starts, items, stamps = index
    if segments.shape[0] == 0:
        return False
    clearance_sq = clearance * clearance
    ix_low, ix_high, iy_low, iy_high = cell_span(px + 0.5 * mx, py + 0.5 * my, clearance + 0.5 * math.sqrt(mx * mx + my * my),
                                                 x0, y0, cell, nx, ny)
    for iy in range(iy_low, iy_high + 1):
        for ix in range(ix_low, ix_high + 1):
            c = iy * nx + ix
            for k in range(starts[c], starts[c + 1]):
                s = items[k]
                if stamps[s] == stamp:
                    continue
                stamps[s] = stamp
                if _segment_gap_sq(px, py, mx, my, segments[s, 0], segments[s, 1], segments[s, 2],
                                   segments[s, 3]) < clearance_sq:
                    return True
    return False


def nearest_neighbors(positions, x, y, i, reach, x0, y0, cell, nx, ny, starts, items, neighbors,
                       distances_sq, copies):  # pragma: no cover - compiled
    """The at most ``neighbors.shape[0]`` others nearest to agent ``i`` at (x, y) within
    ``reach`` (m; of its copy only), nearest first, equal distances by number (RVO2's
    ``computeAgentNeighbors``; :func:`~sim_server.core.crowd.neighbors.nearest_within`'s
    answer), into ``neighbors`` and ``distances_sq``; returns their count. The grid's cells are
    visited in square rings round the agent's own, and the search ends at the first ring
    farther than the farthest of a full list, so that a crowd costs the cells near each agent
    only (RVO2's k-D tree narrows its range the same way)."""
    limit = neighbors.shape[0]
    copy = copies[i]
    found = 0
    reach_sq = reach * reach
    fx, fy = (x - x0) / cell, (y - y0) / cell
    cx, cy = int(math.floor(fx)), int(math.floor(fy))
    border = min(min(fx - cx, 1.0 - (fx - cx)), min(fy - cy, 1.0 - (fy - cy))) * cell
    for ring in range(int(reach / cell) + 2):
        if ring > 0:
            nearest = (ring - 1) * cell + border  # the ring's nearest point
            if nearest * nearest > reach_sq or (found == limit and nearest * nearest > distances_sq[found - 1]):
                break
        for gy in range(max(cy - ring, 0), min(cy + ring, ny - 1) + 1):
            stride = 1 if ring == 0 or gy == cy - ring or gy == cy + ring else 2 * ring  # the ring's sides only
            for gx in range(cx - ring, cx + ring + 1, stride):
                if gx < 0 or gx >= nx:
                    continue
                c = gy * nx + gx
                for k in range(starts[c], starts[c + 1]):
                    j = items[k]
                    if j == i or copies[j] != copy:
                        continue
                    dx, dy = positions[j, 0] - x, positions[j, 1] - y
                    distance_sq = dx * dx + dy * dy
                    if distance_sq > reach_sq:
                        continue
                    if found == limit and (distance_sq > distances_sq[found - 1] or (
                            distance_sq == distances_sq[found - 1] and j > neighbors[found - 1])):
                        continue
                    position = found if found < limit else limit - 1
                    while position > 0 and (distances_sq[position - 1] > distance_sq or (
                            distances_sq[position - 1] == distance_sq and neighbors[position - 1] > j)):
                        distances_sq[position] = distances_sq[position - 1]
                        neighbors[position] = neighbors[position - 1]
                        position -= 1
                    distances_sq[position] = distance_sq
                    neighbors[position] = j
                    if found < limit:
                        found += 1
    return found


#: Inlined where it is called (once an agent), as :func:`_agent_lines` is.
nearest_neighbors = jit(nearest_neighbors, inline="always")


@jit
def _scratch(vertex_count):  # pragma: no cover - compiled
    """Scratch of the walls' lines for ``vertex_count`` obstacle vertices: the edges found and
    their squared distances, the same in order, and the buckets of that order."""
    return (np.empty(vertex_count, dtype=np.int64), np.empty(vertex_count), np.empty(vertex_count, dtype=np.int64),
            np.empty(vertex_count), np.empty(2 * vertex_count + 2, dtype=np.int64))


def _agent_lines(i, params, dt, count, agents, max_speed, grid, obstacles, neighbors, distances_sq, scratch,
                 lines):  # pragma: no cover - compiled
    """The ORCA lines of agent ``i`` (arguments as :func:`orca_step`'s; ``max_speed`` its speed
    limit; ``neighbors``, ``distances_sq`` and ``scratch`` (:func:`_scratch`) scratch) into
    ``lines``: the walls' first, then one per neighbour. Returns their count and the walls'
    count."""
    positions, velocities, radii, copies, offsets = agents
    x0, y0, cell, nx, ny, starts, items = grid
    points, next_vertex, previous_vertex, directions, convex, ox0, oy0, ocell, onx, ony, ostarts, oitems, oedges, ofirst = (
        obstacles)
    limit = neighbors.shape[0]
    horizon_obstacles = params[_HORIZON_OBSTACLES]
    inverse_horizon = 1.0 / params[_HORIZON]
    xi, yi = positions[i, 0], positions[i, 1]
    vxi, vyi = velocities[i, 0], velocities[i, 1]
    radius = radii[i]
    # walls: RVO2's obstacles within the obstacle range (walls are in the world file's frame)
    size = 0
    if points.shape[0] > 0:
        lx, ly = xi - offsets[i, 0], yi - offsets[i, 1]
        obstacle_range = horizon_obstacles * max_speed + radius
        edges, edge_distances_sq, order_vertex, order_distance_sq, buckets = scratch
        found_obstacles = obstacle_neighbors(lx, ly, obstacle_range * obstacle_range, ox0, oy0, ocell, onx, ony, ostarts,
                                             oitems, oedges, ofirst, edges, edge_distances_sq)
        size = _obstacle_lines(lx, ly, vxi, vyi, radius, 1.0 / horizon_obstacles, found_obstacles, edges,
                               edge_distances_sq, points, next_vertex, previous_vertex, directions, convex, order_vertex,
                               order_distance_sq, buckets, lines)
    obstacle_lines = size
    # neighbours: one half-plane each
    found = nearest_neighbors(positions, xi, yi, i, params[_NEIGHBOR_DISTANCE], x0, y0, cell, nx, ny, starts, items,
                               neighbors, distances_sq, copies)
    for k in range(found):
        j = neighbors[k]
        rx = positions[j, 0] - xi
        ry = positions[j, 1] - yi
        wvx = vxi - velocities[j, 0]
        wvy = vyi - velocities[j, 1]
        distance_sq = rx * rx + ry * ry
        combined = radius + radii[j]
        combined_sq = combined * combined
        if distance_sq > combined_sq:
            wx = wvx - inverse_horizon * rx
            wy = wvy - inverse_horizon * ry
            w_length_sq = wx * wx + wy * wy
            dot1 = wx * rx + wy * ry
            if dot1 < 0.0 and dot1 * dot1 > combined_sq * w_length_sq:
                w_length = math.sqrt(w_length_sq)
                ux, uy = wx / w_length, wy / w_length
                dx, dy = uy, -ux
                scale = combined * inverse_horizon - w_length
                ux, uy = scale * ux, scale * uy
            else:
                leg = math.sqrt(distance_sq - combined_sq)
                if rx * wy - ry * wx > 0.0:
                    dx = (rx * leg - ry * combined) / distance_sq
                    dy = (rx * combined + ry * leg) / distance_sq
                else:
                    dx = -(rx * leg + ry * combined) / distance_sq
                    dy = -(-rx * combined + ry * leg) / distance_sq
                dot2 = wvx * dx + wvy * dy
                ux, uy = dot2 * dx - wvx, dot2 * dy - wvy
        else:
            inverse_step = 1.0 / dt
            wx = wvx - inverse_step * rx
            wy = wvy - inverse_step * ry
            w_length = math.sqrt(wx * wx + wy * wy)
            if w_length == 0.0:
                continue
            ux, uy = wx / w_length, wy / w_length
            dx, dy = uy, -ux
            scale = combined * inverse_step - w_length
            ux, uy = scale * ux, scale * uy
        share = 0.5 if j < count else 1.0  # robots do not avoid: the agent does all of it
        size = _add_line(lines, size, vxi + share * ux, vyi + share * uy, dx, dy)
    return size, obstacle_lines


#: Inlined where it is called, at numba's level: as a call, its thirty-odd arrays cost most of a
#: sparse crowd's step. (Python passes more than 30 arguments as ``*args``, which numba cannot
#: inline: one more reason for the tuples.)
_agent_lines = jit(_agent_lines, inline="always")


@jit
def orca_lines(i, params, dt, count, agents, max_speeds, grid, obstacles):  # pragma: no cover - compiled
    """The ORCA lines that constrain agent ``i`` (arguments as :func:`orca_step`'s): (k, 4)
    rows of a point (m/s) and a unit direction, the allowed velocities on the left, the walls'
    first, and the walls' count (what RVO2's ``getAgentORCALine`` reads)."""
    limit = max(int(params[_MAX_NEIGHBORS]), 1)
    vertex_count = obstacles[0].shape[0]
    lines = np.empty((vertex_count + limit, 4))
    size, obstacle_lines = _agent_lines(i, params, dt, count, agents, max_speeds[i], grid, obstacles,
                                        np.empty(limit, dtype=np.int64), np.empty(limit), _scratch(vertex_count), lines)
    return lines[:size].copy(), obstacle_lines


@jit
def orca_step(params, dt, count, agents, preferred, max_speeds, grid, obstacles, wall_index, stamp,
              out):  # pragma: no cover - compiled
    """New velocities ``out[:count]`` (m/s) of agents ``0..count-1`` for a step of ``dt`` s.

    ``agents`` is one tuple ``(positions, velocities, radii, copies, offsets)``: positions (m),
    velocities (m/s), radii (m) and copies hold ``total`` entries, the agents, then others
    (robots) that do not take part in avoiding; entries of different copies of the world never
    meet. ``offsets`` (count, 2; m) place each agent's copy: the walls are given in the world
    file's frame. ``preferred`` (m/s) is each agent's preferred velocity, ``max_speeds`` (m/s)
    its speed limit. ``grid`` (:func:`~sim_server.core.crowd.navigation.build_grid`) indexes the
    ``total`` positions; ``obstacles`` are the walls as RVO2's obstacles
    (:meth:`~sim_server.core.crowd.orca_obstacles.OrcaObstacles.arrays`), ``wall_index`` the same
    walls as segments (:meth:`~sim_server.core.crowd.walls.WallIndex.arrays`) for the last check
    of the step, ``stamp`` a fresh number for its queries. Returns the next free stamp.
    """
    positions, radii, offsets = agents[0], agents[2], agents[4]
    segments = wall_index[0]
    limit = max(int(params[_MAX_NEIGHBORS]), 1)
    vertex_count = obstacles[0].shape[0]
    neighbors = np.empty(limit, dtype=np.int64)
    distances_sq = np.empty(limit)
    scratch = _scratch(vertex_count)
    walls = np.empty((MAX_STEP_WALLS, 3))
    lines = np.empty((vertex_count + limit, 4))
    projected = np.empty((vertex_count + limit, 4))
    result = np.empty(2)
    for i in range(count):
        max_speed = max_speeds[i]
        size, obstacle_lines = _agent_lines(i, params, dt, count, agents, max_speed, grid, obstacles, neighbors,
                                            distances_sq, scratch, lines)
        failed = _program2(lines, size, max_speed, preferred[i, 0], preferred[i, 1], False, result)
        if failed < size:
            _program3(lines, size, obstacle_lines, failed, max_speed, result, projected)
        vx, vy = result[0], result[1]
        if not (math.isfinite(vx) and math.isfinite(vy)):
            vx, vy = 0.0, 0.0
        # the last check: a step that would take the body into a wall is cut
        radius = radii[i]
        lx, ly = positions[i, 0] - offsets[i, 0], positions[i, 1] - offsets[i, 1]
        if segments.shape[0] > 0 and _step_enters_wall(lx, ly, vx * dt, vy * dt, radius - ENTRY_TOLERANCE, stamp,
                                                       wall_index):
            step_reach = radius + dt * math.sqrt(vx * vx + vy * vy) + STEP_REACH_SLACK
            found_walls = walls_within(lx, ly, step_reach, stamp + 1, wall_index, walls, MAX_STEP_WALLS)
            vx, vy = keep_out_of_walls(lx, ly, vx, vy, radius, dt, walls, found_walls)
        stamp += 2
        out[i, 0] = vx
        out[i, 1] = vy
    return stamp
