"""What a robot's observation says, read back in metres and metres per second.

:meth:`~sim_server.learning.fleet.NavigationFleet.observations` scales everything into [-1, 1]
(the goal over the area's diagonal, speeds over their maxima, people's positions over the
laser's range). Policies that reason in the robot's world (the crowd-model baselines of
:mod:`sim_server.learning.baselines`, the value-network policy of
:mod:`sim_server.learning.lookahead`) read an observation back with an :class:`ObservationReader`
made from the environment; they read nothing else, so they sense only what the task lets the
robot sense.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sim_server.core.format.crowd_file import DEFAULT_RADIUS
from sim_server.learning.fleet import PERSON_VALUES, STATE_VALUES, NavigationFleet


@dataclass(frozen=True)
class Observed:
    """A batch of N observations read back, all in each robot's own frame (x ahead, y left)."""

    #: (N, 2) the goal (m).
    goal: np.ndarray
    #: (N, 2) the robot's velocity (m/s; sideways 0 for a robot that cannot move sideways).
    velocity: np.ndarray
    #: (N, K) whether observed person k is there (absent rows hold zeros).
    present: np.ndarray
    #: (N, K, 2) the observed people's positions (m) and velocities (m/s).
    positions: np.ndarray
    velocities: np.ndarray


def fleet_of(env: Any) -> NavigationFleet:
    """The fleet under a navigation environment (single, vector, wrapped), or ValueError."""
    fleet = getattr(getattr(env, "unwrapped", env), "fleet", None)
    if not isinstance(fleet, NavigationFleet):
        raise ValueError(f"a policy of sim_server.learning needs a navigation environment of sim_server.learning, "
                         f"got {type(env).__name__}")
    return fleet


class ObservationReader:
    """Reads observations of ``env`` (a navigation environment of this package) back.

    Raises:
        ValueError: ``env`` is not a navigation environment of this package, or its task
            observes no people.
    """

    def __init__(self, env: Any) -> None:
        fleet = fleet_of(env)
        task = fleet.task
        if task.observed_people < 1:
            raise ValueError("the policy needs the task to observe people (observed_people >= 1)")
        self.task = task
        #: Values of one observation.
        self.size = fleet.observation_size
        #: Whether the robot moves sideways (the task's ``max_lateral``).
        self.holonomic = task.max_lateral > 0.0
        #: The largest radius of the robots (m) and the people's radius (m).
        self.robot_radius = float(fleet.robot_radii.max())
        crowds = fleet.world.crowds
        self.person_radius = float(crowds[0].spec.radius) if crowds else DEFAULT_RADIUS
        self._beams = len(fleet.beam_index)
        self._goal_scale = fleet.goal_scale
        self._people_scale = fleet.laser_range

    def rows(self, observations: Any) -> tuple[np.ndarray, bool]:
        """``observations`` as (N, size) float64 rows, and whether one observation was given
        alone (ValueError for another shape)."""
        given = np.asarray(observations, dtype=np.float64)
        single = given.ndim == 1
        rows = given.reshape(1, -1) if single else given
        if rows.ndim != 2 or rows.shape[1] != self.size:
            raise ValueError(f"observations must have {self.size} values each, got shape {given.shape}")
        return rows, single

    def read(self, rows: np.ndarray) -> Observed:
        """The (N, size) observation ``rows`` read back."""
        task, at = self.task, self._beams
        goal = rows[:, at:at + 2] * self._goal_scale
        lateral = rows[:, at + 4] * task.max_lateral if self.holonomic else np.zeros(len(rows))
        velocity = np.column_stack([rows[:, at + 2] * task.max_linear, lateral])
        start = at + STATE_VALUES + (1 if self.holonomic else 0)
        people = rows[:, start:start + PERSON_VALUES * task.observed_people].reshape(len(rows), -1, PERSON_VALUES)
        return Observed(goal, velocity, people[:, :, 0] > 0.5, people[:, :, 1:3] * self._people_scale,
                        people[:, :, 3:5] * task.max_linear)

    def actions(self, velocities: np.ndarray) -> np.ndarray:
        """The actions (float32, in [-1, 1]) that ask each robot for its velocity (N, 2; m/s,
        its frame): a holonomic robot is given it; a unicycle turns towards it (at most
        ``max_angular``) and drives ahead at its speed times the cosine of the angle left to
        turn (never backwards)."""
        task = self.task
        if self.holonomic:
            actions = np.column_stack([velocities[:, 0] / task.max_linear, np.zeros(len(velocities)),
                                       velocities[:, 1] / task.max_lateral])
            return np.clip(actions, -1.0, 1.0).astype(np.float32)
        speed = np.hypot(velocities[:, 0], velocities[:, 1])
        turn = np.where(speed > 0.0, np.arctan2(velocities[:, 1], velocities[:, 0]), 0.0)
        return self.unicycle_actions(speed * np.maximum(np.cos(turn), 0.0), turn / task.control_period)

    def unicycle_actions(self, linear: np.ndarray, angular: np.ndarray) -> np.ndarray:
        """The actions (float32, in [-1, 1]) of a robot that cannot move sideways for its speed
        ahead ``linear`` (m/s) and turn rate ``angular`` (rad/s), each cut to its maximum."""
        task = self.task
        return np.clip(np.column_stack([linear / task.max_linear, angular / task.max_angular]), -1.0, 1.0).astype(np.float32)
