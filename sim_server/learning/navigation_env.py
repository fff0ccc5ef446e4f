"""A Gymnasium environment: a robot learns to drive to goals in a world, by its laser.

Each episode puts the robot at a random free start, facing a random way, and draws a random free
goal at least ``min_goal_distance`` away (free: inside the task's area and ``clearance`` from
every wall). An action is a command held for ``control_period`` seconds of sim time.

* **action**: ``[linear, angular]`` in [-1, 1], scaled by the task's ``max_linear`` (m/s) and
  ``max_angular`` (rad/s) and given to the drive as cmd_vel would.
* **observation** (float32): ``beams`` laser ranges over the laser's range (0 to 1, a miss is 1),
  the goal in the robot's frame over the area's diagonal (x ahead, y left, -1 to 1), and the
  robot's speeds over their maxima (-1 to 1).
* **reward**: ``progress_reward`` per metre gained towards the goal, ``step_reward`` every action,
  ``goal_reward`` on reaching it, ``collision_reward`` on touching anything; either of the last
  two ends the episode (``terminated``). Gymnasium's TimeLimit cuts it at ``max_episode_steps``.
* **render** (``render_mode="rgb_array"``): the whole world from above with the laser's rays and
  the goal (a yellow cross), by :mod:`sim_server.rendering`.

Seeds: ``reset(seed=...)`` seeds the starts and goals; the world itself is deterministic, so an
episode is a function of the seed and the actions. The world runs in-process (no ROS).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from sim_server.core import Pose2D, World
from sim_server.core.laser_scanner import scan_all
from sim_server.learning.task import DEFAULT_WORLD, NavigationTask
from sim_server.rendering import Renderer, View
from sim_server.rendering.overlays import Overlay, laser_rays

#: Tries to find a free start and goal before giving up (the area is then too crowded).
MAX_PLACEMENT_TRIES = 1000
#: Colour of the goal's cross in pictures (RGBA).
GOAL_COLOR = (255, 220, 0, 255)


class NavigationEnv(gymnasium.Env):
    """See the module's docstring.

    Args:
        world_path: the world file (default: the bundled room, ``config/worlds/learning``).
        task: the task (default: :class:`NavigationTask`'s defaults).
        render_mode: None or ``"rgb_array"``.
        step_size: the physics step (s).
        pixels: the longer side of rendered pictures.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(
        self,
        world_path: str | Path = DEFAULT_WORLD,
        task: NavigationTask | None = None,
        render_mode: str | None = None,
        step_size: float = 0.01,
        pixels: int = 256,
    ) -> None:
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f'render_mode must be None or "rgb_array", got {render_mode!r}')
        self.task = task or NavigationTask()
        self.render_mode = render_mode
        steps = self.task.control_period / step_size
        if abs(steps - round(steps)) > 1e-9 or round(steps) < 1:
            raise ValueError(
                f"the control period ({self.task.control_period} s) must be a whole number of steps of {step_size} s"
            )
        self._steps_per_action = int(round(steps))
        self.world = World.from_file(world_path, step_size=step_size)
        try:
            self._robot = self.world.model(self.task.robot)
            self._drive = self.world.plugins.find(self._robot, self.task.drive)
            self._laser = self.world.plugins.find(self._robot, self.task.laser)
        except Exception as error:  # noqa: BLE001 - EntityError or KeyError: say which in one line
            self.world.close()
            raise ValueError(f"{world_path}: the task's robot, drive or laser is missing: {error}") from None
        if getattr(self._drive, "command", None) is None or not hasattr(self._laser, "scanner"):
            self.world.close()
            raise ValueError(f"{world_path}: {self.task.drive} must be a drive and {self.task.laser} a laser")
        count = self._laser.scanner.beam_count
        self._beam_index = np.linspace(0, count - 1, min(self.task.beams, count)).round().astype(np.int64)
        self._walls = np.concatenate([layer.world_edges() for layer in self.world.layers] or [np.empty((0, 4))])
        x_min, y_min, x_max, y_max = self.task.area
        self._scale = math.hypot(x_max - x_min, y_max - y_min)
        beams = len(self._beam_index)
        low = np.concatenate([np.zeros(beams), -np.ones(4)]).astype(np.float32)
        self.observation_space = spaces.Box(low, np.ones(beams + 4, dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.goal = (0.0, 0.0)
        self._distance = 0.0
        self._renderer = Renderer(self.world) if render_mode else None
        self._view = View.fit(self.world, pixels) if render_mode else None

    # ---------------------------------------------------------------- Gymnasium's API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        start = self._free_point(None)
        self.goal = self._free_point(start)
        heading = float(self.np_random.uniform(-math.pi, math.pi))
        self._drive.command.linear = self._drive.command.angular = 0.0
        self.world.set_model_state(self.task.robot, Pose2D(start[0], start[1], heading), 0.0, 0.0, 0.0)
        self._distance = self._goal_distance()
        return self._observation(), {"distance": self._distance, "goal": self.goal}

    def step(self, action):
        action = np.asarray(action, dtype=np.float64).reshape(2)
        if not np.isfinite(action).all():
            raise ValueError(f"an action must be finite, got {action}")
        action = np.clip(action, -1.0, 1.0)  # as the action space bounds it
        command = self._drive.command
        command.linear = float(action[0]) * self.task.max_linear
        command.angular = float(action[1]) * self.task.max_angular
        collided = False
        for _ in range(self._steps_per_action):
            self.world.step()
            if self._touching():
                collided = True
                break
        distance = self._goal_distance()
        reward = self.task.progress_reward * (self._distance - distance) + self.task.step_reward
        self._distance = distance
        reached = distance <= self.task.goal_radius
        if reached:
            reward += self.task.goal_reward
        if collided:
            reward += self.task.collision_reward
        info = {"distance": distance, "goal": self.goal, "reached": reached, "collided": collided}
        return self._observation(), float(reward), bool(reached or collided), False, info

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        x, y = self.goal
        size = 0.25
        cross = Overlay(np.array([(x - size, y - size, x + size, y + size), (x - size, y + size, x + size, y - size)]), GOAL_COLOR)
        return self._renderer.render(self._view, [laser_rays(self.world), cross])

    def close(self) -> None:
        if getattr(self, "world", None) is not None:
            self.world.close()
            self.world = None

    # ---------------------------------------------------------------- the task's parts
    def _free_point(self, away_from: tuple[float, float] | None) -> tuple[float, float]:
        x_min, y_min, x_max, y_max = self.task.area
        for _ in range(MAX_PLACEMENT_TRIES):
            x, y = (float(v) for v in self.np_random.uniform((x_min, y_min), (x_max, y_max)))
            if self._wall_distance(x, y) < self.task.clearance:
                continue
            if away_from is not None and math.hypot(x - away_from[0], y - away_from[1]) < self.task.min_goal_distance:
                continue
            return x, y
        raise RuntimeError(
            f"no free point in the area {self.task.area} after {MAX_PLACEMENT_TRIES} tries "
            f"(clearance {self.task.clearance} m, goals {self.task.min_goal_distance} m away)"
        )

    def _wall_distance(self, x: float, y: float) -> float:
        if len(self._walls) == 0:
            return math.inf
        start, end = self._walls[:, :2], self._walls[:, 2:]
        along = end - start
        lengths = np.maximum((along * along).sum(axis=1), 1e-18)
        t = np.clip(((np.array([x, y]) - start) * along).sum(axis=1) / lengths, 0.0, 1.0)
        nearest = start + along * t[:, None]
        return float(np.hypot(nearest[:, 0] - x, nearest[:, 1] - y).min())

    def _goal_distance(self) -> float:
        pose = self._robot.pose
        return math.hypot(self.goal[0] - pose.x, self.goal[1] - pose.y)

    def _touching(self) -> bool:
        name = self.task.robot
        return any(contact.entity_a == name or contact.entity_b == name for contact in self.world.contacts())

    def _observation(self) -> np.ndarray:
        laser = self._laser
        ranges, _ = scan_all([laser.scanner], laser.scene, self.world.time.iterations)[0]
        picked = ranges[self._beam_index].astype(np.float64)
        picked = np.where(np.isfinite(picked), picked / laser.range, 1.0)
        pose = self._robot.pose
        dx, dy = self.goal[0] - pose.x, self.goal[1] - pose.y
        cos, sin = math.cos(pose.theta), math.sin(pose.theta)
        ahead, left = (cos * dx + sin * dy) / self._scale, (-sin * dx + cos * dy) / self._scale
        body = self._robot.first_body.physics_body
        velocity = body.linearVelocity
        linear = (cos * velocity[0] + sin * velocity[1]) / self.task.max_linear
        angular = body.angularVelocity / self.task.max_angular
        observation = np.concatenate([np.clip(picked, 0.0, 1.0), np.clip([ahead, left, linear, angular], -1.0, 1.0)])
        return observation.astype(np.float32)
