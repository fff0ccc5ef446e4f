"""Baseline robot policies driven by the crowd models: the robot walks as one of the crowd would.

CrowdNav's baselines (``crowd_sim/envs/policy/orca.py``) make the robot an agent of ORCA among
the people it observes; here the robot can be an agent of either model of
:mod:`sim_server.core.crowd`, computed by the same compiled steps the people walk by:

* ``orca`` (:func:`~sim_server.core.crowd.orca.orca_step`): the robot and every observed person
  are agents (each person takes half the responsibility of avoiding the robot, as CrowdNav's
  robot assumes, seen or not), with CrowdNav's parameters: neighbours within 10 m, at most 10,
  time horizons of 5 s, bodies 0.01 m larger than they are, the robot's preferred velocity
  towards its goal at its preferred speed (the whole gap to the goal when nearer than that: RVO2's
  ``prefVelocity`` in CrowdNav).
* ``social_force`` (:func:`~sim_server.core.crowd.social_force.social_force_step`): the robot is
  an agent of the social force (pedsim's parameters) pushed by its goal and by every observed
  person as an agent; its new velocity is its velocity plus the force over one control period,
  capped at its preferred speed; it stands only on its goal (the model's stop distance and
  goal threshold, set for people, are 0 for the robot, which must come within its goal radius).

A policy reads nothing but the robot's observations (:class:`ModelPolicy` decodes the layout of
:meth:`~sim_server.learning.fleet.NavigationFleet.observations`: the goal, the robot's
velocity, the observed people's positions and velocities in the robot's frame), so it sees only
what the task lets the robot sense (range, line of sight, noise: :mod:`sim_server.learning.sight`)
and no walls (CrowdNav's space has none; its ORCA ignores obstacles). Positions beyond the
laser's range and speeds beyond ``max_linear`` are clipped in observations, as the policy then
sees them; the people's radius is the world's crowd's. A holonomic robot (the task's
``max_lateral``) is given the velocity; a unicycle turns towards it (at most ``max_angular``)
and drives ahead at its speed times the cosine of the angle left to turn (never backwards).

Every observation of a batch is computed in one compiled call (the rows are kept apart as
copies of the world are).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from sim_server.core.crowd.neighbors import build_grid
from sim_server.core.crowd.orca import neighbor_cell, orca_step
from sim_server.core.crowd.orca_obstacles import OrcaObstacles
from sim_server.core.crowd.social_force import NO_EXTRA_FORCES, neighbour_grids, no_robots, social_force_step
from sim_server.core.crowd.walls import WallIndex
from sim_server.core.format.crowd_file import DEFAULT_RADIUS, OrcaParameters, SocialForceParameters
from sim_server.learning.fleet import PERSON_VALUES, STATE_VALUES, NavigationFleet

#: The crowd models a baseline may drive the robot by.
MODELS = ("orca", "social_force")
#: CrowdNav's ORCA robot: neighbours (m, count), time horizons (s); RVO2's other parameters are
#: the core's defaults.
ROBOT_ORCA = OrcaParameters(neighbor_distance=10.0, max_neighbors=10, time_horizon=5.0, time_horizon_obstacles=5.0,
                            max_speed_multiplier=1.0, stop_distance=0.0)
#: The social force of a robot: pedsim's, capped at its preferred speed and standing only on its goal.
ROBOT_SOCIAL_FORCE = replace(SocialForceParameters(), max_speed_multiplier=1.0, stop_distance=0.0, goal_threshold=0.0)
#: What CrowdNav's ORCA adds to every radius (m).
ORCA_SAFETY = 0.01


def fleet_of(env: Any) -> NavigationFleet:
    """The fleet under a navigation environment (single, vector, wrapped), or ValueError."""
    fleet = getattr(getattr(env, "unwrapped", env), "fleet", None)
    if not isinstance(fleet, NavigationFleet):
        raise ValueError(f"a baseline needs a navigation environment of sim_server.learning, got {type(env).__name__}")
    return fleet


class ModelPolicy:
    """Observations to actions by a crowd model (the module's docstring).

    Args:
        env: the environment whose observations the policy reads (its task and world say the
            layout and scales).
        model: one of :data:`MODELS`.

    Raises:
        ValueError: an unknown model, an environment that is not a navigation environment of
            this package, or a task that observes no people.
    """

    def __init__(self, env: Any, model: str = "orca") -> None:
        if not isinstance(model, str) or model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r:.100}")
        fleet = fleet_of(env)
        task = fleet.task
        if task.observed_people < 1:
            raise ValueError("a baseline needs the task to observe people (observed_people >= 1)")
        self.model = model
        self.task = task
        self._beams = len(fleet.beam_index)
        self._goal_scale = fleet.goal_scale
        self._people_scale = fleet.laser_range
        self._robot_radius = float(fleet.robot_radii.max())
        crowds = fleet.world.crowds
        self._person_radius = float(crowds[0].spec.radius) if crowds else DEFAULT_RADIUS
        self._holonomic = task.max_lateral > 0.0
        self._size = fleet.observation_size
        self._walls = WallIndex(np.zeros((0, 4)))
        self._obstacles = OrcaObstacles.from_segments(np.zeros((0, 4)), 0.0)

    def __call__(self, observations: Any) -> np.ndarray:
        """(N, action size) actions for (N, observation size) observations (one row may be
        given alone: then one action, shape (action size,))."""
        given = np.asarray(observations, dtype=np.float64)
        single = given.ndim == 1
        rows = given.reshape(1, -1) if single else given
        if rows.ndim != 2 or rows.shape[1] != self._size:
            raise ValueError(f"observations must have {self._size} values each, got shape {given.shape}")
        velocities = self._velocities(rows)
        actions = self._actions(rows, velocities)
        return actions[0] if single else actions

    # ---------------------------------------------------------------- the observation's parts
    def _decode(self, rows: np.ndarray) -> tuple:
        """The robot's goal (N, 2; m) and velocity (N, 2; m/s) and the observed people (N, K)
        present, (N, K, 2) positions (m) and velocities (m/s), all in the robot's frame."""
        task, at = self.task, self._beams
        goal = rows[:, at:at + 2] * self._goal_scale
        lateral = rows[:, at + 4] * task.max_lateral if self._holonomic else np.zeros(len(rows))
        velocity = np.column_stack([rows[:, at + 2] * task.max_linear, lateral])
        start = at + STATE_VALUES + (1 if self._holonomic else 0)
        people = rows[:, start:start + PERSON_VALUES * task.observed_people].reshape(len(rows), -1, PERSON_VALUES)
        present = people[:, :, 0] > 0.5
        return goal, velocity, present, people[:, :, 1:3] * self._people_scale, people[:, :, 3:5] * task.max_linear

    def _velocities(self, rows: np.ndarray) -> np.ndarray:
        """(N, 2) the velocity (m/s, the robot's frame) the model gives each robot."""
        goal, velocity, present, positions, people_velocities = self._decode(rows)
        n = len(rows)
        counts = present.sum(axis=1)
        # agents: the robots first (row i is agent i), then the people of every row, each row a copy
        people_rows = np.repeat(np.arange(n), counts)
        everyone = np.concatenate([np.zeros((n, 2)), positions[present]])
        speeds = np.concatenate([velocity, people_velocities[present]])
        copies = np.concatenate([np.arange(n), people_rows]).astype(np.int64)
        total = len(everyone)
        speed = self.task.max_linear
        distance = np.hypot(goal[:, 0], goal[:, 1])
        direction = np.where(distance[:, None] > 0.0, goal / np.maximum(distance, 1e-12)[:, None], 0.0)
        period = self.task.control_period
        out = np.zeros((total, 2))
        offsets = np.zeros((total, 2))
        if self.model == "orca":
            radii = np.concatenate([np.full(n, self._robot_radius), np.full(total - n, self._person_radius)]) + ORCA_SAFETY
            preferred = np.zeros((total, 2))
            preferred[:n] = direction * np.minimum(distance, speed)[:, None]  # RVO2's prefVelocity in CrowdNav
            max_speeds = np.concatenate([np.full(n, speed), np.full(total - n, speed)])
            grid = build_grid(everyone, total, neighbor_cell(ROBOT_ORCA.neighbor_distance))
            orca_step(ROBOT_ORCA.array(), period, total, everyone, speeds, radii, copies, offsets, preferred, max_speeds,
                      total, *grid, *self._obstacles.arrays(), *self._walls.arrays(), 0, out)
        else:
            radii = np.concatenate([np.full(n, self._robot_radius), np.full(total - n, self._person_radius)])
            directions = np.zeros((total, 2))
            directions[:n] = direction
            moving = np.hypot(speeds[n:, 0], speeds[n:, 1])
            directions[n:] = np.where(moving[:, None] > 0.0, speeds[n:] / np.maximum(moving, 1e-12)[:, None], 0.0)
            goal_distances = np.concatenate([distance, np.full(total - n, math.inf)])
            preferred_speeds = np.concatenate([np.full(n, speed), np.maximum(moving, 1e-3)])
            grid = neighbour_grids(everyone, total, total, ROBOT_SOCIAL_FORCE.neighbor_range)
            social_force_step(
                ROBOT_SOCIAL_FORCE.array(), period, total, everyone, speeds, radii, copies, offsets, directions,
                goal_distances, preferred_speeds, np.full(total, -1, dtype=np.int64), 1, total, *grid,
                *self._walls.arrays(), 0, *self._walls.nearest_map(), no_robots(), NO_EXTRA_FORCES, out,
            )
        return out[:n]

    def _actions(self, rows: np.ndarray, velocities: np.ndarray) -> np.ndarray:
        """The actions (in [-1, 1]) that ask each robot for its velocity (m/s, its frame)."""
        task = self.task
        if self._holonomic:
            actions = np.column_stack([velocities[:, 0] / task.max_linear, np.zeros(len(rows)),
                                       velocities[:, 1] / task.max_lateral])
            return np.clip(actions, -1.0, 1.0).astype(np.float32)
        speed = np.hypot(velocities[:, 0], velocities[:, 1])
        turn = np.where(speed > 0.0, np.arctan2(velocities[:, 1], velocities[:, 0]), 0.0)
        angular = np.clip(turn / task.control_period, -task.max_angular, task.max_angular)
        linear = speed * np.maximum(np.cos(turn), 0.0)
        actions = np.column_stack([linear / task.max_linear, angular / task.max_angular])
        return np.clip(actions, -1.0, 1.0).astype(np.float32)
