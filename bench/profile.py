"""``python -m bench.profile``: cProfile the hot scenarios and keep the output with the docs.

Writes ``bench/profiles/<scenario>.txt``: the functions that took the most time (own time, then
cumulative) while the scenario ran. Profiling slows Python code down several times more than
compiled code, so read the shares, not the absolute times. Scenarios:

* ``reference_scene``: the reference's benchmark world run by the ROS node (update_rate 0) with a
  listener process on /clock and /scan, as ``make bench`` runs it.
* ``office_node``: the demo office world (laser idle) run by the ROS node with a listener on
  /clock, as the side-by-side comparison with the reference runs it: the per-step fixed cost.
* ``swarm_in_process``: 1,000 swarm robots stepped in-process (no ROS).
* ``levels_streamed``: the robot driving through the 10,000-model level world, in-process.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import pstats
import tempfile
import time
from pathlib import Path

from bench import fleet_scenarios, level_scenarios
from bench.__main__ import BENCHMARK_WORLD, LISTENED, OFFICE_WORLD, STEP_SIZE
from bench.node_runner import run_node
from sim_server.core import Pose2D, World

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
#: Functions listed per ordering.
TOP_FUNCTIONS = 25


def _report(profile: cProfile.Profile, title: str, note: str) -> str:
    out = io.StringIO()
    out.write(f"{title}\n{note}\n\n")
    for order in ("tottime", "cumulative"):
        out.write(f"--- sorted by {order} ---\n")
        stats = pstats.Stats(profile, stream=out)
        stats.strip_dirs().sort_stats(order).print_stats(TOP_FUNCTIONS)
    return out.getvalue()


def reference_scene(seconds: float) -> str:
    profile = cProfile.Profile()
    result = run_node(BENCHMARK_WORLD, seconds, STEP_SIZE, LISTENED, prepare=lambda _world: profile.enable())
    profile.disable()
    return _report(profile, "reference scene, ROS node, /clock and /scan subscribed",
                   f"{seconds:g} s under cProfile: {result['rtf']:.1f}x real time while profiled")


def office_node(seconds: float) -> str:
    profile = cProfile.Profile()
    result = run_node(OFFICE_WORLD, seconds, STEP_SIZE, ("/clock", "rosgraph_msgs/msg/Clock"),
                      prepare=lambda _world: profile.enable())
    profile.disable()
    return _report(profile, "office world, laser idle, ROS node, /clock subscribed",
                   f"{seconds:g} s under cProfile: {result['rtf']:.1f}x real time while profiled")


def swarm_in_process(seconds: float) -> str:
    with tempfile.TemporaryDirectory(prefix="sim_profile_") as tmp:
        world = World.from_file(fleet_scenarios.swarm_world(Path(tmp), 1000), step_size=0.02)
        fleet_scenarios.command_all(world, 0.3, 0.05)
        world.step(5)
        profile = cProfile.Profile()
        steps, started = 0, time.perf_counter()
        profile.enable()
        while time.perf_counter() - started < seconds:
            world.step(5)
            steps += 5
        profile.disable()
        world.close()
    return _report(profile, "swarm, 1000 robots, in-process", f"{steps} steps under cProfile")


def levels_streamed(seconds: float) -> str:
    del seconds  # the drive has a fixed length
    with tempfile.TemporaryDirectory(prefix="sim_profile_") as tmp:
        world = World.from_file(level_scenarios.levels_world(Path(tmp)), step_size=level_scenarios.STEP_SIZE,
                                enable_levels=True)
        world.move_model("robot", Pose2D(5.0, 10.0, 0.0))
        world.plugins.find(world.models["robot"], "drive").command.linear = 8.0
        world.step(10)
        profile = cProfile.Profile()
        profile.enable()
        world.step(4000)
        profile.disable()
        distance = math.hypot(world.models["robot"].pose.x - 5.0, world.models["robot"].pose.y - 10.0)
        world.close()
    return _report(profile, "100 levels, 10,000 models, streamed, in-process",
                   f"4000 steps under cProfile, {distance:.0f} m driven")


SCENARIOS = {"reference_scene": reference_scene, "office_node": office_node, "swarm_in_process": swarm_in_process, "levels_streamed": levels_streamed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="cProfile the hot scenarios into bench/profiles/")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall seconds per timed scenario")
    parser.add_argument("scenarios", nargs="*", help=f"any of {', '.join(SCENARIOS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.scenarios if name not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}")
    PROFILES_DIR.mkdir(exist_ok=True)
    for name in args.scenarios or list(SCENARIOS):
        path = PROFILES_DIR / f"{name}.txt"
        path.write_text(SCENARIOS[name](args.seconds))
        print(f"wrote {path.relative_to(PROFILES_DIR.parent.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
