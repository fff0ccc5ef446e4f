"""Example: the navigation task's vector environments as Ray actors, and their throughput.

    python -m sim_server.learning.ray_example --workers 2 --envs 64 --seconds 10

starts a local Ray instance (or joins a cluster with ``--address auto``, after ``ray start``),
makes a :class:`~sim_server.learning.distributed.RayVectorEnv` of ``--workers`` actors with
``--envs`` worlds each, steps it with random actions for ``--seconds`` and prints the
environment steps a second, stepping from here (each step a round trip to every actor) and in
the actors alone. ``main()`` returns the figures for programs (the tests, ``make bench``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from sim_server.learning.throughput import steps_per_second

def measure(workers: int, envs: int, seconds: float, seed: int = 0) -> dict[str, float]:
    """Steps a second of a RayVectorEnv (Ray must be initialised): ``steps_per_s`` through
    :meth:`step`, ``actors_steps_per_s`` of the actors alone, summed."""
    from sim_server.learning.distributed import RayVectorEnv

    vector = RayVectorEnv(workers, envs)
    try:
        rate = steps_per_second(vector, seconds, seed)
        actors = float(np.sum(vector.worker_steps_per_second(seconds, seed)))
    finally:
        vector.close()
    return {"workers": workers, "envs_per_worker": envs, "steps_per_s": rate, "actors_steps_per_s": actors}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m sim_server.learning.ray_example", description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="Ray actors, one core each (default 2)")
    parser.add_argument("--envs", type=int, default=64, help="worlds in each actor (default 64)")
    parser.add_argument(
        "--seconds", type=float, default=10.0,
        help="how long each of the two measurements steps (s, default 10; Ray's start adds a few seconds)",
    )
    parser.add_argument("--address", default=None, help='a Ray cluster to join ("auto": the one started here by `ray start`)')
    args = parser.parse_args(argv)
    if not 0.0 < args.seconds <= 3600.0:
        parser.error(f"--seconds must be from 0 to 3600, got {args.seconds:g}")
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    try:
        figures = measure(args.workers, args.envs, args.seconds)
    except ValueError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    finally:
        if started_here:
            ray.shutdown()
    print(
        f"{figures['workers']} worker(s) x {figures['envs_per_worker']} worlds: {figures['steps_per_s']:.0f} environment "
        f"steps/s stepped from here, {figures['actors_steps_per_s']:.0f} in the actors alone"
    )
    return figures


if __name__ == "__main__":
    main()
    sys.exit(0)
