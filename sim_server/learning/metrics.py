"""The metrics of each learning robot's episode, as the environments put them in ``info``.

In a world with people every robot's episode is measured by the core's
:class:`~sim_server.core.crowd.social_metrics.SocialMetrics` (its docstring defines every
metric exactly): one update per action for all robots of all copies at once, the robot's
position, velocity and heading, its goal, what it touched, and every person of its copy. The
keys are :attr:`SocialMetrics.keys <sim_server.core.crowd.social_metrics.SocialMetrics.keys>`
(``finished``, ``success``, ``collision``, ``timeout``, ``steps``, ``time``, ``time_to_goal``,
``path_length``, ``path_efficiency``, ..., ``min_person_gap``, ``min_time_to_collision``, the
zones' ``<zone>_steps``, ``_time`` and ``_entries``, the effect on people), with the zones
``discomfort`` (the task's ``discomfort_distance``, CrowdNav's 0.2 m; left out when it is 0),
``intimate`` (0.5 m) and ``personal`` (1.2 m). Beside them stay the keys the environments gave
before: ``intrusions`` (actions ending with a person within ``discomfort_distance``, the
discomfort penalty's count), ``collided_person`` and ``collided_other`` (whether the robot has
touched a person, or anything else, this episode). ``path_length``, ``time`` and
``min_person_gap`` keep their meaning (they are SocialMetrics' now).

In a world without people only ``path_length`` (m) and ``time`` (s) are kept, as before.

An episode's outcome comes from the environment: :meth:`EpisodeMetrics.finish` with
:class:`~sim_server.core.crowd.social_metrics.Outcome` SUCCESS, COLLISION or TIMEOUT (Gymnasium's
truncation at ``max_episode_steps``); until then ``finished``, ``success``, ``collision`` and
``timeout`` are 0, and after it the episode's metrics stay as they were until the robot's next
episode starts.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sim_server.core.crowd.social_metrics import DEFAULT_ZONES, Outcome, SocialMetrics
from sim_server.learning.task import NavigationTask

#: The zone of the task's discomfort distance (CrowdNav's discomfort frequency is its steps over
#: the episode's steps).
DISCOMFORT_ZONE = "discomfort"
#: The keys every environment had before the social navigation metrics (kept as they were).
LEGACY_KEYS = ("intrusions", "collided_person", "collided_other")


class PeopleNow(NamedTuple):
    """Every person of every copy at one moment, in its copy's frame."""

    #: (P, 2) positions (m).
    positions: np.ndarray
    #: (P, 2) velocities (m/s).
    velocities: np.ndarray
    #: (P,) the copy of the world each is in.
    copies: np.ndarray
    #: (P,) radii (m).
    radii: np.ndarray
    #: (P,) each person's identity, unique and the same from action to action.
    ids: np.ndarray
    #: (P,) whether each wants to walk (not waiting or standing at its goal).
    walking: np.ndarray


def zones_of(task: NavigationTask) -> dict[str, float]:
    """The personal-space zones measured for ``task`` (gaps in m): its discomfort distance and
    Hall's intimate and personal distances."""
    zones = {DISCOMFORT_ZONE: task.discomfort_distance} if task.discomfort_distance > 0.0 else {}
    zones.update(DEFAULT_ZONES)
    return zones


class EpisodeMetrics:
    """The episode metrics of ``count`` robots (the module's docstring).

    Args:
        task: the task (its control period is the metrics' step, its discomfort distance a zone).
        copies: (R,) each robot's copy of the world.
        radii: (R,) each robot's bounding radius (m).
        people: whether the world has crowds (then the social navigation metrics are kept).
    """

    def __init__(self, task: NavigationTask, copies: np.ndarray, radii: np.ndarray, people: bool) -> None:
        count = len(copies)
        self.people = people
        self._radii = np.asarray(radii, dtype=np.float64)
        self._social = SocialMetrics(count, task.control_period, zones_of(task), robot_worlds=np.asarray(copies)) if people else None
        self._time_step = task.control_period
        self._path = np.zeros(count)
        self._time = np.zeros(count)
        self._last = np.zeros((count, 2))

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys of :meth:`table`, in order."""
        if self._social is None:
            return ("path_length", "time")
        return self._social.keys + LEGACY_KEYS

    def start_episode(self, index: int, start: tuple[float, float], heading: float) -> None:
        """Robot ``index`` starts an episode at rest at ``start`` (m, its copy's frame) facing
        ``heading`` (rad)."""
        self._path[index] = self._time[index] = 0.0
        self._last[index] = start
        if self._social is not None:
            self._social.reset(index, np.asarray(start, dtype=np.float64), headings=np.array([heading]))

    def after_action(self, positions: np.ndarray, velocities: np.ndarray, headings: np.ndarray, goals: np.ndarray,
                     collided: np.ndarray, touched_person: np.ndarray, people: PeopleNow | None) -> None:
        """Every robot's action is done: robots at ``positions`` (R, 2; m, their copies' frame)
        moving at ``velocities`` (R, 2; m/s) facing ``headings`` (R,; rad) towards ``goals``
        (R, 2; m); whether each touched anything, or a person, during the action; the people now."""
        if self._social is None or people is None:
            self._path += np.hypot(positions[:, 0] - self._last[:, 0], positions[:, 1] - self._last[:, 1])
            self._last = positions.copy()
            self._time += self._time_step
            return
        self._social.update(
            positions, velocities, self._radii, goals, people.positions, people.velocities, people.radii, people.copies,
            touched_person, collided & ~touched_person, robot_headings=headings, people_ids=people.ids,
            people_walking=people.walking,
        )

    def finish(self, robots: np.ndarray, outcomes: np.ndarray) -> None:
        """End the episodes of ``robots`` (an (R,) mask) with ``outcomes`` (one :class:`Outcome`
        each, or one for all)."""
        if self._social is not None and robots.any():
            self._social.finish(robots, np.broadcast_to(np.asarray(outcomes), robots.shape)[robots])

    def outcomes(self) -> np.ndarray:
        """(R,) how each robot's last episode ended (:class:`Outcome`; RUNNING while it runs, and
        always without people)."""
        if self._social is None:
            return np.full(len(self._path), int(Outcome.RUNNING))
        return self._social.outcome.copy()

    def table(self, legacy: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Every robot's metrics by key (arrays of R), the episode so far; ``legacy`` holds the
        keys of :data:`LEGACY_KEYS` (worlds with people)."""
        if self._social is None:
            return {"path_length": self._path.copy(), "time": self._time.copy()}
        found = self._social.table()
        found.update(legacy)
        return found


def outcomes_of(reached: np.ndarray, collided: np.ndarray, timed_out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which robots' episodes end and how: where an action brings several, a collision counts
    before the goal and both before the time limit (Gymnasium's termination before truncation;
    CrowdNav's last step counts as a timeout whatever happens in it). Returns the (R,) mask and
    the outcomes."""
    outcome = np.where(collided, int(Outcome.COLLISION), np.where(reached, int(Outcome.SUCCESS), int(Outcome.TIMEOUT)))
    return reached | collided | timed_out, outcome
