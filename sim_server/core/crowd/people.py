"""The people of a crowd as arrays: one row per pedestrian, compacted when people leave.

Per-person state lives in NumPy arrays so that the crowd's compiled kernels read it directly;
the Box2D bodies are listed beside in the same order. Rows are swapped with the last one on
removal (order is not meaningful; names are).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Goal modes of a person.
IDLE, WAYPOINTS, REGION_GOALS = 0, 1, 2
#: Rows allocated at first; arrays double as they fill.
INITIAL_CAPACITY = 16


@dataclass(frozen=True)
class Pedestrian:
    """What a pedestrian's Box2D body points back to (its ``userData.entity``): the name of the
    person (``<crowd>_<number>``) and of its crowd."""

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
        #: The Box2D bodies, row by row.
        self.bodies: list = []

    _ARRAYS = ("number", "route", "speed", "group", "goal", "field", "waypoint", "wait_until", "velocity",
               "heading", "spawned", "mode")

    def add(self, body, number: int, route: int, speed: float, group: int, goal: tuple[float, float], mode: int,
            spawned: bool, heading: float) -> int:
        """Append a person; returns its row."""
        if self.count == len(self.number):
            for name in self._ARRAYS:
                array = getattr(self, name)
                grown = np.zeros((2 * len(array),) + array.shape[1:], dtype=array.dtype)
                grown[: len(array)] = array
                setattr(self, name, grown)
        row = self.count
        self.number[row], self.route[row], self.speed[row], self.group[row] = number, route, speed, group
        self.goal[row] = goal
        self.field[row] = -1
        self.waypoint[row] = 0
        self.wait_until[row] = -1.0
        self.velocity[row] = 0.0
        self.heading[row] = heading
        self.spawned[row] = spawned
        self.mode[row] = mode
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
