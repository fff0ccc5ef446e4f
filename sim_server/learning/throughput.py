"""How fast a vector environment steps: environment steps a second of random actions.

One measure for ``make bench`` (:mod:`bench.learning`), the Ray example
(:mod:`sim_server.learning.ray_example`) and the Ray actors themselves
(:mod:`sim_server.learning.distributed`), and the policy of the same random actions that the
example's rollouts measure with (:class:`RandomActions`).
"""

from __future__ import annotations

import time

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

#: Actions drawn in advance and replayed (drawing them is not the environment's cost).
ACTIONS = 64
#: Steps taken before the clock starts (compiled code and caches warm).
WARM_UP_STEPS = 4


class RandomActions:
    """A policy of random actions drawn in advance (:data:`ACTIONS` vector steps' worth, from
    ``single_action_space`` batched ``num_envs`` times, seeded) and replayed in turn, whatever
    the observations: what :func:`steps_per_second` steps with, as a picklable policy."""

    def __init__(self, single_action_space: spaces.Box, num_envs: int, seed: int = 0) -> None:
        space = batch_space(single_action_space, num_envs)
        space.seed(seed)
        self.actions = [space.sample() for _ in range(ACTIONS)]
        self.taken = 0

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        action = self.actions[self.taken % ACTIONS]
        self.taken += 1
        return action


def steps_per_second(envs: VectorEnv, seconds: float, seed: int = 0) -> float:
    """Environment steps a second (a vector step of N environments counts N) of ``envs``
    stepped with random actions for about ``seconds``, after a reset with ``seed``; autoreset
    included."""
    envs.reset(seed=seed)
    policy = RandomActions(envs.single_action_space, envs.num_envs, seed)
    for _ in range(WARM_UP_STEPS):
        envs.step(policy(None))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        envs.step(policy(None))
        steps += 1
    return steps * envs.num_envs / (time.perf_counter() - start)
