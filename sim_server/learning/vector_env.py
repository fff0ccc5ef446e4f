"""Gymnasium's vector API over many copies of a world in one process, stepped together.

:class:`NavigationVectorEnv` is ``num_envs`` navigation environments (as
:class:`~sim_server.learning.navigation_env.NavigationEnv`: the same task, observations, actions
and rewards) whose worlds are copies side by side in one physics world
(:class:`~sim_server.learning.fleet.NavigationFleet`): one Box2D step moves every robot, their
drives run as one batch and all their lasers are cast in one compiled call, so a step of 64
environments costs little more than a few of one.

* ``step(actions)``: ``actions`` is (num_envs, 2); returns observations (num_envs, size), rewards,
  terminations and truncations (num_envs,) and infos (a dict of arrays: ``distance``, ``reached``,
  ``success``, ``collided``, the episode's metrics of :meth:`NavigationFleet.metrics
  <sim_server.learning.fleet.NavigationFleet.metrics>` (:mod:`sim_server.learning.metrics`),
  each with its ``_key`` mask, as Gymnasium's vector environments give them). The metrics of an
  environment that ends are those of the step that ended it (with its outcome: a success, a
  collision, or a timeout where it was truncated); the next step starts them anew.
* Autoreset is Gymnasium's default, next-step (``metadata["autoreset_mode"]``): the step after an
  episode of an environment ended resets that environment, ignoring its action, and gives its
  first observation with reward 0.
* Episodes are cut (``truncated``) after the task's ``max_episode_steps`` actions.
* ``reset(seed=s)`` seeds environment ``i`` with ``s + i``; ``options={"reset_mask": mask}``
  resets only the environments where the mask is true.
* ``render()`` (``render_mode="rgb_array"``): every copy side by side from above, with rays and
  goals.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sim_server.core.format.world_file import WorldSpec
from sim_server.core.physics.replicas import MAX_REPLICAS
from sim_server.learning.fleet import EpisodeLayout, NavigationFleet
from sim_server.learning.metrics import outcomes_of
from sim_server.learning.navigation_env import (
    action_space, checked_actions, checked_options, checked_seed, observation_space,
)
from sim_server.learning.pictures import RENDER_MODES, FleetPictures, check_render_mode
from sim_server.learning.task import DEFAULT_WORLD, NavigationTask


def environment_seeds(seed: Any, count: int) -> list[int | None] | None:
    """Each of ``count`` environments' seed: ``seed + i`` for a whole number, the list's own for
    a list (None: unchanged), None for None; ValueError for anything else, before any is used."""
    if seed is None:
        return None
    if isinstance(seed, (list, tuple)):
        if len(seed) != count:
            raise ValueError(f"reset: {len(seed)} seeds for {count} environments")
        return [checked_seed(each, "each seed") for each in seed]
    first = checked_seed(seed)
    return [first + index for index in range(count)]


class NavigationVectorEnv(VectorEnv):
    """See the module's docstring.

    Args:
        num_envs: environments (copies of the world, one learning robot each; 1 to 4096).
        world_path: the world file (default: the bundled room, ``config/worlds/learning``), or
            a world file's spec.
        task: the task (default: :class:`NavigationTask`'s defaults).
        render_mode: None or ``"rgb_array"``.
        step_size: the physics step (s).
        pixels: the longer side of rendered pictures.
        max_episode_steps: actions until an episode is cut (default: the task's;
            ``gymnasium.make_vec`` passes the registered limit here).
        layout: where episodes start (default: the task's random starts and goals).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 10, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 64,
        world_path: str | Path | WorldSpec = DEFAULT_WORLD,
        task: NavigationTask | None = None,
        render_mode: str | None = None,
        step_size: float = 0.01,
        pixels: int = 512,
        max_episode_steps: int | None = None,
        layout: EpisodeLayout | None = None,
    ) -> None:
        check_render_mode(render_mode, pixels)
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or not 1 <= num_envs <= MAX_REPLICAS:
            raise ValueError(f"num_envs must be a whole number from 1 to {MAX_REPLICAS}, got {num_envs!r}")
        self.task = task or NavigationTask()
        if max_episode_steps is not None:
            self.task = replace(self.task, max_episode_steps=max_episode_steps)  # checked by the task
        self.num_envs = num_envs
        self.render_mode = render_mode
        self.fleet = NavigationFleet(world_path, self.task, num_envs, step_size, layout=layout)
        self.world = self.fleet.world
        self.single_observation_space = observation_space(self.fleet)
        self.single_action_space = action_space(self.task.action_size)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._generators = [seeding.np_random(None)[0] for _ in range(num_envs)]
        self._episode_steps = np.zeros(num_envs, dtype=np.int64)
        #: Environments whose episode ended at the last step (reset at the next).
        self._ended = np.zeros(num_envs, dtype=bool)
        self._pictures = FleetPictures(self.fleet, render_mode, pixels)

    # ---------------------------------------------------------------- Gymnasium's vector API
    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        self.fleet.check_open()
        options = checked_options(options)
        seeds = environment_seeds(seed, self.num_envs)
        mask = np.ones(self.num_envs, dtype=bool)
        if "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(f"reset: options['reset_mask'] must be {self.num_envs} booleans, got {mask!r:.200}")
        if seeds is not None:  # only now that the whole call is known to be good
            self._np_random, self._np_random_seed = seeding.np_random(seeds[0])
            for index, each in enumerate(seeds):
                if each is not None:
                    self._generators[index] = seeding.np_random(each)[0]
        for index in np.flatnonzero(mask):
            self._start(int(index), None if seeds is None else seeds[int(index)])
        return self.fleet.observations(), self._infos()

    def step(self, actions):
        fleet = self.fleet
        fleet.check_open()
        restart = self._ended.copy()
        rewards, reached, collided = fleet.act(checked_actions(actions, self.num_envs, self.task.action_size))
        self._episode_steps += 1
        for index in np.flatnonzero(restart):
            self._start(int(index))
        rewards[restart] = 0.0
        terminated = (reached | collided) & ~restart
        truncated = (self._episode_steps >= self.task.max_episode_steps) & ~terminated & ~restart
        self._ended = terminated | truncated
        ended, outcomes = outcomes_of(reached & ~restart, collided & ~restart, truncated)
        fleet.finish(ended, outcomes)
        reached[restart] = collided[restart] = False
        infos = self._infos()
        infos.update(reached=reached, _reached=np.ones(self.num_envs, dtype=bool))
        infos.update(collided=collided, _collided=np.ones(self.num_envs, dtype=bool))
        infos.update(success=reached.copy(), _success=np.ones(self.num_envs, dtype=bool))
        return fleet.observations(), rewards, terminated, truncated, infos

    def render(self):
        return self._pictures.render()

    def close_extras(self, **kwargs: Any) -> None:
        if getattr(self, "fleet", None) is not None:
            self.fleet.close()
            self.world = None

    # ---------------------------------------------------------------- episodes
    def _start(self, index: int, seed: int | None = None) -> None:
        if self.fleet.has_people:
            self.fleet.place_people(index, self._generators[index], seed)
        self.fleet.place(index, self._generators[index])
        self._episode_steps[index] = 0
        self._ended[index] = False

    def _infos(self) -> dict[str, np.ndarray]:
        every = np.ones(self.num_envs, dtype=bool)
        infos = {"distance": self.fleet.distances.copy(), "_distance": every}
        for key, values in self.fleet.metrics().items():
            infos[key], infos[f"_{key}"] = values, every
        return infos
