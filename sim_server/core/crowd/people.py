"""The people of a crowd as arrays: one row per pedestrian, compacted when people leave; their
state as others read it (:class:`CrowdState`); the compiled scans for arrivals and ended waits.

Per-person state lives in NumPy arrays so that the crowd's compiled kernels read it directly;
the Box2D bodies are listed beside in the same order. Rows are swapped with the last one on
removal (order is not meaningful; names are).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim_server.core.compiled import jit

#: Goal modes of a person.
IDLE, WAYPOINTS, REGION_GOALS = 0, 1, 2
#: What a person does besides its route (:attr:`People.activity`): following it, walking to the
#: end of a waiting queue, standing in one, spending time at an attraction.
ON_ROUTE, APPROACHING_QUEUE, IN_QUEUE, AT_ATTRACTION = 0, 1, 2, 3
#: Rows allocated at first; arrays double as they fill.
INITIAL_CAPACITY = 16
#: A random force's period that none has: no deviation drawn yet (:attr:`People.deviation_index`).
NO_DEVIATION = -2


@dataclass(frozen=True, eq=False)
class Pedestrian:
    """What a pedestrian's Box2D body points back to (its ``userData.entity``): the name of the
    person (``<crowd>_<number>``, or the one it was spawned with) and of its crowd. Compared by
    identity: a later person of the same name is another."""

    name: str
    crowd: str


class People:
    """Per-person arrays of one crowd (``count`` rows in use).

    Attributes:
        number: (N,) int64 the person's number (its name is ``<crowd>_<number>``).
        route: (N,) int64 index of the route (agent entry or spawner) the person follows.
        speed: (N,) preferred walking speed (m/s).
        group: (N,) int64 group id, -1 alone.
        goal: (N, 2) where the person walks now (m, world frame).
        field: (N,) int64 distance field of the goal (-1: straight).
        waypoint: (N,) int64 index of the current waypoint of the route.
        wait_until: (N,) sim time (s) until which the person stands at its goal (-1: not waiting).
        velocity: (N, 2) the velocity last given to the body (m/s).
        heading: (N,) the direction the person faces (rad).
        spawned: (N,) bool, whether a spawner made the person (it leaves at its last waypoint).
        added: (N,) bool, whether a request added the person at run time.
        entry: (N, 2) where the person entered the world (m).
        copy: (N,) int64 the copy of the world the person is in (replicas; 0 without).
        position: (N, 2) where the person was at the crowd's last update (m, world frame); it
            has walked on at ``velocity`` since (:meth:`Crowd.positions`).
        active: (N,) bool, whether the person's body takes part in Box2D's contacts
            (:mod:`~sim_server.core.crowd.touch`).
        random_key: (N,) uint64 the key of the person's random stream (its random force).
        deviation: (N, 4) the random force's deviations of this period and the next (m/s^2
            before the factor), and ``deviation_index`` (N,) int64 the period they belong to
            (:mod:`~sim_server.core.crowd.pedsim_forces`).
        reach: (N,) the goal is reached within this (m) or the model's stop distance where
            that is larger.
        activity: (N,) int64 :data:`ON_ROUTE`, :data:`APPROACHING_QUEUE`, :data:`IN_QUEUE` or
            :data:`AT_ATTRACTION`; ``venue`` (N,) int64 the queue's or attraction's index.
        anchor: (N, 2) in a queue, where the person ahead stood when the goal was last set; at
            an attraction, the route's goal to go back to (m, the crowd's frame).
        spot: (N, 2) in a queue, the space kept behind the person ahead (m); at an attraction,
            the place looked at (m, the crowd's frame).
        timer: (N,) sim time (s) until which the person stays at the attraction's spot (-1: not
            there yet).

    Places (goal, entry) are in the crowd's own frame, the world file's; the person's copy lies
    at its offset in the world.
    """

    def __init__(self) -> None:
        self.count = 0
        capacity = INITIAL_CAPACITY
        self.number = np.zeros(capacity, dtype=np.int64)
        self.route = np.zeros(capacity, dtype=np.int64)
        self.speed = np.zeros(capacity)
        self.group = np.zeros(capacity, dtype=np.int64)
        self.goal = np.zeros((capacity, 2))
        self.field = np.zeros(capacity, dtype=np.int64)
        self.waypoint = np.zeros(capacity, dtype=np.int64)
        self.wait_until = np.zeros(capacity)
        self.velocity = np.zeros((capacity, 2))
        self.heading = np.zeros(capacity)
        self.spawned = np.zeros(capacity, dtype=bool)
        self.mode = np.zeros(capacity, dtype=np.int64)
        self.added = np.zeros(capacity, dtype=bool)
        self.entry = np.zeros((capacity, 2))
        self.copy = np.zeros(capacity, dtype=np.int64)
        self.position = np.zeros((capacity, 2))
        self.active = np.zeros(capacity, dtype=bool)
        self.random_key = np.zeros(capacity, dtype=np.uint64)
        self.deviation = np.zeros((capacity, 4))
        self.deviation_index = np.zeros(capacity, dtype=np.int64)
        self.reach = np.zeros(capacity)
        self.activity = np.zeros(capacity, dtype=np.int64)
        self.venue = np.zeros(capacity, dtype=np.int64)
        self.anchor = np.zeros((capacity, 2))
        self.spot = np.zeros((capacity, 2))
        self.timer = np.zeros(capacity)
        #: The Box2D bodies, row by row.
        self.bodies: list = []

    _ARRAYS = ("number", "route", "speed", "group", "goal", "field", "waypoint", "wait_until", "velocity",
               "heading", "spawned", "mode", "added", "entry", "copy", "position", "active", "random_key", "deviation",
               "deviation_index", "reach", "activity", "venue", "anchor", "spot", "timer")

    def add(self, body, number: int, route: int, speed: float, group: int, place: tuple[float, float], mode: int,
            spawned: bool, heading: float, added: bool = False, copy: int = 0,
            position: tuple[float, float] | None = None, random_key: int = 0) -> int:
        """Append a person standing at ``place`` (the crowd's frame; its goal until it gets
        one), at ``position`` in the world (m; default ``place``), its body inactive, with the
        random stream ``random_key``; returns its row."""
        if self.count == len(self.number):
            for name in self._ARRAYS:
                array = getattr(self, name)
                grown = np.zeros((2 * len(array),) + array.shape[1:], dtype=array.dtype)
                grown[: len(array)] = array
                setattr(self, name, grown)
        row = self.count
        self.number[row], self.route[row], self.speed[row], self.group[row] = number, route, speed, group
        self.goal[row] = place
        self.field[row] = -1
        self.waypoint[row] = 0
        self.wait_until[row] = -1.0
        self.velocity[row] = 0.0
        self.heading[row] = heading
        self.spawned[row] = spawned
        self.mode[row] = mode
        self.added[row] = added
        self.entry[row] = place
        self.copy[row] = copy
        self.position[row] = place if position is None else position
        self.active[row] = False
        self.random_key[row] = random_key
        self.deviation[row] = 0.0
        self.deviation_index[row] = NO_DEVIATION
        self.reach[row] = 0.0
        self.activity[row] = ON_ROUTE
        self.venue[row] = -1
        self.anchor[row] = place
        self.spot[row] = place
        self.timer[row] = -1.0
        self.bodies.append(body)
        self.count += 1
        return row

    def remove(self, row: int):
        """Drop ``row`` (the last row moves into it); returns the removed person's body."""
        last = self.count - 1
        body = self.bodies[row]
        if row != last:
            for name in self._ARRAYS:
                array = getattr(self, name)
                array[row] = array[last]
            self.bodies[row] = self.bodies[last]
        self.bodies.pop()
        self.count -= 1
        return body

    def rows(self, name: str) -> np.ndarray:
        """The rows in use of the array ``name``."""
        return getattr(self, name)[: self.count]


