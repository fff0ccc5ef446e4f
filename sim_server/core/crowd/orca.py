"""ORCA: optimal reciprocal collision avoidance (van den Berg, Guy, Lin and Manocha 2011).

Each agent picks the velocity nearest to its preferred one that, for ``time_horizon`` seconds,
collides with none of its nearest neighbours, each taking half the responsibility (a robot,
which does not take part, none: the agent takes all of it); walls within reach constrain it for
``time_horizon_obstacles`` seconds. The constraints are half-planes of velocity; the velocity is
found by RVO2's incremental linear programs (``linearProgram1..3``), written here after the
paper and RVO2's published algorithm, for every agent in one compiled call.

Walls are constrained more simply than RVO2's polygon obstacles: each wall segment within reach
gives the half-plane "approach its nearest point no faster than the gap closes in
``time_horizon_obstacles``" (RVO2 builds velocity obstacles of polygon vertices and edges, which
needs closed polygons; map images give loose segments).

Units: m, s, m/s.
"""

from __future__ import annotations

import math
import numpy as np

from sim_server.core.compiled import jit
from sim_server.core.format.crowd_file import OrcaParameters
from sim_server.core.crowd.neighbors import nearest_within
from sim_server.core.crowd.walls import keep_out_of_walls, walls_within

#: RVO2's epsilon of parallel lines.
EPSILON = 1.0e-5
#: Most walls that constrain an agent (the nearest ones).
MAX_WALL_LINES = 8


__all__ = ["OrcaParameters", "orca_step"]

_NEIGHBOR_DISTANCE, _MAX_NEIGHBORS, _HORIZON, _HORIZON_OBSTACLES, _MULTIPLIER, _STOP = range(6)


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
    saved = np.empty(2)
    for i in range(count):
        if _det(lines[i, 2], lines[i, 3], lines[i, 0] - result[0], lines[i, 1] - result[1]) > 0.0:
            saved[0], saved[1] = result[0], result[1]
            if not _program1(lines, i, radius, opt_x, opt_y, direction_opt, result):
                result[0], result[1] = saved[0], saved[1]
                return i
    return count


@jit
def _program3(lines, count, obstacle_lines, begin, radius, result, projected):  # pragma: no cover - compiled
    """Where the agents' lines cannot all be met: the velocity that violates them least, the
    walls' lines kept (RVO2's linearProgram3)."""
    distance = 0.0
    saved = np.empty(2)
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
            saved[0], saved[1] = result[0], result[1]
            if _program2(projected, size, radius, -lines[i, 3], lines[i, 2], True, result) < size:
                result[0], result[1] = saved[0], saved[1]
            distance = _det(lines[i, 2], lines[i, 3], lines[i, 0] - result[0], lines[i, 1] - result[1])


@jit
def orca_step(
    params, dt, count, positions, velocities, radii, copies, offsets, preferred, max_speeds, total,
    x0, y0, cell, nx, ny, starts, items,
    segments, wx0, wy0, wcell, wnx, wny, wstarts, witems, wstamps, stamp, out,
):  # pragma: no cover - compiled
    """New velocities ``out[:count]`` (m/s) of agents ``0..count-1`` for a step of ``dt`` s.

    ``positions``, ``velocities``, ``radii`` and ``copies`` hold ``total`` entries: the agents,
    then others (robots) that do not take part in avoiding; entries of different copies of the
    world never meet. ``offsets`` (count, 2) place each agent's copy: the walls are given in the
    world file's frame. ``preferred`` (m/s) is each agent's preferred
    velocity, ``max_speeds`` its speed limit. The grid indexes ``positions[:total]``, the wall
    index the walls, ``stamp`` a fresh number for its queries. Returns the next free stamp.
    """
    limit = max(int(params[_MAX_NEIGHBORS]), 1)
    reach = params[_NEIGHBOR_DISTANCE]
    horizon = params[_HORIZON]
    horizon_obstacles = params[_HORIZON_OBSTACLES]
    neighbors = np.empty(limit, dtype=np.int64)
    distances_sq = np.empty(limit)
    walls = np.empty((MAX_WALL_LINES, 3))
    lines = np.empty((MAX_WALL_LINES + limit, 4))
    projected = np.empty((MAX_WALL_LINES + limit, 4))
    result = np.empty(2)
    for i in range(count):
        xi, yi = positions[i, 0], positions[i, 1]
        vxi, vyi = velocities[i, 0], velocities[i, 1]
        radius = radii[i]
        max_speed = max_speeds[i]
        # walls: approach each one's nearest point no faster than the gap closes
        wall_reach = horizon_obstacles * max_speed + radius
        lx, ly = xi - offsets[i, 0], yi - offsets[i, 1]
        found_walls = walls_within(lx, ly, wall_reach, stamp, segments, wx0, wy0, wcell, wnx, wny, wstarts,
                                   witems, wstamps, walls, MAX_WALL_LINES)
        stamp += 1
        size = 0
        for k in range(found_walls):
            distance = walls[k, 0]
            if distance <= 0.0:
                continue
            nxw = (walls[k, 1] - lx) / distance  # towards the wall
            nyw = (walls[k, 2] - ly) / distance
            gap = distance - radius
            bound = gap / horizon_obstacles if gap > 0.0 else gap / dt
            # allowed: v . n <= bound; the line runs along the wall with the allowed side on its left
            lines[size, 0], lines[size, 1] = nxw * bound, nyw * bound
            lines[size, 2], lines[size, 3] = -nyw, nxw
            size += 1
        obstacle_lines = size
        # neighbours: one half-plane each
        found = nearest_within(positions, xi, yi, i, reach, x0, y0, cell, nx, ny, starts, items, limit,
                               neighbors, distances_sq, copies, copies[i])
        inverse_horizon = 1.0 / horizon
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
                    if _det(rx, ry, wx, wy) > 0.0:
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
            lines[size, 0] = vxi + share * ux
            lines[size, 1] = vyi + share * uy
            lines[size, 2], lines[size, 3] = dx, dy
            size += 1
        failed = _program2(lines, size, max_speed, preferred[i, 0], preferred[i, 1], False, result)
        if failed < size:
            _program3(lines, size, obstacle_lines, failed, max_speed, result, projected)
        vx, vy = result[0], result[1]
        if not (math.isfinite(vx) and math.isfinite(vy)):
            vx, vy = 0.0, 0.0
        if found_walls > 0:
            vx, vy = keep_out_of_walls(lx, ly, vx, vy, radius, dt, walls, found_walls)
        out[i, 0] = vx
        out[i, 1] = vy
    return stamp
