"""A Gymnasium environment: a robot learns to drive to goals in a world, by its laser.

Each episode puts the robot at a random free start, facing a random way, and draws a random free
goal at least ``min_goal_distance`` away (free: inside the task's area and ``clearance`` from
every wall). An action is a command held for ``control_period`` seconds of sim time.

* **action**: ``[linear, angular]`` in [-1, 1], scaled by the task's ``max_linear`` (m/s) and
  ``max_angular`` (rad/s) and given to the drive as cmd_vel would (any drive: an AckermannDrive
  reads the angular value as its steering angle); with the task's ``max_lateral``, ``[linear,
  angular, lateral]`` for a drive that slides (OmniDrive), which then observes its sideways
  speed too.
* **observation** (float32): ``beams`` laser ranges over the laser's range (0 to 1, a miss is 1),
  the goal in the robot's frame over the area's diagonal (x ahead, y left, -1 to 1), and the
  robot's speeds over their maxima (-1 to 1).
* **reward**: ``progress_reward`` per metre gained towards the goal, ``step_reward`` every action,
  ``goal_reward`` on reaching it, ``collision_reward`` on touching anything (a person too); either
  of the last two ends the episode (``terminated``). Gymnasium's TimeLimit cuts it at
  ``max_episode_steps``. In a world with people, a person within ``discomfort_distance`` after
  an action that does not end the episode adds ``(gap - discomfort_distance) *
  discomfort_penalty * control_period`` (CrowdNav's discomfort term).
* **people** (worlds with crowds, ``sim_server/CrowdNavigation-v0``): each episode starts the
  crowds afresh from the episode's seed; the observation ends with the ``observed_people``
  nearest people the robot senses (:mod:`sim_server.learning.people`,
  :mod:`sim_server.learning.sight`), and ``info`` has the social navigation metrics
  (:mod:`sim_server.learning.metrics`); the episode ends as a success, a collision or, after
  ``max_episode_steps`` actions, a timeout.
* **layout**: a :class:`~sim_server.learning.fleet.EpisodeLayout` places the robot and the
  people instead (CrowdNav's scenarios, :mod:`sim_server.learning.crowdnav`).
* **render** (``render_mode="rgb_array"``): the whole world from above with the laser's rays and
  the goal (a yellow cross), by :mod:`sim_server.rendering`.

Seeds: ``reset(seed=...)`` seeds the starts and goals; the world itself is deterministic, so an
episode is a function of the seed and the actions. The world runs in-process (no ROS). The work
is :class:`~sim_server.learning.fleet.NavigationFleet`'s, with one robot;
:class:`~sim_server.learning.vector_env.NavigationVectorEnv` runs many.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from sim_server.core import limits
from sim_server.core.crowd.social_metrics import Outcome
from sim_server.core.format.world_file import WorldSpec
from sim_server.learning.fleet import EpisodeLayout, NavigationFleet
from sim_server.learning.metrics import outcomes_of
from sim_server.learning.pictures import RENDER_MODES, FleetPictures, check_render_mode
from sim_server.learning.task import DEFAULT_WORLD, NavigationTask


def first_of(metrics: dict[str, np.ndarray]) -> dict[str, Any]:
    """The first robot's metrics as plain Python values."""
    return {key: values[0].item() for key, values in metrics.items()}


def observation_space(fleet: NavigationFleet) -> spaces.Box:
    """One robot's observations: beams in [0, 1], then the goal and speeds in [-1, 1]."""
    beams = len(fleet.beam_index)
    low = np.concatenate([np.zeros(beams), -np.ones(fleet.observation_size - beams)]).astype(np.float32)
    return spaces.Box(low, np.ones(fleet.observation_size, dtype=np.float32), dtype=np.float32)


def action_space(size: int = 2) -> spaces.Box:
    """One robot's action: linear and angular command over their maxima (and the sideways
    command, with ``size`` 3: see :attr:`NavigationTask.max_lateral
    <sim_server.learning.task.NavigationTask.max_lateral>`)."""
    return spaces.Box(-1.0, 1.0, shape=(size,), dtype=np.float32)


