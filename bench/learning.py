"""Learning scenarios of ``make bench``: environment steps a second of the navigation task.

* ``vector``: :class:`~sim_server.learning.vector_env.NavigationVectorEnv` (every world a copy in
  one physics world, all lasers cast in one call) with 1 to 256 worlds, one robot each, 360-beam
  8 m lasers (36 of the beams observed, and only those cast), a control period of 0.1 s over 10 physics steps of
  0.01 s, random actions, autoreset included; on one core (the ray caster's threads set to one).
  The issue tracker's target: 20,000 steps a second with 64 worlds.
* ``sync``: Gymnasium's SyncVectorEnv of 64 single environments (a world each), for comparison.
* ``crowd``: the same vector environment among people (``sim_server/CrowdNavigation-v0``: 64
  worlds, each with one robot and ten people walking, the five nearest observed). The issue
  tracker's target: 20,000 steps a second.
* ``crowd, line of sight``: the same with the people observed only where the robot's centre sees
  theirs past the walls. The issue tracker's target: 20,000 steps a second.
* ``crowdnav evaluation``: ``python -m sim_server.learning.evaluate --policy orca --episodes 500``
  (CrowdNav's test set of circle crossing, in this process, on one core), its seconds. The issue
  tracker's target: under 60 s.
* ``ray``: :class:`~sim_server.learning.distributed.RayVectorEnv` with 1 and 2 actors of 64
  worlds each on a local Ray instance (:mod:`sim_server.learning.ray_example`): steps a second
  in the actors alone, stepped from the driver (a round trip to every actor a step) and in
  rollouts of 100 steps seen from the driver (the policy held in the actors), the rollouts'
  share of the actors' own rate (the issue tracker's target: at least two thirds) and the share
  of the rollouts' time the actors spent stepping (measured at the same time as the rollouts).
  Skipped without Ray.
"""

from __future__ import annotations


import gymnasium
import numba

import dataclasses
import time

from bench.targets import CROWD_VECTOR_ENV, CROWDNAV_EVALUATION, RAY_ACTORS, RAY_WORKERS, RAY_WORLDS, SIGHTED_CROWD_VECTOR_ENV, VECTOR_ENV
from sim_server.learning import NAVIGATION_ID, NavigationVectorEnv
from sim_server.learning.evaluate import evaluate, parse_args
from sim_server.learning.task import CROWD_NAVIGATION, PEOPLE_WORLD
from sim_server.learning.throughput import steps_per_second

#: World counts of the curve.
COUNTS = (1, 4, 16, 64, 256)
#: Worlds of Gymnasium's SyncVectorEnv, compared.
SYNC_WORLDS = 64
#: Episodes of the evaluation measured (CrowdNav's test set).
EVALUATION_EPISODES = 500


def run(seconds: float) -> dict[str, dict[str, float]]:
    """``{"vector, N worlds": {"steps_per_s": ...}, ..., "sync, 64 worlds": {...}}`` (steps a
    second: a vector step of N environments counts N)."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    result: dict[str, dict[str, float]] = {}
    try:
        for count in COUNTS:
            envs = NavigationVectorEnv(count)
            try:
                result[VECTOR_ENV.format(count=count)] = {"steps_per_s": steps_per_second(envs, seconds / len(COUNTS))}
            finally:
                envs.close()
        sync = gymnasium.make_vec(NAVIGATION_ID, num_envs=SYNC_WORLDS, vectorization_mode="sync")
        try:
            result[f"sync, {SYNC_WORLDS} worlds"] = {"steps_per_s": steps_per_second(sync, seconds / len(COUNTS))}
        finally:
            sync.close()
        crowd = NavigationVectorEnv(SYNC_WORLDS, PEOPLE_WORLD, CROWD_NAVIGATION)
        try:
            result[CROWD_VECTOR_ENV] = {"steps_per_s": steps_per_second(crowd, seconds / len(COUNTS))}
        finally:
            crowd.close()
        sighted = NavigationVectorEnv(SYNC_WORLDS, PEOPLE_WORLD, dataclasses.replace(CROWD_NAVIGATION, people_line_of_sight=True))
        try:
            result[SIGHTED_CROWD_VECTOR_ENV] = {"steps_per_s": steps_per_second(sighted, seconds / len(COUNTS))}
        finally:
            sighted.close()
        started = time.perf_counter()
        evaluate(vars(parse_args(["--policy", "orca", "--episodes", str(EVALUATION_EPISODES)])))
        result[CROWDNAV_EVALUATION] = {"seconds": time.perf_counter() - started}
    finally:
        numba.set_num_threads(threads)
    result.update(_ray(seconds / len(COUNTS)))
    return result


def _ray(seconds: float) -> dict[str, dict[str, float]]:
    """The ``ray`` scenarios (nothing without Ray)."""
    try:
        import ray
    except ImportError:
        return {}
    from sim_server.learning.ray_example import measure

    ray.init(num_cpus=RAY_WORKERS[-1], include_dashboard=False, log_to_driver=False)
    try:
        return {RAY_ACTORS.format(workers=workers): measure(workers, RAY_WORLDS, seconds) for workers in RAY_WORKERS}
    finally:
        ray.shutdown()


def describe(name: str, figures: dict[str, float]) -> str:
    """One line of a scenario's figures (the ``ray`` ones with their target's share)."""
    if "seconds" in figures:
        return f"{name:28} {figures['seconds']:9.1f} s"
    if "rollout_share" in figures:
        from sim_server.learning.ray_example import summary

        return summary(figures)
    return f"{name:28} {figures['steps_per_s']:9.0f}"


if __name__ == "__main__":
    for name, figures in run(5.0).items():
        print(describe(name, figures))