#: What a person is doing (:attr:`CrowdState.states`): walking to a goal, waiting at one, standing
#: without one (sim_msgs/Pedestrians' constants).
WALKING_STATE, WAITING_STATE, STANDING_STATE = 0, 1, 2


@dataclass(frozen=True)
class CrowdState:
    """A crowd's people at one instant, row by row.

    Attributes:
        crowd: the crowd's name.
        names: each person's name (``<crowd>_<number>``).
        positions: (N, 2) m, world frame.
        headings: (N,) rad, the direction walked last.
        velocities: (N, 2) m/s, world frame.
        radius: the bodies' radius (m).
        groups: (N,) group ids (-1 alone).
        states: (N,) :data:`WALKING_STATE`, :data:`WAITING_STATE` or :data:`STANDING_STATE`.
    """

    crowd: str
    names: list[str]
    positions: np.ndarray
    headings: np.ndarray
    velocities: np.ndarray
    radius: float
    groups: np.ndarray
    states: np.ndarray


@jit
def arrivals(count, mode, activity, goal, reach, positions, wait_until, stop):  # pragma: no cover - compiled
    """The rows of people walking their route (not idle, not waiting, not queueing or at an
    attraction) within ``stop`` (m), or their goal's ``reach`` where larger, of their goal."""
    rows = []
    for i in range(count):
        if mode[i] != IDLE and activity[i] == ON_ROUTE and wait_until[i] < 0.0:
            dx, dy = goal[i, 0] - positions[i, 0], goal[i, 1] - positions[i, 1]
            within = max(stop, reach[i])
            if dx * dx + dy * dy < within * within:
                rows.append(i)
    return rows


@jit
def waits_over(count, wait_until, now):  # pragma: no cover - compiled
    """The rows of people whose wait has ended by ``now`` (s)."""
    rows = []
    for i in range(count):
        if 0.0 <= wait_until[i] <= now:
            rows.append(i)
    return rows


@jit
def walked_on(count, position, velocity, elapsed, radius, out):  # pragma: no cover - compiled
    """Where each of the first ``count`` people is after walking ``elapsed`` s at its velocity
    from ``position`` (m, m/s; both (≥ count, 2)): written to ``out[:count, :2]``, with
    ``radius`` (m) in a third column where ``out`` has one."""
    for i in range(count):
        out[i, 0] = position[i, 0] + elapsed * velocity[i, 0]
        out[i, 1] = position[i, 1] + elapsed * velocity[i, 1]
        if out.shape[1] > 2:
            out[i, 2] = radius
    return out


#: Speed (m/s) above which a person's heading follows its velocity.
HEADING_MIN_SPEED = 1e-3


@jit
def face_walking(count, velocity, heading):  # pragma: no cover - compiled
    """Turn each of the first ``count`` people walking faster than :data:`HEADING_MIN_SPEED`
    (``velocity``, m/s) to face the way it walks (``heading``, rad, in place)."""
    for i in range(count):
        if math.hypot(velocity[i, 0], velocity[i, 1]) > HEADING_MIN_SPEED:
            heading[i] = math.atan2(velocity[i, 1], velocity[i, 0])