def checked_actions(actions: Any, count: int, size: int = 2) -> np.ndarray:
    """``actions`` as a (count, size) float64 array clipped to [-1, 1] (as the action space
    bounds it). A lone robot's action may be one row (shape (size,)); nothing else is reshaped.

    Raises:
        ValueError: the actions are not ``count`` rows of ``size`` finite real numbers.
    """
    what = "pair(s) of real numbers (linear, angular)" if size == 2 else "triple(s) of real numbers (linear, angular, lateral)"
    wanted = f"{count} {what}" + (f", shape ({size},) or (1, {size})" if count == 1 else f", shape ({count}, {size})")
    try:
        given = np.asarray(actions)
    except (TypeError, ValueError):
        raise ValueError(f"actions must be {wanted}, got {actions!r:.200}") from None
    shapes = ((count, size), (size,)) if count == 1 else ((count, size),)
    if given.dtype.kind not in "iuf" or given.shape not in shapes:
        raise ValueError(f"actions must be {wanted}, got {given.dtype} of shape {given.shape}")
    array = given.astype(np.float64).reshape(count, size)
    if not np.isfinite(array).all():
        raise ValueError(f"an action must be finite, got {array.tolist()!r:.200}")
    return np.clip(array, -1.0, 1.0)


def checked_seed(seed: Any, what: str = "seed") -> int | None:
    """``seed`` as an int (None stays None), or ValueError (:func:`sim_server.core.limits.checked_seed`)."""
    return limits.checked_seed(seed, what)


def checked_options(options: Any) -> dict:
    """``options`` (None or a dict) as a dict, or ValueError."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"options must be None or a dict, got {type(options).__name__}")
    return options


class NavigationEnv(gymnasium.Env):
    """See the module's docstring.

    Args:
        world_path: the world file (default: the bundled room, ``config/worlds/learning``), or
            a world file's spec.
        task: the task (default: :class:`NavigationTask`'s defaults).
        render_mode: None or ``"rgb_array"``.
        step_size: the physics step (s).
        pixels: the longer side of rendered pictures.
        layout: where episodes start (default: the task's random starts and goals).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 10}

    def __init__(
        self,
        world_path: str | Path | WorldSpec = DEFAULT_WORLD,
        task: NavigationTask | None = None,
        render_mode: str | None = None,
        step_size: float = 0.01,
        pixels: int = 256,
        layout: EpisodeLayout | None = None,
    ) -> None:
        check_render_mode(render_mode, pixels)
        self.task = task or NavigationTask()
        self.render_mode = render_mode
        self.fleet = NavigationFleet(world_path, self.task, 1, step_size, layout=layout)
        self._steps = 0
        self.world = self.fleet.world
        self.observation_space = observation_space(self.fleet)
        self.action_space = action_space(self.task.action_size)
        self._pictures = FleetPictures(self.fleet, render_mode, pixels)

    @property
    def goal(self) -> tuple[float, float]:
        """The goal of this episode (m, world frame)."""
        x, y = self.fleet.goals[0].tolist()
        return x, y

    # ---------------------------------------------------------------- Gymnasium's API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        checked_options(options)
        seed = checked_seed(seed)
        super().reset(seed=seed)
        if self.fleet.has_people:
            self.fleet.place_people(0, self.np_random, seed)
        self.fleet.place(0, self.np_random)
        self._steps = 0
        info = {"distance": float(self.fleet.distances[0]), "goal": self.goal}
        info.update(first_of(self.fleet.metrics()))
        return self.fleet.observations()[0], info

    def step(self, action):
        """One action, held for the task's ``control_period``: Gymnasium's ``(observation, reward,
        terminated, truncated, info)``. ``info`` has the goal's ``distance``, the ``goal``, and
        whether it was ``reached`` (also ``success``) or the robot ``collided`` (either ends the
        episode: ``terminated``), the episode's ``path_length`` (m) and ``time`` (s), and in a
        world with people every social navigation metric (:mod:`sim_server.learning.metrics`);
        ``truncated`` is always False (Gymnasium's TimeLimit cuts episodes; the metrics count
        the episode a timeout after the task's ``max_episode_steps`` actions)."""
        rewards, reached, collided = self.fleet.act(checked_actions(action, 1, self.task.action_size))
        self._steps += 1
        ended, outcomes = outcomes_of(reached, collided, np.array([self._steps >= self.task.max_episode_steps]))
        if self.fleet.outcomes()[0] == Outcome.RUNNING:
            self.fleet.finish(ended, outcomes)
        info = {
            "distance": float(self.fleet.distances[0]), "goal": self.goal,
            "reached": bool(reached[0]), "collided": bool(collided[0]), "success": bool(reached[0]),
        }
        info.update(first_of(self.fleet.metrics()))
        return self.fleet.observations()[0], float(rewards[0]), bool(reached[0] or collided[0]), False, info

    def render(self):
        return self._pictures.render()

    def close(self) -> None:
        if getattr(self, "fleet", None) is not None:
            self.fleet.close()  # kept, closed: a later call says so
            self.world = None
