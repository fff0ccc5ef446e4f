"""``make bench``: measure step throughput of the core and of the ROS node on the office world.

Scenarios (all with the laser idle, since plugins are not loaded yet):

* ``core``: the in-process API, ``World.step()`` in a loop, no ROS.
* ``node``: the ROS server node at update_rate 0 (as fast as possible), publishing /clock every
  step and serving callbacks, as in a normal run.

Until the plugins exist no robot drives, so these figures measure the step loop's overhead, not
the reference benchmark scene.

Each scenario runs ``--repeats`` times; the table reports medians. Figures are also written as
JSON to ``bench/results/<timestamp>.json`` so runs can be compared over time.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import time
from pathlib import Path

from sim_server.core import World

REPO_ROOT = Path(__file__).resolve().parent.parent
OFFICE_WORLD = REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml"
RESULTS_DIR = Path(__file__).resolve().parent / "results"
STEP_SIZE = 0.005
#: Reference figure from the issue tracker: Flatland (C++) on this machine kind, laser idle.
REFERENCE_OFFICE_IDLE_RTF = 58.0


def bench_core(steps: int) -> dict[str, float]:
    """Step the office world in-process; returns startup and stepping figures."""
    started = time.perf_counter()
    world = World.from_file(OFFICE_WORLD, step_size=STEP_SIZE)
    startup = time.perf_counter() - started
    world.step(10)  # the first steps build Box2D's contact pairs
    started = time.perf_counter()
    world.step(steps)
    elapsed = time.perf_counter() - started
    world.close()
    return {"startup_s": startup, "steps_per_s": steps / elapsed, "ms_per_step": 1e3 * elapsed / steps,
            "rtf": steps * STEP_SIZE / elapsed}


def bench_node(seconds: float) -> dict[str, float]:
    """Run the ROS node at update_rate 0 for ``seconds`` of wall time."""
    import rclpy
    from rclpy.context import Context
    from rclpy.parameter import Parameter

    from sim_server.ros.server_node import SimServerNode

    context = Context()
    rclpy.init(context=context)
    try:
        started = time.perf_counter()
        node = SimServerNode(
            context=context,
            parameter_overrides=[
                Parameter("world_path", value=str(OFFICE_WORLD)),
                Parameter("update_rate", value=0.0),
                Parameter("step_size", value=STEP_SIZE),
            ],
        )
        startup = time.perf_counter() - started
        node.world.step(10)
        first = node.world.time.iterations
        started = time.perf_counter()
        deadline = time.monotonic() + seconds
        node.run(stop=lambda: time.monotonic() > deadline)
        elapsed = time.perf_counter() - started
        steps = node.world.time.iterations - first
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    return {"startup_s": startup, "steps_per_s": steps / elapsed, "ms_per_step": 1e3 * elapsed / steps,
            "rtf": steps * STEP_SIZE / elapsed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="sim_server benchmarks")
    parser.add_argument("--repeats", type=int, default=3, help="runs per scenario (medians are reported)")
    parser.add_argument("--steps", type=int, default=20000, help="steps per core run")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall seconds per node run")
    args = parser.parse_args(argv)

    runs = {
        "core (office, laser idle)": [bench_core(args.steps) for _ in range(args.repeats)],
        "node (office, laser idle, /clock every step)": [bench_node(args.seconds) for _ in range(args.repeats)],
    }
    medians = {name: {key: statistics.median(r[key] for r in results) for key in results[0]}
               for name, results in runs.items()}
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    header = f"{'scenario':48} {'RTF':>9} {'ms/step':>9} {'steps/s':>10} {'startup s':>10}"
    print(header)
    print("-" * len(header))
    for name, m in medians.items():
        print(f"{name:48} {m['rtf']:9.1f} {m['ms_per_step']:9.4f} {m['steps_per_s']:10.0f} {m['startup_s']:10.3f}")
    print(f"\npeak RSS {peak_rss_mib:.0f} MiB; medians of {args.repeats} runs.")
    print(f"Not yet comparable with the reference's {REFERENCE_OFFICE_IDLE_RTF:.0f}x (office, laser idle): model "
          "plugins are not loaded yet, so no robot drives and resting bodies sleep in Box2D.")

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / time.strftime("%Y%m%d-%H%M%S.json")
    out.write_text(json.dumps({"machine": platform.platform(), "python": platform.python_version(),
                               "repeats": args.repeats, "medians": medians, "runs": runs,
                               "peak_rss_mib": peak_rss_mib}, indent=2))
    print(f"results written to {out.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
