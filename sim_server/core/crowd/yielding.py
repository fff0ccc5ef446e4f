"""People never push robots: a person whose step would take it into a moving body yields.

People are kinematic bodies in Box2D: a kinematic body moving into a dynamic one (a robot)
pushes it, however heavy. So, after a crowd model has chosen its velocities (and, between crowd
updates, on any physics step where a person is near a robot), each person's velocity is cut
against the footprints (:mod:`~sim_server.core.crowd.robot_footprints`) of the robots near it:
the part of the velocity that would close the gap to a footprint within the step, beyond the
gap itself and beyond what the robot's own motion there closes already, is removed (twice round,
for two robots at once). A robot's motion is taken as straight at its velocity now; a robot that
keeps turning at its turn rate (an arc) departs from that line by at most :func:`arc_margins`,
which is kept as a margin, so that the yield holds until the crowd's next update for a robot
that keeps its velocities in its own frame. The person stops or slides along the robot, never
into it; a robot that drives into a person is stopped by it (the person does not step back). The walls then cut
the velocity as the models do (:func:`~sim_server.core.crowd.walls.keep_out_of_walls`); where
robot and wall together leave no way, the person stands.

Units: metres, seconds; world frame (walls in the crowd's own frame, moved by each person's
copy's ``offsets``).
"""

from __future__ import annotations

import math

import numpy as np

from sim_server.core.compiled import jit
from sim_server.core.crowd.neighbors import cell_span
from sim_server.core.crowd.robot_footprints import nearest_on_footprint, point_velocity
from sim_server.core.crowd.walls import keep_out_of_walls, walls_within

#: Most robots a person's step is checked against at once (the nearest).
MAX_ROBOTS_PER_PERSON = 8
#: Walls within this (m) beyond a person's step are checked too (as the models do).
NEAR_WALL = 0.5
#: A closing speed (m/s) this much beyond the allowed one counts as a violation still.
TOLERANCE = 1.0e-9


@jit
def _robot_limits(px, py, radius, closing, search, copy, dt, robots, robot_grid, footprints,
                  out):  # pragma: no cover - compiled
    """Into ``out[k] = (nx, ny, allowed)`` the constraints of the robots whose origins lie within
    ``search`` (m) of the person at (px, py) and whose footprints a gap of at most ``closing``
    (m) parts from its body: the footprint's outward normal at its nearest point and the closing
    speed (m/s) the person may have along it. Returns their count (the tightest
    :data:`MAX_ROBOTS_PER_PERSON`)."""
    robot_positions, robot_angles, robot_velocities, robot_margins, robot_copies = robots[:5]
    rx0, ry0, rcell, rnx, rny, rstarts, ritems = robot_grid
    circles, circle_starts, polygons, polygon_counts, polygon_skins, polygon_starts, centres = footprints
    found = 0
    ix_low, ix_high, iy_low, iy_high = cell_span(px, py, search, rx0, ry0, rcell, rnx, rny)
    for gy in range(iy_low, iy_high + 1):
        for gx in range(ix_low, ix_high + 1):
            c = gy * rnx + gx
            for k in range(rstarts[c], rstarts[c + 1]):
                r = ritems[k]
                if robot_copies[r] != copy:
                    continue
                x, y, angle = robot_positions[r, 0], robot_positions[r, 1], robot_angles[r]
                distance, qx, qy = nearest_on_footprint(px, py, r, x, y, angle, circles, circle_starts, polygons,
                                                        polygon_counts, polygon_skins, polygon_starts)
                gap = distance - radius - robot_margins[r]
                if gap > closing:
                    continue
                dx, dy = px - qx, py - qy
                length = math.sqrt(dx * dx + dy * dy)
                if length == 0.0:  # on the outline: from the robot's origin
                    dx, dy = px - x, py - y
                    length = math.sqrt(dx * dx + dy * dy)
                    if length == 0.0:
                        continue
                elif distance < 0.0:  # inside: the outline is the way out
                    dx, dy = -dx, -dy
                nx, ny = dx / length, dy / length
                wx, wy = point_velocity(qx, qy, r, x, y, angle, robot_velocities[r, 0], robot_velocities[r, 1],
                                        robot_velocities[r, 2], centres)
                robot_closing = max(wx * nx + wy * ny, 0.0)
                allowed = max(max(gap, 0.0) / dt - robot_closing, 0.0)
                if found < MAX_ROBOTS_PER_PERSON:
                    out[found, 0], out[found, 1], out[found, 2] = nx, ny, allowed
                    found += 1
                else:  # keep the tightest
                    loosest = 0
                    for m in range(1, found):
                        if out[m, 2] > out[loosest, 2]:
                            loosest = m
                    if allowed < out[loosest, 2]:
                        out[loosest, 0], out[loosest, 1], out[loosest, 2] = nx, ny, allowed
    return found


