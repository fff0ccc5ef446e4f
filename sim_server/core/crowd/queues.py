"""Waiting queues (pedsim's ``<queue>``): people line up behind each other and the first waits at
the head before it goes on.

As pedsim_simulator's waiting queue and queueing planner:

* A person whose next stop is a queue walks to the queue's end (the last person in line, or the
  head when the line is empty) and joins the line within :data:`JOIN_DISTANCE` of it.
* In line, a person keeps a private space behind the one ahead: drawn as it joins,
  :data:`PRIVATE_SPACE` m (pedsim's 0.2 to 0.8 m; here between the bodies, not their centres,
  so that bodies of any radius keep apart) against the queue's direction, turned by up to
  :data:`PRIVATE_SPACE_TURN` either way. Its goal follows the person ahead once that one has
  moved :data:`FOLLOW_DISTANCE` m (so that a line does not shuffle at every step).
* The first in line walks to the head; within :data:`HEAD_RADIUS` of it (beyond the model's
  ``stop_distance``, within which people stand before their goals) a wait starts, drawn
  from pedsim's gamma distribution (shape 2, scale 0.5 s: 1 s on average). Then it leaves the
  line for the stop after the queue, and the next one moves up to the head.

Lines are kept per copy of the world; each copy draws from its own random generator. People who
leave the world leave their line.
"""

from __future__ import annotations

import math
import numpy as np

from sim_server.core.crowd.goal_setting import GoalSetter
from sim_server.core.crowd.people import APPROACHING_QUEUE, IN_QUEUE, ON_ROUTE, People
from sim_server.core.format.crowd_file import CrowdSpec

#: A person joins a line within this (m) of its end (pedsim's ``endPositionRadius``).
JOIN_DISTANCE = 2.0
#: The first in line starts its wait within this (m) of the head (pedsim's ``waitingRadius``),
#: beyond the model's stop distance.
HEAD_RADIUS = 0.3
#: The gap (m) kept behind the person ahead: drawn uniformly (pedsim's 0.2 to 0.8 m).
PRIVATE_SPACE = (0.2, 0.8)
#: The private space's direction is the queue's turned by up to this either way (rad; pedsim's 45 degrees).
PRIVATE_SPACE_TURN = math.radians(45.0)
#: A person in line walks on once the one ahead has moved this far (m; pedsim's ``minUpdateDistance``).
FOLLOW_DISTANCE = 0.7
#: The wait at the head: gamma distribution's shape and scale (s) (pedsim's alpha 2, beta 0.5).
WAIT_SHAPE, WAIT_SCALE = 2.0, 0.5


