"""Which pedestrians' bodies take part in Box2D's contacts: those a dynamic body may reach.

A moving kinematic body costs Box2D's step about 0.25 us however far it is from anything (its
broad-phase box is moved and queried for new pairs; measured here: 640 moving kinematic circles
156 us a step, the same bodies inactive 5 us). A pedestrian makes contacts with dynamic bodies
only (robots, pushed boxes: Box2D pairs a kinematic body with neither a static nor a kinematic
one). So the crowd keeps active in Box2D only the people some dynamic body may reach before the
next check; the others are inactive bodies (no broad-phase entry, nothing on a step) and move on
the crowd's own arrays. Lasers, cameras, pictures and the topics read every person from those
arrays, never from Box2D, so they see everyone; contacts (a robot stopped by a person, a bumper)
happen only where the bodies are active, which is everywhere a dynamic body can get to in time.

The check runs on every crowd update, and on the next step after a model comes or is moved.
Person ``i`` must be active where, for some dynamic body ``j``::

    distance(i, j) <= r + R_j + (v_people + |v_j|) * interval + REACH_SLACK

with ``r`` the people's radius, ``R_j`` the body's bounding radius (about its origin),
``v_people`` the fastest person's speed, ``v_j`` the body's speed now and ``interval`` the time to
the next check; :data:`REACH_SLACK` covers a body that speeds up in between. An active body goes
inactive only beyond that reach plus :data:`REACH_HYSTERESIS`, so people at the edge do not flip
on every check.
"""

from __future__ import annotations

import math

import numpy as np

from sim_server.core.compiled import jit
from sim_server.core.crowd.neighbors import build_grid, cell_span

#: Distance (m) added to every reach: a dynamic body that speeds up between two checks is still
#: met, up to a gain of REACH_SLACK / interval m/s (12.5 m/s at the default 25 Hz updates).
REACH_SLACK = 0.5
#: Distance (m) beyond the reach within which an active person stays active.
REACH_HYSTERESIS = 0.5


def dynamic_reach(person_radius: float, radii: np.ndarray, positions: np.ndarray, velocities: np.ndarray,
                  dynamic: np.ndarray, walking: np.ndarray, count: int, interval: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The dynamic bodies among the robots (``radii`` (M,) m from each origin to its footprint's
    edge, ``positions`` (M, 2) m, ``velocities`` (M, 3) m/s and rad/s, ``dynamic`` (M,) bool) and
    how far they reach within ``interval`` (s), people of ``person_radius`` (m) walking at
    ``walking[:count]`` (m/s) towards them: (D, 2) their origins, (D,) the distance (m) from each
    within which a person must be active, and (D,) the squared speed ((m/s)^2) each may reach
    before the check is out of date (what :func:`faster_than` compares)."""
    return _dynamic_reach(person_radius, radii, positions, velocities, dynamic, walking, count, interval, REACH_SLACK)


@jit
def _dynamic_reach(person_radius, radii, positions, velocities, dynamic, walking, count, interval, slack):  # pragma: no cover - compiled
    fastest_sq = 0.0
    for i in range(count):
        fastest_sq = max(fastest_sq, walking[i, 0] * walking[i, 0] + walking[i, 1] * walking[i, 1])
    fastest = math.sqrt(fastest_sq)
    found = 0
    for r in range(dynamic.shape[0]):
        if dynamic[r]:
            found += 1
    origins, reach, limits_sq = np.empty((found, 2)), np.empty(found), np.empty(found)
    k = 0
    for r in range(dynamic.shape[0]):
        if dynamic[r]:
            speed = math.hypot(velocities[r, 0], velocities[r, 1])
            origins[k, 0], origins[k, 1] = positions[r, 0], positions[r, 1]
            reach[k] = person_radius + radii[r] + (fastest + speed) * interval + slack
            limits_sq[k] = (speed + slack / interval) ** 2
            k += 1
    return origins, reach, limits_sq


@jit
def faster_than(velocities, dynamic, limits_sq):  # pragma: no cover - compiled
    """Whether a dynamic body (rows of ``velocities`` (M, 3) where ``dynamic``, in order) moves
    faster than its limit (``limits_sq``, (m/s)^2, one per dynamic body)."""
    k = 0
    for row in range(velocities.shape[0]):
        if dynamic[row]:
            if velocities[row, 0] ** 2 + velocities[row, 1] ** 2 > limits_sq[k]:
                return True
            k += 1
    return False


@jit
def within_reach(people, count, bodies, reach, keep, active, out):  # pragma: no cover - compiled
    """``out[i]`` (bool) = whether person ``i`` of ``people[:count]`` (x, y; m) lies within
    ``reach[j]`` (m) of some body ``bodies[j]`` (x, y; m), or was ``active`` and lies within
    ``reach[j] + keep``."""
    for i in range(count):
        out[i] = False
    if count == 0 or bodies.shape[0] == 0:
        return
    widest = 0.0
    for j in range(bodies.shape[0]):
        widest = max(widest, reach[j] + keep)
    x0, y0, cell, nx, ny, starts, items = build_grid(people, count, max(widest, 1e-3))
    for j in range(bodies.shape[0]):
        bx, by = bodies[j, 0], bodies[j, 1]
        must_sq = reach[j] * reach[j]
        may_sq = (reach[j] + keep) * (reach[j] + keep)
        ix_low, ix_high, iy_low, iy_high = cell_span(bx, by, reach[j] + keep, x0, y0, cell, nx, ny)
        for iy in range(iy_low, iy_high + 1):
            for ix in range(ix_low, ix_high + 1):
                c = iy * nx + ix
                for k in range(starts[c], starts[c + 1]):
                    i = items[k]
                    if out[i]:
                        continue
                    dx = people[i, 0] - bx
                    dy = people[i, 1] - by
                    distance_sq = dx * dx + dy * dy
                    if distance_sq <= must_sq or (active[i] and distance_sq <= may_sq):
                        out[i] = True
