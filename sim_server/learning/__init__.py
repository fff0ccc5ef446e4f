"""Reinforcement learning on the simulator, in-process (no ROS): Gymnasium environments.

Importing this module registers them with Gymnasium::

    import gymnasium
    env = gymnasium.make("sim_server.learning:sim_server/Navigation-v0")   # imports this module first
    envs = gymnasium.make_vec("sim_server.learning:sim_server/Navigation-v0", num_envs=64)

* ``sim_server/Navigation-v0``: :class:`~sim_server.learning.navigation_env.NavigationEnv` on the
  bundled room, cut at the task's ``max_episode_steps`` (500); ``make_vec`` gives
  :class:`~sim_server.learning.vector_env.NavigationVectorEnv`, all copies of the world in one
  physics world (its default vectorization; ``vectorization_mode="sync"`` gives Gymnasium's
  SyncVectorEnv of single environments instead).

* ``sim_server/CrowdNavigation-v0``: the same among people: the bundled room with ten people
  walking (``config/worlds/learning/people.yaml``) and the task
  :data:`~sim_server.learning.task.CROWD_NAVIGATION` (the five nearest people observed, personal
  space, the social navigation metrics in ``info``).

* ``sim_server/CircleCrossing-v0`` and ``sim_server/SquareCrossing-v0``: CrowdNav's scenarios
  (:mod:`~sim_server.learning.crowdnav`), cut at 100 actions (25 s); keyword arguments
  ``kinematics`` ("holonomic" or "unicycle"), ``robot_visible`` and ``people`` ("orca" or
  "social_force").

Also here, imported by name: :mod:`~sim_server.learning.parallel_env` (PettingZoo's parallel
API, several robots in one world), :mod:`~sim_server.learning.distributed` (vector environments
as Ray actors, with rollouts of a policy the actors hold; Ray is an optional extra),
:mod:`~sim_server.learning.rollouts` (a policy stepping a vector environment for a batch of
steps, and the linear policy), :mod:`~sim_server.learning.baselines` (robots driven by
the crowd models), :mod:`~sim_server.learning.evaluate` (CrowdNav's evaluation),
:mod:`~sim_server.learning.lookahead` and :mod:`~sim_server.learning.train_lookahead` (a value
network's policy, trained as CrowdNav trains, NumPy only), and the examples
:mod:`~sim_server.learning.ray_example` and :mod:`~sim_server.learning.train_example`.
"""

import gymnasium

from sim_server.learning.navigation_env import NavigationEnv
from sim_server.learning.crowdnav import CROWDNAV_STEPS
from sim_server.learning.task import CROWD_NAVIGATION, PEOPLE_WORLD, NavigationTask
from sim_server.learning.vector_env import NavigationVectorEnv

NAVIGATION_ID = "sim_server/Navigation-v0"
CROWD_NAVIGATION_ID = "sim_server/CrowdNavigation-v0"
#: CrowdNav's scenarios by their Gymnasium ids.
CROWDNAV_IDS = {"sim_server/CircleCrossing-v0": "circle_crossing", "sim_server/SquareCrossing-v0": "square_crossing"}

if NAVIGATION_ID not in gymnasium.registry:
    gymnasium.register(
        NAVIGATION_ID,
        entry_point="sim_server.learning.navigation_env:NavigationEnv",
        vector_entry_point="sim_server.learning.vector_env:NavigationVectorEnv",
        max_episode_steps=NavigationTask().max_episode_steps,
    )

if CROWD_NAVIGATION_ID not in gymnasium.registry:
    gymnasium.register(
        CROWD_NAVIGATION_ID,
        entry_point="sim_server.learning.navigation_env:NavigationEnv",
        vector_entry_point="sim_server.learning.vector_env:NavigationVectorEnv",
        max_episode_steps=CROWD_NAVIGATION.max_episode_steps,
        kwargs={"world_path": PEOPLE_WORLD, "task": CROWD_NAVIGATION},
    )

for _id, _scenario in CROWDNAV_IDS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(
            _id,
            entry_point="sim_server.learning.crowdnav:crowdnav_env",
            vector_entry_point="sim_server.learning.crowdnav:crowdnav_vector_env",
            max_episode_steps=CROWDNAV_STEPS,
            kwargs={"scenario": _scenario},
        )

__all__ = ["CROWDNAV_IDS", "CROWD_NAVIGATION_ID", "NAVIGATION_ID", "NavigationEnv", "NavigationTask", "NavigationVectorEnv"]