@jit
def arc_margins(velocities, radii, dt):  # pragma: no cover - compiled
    """(M,) how far (m) each robot's footprint can depart within ``dt`` (s) from where its
    velocity now (``velocities`` (M, 3): m/s and rad/s) takes it in a straight line, when it
    keeps turning at its turn rate with its velocity constant in its own frame: the arc of its
    centre, ``|v| |w| dt^2 / 2``, and the turn of its footprint's farthest point (``radii``, m,
    from its origin), ``w^2 r dt^2 / 2``."""
    margins = np.empty(velocities.shape[0])
    for r in range(velocities.shape[0]):
        turn = abs(velocities[r, 2])
        margins[r] = 0.5 * dt * dt * turn * (math.hypot(velocities[r, 0], velocities[r, 1]) + turn * radii[r])
    return margins


@jit
def moves_otherwise(velocities, before, elapsed, tolerance):  # pragma: no cover - compiled
    """Whether a body's velocities now (``velocities`` (M, 3): m/s and rad/s) differ by more than
    ``tolerance`` from ``before`` (as they were ``elapsed`` s ago) turned by the turn rate they
    had for that time: what a body keeping its velocities in its own frame has."""
    for r in range(velocities.shape[0]):
        turn = before[r, 2]
        angle = turn * elapsed
        c, s = math.cos(angle), math.sin(angle)
        if (abs(velocities[r, 0] - (c * before[r, 0] - s * before[r, 1])) > tolerance
                or abs(velocities[r, 1] - (s * before[r, 0] + c * before[r, 1])) > tolerance
                or abs(velocities[r, 2] - turn) > tolerance):
            return True
    return False


@jit
def _cut(vx, vy, limits, count):  # pragma: no cover - compiled
    """(vx, vy) with the closing speed along each constraint of ``limits[:count]`` cut to its
    allowed one (twice round, for two at once)."""
    for _ in range(2):
        for k in range(count):
            nx, ny, allowed = limits[k, 0], limits[k, 1], limits[k, 2]
            closing = -(vx * nx + vy * ny)
            if closing > allowed:
                vx += (closing - allowed) * nx
                vy += (closing - allowed) * ny
    return vx, vy


@jit
def yield_to_robots(rows, people, dt, robots, robot_grid, footprints, wall_index, stamp,
                    changed):  # pragma: no cover - compiled
    """Cut the velocities (m/s, in place) of the people ``rows`` so that over ``dt`` (s) none
    moves into a robot's footprint (see the module's docstring); ``changed[row]`` is set where a
    velocity changed.

    ``people`` is one tuple ``(positions, velocities, radius, copies, copy_offsets)``: discs of
    ``radius`` (m) at ``positions`` (m) in copies ``copies`` (copy ``c``'s frame at
    ``copy_offsets[c]``). ``robots`` is ``(positions, angles, velocities, margins, copies,
    reach)`` as :class:`~sim_server.core.crowd.robots.RobotState` gives them, each kept
    ``margins`` (m) further off (:func:`arc_margins`), ``reach`` (m) their largest from the
    origin; ``robot_grid`` indexes their positions
    (:func:`~sim_server.core.crowd.navigation.build_grid`), ``footprints`` is
    :meth:`~sim_server.core.crowd.robot_footprints.Footprints.arrays`. ``wall_index`` holds the
    walls (:meth:`~sim_server.core.crowd.walls.WallIndex.arrays`), ``stamp`` a fresh query
    number. Returns the next free stamp."""
    positions, velocities, radius, copies, copy_offsets = people
    robot_velocities, robot_reach = robots[2], robots[5]
    limits = np.empty((MAX_ROBOTS_PER_PERSON, 3))
    walls = np.empty((MAX_ROBOTS_PER_PERSON, 3))
    fastest = 0.0
    for r in range(robot_velocities.shape[0]):
        fastest = max(fastest, math.sqrt(robot_velocities[r, 0] ** 2 + robot_velocities[r, 1] ** 2)
                      + abs(robot_velocities[r, 2]) * robot_reach)
    for row in rows:
        px, py = positions[row, 0], positions[row, 1]
        vx, vy = velocities[row, 0], velocities[row, 1]
        speed = math.sqrt(vx * vx + vy * vy)
        closing = (speed + fastest) * dt
        count = _robot_limits(px, py, radius, closing, closing + radius + robot_reach, copies[row], dt, robots, robot_grid,
                              footprints, limits)
        if count == 0:
            continue
        cut_x, cut_y = _cut(vx, vy, limits, count)
        if cut_x == vx and cut_y == vy:
            continue
        # the walls as the models cut (the step's cut may turn the person towards one)
        copy = copies[row]
        lx, ly = px - copy_offsets[copy, 0], py - copy_offsets[copy, 1]
        found = walls_within(lx, ly, radius + speed * dt + NEAR_WALL, stamp, wall_index, walls, MAX_ROBOTS_PER_PERSON)
        stamp += 1
        if found > 0:
            cut_x, cut_y = keep_out_of_walls(lx, ly, cut_x, cut_y, radius, dt, walls, found)
        for k in range(count):  # a wall turned it back into a robot: no way, the person stands
            if -(cut_x * limits[k, 0] + cut_y * limits[k, 1]) > limits[k, 2] + TOLERANCE:
                cut_x, cut_y = 0.0, 0.0
                break
        velocities[row, 0], velocities[row, 1] = cut_x, cut_y
        changed[row] = True
    return stamp
