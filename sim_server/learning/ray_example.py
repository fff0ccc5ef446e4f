"""Example: the navigation task's vector environments as Ray actors, and their throughput.

    python -m sim_server.learning.ray_example --workers 2 --envs 64 --seconds 10

starts a local Ray instance (or joins a cluster with ``--address auto``, after ``ray start``),
makes a :class:`~sim_server.learning.distributed.RayVectorEnv` of ``--workers`` actors with
``--envs`` worlds each and measures, each for ``--seconds`` (in turns), the environment steps a
second with random actions (drawn in advance, :class:`~sim_server.learning.throughput.RandomActions`):

* in the actors alone (no round trips: what the actors can give);
* stepped from here, a round trip to every actor a step (:meth:`RayVectorEnv.step`);
* in rollouts seen from here: the actors hold the policy and each returns a batch of
  ``--rollout-steps`` steps (:meth:`RayVectorEnv.rollout`), the batches' transport included.

It prints them and the rollouts' share of the actors' own rate against the issue tracker's
target, :data:`TARGET_SHARE`. ``main()`` returns the figures for programs (the tests,
``make bench``).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from sim_server.core import limits
from sim_server.learning.throughput import RandomActions, steps_per_second

#: Vector steps of each rollout measured (each actor's batch is that times its worlds).
ROLLOUT_STEPS = 100
#: Share of the actors' own rate the rollouts seen from the driver should reach (the issue
#: tracker's target).
TARGET_SHARE = 2.0 / 3.0
#: Rounds each measurement's time is cut into, the three measurements taking turns (on a shared
#: host, a change of load then weighs on all three alike).
ROUNDS = 3


def measure(workers: int, envs: int, seconds: float, seed: int = 0, rollout_steps: int = ROLLOUT_STEPS) -> dict[str, float]:
    """Steps a second of a RayVectorEnv (Ray must be initialised), summed over the actors:
    ``actors_steps_per_s`` in the actors alone, ``steps_per_s`` through :meth:`step`,
    ``rollout_steps_per_s`` through :meth:`rollout` of ``rollout_steps`` steps (each the mean of
    :data:`ROUNDS` turns of ``seconds / ROUNDS``); ``rollout_share``, the last over the first;
    ``rollout_actors_steps_per_s``, the actors' rate while they rolled out (their time on the
    batches), and ``rollout_busy_share``, the rollouts' rate over it: the share of the time the
    actors were stepping, what the round trips leave (measured at the same time, so a shared
    host's changing load does not move it)."""
    from sim_server.learning.distributed import RayVectorEnv

    vector = RayVectorEnv(workers, envs)
    rates: list[float] = []
    actor_rates: list[float] = []
    rollout_rates: list[tuple[float, float]] = []
    try:
        for _ in range(ROUNDS):
            rates.append(steps_per_second(vector, seconds / ROUNDS, seed))
            actor_rates.append(float(np.sum(vector.worker_steps_per_second(seconds / ROUNDS, seed))))
            rollout_rates.append(rollout_rate(vector, seconds / ROUNDS, seed, rollout_steps))
    finally:
        vector.close()
    rate, actors = float(np.mean(rates)), float(np.mean(actor_rates))
    rollouts, busy = (float(value) for value in np.mean(rollout_rates, axis=0))
    return {
        "workers": workers, "envs_per_worker": envs, "steps_per_s": rate, "actors_steps_per_s": actors,
        "rollout_steps_per_s": rollouts, "rollout_share": rollouts / actors,
        "rollout_actors_steps_per_s": busy, "rollout_busy_share": rollouts / busy,
    }


def rollout_rate(vector: Any, seconds: float, seed: int = 0, steps: int = ROLLOUT_STEPS) -> tuple[float, float]:
    """Environment steps a second of ``vector``'s rollouts of ``steps`` steps (each actor
    holding :class:`RandomActions`), for about ``seconds`` after one not counted: seen from here,
    and in the actors while they rolled out (summed over the actors)."""
    vector.reset(seed=seed)
    vector.set_policy(RandomActions(vector.single_action_space, vector.envs_per_worker, seed))
    vector.rollout(steps)  # warm
    taken, busy, start = 0, np.zeros(vector.num_envs), time.perf_counter()
    while time.perf_counter() - start < seconds:
        batch = vector.rollout(steps)
        taken += batch.steps
        busy += batch.seconds
    return taken * vector.num_envs / (time.perf_counter() - start), float(np.sum(taken / busy))


def summary(figures: dict[str, float]) -> str:
    """One line of the figures of :func:`measure`, the target's share met or not."""
    share = figures["rollout_share"]
    verdict = "met" if share >= TARGET_SHARE else "NOT MET"
    return (
        f"{figures['workers']} worker(s) x {figures['envs_per_worker']} worlds: environment steps/s "
        f"{figures['actors_steps_per_s']:.0f} in the actors alone, {figures['steps_per_s']:.0f} stepped from here "
        f"(a round trip a step), {figures['rollout_steps_per_s']:.0f} in rollouts seen from here: "
        f"{share:.2f} of the actors' own rate (target >= {TARGET_SHARE:.2f}: {verdict}); the actors stepped "
        f"{figures['rollout_busy_share']:.2f} of the rollouts' time ({figures['rollout_actors_steps_per_s']:.0f} while busy)"
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m sim_server.learning.ray_example", description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="Ray actors, one core each (default 2)")
    parser.add_argument("--envs", type=int, default=64, help="worlds in each actor (default 64)")
    parser.add_argument(
        "--seconds", type=float, default=10.0,
        help="how long each of the three measurements steps (s, default 10; Ray's start adds a few seconds)",
    )
    parser.add_argument("--rollout-steps", type=int, default=ROLLOUT_STEPS,
                        help=f"vector steps of each rollout (default {ROLLOUT_STEPS})")
    parser.add_argument("--address", default=None, help='a Ray cluster to join ("auto": the one started here by `ray start`)')
    args = parser.parse_args(argv)
    if not 0.0 < args.seconds <= 3600.0:
        parser.error(f"--seconds must be from 0 to 3600, got {args.seconds:g}")
    if not 1 <= args.rollout_steps <= limits.MAX_ROLLOUT_STEPS:
        parser.error(f"--rollout-steps must be from 1 to {limits.MAX_ROLLOUT_STEPS}, got {args.rollout_steps}")
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    try:
        figures = measure(args.workers, args.envs, args.seconds, rollout_steps=args.rollout_steps)
    except ValueError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    finally:
        if started_here:
            ray.shutdown()
    print(summary(figures))
    return figures


if __name__ == "__main__":
    main()
    sys.exit(0)
