"""How fast a vector environment steps: environment steps a second of random actions.

One measure for ``make bench`` (:mod:`bench.learning`), the Ray example
(:mod:`sim_server.learning.ray_example`) and the Ray actors themselves
(:mod:`sim_server.learning.distributed`).
"""

from __future__ import annotations

import time

from gymnasium.vector import VectorEnv

#: Actions drawn in advance and replayed (drawing them is not the environment's cost).
ACTIONS = 64
#: Steps taken before the clock starts (compiled code and caches warm).
WARM_UP_STEPS = 4


def steps_per_second(envs: VectorEnv, seconds: float, seed: int = 0) -> float:
    """Environment steps a second (a vector step of N environments counts N) of ``envs``
    stepped with random actions for about ``seconds``, after a reset with ``seed``; autoreset
    included."""
    envs.reset(seed=seed)
    envs.action_space.seed(seed)
    actions = [envs.action_space.sample() for _ in range(ACTIONS)]
    for action in actions[:WARM_UP_STEPS]:
        envs.step(action)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        envs.step(actions[steps % ACTIONS])
        steps += 1
    return steps * envs.num_envs / (time.perf_counter() - start)
