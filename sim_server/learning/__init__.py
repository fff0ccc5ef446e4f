"""Reinforcement learning on the simulator, in-process (no ROS): Gymnasium environments.

Importing this module registers them with Gymnasium::

    import gymnasium
    env = gymnasium.make("sim_server.learning:sim_server/Navigation-v0")   # imports this module first

* ``sim_server/Navigation-v0``: :class:`~sim_server.learning.navigation_env.NavigationEnv` on the
  bundled room, cut at the task's ``max_episode_steps`` (500).
"""

import gymnasium

from sim_server.learning.navigation_env import NavigationEnv
from sim_server.learning.task import NavigationTask

NAVIGATION_ID = "sim_server/Navigation-v0"

if NAVIGATION_ID not in gymnasium.registry:
    gymnasium.register(
        NAVIGATION_ID,
        entry_point="sim_server.learning.navigation_env:NavigationEnv",
        max_episode_steps=NavigationTask().max_episode_steps,
    )

__all__ = ["NAVIGATION_ID", "NavigationEnv", "NavigationTask"]
