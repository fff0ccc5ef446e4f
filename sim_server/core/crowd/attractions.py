"""Attractions (pedsim's ``<attraction>``): places, a shop window or a stall, that draw people
walking nearby for a while.

As pedsim_simulator's agent state machine and shopping planner:

* A person on its route (walking, waiting or standing) whose nearest attraction is ``d`` m away
  is drawn to it with a chance of ``0.02 x strength x (1 - d / 7 m)`` per second (none beyond
  :data:`REACH`). In a group the first member decides, and the group goes along.
* There it walks to a spot drawn in the attraction's box, stays :data:`DWELL` s once within
  :data:`SPOT_RADIUS` of it, and walks on to a spot nearby (an offset of normal length, sd
  :data:`SPOT_STEP` m, along one of eight directions; none under sqrt(2) m), kept in the box.
  pedsim means the same (its 15 s and its eight directions) but its code compares the times the
  wrong way round and draws the direction's index as the angle (0 to 8 degrees): its shoppers
  never move on from their first spot. Spots inside walls or cut off are drawn again.
* It leaves with a chance of :data:`LEAVE_RATE` per second (a group together) and walks back
  to its route's goal.

The chances are drawn per copy of the world from its own random generator.
"""

from __future__ import annotations

import math
import numpy as np

from sim_server.core.crowd.goal_setting import GoalSetter
from sim_server.core.crowd.people import AT_ATTRACTION, ON_ROUTE, People
from sim_server.core.crowd.places import IN_WALL, Places
from sim_server.core.format.crowd_file import CrowdSpec

#: Chance per second and unit of strength of being drawn right at an attraction (pedsim's 0.02).
BASE_RATE = 0.02
#: Beyond this (m) an attraction draws no one (pedsim's ``maxAttractionDist``).
REACH = 7.0
#: Chance per second of leaving an attraction (pedsim's 0.03).
LEAVE_RATE = 0.03
#: A spot is reached within this (m) (pedsim's ``distanceThreshold``).
SPOT_RADIUS = 1.0
#: Time (s) spent at a spot (pedsim's ``waitTime``).
DWELL = 15.0
#: Standard deviation (m) of the step to the next spot (pedsim's ``radiusStd``).
SPOT_STEP = 4.0
#: Steps shorter than this (m) stay at the spot (pedsim's squared length under 2).
MIN_SPOT_STEP = math.sqrt(2.0)
#: Spots drawn before one is given up on (inside walls, cut off).
SPOT_TRIES = 10


