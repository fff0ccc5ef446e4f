"""pedsim_ros's two forces beyond libpedsim's social force: the random force and the along-wall
force, for all people of a crowd in one compiled call (:func:`pedsim_forces`).

pedsim_simulator gives every agent both (``scene.cpp``; ``force/randomforce.cpp``,
``force/alongwallforce.cpp``), weighted by its parameters ``force_random`` (0.1) and
``force_wall`` (2.0); here ``random_factor`` and ``along_wall_factor`` of the social force
(:class:`~sim_server.core.format.crowd_file.SocialForceParameters`), 0 to turn either off.
Both are accelerations (m/s^2) added to the model's other forces before the step integrates them.

* **Random force.** Each person has a deviation: a vector of uniform direction whose length is
  drawn from N(0, 1) (m/s^2 before the factor). Every ``random_fading`` s (pedsim's fading
  duration, 1 s) the next deviation is drawn, and the force fades linearly from one to the next:
  ``factor ((1 - p) d_k + p d_k+1)``, ``p`` the fraction of the period gone. pedsim draws from one
  generator for the whole scene (and, for fading durations other than 1 s, weighs with the time
  gone rather than its fraction); deviation ``k`` of a person here is a function of the person's
  key and ``k`` alone (:mod:`~sim_server.core.random_streams`), the same whatever the others do.
* **Along-wall force.** A person who is stuck (speed at most :data:`STUCK_SPEED`) with the
  nearest wall point within :data:`WALL_DISTANCE` of its centre, in the direction it wants to
  walk (within :data:`WALL_ANGLE`), is pushed along that wall's segment, the way of the two that
  is nearer to its wish: ``factor`` times the segment's unit direction. pedsim's thresholds,
  which pedsim fixes in its code too. pedsim compares the signed angle from the walking direction
  to the wall (so a wall to its right or behind counts as well); here its size is compared.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from sim_server.core.compiled import jit
from sim_server.core.crowd.people import People
from sim_server.core.crowd.social_force import NO_EXTRA_FORCES
from sim_server.core.crowd.walls import cell_span, closest_point
from sim_server.core.random_streams import normal_pair

if TYPE_CHECKING:
    from sim_server.core.crowd.walls import WallIndex
    from sim_server.core.format.crowd_file import SocialForceParameters

#: A person at most this fast (m/s) may be stuck (pedsim's ``speedThreshold``).
STUCK_SPEED = 0.2
#: The nearest wall point within this (m) of a stuck person's centre may be in its way
#: (pedsim's ``distanceThreshold``).
WALL_DISTANCE = 0.6
#: The nearest wall point is in a stuck person's way within this angle (rad) of where it wants to
#: walk (pedsim's ``angleThresholdDegree``, 20 degrees).
WALL_ANGLE = math.radians(20.0)


@jit
def _deviation(key, k):  # pragma: no cover - compiled
    """Deviation ``k`` of the stream ``key``: a uniform direction (of two normal numbers) times a
    normal length, as pedsim's ``computeNewDeviation`` (m/s^2 before the factor)."""
    pair = np.uint64(2 * k)
    x, y = normal_pair(key, pair)
    length, _ = normal_pair(key, pair + np.uint64(1))
    norm = math.sqrt(x * x + y * y)
    if norm == 0.0:
        return length, 0.0
    return length * x / norm, length * y / norm


@jit
def _nearest_segment(px, py, reach, stamp, index):  # pragma: no cover - compiled
    """(index, distance, qx, qy) of the segment of the wall index ``index``
    (:meth:`~sim_server.core.crowd.walls.WallIndex.arrays`) nearest to (px, py) within ``reach``
    (m); index -1 where none is."""
    segments, x0, y0, cell, nx, ny, starts, items, stamps = index
    best, best_distance, best_x, best_y = -1, reach, 0.0, 0.0
    if segments.shape[0] == 0:
        return best, best_distance, best_x, best_y
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
                if distance <= best_distance:
                    best, best_distance, best_x, best_y = s, distance, qx, qy
    return best, best_distance, best_x, best_y