class WaitingLines:
    """Every queue's line in every copy of the world.

    Args:
        spec: the crowd (its ``queues`` and ``radius``).
        people: its people.
        copies: copies of the world.
        goals: the goals of the crowd (people who leave a line go on along their routes).
    """

    def __init__(self, spec: CrowdSpec, people: People, copies: int, goals: GoalSetter) -> None:
        self.spec = spec
        self.people = people
        self.goals = goals
        self.heads = [(queue.x, queue.y) for queue in spec.queues]
        self.directions = [queue.direction for queue in spec.queues]
        #: The people in line (their numbers, the first first), per copy and queue.
        self.lines: list[list[list[int]]] = [[[] for _ in spec.queues] for _ in range(copies)]
        #: When the first in line may go (sim s; inf: its wait has not started), per copy and queue.
        self.release: list[list[float]] = [[math.inf] * len(spec.queues) for _ in range(copies)]

    def approach(self, row: int, queue: int) -> None:
        """The person at ``row`` walks to the end of queue ``queue`` (its next stop)."""
        people = self.people
        people.activity[row] = APPROACHING_QUEUE
        people.venue[row] = queue
        people.wait_until[row] = -1.0
        self.goals.set_goal(row, self.heads[queue], 0.0)  # the line's end is sought at the next update

    def restart(self, copy: int) -> None:
        """Copy ``copy`` starts afresh: its lines are empty."""
        self.lines[copy] = [[] for _ in self.spec.queues]
        self.release[copy] = [math.inf] * len(self.spec.queues)

    def _end(self, copy: int, queue: int, rows: dict[int, int], local: np.ndarray) -> tuple[float, float]:
        """Where the line of ``queue`` in ``copy`` ends: the last one's place (``local``, m, the
        crowd's frame; ``rows``: row by person number), or the head."""
        line = self.lines[copy][queue]
        if not line:
            return self.heads[queue]
        return tuple(local[rows[line[-1]]])

    def update(self, local: np.ndarray, now: float) -> list[int]:
        """Move the lines on at sim time ``now`` (s), the people at ``local`` (N, 2; m, crowd
        frame); returns the rows that leave the world (their route ends after a queue)."""
        people = self.people
        rows = {int(number): row for row, number in enumerate(people.rows("number").tolist())}
        leaving: list[int] = []
        for copy, lines in enumerate(self.lines):
            for queue, line in enumerate(lines):
                if not line:
                    continue
                kept = [number for number in line if number in rows and people.activity[rows[number]] == IN_QUEUE]
                if not kept or kept[0] != line[0]:
                    self.release[copy][queue] = math.inf  # the first left (removed): the next one waits anew
                line[:] = kept
                if line:
                    self._move_line(copy, queue, line, rows, local, now, leaving)
        self._join(rows, local)
        return leaving

    def _move_line(self, copy: int, queue: int, line: list[int], rows: dict[int, int], local: np.ndarray, now: float,
                   leaving: list[int]) -> None:
        """The first in line waits at the head and goes; the others follow the one ahead."""
        people = self.people
        first = rows[line[0]]
        head = self.heads[queue]
        near = HEAD_RADIUS + self.spec.parameters.stop_distance
        if math.isinf(self.release[copy][queue]) and math.dist(local[first], head) < near:
            wait = float(self.goals.rngs[copy].gamma(WAIT_SHAPE, WAIT_SCALE))
            self.release[copy][queue] = now + wait
        if now >= self.release[copy][queue]:
            line.pop(0)
            self.release[copy][queue] = math.inf
            people.activity[first] = ON_ROUTE
            if not self.goals.next_goal(first, now):
                leaving.append(first)
            if not line:
                return
            first = rows[line[0]]
        if people.goal[first, 0] != head[0] or people.goal[first, 1] != head[1]:
            self.goals.set_goal(first, head, straight=True)
        for ahead, number in zip(line, line[1:]):
            row, ahead_row = rows[number], rows[ahead]
            if math.dist(local[ahead_row], people.anchor[row]) >= FOLLOW_DISTANCE:
                self._follow(row, local[ahead_row])

    def _follow(self, row: int, ahead: np.ndarray) -> None:
        """The person at ``row`` stands behind the one ahead, who is at ``ahead`` now (m, the
        crowd's frame)."""
        people = self.people
        people.anchor[row] = ahead
        goal = people.anchor[row] - people.spot[row]
        self.goals.set_goal(row, (float(goal[0]), float(goal[1])), straight=True)

    def _join(self, rows: dict[int, int], local: np.ndarray) -> None:
        """People walking to a line join it within :data:`JOIN_DISTANCE` of its end; the others
        walk on to the end, wherever it has moved."""
        people = self.people
        for row in np.flatnonzero(people.rows("activity") == APPROACHING_QUEUE).tolist():
            copy, queue = int(people.copy[row]), int(people.venue[row])
            end = self._end(copy, queue, rows, local)
            if math.dist(local[row], end) > JOIN_DISTANCE:
                if math.dist(people.goal[row], end) >= FOLLOW_DISTANCE:
                    self.goals.set_goal(row, end)
                continue
            line = self.lines[copy][queue]
            people.activity[row] = IN_QUEUE
            if line:
                rng = self.goals.rngs[copy]
                gap = 2.0 * self.spec.radius + float(rng.uniform(*PRIVATE_SPACE))
                angle = self.directions[queue] + float(rng.uniform(-PRIVATE_SPACE_TURN, PRIVATE_SPACE_TURN))
                people.spot[row] = (gap * math.cos(angle), gap * math.sin(angle))
                self._follow(row, local[rows[line[-1]]])
            else:
                self.goals.set_goal(row, self.heads[queue], straight=True)
            line.append(int(people.number[row]))
