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

A policy reads nothing but the robot's observations (read back by
:mod:`sim_server.learning.observed` from
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
from sim_server.core.format.crowd_file import OrcaParameters, SocialForceParameters
from sim_server.learning.observed import ObservationReader

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
        self.model = model
        self.reader = ObservationReader(env)
        self.task = self.reader.task
        self._walls = WallIndex(np.zeros((0, 4)))
        self._obstacles = OrcaObstacles.from_segments(np.zeros((0, 4)), 0.0)

    def __call__(self, observations: Any) -> np.ndarray:
        """(N, action size) actions for (N, observation size) observations (one row may be
        given alone: then one action, shape (action size,))."""
        rows, single = self.reader.rows(observations)
        velocities = self._velocities(rows)
        actions = self.reader.actions(velocities)
        return actions[0] if single else actions

    def _velocities(self, rows: np.ndarray) -> np.ndarray:
        """(N, 2) the velocity (m/s, the robot's frame) the model gives each robot."""
        seen = self.reader.read(rows)
        goal, velocity, present = seen.goal, seen.velocity, seen.present
        positions, people_velocities = seen.positions, seen.velocities
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
            radii = np.concatenate([np.full(n, self.reader.robot_radius), np.full(total - n, self.reader.person_radius)]) + ORCA_SAFETY
            preferred = np.zeros((total, 2))
            preferred[:n] = direction * np.minimum(distance, speed)[:, None]  # RVO2's prefVelocity in CrowdNav
            max_speeds = np.concatenate([np.full(n, speed), np.full(total - n, speed)])
            grid = build_grid(everyone, total, neighbor_cell(ROBOT_ORCA.neighbor_distance))
            orca_step(ROBOT_ORCA.array(), period, total, (everyone, speeds, radii, copies, offsets), preferred, max_speeds,
                      grid, self._obstacles.arrays(), self._walls.arrays(), 0, out)
        else:
            radii = np.concatenate([np.full(n, self.reader.robot_radius), np.full(total - n, self.reader.person_radius)])
            directions = np.zeros((total, 2))
            directions[:n] = direction
            moving = np.hypot(speeds[n:, 0], speeds[n:, 1])
            directions[n:] = np.where(moving[:, None] > 0.0, speeds[n:] / np.maximum(moving, 1e-12)[:, None], 0.0)
            goal_distances = np.concatenate([distance, np.full(total - n, math.inf)])
            preferred_speeds = np.concatenate([np.full(n, speed), np.maximum(moving, 1e-3)])
            grid = neighbour_grids(everyone, total, total, ROBOT_SOCIAL_FORCE.neighbor_range)
            social_force_step(
                ROBOT_SOCIAL_FORCE.array(), period, total, (everyone, speeds, radii, copies, offsets),
                (directions, goal_distances, preferred_speeds), (np.full(total, -1, dtype=np.int64), 1), grid,
                self._walls.arrays(), 0, self._walls.nearest_map(), no_robots(), NO_EXTRA_FORCES, out,
            )
        return out[:n]