class Attractions:
    """The attractions of a crowd and the people at them.

    Args:
        spec: the crowd (its ``attractions``).
        people: its people.
        places: where bodies fit and what can be reached.
        goals: the crowd's goals (people going back to their routes).
    """

    def __init__(self, spec: CrowdSpec, people: People, places: Places, goals: GoalSetter) -> None:
        self.people = people
        self.places = places
        self.goals = goals
        self.centres = np.array([(a.x, a.y) for a in spec.attractions], dtype=np.float64).reshape(-1, 2)
        self.half_sizes = np.array([(a.width / 2.0, a.height / 2.0) for a in spec.attractions], dtype=np.float64).reshape(-1, 2)
        self.strengths = np.array([a.strength for a in spec.attractions], dtype=np.float64)

    def nearest(self, local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each person's nearest attraction (index) and its distance (m) from the centre."""
        best = np.full(len(local), np.inf)
        index = np.zeros(len(local), dtype=np.int64)
        for k, (cx, cy) in enumerate(self.centres.tolist()):
            distance = np.hypot(local[:, 0] - cx, local[:, 1] - cy)
            nearer = distance < best
            best[nearer] = distance[nearer]
            index[nearer] = k
        return index, best

    def update(self, local: np.ndarray, now: float, dt: float, leaving: set[int]) -> None:
        """Draw who is attracted and who leaves over the last ``dt`` s, and move the people at
        attractions from spot to spot, at sim time ``now`` (s); ``local`` (N, 2) where the
        people are (m, crowd frame); ``leaving``: rows that leave the world."""
        people = self.people
        n = people.count
        deciding = self.goals.deciders()
        deciding[list(leaving)] = False
        activity = people.rows("activity")
        chance = np.zeros(n)
        candidates = deciding & (activity == ON_ROUTE)
        index = np.zeros(n, dtype=np.int64)
        if candidates.any():
            index, distance = self.nearest(local)
            chance[candidates] = (BASE_RATE * self.strengths[index] * np.maximum(0.0, 1.0 - distance / REACH) * dt)[candidates]
        at = deciding & (activity == AT_ATTRACTION)
        chance[at] = LEAVE_RATE * dt
        drawn = self._draw(chance)
        for row in np.flatnonzero(drawn & candidates).tolist():
            self._arrive(row, int(index[row]), local, now)
        for row in np.flatnonzero(drawn & at).tolist():
            self._leave(row)
        for row in np.flatnonzero(people.rows("activity") == AT_ATTRACTION).tolist():
            self._browse(row, local, now)

    def _draw(self, chance: np.ndarray) -> np.ndarray:
        """Which rows happen, each with its ``chance``: drawn from its copy's generator (only
        where some row of the copy has a chance)."""
        copies = self.people.rows("copy")
        drawn = np.zeros(len(chance), dtype=bool)
        for copy in np.unique(copies[chance > 0.0]).tolist():
            rows = np.flatnonzero(copies == copy)
            drawn[rows] = self.goals.rngs[copy].random(len(rows)) < chance[rows]
        return drawn

    def _members(self, row: int) -> list[int]:
        """The person at ``row`` and the others of its group."""
        group = self.people.group[row]
        if group < 0:
            return [row]
        return np.flatnonzero(self.people.rows("group") == group).tolist()

    def _arrive(self, row: int, attraction: int, local: np.ndarray, now: float) -> None:
        """The person at ``row`` (and its group) goes to ``attraction``."""
        people = self.people
        for member in self._members(row):
            if people.activity[member] != ON_ROUTE:
                continue
            spot = self._spot(member, attraction, self.centres[attraction], local, first=True)
            if spot is None:
                continue
            people.activity[member] = AT_ATTRACTION
            people.venue[member] = attraction
            people.anchor[member] = people.goal[member]
            people.wait_until[member] = -1.0
            people.timer[member] = -1.0
            people.spot[member] = spot
            self.goals.set_goal(member, spot)

    def _leave(self, row: int) -> None:
        """The person at ``row`` (and its group) goes back to the route's goal."""
        people = self.people
        for member in self._members(row):
            if people.activity[member] == AT_ATTRACTION:
                people.activity[member] = ON_ROUTE
                people.timer[member] = -1.0
                goal = people.anchor[member]
                self.goals.set_goal(member, (float(goal[0]), float(goal[1])))

    def _browse(self, row: int, local: np.ndarray, now: float) -> None:
        """Stay at the spot, then walk on to the next one."""
        people = self.people
        if people.timer[row] < 0.0:
            if math.dist(local[row], people.spot[row]) <= SPOT_RADIUS:
                people.timer[row] = now + DWELL
            return
        if now < people.timer[row]:
            return
        people.timer[row] = -1.0
        spot = self._spot(row, int(people.venue[row]), people.spot[row], local, first=False)
        if spot is not None:
            people.spot[row] = spot
            self.goals.set_goal(row, spot)

    def _spot(self, row: int, attraction: int, around: np.ndarray, local: np.ndarray,
              first: bool) -> tuple[float, float] | None:
        """A spot in ``attraction`` the person at ``row`` can reach: drawn in the box (``first``)
        or a step from ``around``; None where no draw is free."""
        rng = self.goals.rngs[int(self.people.copy[row])]
        low = self.centres[attraction] - self.half_sizes[attraction]
        high = self.centres[attraction] + self.half_sizes[attraction]
        here = self.places.label(float(local[row, 0]), float(local[row, 1]))
        for _ in range(SPOT_TRIES):
            if first:
                x, y = rng.uniform(low, high)
            else:
                length = float(rng.normal(0.0, SPOT_STEP))
                angle = math.pi / 4.0 * int(rng.integers(8))
                step = (length * math.cos(angle), length * math.sin(angle)) if abs(length) >= MIN_SPOT_STEP else (0.0, 0.0)
                x, y = np.clip(around + step, low, high)
            label = self.places.label(float(x), float(y))
            if label != IN_WALL and label == here:
                return float(x), float(y)
        return None
