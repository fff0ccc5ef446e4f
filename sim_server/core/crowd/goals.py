"""Where a crowd's people walk next: their routes' waypoints or goals drawn in a region, arrivals
and waits, groups that share their first member's goal, stops that are sinks, waiting queues
(:mod:`.queues`) and attractions (:mod:`.attractions`).

Per person the goal is a point in the crowd's frame (the world file's) with a distance field of
the walking grid that leads there (or none: straight), and a reach within which it counts as
reached. Python runs here per event (an arrival, a wait ended, a queue moving on), never per
person per step.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from sim_server.core.crowd.attractions import Attractions
from sim_server.core.crowd.navigation import WalkingGrid
from sim_server.core.crowd.people import IDLE, ON_ROUTE, WAYPOINTS, People, arrivals, waits_over
from sim_server.core.crowd.places import Places
from sim_server.core.crowd.queues import WaitingLines
from sim_server.core.format.crowd_entries import NO_QUEUE, Route
from sim_server.core.format.crowd_file import CrowdSpec


class GoalHost(Protocol):
    """What the goals need of the crowd whose people they lead."""

    spec: CrowdSpec
    people: People
    grid: WalkingGrid | None
    places: Places
    offsets: np.ndarray
    rngs: list[np.random.Generator]

    def local_position(self, row: int) -> tuple[float, float]:
        """Where the person at ``row`` is now (m, the crowd's frame)."""


class Goals:
    """The goals of a crowd's people.

    Args:
        host: the crowd.
        routes: the routes of the world file's entries and spawners, in order (run-time routes
            are appended to :attr:`routes`).
    """

    def __init__(self, host: GoalHost, routes: list[Route]) -> None:
        self.host = host
        self.routes = routes
        copies = len(host.offsets)
        self.queues = WaitingLines(host.spec, host.people, copies, self) if host.spec.queues else None
        self.attractions = Attractions(host.spec, host.people, host.places, self) if host.spec.attractions else None

    @property
    def rngs(self) -> list[np.random.Generator]:
        """Each copy's random generator (the crowd's)."""
        return self.host.rngs

    def set_goal(self, row: int, goal: tuple[float, float], reach: float | None = None, straight: bool = False) -> None:
        """The person at ``row`` walks to ``goal`` (m, crowd frame), by the walking grid's field
        unless ``straight``; ``reach`` (m) replaces the goal's reach when given."""
        people = self.host.people
        people.goal[row] = goal
        if reach is not None:
            people.reach[row] = reach
        grid = self.host.grid
        people.field[row] = -1 if grid is None or straight else grid.field_id(
            goal[0], goal[1], lambda: set(people.rows("field").tolist()))

    def next_goal(self, row: int, now: float, first: bool = False) -> bool:
        """Give the person at ``row`` its next goal; False where a spawned person reached the end
        of its route (it leaves)."""
        host = self.host
        people = host.people
        route = self.routes[people.route[row]]
        if people.mode[row] == WAYPOINTS:
            index = 0 if first else people.waypoint[row] + 1
            if index >= len(route.waypoints):
                if people.spawned[row]:
                    return False
                if not route.loop:
                    people.mode[row] = IDLE
                    people.field[row] = -1
                    return True
                index = 0
            people.waypoint[row] = index
            stop = route.stop(index)
            if stop.queue != NO_QUEUE and self.queues is not None:
                self.queues.approach(row, stop.queue)
                return True
            self.set_goal(row, route.waypoints[index], stop.radius)
            return True
        copy = int(people.copy[row])
        x, y = host.local_position(row)
        pool = host.places.pool(route.goals, host.places.label(x, y))
        if not len(pool):
            people.mode[row] = IDLE
            return True
        self.set_goal(row, tuple(pool[int(host.rngs[copy].integers(len(pool)))]), 0.0)
        return True

    def share_goal(self, rows: list[int]) -> None:
        """The group of ``rows`` walks to the first one's goal."""
        people = self.host.people
        for row in rows[1:]:
            people.goal[row] = people.goal[rows[0]]
            people.field[row] = people.field[rows[0]]
            people.waypoint[row] = people.waypoint[rows[0]]
            people.mode[row] = people.mode[rows[0]]
            people.reach[row] = people.reach[rows[0]]

    def deciders(self) -> np.ndarray:
        """(N,) bool: who decides for itself: people alone and the first (lowest number) of each
        group, whose arrivals, waits and attractions its group follows."""
        people = self.host.people
        groups, numbers = people.rows("group"), people.rows("number")
        deciding = groups < 0
        grouped = np.flatnonzero(~deciding)
        if len(grouped):
            order = grouped[np.lexsort((numbers[grouped], groups[grouped]))]
            first = np.ones(len(order), dtype=bool)
            first[1:] = groups[order][1:] != groups[order][:-1]
            deciding[order[first]] = True
        return deciding

    def update(self, local: np.ndarray, now: float, dt: float) -> list[int]:
        """Arrivals, waits, queues and attractions at sim time ``now`` (s), the people at
        ``local`` (N, 2; m, crowd frame), ``dt`` (s) since the last update; the rows that leave."""
        leaving = self._handle_arrivals(local, now)
        if self.queues is not None:
            leaving += [row for row in self.queues.update(local, now) if row not in leaving]
        if self.attractions is not None:
            self.attractions.update(local, now, dt, set(leaving))
        return leaving

    def _handle_arrivals(self, local: np.ndarray, now: float) -> list[int]:
        """Start waits at goals reached, give new goals when waits end; the rows that leave (at
        the end of a spawned person's route, or at a sink)."""
        host = self.host
        people = host.people
        arrived = arrivals(people.count, people.mode, people.activity, people.goal, people.reach, local, people.wait_until,
                           host.spec.parameters.stop_distance)
        leaving = []
        groups = people.rows("group")
        deciding = self.deciders() if len(arrived) else None
        for row in arrived:
            if not deciding[row]:
                continue  # the group's first member decides
            route = self.routes[people.route[row]]
            if people.mode[row] == WAYPOINTS and route.stop(int(people.waypoint[row])).sink:
                leaving.append(int(row))
                continue
            low, high = route.wait
            wait = float(host.rngs[int(people.copy[row])].uniform(low, high)) if high > 0.0 else 0.0
            people.wait_until[row] = now + wait
        for row in waits_over(people.count, people.wait_until, now):
            people.wait_until[row] = -1.0
            if not self.next_goal(row, now):
                leaving.append(int(row))
                continue
            if groups[row] >= 0:
                members = [int(m) for m in np.flatnonzero(groups == groups[row]) if m != row and people.activity[m] == ON_ROUTE]
                self.share_goal([int(row)] + members)
        return leaving