@jit
def pedsim_forces(count, now, weights, streams, agents, walking, wall_index, stamp, out):  # pragma: no cover - compiled
    """The random and along-wall forces (m/s^2) of people ``0..count-1`` at sim time ``now`` (s)
    into ``out[:count]``; returns the next free stamp of the wall index.

    ``weights`` is ``(random_factor, fading, along_factor, goal_threshold)``: the first and the
    third weigh the forces (0: off), ``fading`` (s) is the random force's period and
    ``goal_threshold`` (m) the social force's (nearer its goal a person only brakes).
    ``streams`` is ``(keys, deviations, deviation_index)``: the people's random streams
    (uint64), the deviations (count, 4: those of the period now and of the next) and the period
    they belong to (:data:`~sim_server.core.crowd.people.NO_DEVIATION` for none), kept between
    calls. ``agents`` is ``(positions, velocities, offsets)`` and ``walking`` ``(directions,
    goal_distances, preferred_speeds)``, as the social force's step takes them; ``offsets``
    place each person's copy of the world, whose walls (``wall_index``,
    :meth:`~sim_server.core.crowd.walls.WallIndex.arrays`) are in the world file's frame;
    ``stamp`` a fresh number for the index's queries.
    """
    random_factor, fading, along_factor, goal_threshold = weights
    keys, deviations, deviation_index = streams
    positions, velocities, offsets = agents
    directions, goal_distances, preferred_speeds = walking
    segments = wall_index[0]
    period = int(math.floor(now / fading)) if random_factor > 0.0 else 0
    progress = now / fading - period
    for i in range(count):
        fx, fy = 0.0, 0.0
        if random_factor > 0.0:
            if deviation_index[i] != period:
                if deviation_index[i] == period - 1:
                    deviations[i, 0], deviations[i, 1] = deviations[i, 2], deviations[i, 3]
                else:
                    deviations[i, 0], deviations[i, 1] = _deviation(keys[i], period)
                deviations[i, 2], deviations[i, 3] = _deviation(keys[i], period + 1)
                deviation_index[i] = period
            fx += random_factor * ((1.0 - progress) * deviations[i, 0] + progress * deviations[i, 2])
            fy += random_factor * ((1.0 - progress) * deviations[i, 1] + progress * deviations[i, 3])
        vx, vy = velocities[i, 0], velocities[i, 1]
        if along_factor > 0.0 and vx * vx + vy * vy <= STUCK_SPEED * STUCK_SPEED:
            # where the person wants to walk: its desired force's direction
            if goal_distances[i] > goal_threshold:
                wx = directions[i, 0] * preferred_speeds[i] - vx
                wy = directions[i, 1] * preferred_speeds[i] - vy
            else:
                wx, wy = -vx, -vy
            wish = math.sqrt(wx * wx + wy * wy)
            if wish > 0.0:
                lx, ly = positions[i, 0] - offsets[i, 0], positions[i, 1] - offsets[i, 1]
                s, distance, qx, qy = _nearest_segment(lx, ly, WALL_DISTANCE, stamp, wall_index)
                stamp += 1
                if s >= 0 and distance > 0.0 and (wx * (qx - lx) + wy * (qy - ly)) >= math.cos(WALL_ANGLE) * wish * distance:
                    dx, dy = segments[s, 2] - segments[s, 0], segments[s, 3] - segments[s, 1]
                    length = math.sqrt(dx * dx + dy * dy)
                    if length > 0.0:
                        if wx * dx + wy * dy < 0.0:
                            dx, dy = -dx, -dy
                        fx += along_factor * dx / length
                        fy += along_factor * dy / length
        out[i, 0] = fx
        out[i, 1] = fy
    return stamp


def people_forces(
    parameters: "SocialForceParameters", people: People, now: float, positions: np.ndarray, velocities: np.ndarray,
    offsets: np.ndarray, directions: np.ndarray, goal_distances: np.ndarray, walls: "WallIndex", stamp: int,
) -> tuple[np.ndarray, int]:
    """The random and along-wall forces (count, 2) (m/s^2) of a crowd's ``people`` at ``now``
    (s), as :func:`pedsim_forces` takes its arguments, or no rows where both are off
    (:data:`~sim_server.core.crowd.social_force.NO_EXTRA_FORCES`); and the next free stamp."""
    if parameters.random_factor <= 0.0 and parameters.along_wall_factor <= 0.0:
        return NO_EXTRA_FORCES, stamp
    n = people.count
    forces = np.empty((n, 2))
    weights = (float(parameters.random_factor), float(parameters.random_fading), float(parameters.along_wall_factor),
               float(parameters.goal_threshold))
    stamp = pedsim_forces(
        n, now, weights, (people.random_key[:n], people.deviation[:n], people.deviation_index[:n]),
        (positions, velocities, offsets), (directions, goal_distances, people.speed[:n]), walls.arrays(), stamp, forces,
    )
    return forces, stamp
