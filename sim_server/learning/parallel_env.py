"""PettingZoo's parallel API: several robots learning to navigate in one world.

:class:`NavigationParallelEnv` is the navigation task of
:class:`~sim_server.learning.navigation_env.NavigationEnv` (the same observations, actions and
rewards, per robot) for every learning robot of one world at once: each draws its own start
(clear of the walls and of the others) and goal, and touching a wall or another robot ends its
episode (both robots', for a touch between two). The agents are the robots' model names.

* ``step(actions)``: a dict of actions by agent for the agents still running (a missing agent's
  action is a stop); returns dicts of observations, rewards, terminations, truncations and infos
  for them. An agent whose episode ended leaves ``agents`` and its robot stops where it is (an
  obstacle to the others) until ``reset``.
* Every episode is cut (``truncated``) after the task's ``max_episode_steps`` actions.
* ``reset(seed=...)`` seeds the starts and goals of all the robots; ``state()`` is every agent's
  observation, one after another.
* ``render()`` (``render_mode="rgb_array"``): the world from above with rays and goals.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from sim_server.learning.fleet import NavigationFleet
from sim_server.learning.metrics import outcomes_of
from sim_server.learning.navigation_env import (
    action_space, checked_actions, checked_options, checked_seed, observation_space,
)
from sim_server.learning.pictures import RENDER_MODES, FleetPictures, check_render_mode
from sim_server.learning.task import CROWD_WORLD, NavigationTask

#: The robots of the bundled crowd world (config/worlds/learning/crowd.yaml).
CROWD_ROBOTS = ("robot1", "robot2", "robot3", "robot4")


class NavigationParallelEnv(ParallelEnv):
    """See the module's docstring.

    Args:
        world_path: the world file (default: the bundled room with four robots).
        robots: the learning robots' model names (each with the task's drive and laser).
        task: the task (its ``robot`` is not used: ``robots`` are).
        render_mode: None or ``"rgb_array"``.
        step_size: the physics step (s).
        pixels: the longer side of rendered pictures.
    """

    metadata = {"name": "sim_server_navigation_v0", "render_modes": list(RENDER_MODES), "render_fps": 10, "is_parallelizable": True}

    def __init__(
        self,
        world_path: str | Path = CROWD_WORLD,
        robots: Sequence[str] = CROWD_ROBOTS,
        task: NavigationTask | None = None,
        render_mode: str | None = None,
        step_size: float = 0.01,
        pixels: int = 256,
    ) -> None:
        check_render_mode(render_mode, pixels)
        if isinstance(robots, (str, bytes)) or not isinstance(robots, Sequence) or not all(isinstance(n, str) for n in robots):
            raise ValueError(f"robots must be a list of model names, got {robots!r:.200}")
        self.task = task or NavigationTask()
        self.render_mode = render_mode
        self.fleet = NavigationFleet(world_path, self.task, 1, step_size, robots=robots)
        self.world = self.fleet.world
        self.possible_agents = list(robots)
        self.agents: list[str] = []
        self._index = {agent: index for index, agent in enumerate(self.possible_agents)}
        self._observation_space = observation_space(self.fleet)
        self._action_space = action_space(self.task.action_size)
        self.observation_spaces = {agent: self._observation_space for agent in self.possible_agents}
        self.action_spaces = {agent: self._action_space for agent in self.possible_agents}
        self._np_random, _ = seeding.np_random(None)
        self._steps = 0
        self._pictures = FleetPictures(self.fleet, render_mode, pixels)

    def observation_space(self, agent: str) -> spaces.Box:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Box:
        return self.action_spaces[agent]

    # ---------------------------------------------------------------- PettingZoo's parallel API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        self.fleet.check_open()
        checked_options(options)
        seed = checked_seed(seed)
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        self.agents = list(self.possible_agents)
        self._steps = 0
        if self.fleet.has_people:
            self.fleet.place_people(0, self._np_random, seed)
        for index in range(len(self.possible_agents)):
            self.fleet.place(index, self._np_random)
        observations = self.fleet.observations()
        metrics = self.fleet.metrics()
        return (
            {agent: observations[self._index[agent]] for agent in self.agents},
            {agent: self._info(self._index[agent], metrics) for agent in self.agents},
        )

    def step(self, actions: dict[str, Any]):
        self.fleet.check_ready()  # before the actions are looked at
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict of actions by agent, got {type(actions).__name__}")
        unknown = set(actions) - set(self.agents)
        if unknown:
            raise ValueError(f"actions for agents that are not running: {sorted(map(str, unknown))!r:.200}")
        size = self.task.action_size
        all_actions = np.zeros((len(self.possible_agents), size))
        for agent, action in actions.items():
            all_actions[self._index[agent]] = checked_actions(action, 1, size)[0]
        rewards, reached, collided = self.fleet.act(all_actions)
        self._steps += 1
        observations = self.fleet.observations()
        cut = self._steps >= self.task.max_episode_steps
        running = np.zeros(len(self.possible_agents), dtype=bool)
        running[[self._index[agent] for agent in self.agents]] = True
        finished, outcomes = outcomes_of(reached, collided, np.full(len(running), cut))
        self.fleet.finish(finished & running, outcomes)
        metrics = self.fleet.metrics()
        result: tuple[dict, dict, dict, dict, dict] = ({}, {}, {}, {}, {})
        for agent in self.agents:
            index = self._index[agent]
            ended = bool(reached[index] or collided[index])
            info = self._info(index, metrics)
            info.update(reached=bool(reached[index]), collided=bool(collided[index]), success=bool(reached[index]))
            for part, value in zip(result, (observations[index], float(rewards[index]), ended, cut and not ended, info)):
                part[agent] = value
        for agent in list(self.agents):
            if result[2][agent] or result[3][agent]:
                self.agents.remove(agent)
                command = self.fleet.drives[self._index[agent]].command
                command.linear = command.angular = 0.0
        return result

    def state(self) -> np.ndarray:
        return self.fleet.observations().reshape(-1)

    def render(self):
        return self._pictures.render()

    def close(self) -> None:
        if getattr(self, "fleet", None) is not None:
            self.fleet.close()  # kept, closed: a later call says so
            self.world = None

    def _info(self, index: int, metrics: dict[str, np.ndarray]) -> dict[str, Any]:
        x, y = self.fleet.goals[index].tolist()
        info: dict[str, Any] = {"distance": float(self.fleet.distances[index]), "goal": (x, y)}
        info.update({key: values[index].item() for key, values in metrics.items()})
        return info
