"""``make bench``: step throughput and laser throughput, with medians over repeated runs.

Scenarios:

* ``benchmark_world``: the reference simulator's own benchmark scene (office map, a tricycle
  cleaner with a 1081-beam 20 m laser at 40 Hz computed always, step 0.005 s), run by the ROS
  node at update_rate 0 while a separate process subscribes to /clock and /scan, so both are
  published as in normal runs.
* ``office, laser idle``: the demo office world (cleaner, walker, sensor) by the ROS node at
  update_rate 0 with nobody subscribed (topics without subscribers are not published).
* ``core, office``: the same world stepped in-process (no ROS); without ROS there are no
  subscribers to wait for, so the cleaner's laser scans at its 40 Hz.
* ``laser``: beams per second of the batch ray caster on the office map, beside a per-beam
  Box2D ray cast (Python callback) measured in the same run, and the largest difference
  between the two over every beam. Beams that differ by more than 1e-4 m (grazing a wall, where
  Box2D's single-precision arithmetic loses digits) are checked against an extended-precision
  intersection.
* ``levels``: the level-streaming scenes of :mod:`bench.level_scenarios` (100 levels holding
  10,000 models, a 1 km map in tiles), each streamed and loaded whole, beside a small world.
* ``scale``: :mod:`bench.fleet_scenarios`: a 100-robot warehouse fleet, a 1,000-robot swarm,
  the cost per robot from 1 to 1,000 robots, and the start-up of a 4000 x 4000 map.
* ``drives``: :mod:`bench.drive_kinds`: 100 robots of each kind (DiffDrive, AckermannDrive,
  OmniDrive, DiffDrive with an Imu or a Range sensor) in-process: each plugin's cost per robot
  and step against DiffDrive's.
* ``rendering``: :mod:`bench.rendering`: milliseconds per picture of the office (a fixed view, a
  turning view, a camera's view around the driving cleaner) and a recording's frames a second.
* ``crowds``: :mod:`bench.crowd_scenarios`: the office with 200 and 1,000 people (ROS node and
  in-process), the social force model beside pysocialforce and ORCA beside RVO2, and where a
  step's time goes among them (:mod:`bench.crowd_parts`).
* ``live_view``: :mod:`bench.live_view`: the benchmark world in-process without and with a live
  view and one client subscribed to everything (the view's cost).
* ``floor``: :mod:`bench.floor`: the office world's step through the node beside its floor (Box2D's
  step of the same bodies and a /clock publish), and the step's parts.
* ``memory``: :mod:`bench.memory`: the server's resident memory at rest on the benchmark world,
  and what each part (NumPy, numba, rclpy, the world, ...) adds.
* ``learning``: :mod:`bench.learning`: environment steps a second of the navigation task's
  vector environment with 1 to 256 worlds in one process on one core, beside Gymnasium's
  SyncVectorEnv of 64 single environments, and as 1 and 2 Ray actors of 64 worlds.

``--quick`` (what ``make bench`` runs) does one run of each with shorter windows and scales to
100 robots; without it every scenario runs ``--repeats`` times and the scaling goes to 1,000.

Figures go to a table, a list of the issue tracker's targets (met or not) and to
``bench/results/<timestamp>.json`` with a picture beside it (``.png``: the targets' margins, the
cost per robot, and the main targets over the earlier results in the folder). Comparisons with
the C++ reference come only from side-by-side runs (``make bench-reference``, :mod:`bench.reference`):
the latest one's table is printed after ours.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import resource
import statistics
import time
from pathlib import Path
from typing import Callable

import numpy as np

from bench.node_runner import run_node
from bench.plot import earlier_results, render
from bench.targets import TARGETS, describe
from sim_server.core import World

REPO_ROOT = Path(__file__).resolve().parent.parent
OFFICE_WORLD = REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml"
BENCHMARK_WORLD = Path(__file__).resolve().parent / "worlds" / "benchmark_world" / "world.yaml"
RESULTS_DIR = Path(__file__).resolve().parent / "results"
STEP_SIZE = 0.005
#: Flatland (C++) on this machine kind: benchmark scene and office with the laser idle (x real time).
#: A 270-degree, 1081-beam scan as the cleaner's.
SCAN_BEAMS = 1081
SCAN_RANGE = 20.0
#: Largest difference (m) from Box2D's ray cast the issue allows.
EXACT_TOLERANCE = 1e-4
#: Beams beyond it must agree this well (m) with an extended-precision intersection.
EXTENDED_AGREEMENT = 1e-9


def bench_core(seconds: float) -> dict[str, float]:
    """Step the office world in-process for about ``seconds`` of wall time."""
    started = time.perf_counter()
    world = World.from_file(OFFICE_WORLD, step_size=STEP_SIZE)
    startup = time.perf_counter() - started
    world.step(10)  # the first steps build Box2D's contact pairs
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        world.step(200)
        steps += 200
    elapsed = time.perf_counter() - started
    world.close()
    return _rates(steps, elapsed, startup)


def _rates(steps: int, elapsed: float, startup: float) -> dict[str, float]:
    return {
        "rtf": steps * STEP_SIZE / elapsed,
        "ms_per_step": 1e3 * elapsed / steps,
        "steps_per_s": steps / elapsed,
        "startup_s": startup,
    }


#: Topics a separate listener process subscribes to while the node runs (as RViz would).
LISTENED = ("/clock", "rosgraph_msgs/msg/Clock", "/scan", "sensor_msgs/msg/LaserScan")


def bench_node(world_path: Path, seconds: float, listened: tuple[str, ...] = ()) -> dict[str, float]:
    """The ROS node at update_rate 0 for ``seconds`` of wall time (listeners on ``listened``)."""
    return run_node(world_path, seconds, STEP_SIZE, listened)


def bench_laser(seconds: float) -> dict[str, float]:
    """Beams per second of the batch caster and of per-beam Box2D ray casts, on the office map."""
    from Box2D import b2

    from sim_server.core.sensing.laser_scanner import scene_of
    from sim_server.core.sensing.raycast import ScanBatch, cast_rays, cast_scans

    world = World.from_file(OFFICE_WORLD, step_size=STEP_SIZE)
    world.step(2)
    scene = scene_of(world)
    rng = np.random.default_rng(7)
    origins = [(rng.uniform(-15.0, 47.0), rng.uniform(-6.0, 18.0)) for _ in range(50)]
    angles = np.linspace(-0.75 * math.pi, 0.75 * math.pi, SCAN_BEAMS)
    mask = 0xFFFF
    # As a laser casts: its beam layout made once, a scan per call.
    layout = ScanBatch.of([(angles, SCAN_RANGE, mask)])
    poses = [(np.array([x]), np.array([y]), np.zeros(1)) for x, y in origins]
    cast_scans(layout, *poses[0], scene.static, scene.moving(0))  # compile outside the timing

    scans, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        cast_scans(layout, *poses[scans % len(poses)], scene.static, scene.moving(world.time.iterations))
        scans += 1
    batch_rate = scans * SCAN_BEAMS / (time.perf_counter() - started)

    class Closest(b2.rayCastCallback):
        def __init__(self) -> None:
            super().__init__()
            self.fraction = None

        def ReportFixture(self, fixture, point, normal, fraction):  # noqa: N802 - Box2D's name
            if fixture.sensor:
                return -1.0
            self.fraction = fraction
            return fraction

    def box2d_scan(x: float, y: float) -> np.ndarray:
        out = np.empty(SCAN_BEAMS)
        for index, angle in enumerate(angles):
            callback = Closest()
            world.physics.RayCast(callback, (x, y), (x + SCAN_RANGE * math.cos(angle), y + SCAN_RANGE * math.sin(angle)))
            out[index] = math.inf if callback.fraction is None else callback.fraction * SCAN_RANGE
        return out

    baseline_scans, started = 0, time.perf_counter()
    worst = 0.0
    outliers: list[tuple[float, float, float, float]] = []  # x, y, angle, our range
    while time.perf_counter() - started < seconds or baseline_scans < 3:
        x, y = origins[baseline_scans % len(origins)]
        reference = box2d_scan(x, y)
        ours, _ = cast_rays(x, y, angles, SCAN_RANGE, mask, scene.static, scene.moving(world.time.iterations))
        both = np.isfinite(reference) & np.isfinite(ours)
        if not np.array_equal(np.isfinite(reference), np.isfinite(ours)):
            worst = math.inf
        elif both.any():
            difference = np.where(both, np.abs(np.where(both, reference, 0.0) - np.where(both, ours, 0.0)), 0.0)
            worst = max(worst, float(difference.max()))
            outliers += [(x, y, angles[i], ours[i]) for i in np.flatnonzero(both & (difference > EXACT_TOLERANCE))]
        baseline_scans += 1
    baseline_rate = baseline_scans * SCAN_BEAMS / (time.perf_counter() - started)
    # Beyond the tolerance, Box2D's single-precision arithmetic is the one that errs (grazing
    # beams): each such range of ours must equal an extended-precision intersection.
    segments = scene.static.segments
    unexplained = sum(
        bool(abs(_extended_precision_range(x, y, angle, segments) - ours_range) > EXTENDED_AGREEMENT)
        for x, y, angle, ours_range in outliers
    )
    world.close()
    return {
        "beams_per_s": batch_rate,
        "ms_per_scan": 1e3 * SCAN_BEAMS / batch_rate,
        "box2d_beams_per_s": baseline_rate,
        "box2d_ms_per_scan": 1e3 * SCAN_BEAMS / baseline_rate,
        "speedup": batch_rate / baseline_rate,
        "max_abs_difference_m": worst,
        "beams_compared": baseline_scans * SCAN_BEAMS,
        "beams_beyond_tolerance": len(outliers),
        "beyond_tolerance_unexplained": unexplained,
    }


def _extended_precision_range(x: float, y: float, angle: float, segments: np.ndarray) -> float:
    """The nearest intersection (m) of a ray with any of ``segments``, in extended precision."""
    wide = np.longdouble
    dx, dy = np.cos(wide(angle)), np.sin(wide(angle))
    x1, y1, x2, y2 = (segments[:, i].astype(wide) for i in range(4))
    ex, ey = x2 - x1, y2 - y1
    denominator = dx * ey - dy * ex
    with np.errstate(divide="ignore", invalid="ignore"):
        t = ((x1 - wide(x)) * ey - (y1 - wide(y)) * ex) / denominator
        s = ((x1 - wide(x)) * dy - (y1 - wide(y)) * dx) / denominator
    valid = (denominator != 0) & (t >= 0) & (s >= 0) & (s <= 1)
    return float(t[valid].min()) if valid.any() else math.inf


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}



def print_latest_side_by_side() -> None:
    """The table of the newest ``make bench-reference`` summary, if there is one."""
    summaries = sorted(RESULTS_DIR.glob("reference-*.json"))
    if not summaries:
        print("\nside by side with Flatland C++: none yet (make bench-reference)")
        return
    from bench.reference import table

    record = json.loads(summaries[-1].read_text())
    print(f"\nside by side with Flatland C++ ({summaries[-1].name}, {record['date']}):")
    print(table(record["scenarios"]))

def crowd_lines(crowds: dict[str, dict[str, float]]) -> list[str]:
    """The crowd scenarios' lines of the summary, each by what it measured: a real-time factor
    (the office with people), our social force against pysocialforce, or our ORCA against RVO2
    (the circle swap, with arrival times; among walls, with the wall clearances)."""
    lines = []
    for name, m in crowds.items():
        if "rtf" in m:
            lines.append(f"  {name:32} {m['rtf']:7.1f}x real time, {m['ms_per_step']:.3f} ms/step, "
                         f"start-up {m['startup_s']:.2f} s")
        elif "pysocialforce_ms" in m:
            lines.append(f"  {name:32} {m['ours_ms']:.2f} ms a step against {m['pysocialforce_ms']:.0f} ms "
                         f"({m['ratio']:.0f}x)")
        else:
            agents = int(m.get("agents", 250))
            line = (f"  {name:32} {m['ours_ms']:.3f} ms a step against {m['rvo2_ms']:.3f} ms ({m['ratio']:.1f}x); deepest "
                    f"overlap {m['ours_overlap_m']:.3f} m against {m['rvo2_overlap_m']:.3f} m; arrived {m['ours_arrived']} "
                    f"and {m['rvo2_arrived']} of {agents}")
            if "ours_mean_arrival_s" in m:
                line += f", on average after {m['ours_mean_arrival_s']:.0f} s and {m['rvo2_mean_arrival_s']:.0f} s"
            if "ours_clearance_m" in m:
                line += (f"; centres came within {m['ours_clearance_m']:.3f} m of a wall against {m['rvo2_clearance_m']:.3f} m "
                         f"(radius 0.5 m)")
            lines.append(line)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="sim_server benchmarks")
    parser.add_argument("--repeats", type=int, default=3, help="runs per scenario (medians are reported)")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall seconds per run")
    parser.add_argument("--quick", action="store_true", help="one short run of each scenario (a few minutes)")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.seconds = 1, 3.0

    step_scenarios: dict[str, Callable[[], dict[str, float]]] = {
        "benchmark_world": lambda: bench_node(BENCHMARK_WORLD, args.seconds, LISTENED),
        "office, laser idle": lambda: bench_node(OFFICE_WORLD, args.seconds),
        "core, office, laser 40 Hz": lambda: bench_core(args.seconds),
    }
    runs: dict[str, list[dict[str, float]]] = {}
    for name, scenario in step_scenarios.items():
        runs[name] = [scenario() for _ in range(args.repeats)]
    laser_runs = [bench_laser(args.seconds) for _ in range(args.repeats)]
    from bench import level_scenarios

    level_runs = [level_scenarios.run() for _ in range(args.repeats)]
    levels = {name: median_of([run[name] for run in level_runs]) for name in level_runs[0]}
    from bench import fleet_scenarios

    scale = fleet_scenarios.run(args.seconds, args.quick)
    from bench import drive_kinds

    drives = drive_kinds.run(args.quick)
    from bench import rendering

    rendering_runs = [rendering.run(args.seconds) for _ in range(args.repeats)]
    pictures = {name: median_of([run[name] for run in rendering_runs]) for name in rendering_runs[0]}
    from bench import crowd_scenarios

    crowds = crowd_scenarios.run(args.seconds, args.quick)
    from bench import crowd_parts

    crowd_steps = crowd_parts.run(args.quick)
    from bench import live_view

    viewing = live_view.run(args.seconds)
    from bench import floor, memory

    step_floor = floor.run(args.seconds)
    resident = memory.run()
    from bench import learning

    learning_runs = [learning.run(args.seconds) for _ in range(args.repeats)]
    training = {name: median_of([run[name] for run in learning_runs]) for name in learning_runs[0]}
    medians = {name: median_of(results) for name, results in runs.items()}
    laser = median_of(laser_runs)
    for key in ("max_abs_difference_m", "beams_beyond_tolerance", "beyond_tolerance_unexplained"):
        laser[key] = max(run[key] for run in laser_runs)  # correctness: the worst run counts
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    header = f"{'scenario':26} {'RTF':>8} {'ms/step':>9} {'steps/s':>9} {'startup s':>9}"
    print(header)
    print("-" * len(header))
    for name, m in medians.items():
        print(f"{name:26} {m['rtf']:8.1f} {m['ms_per_step']:9.4f} {m['steps_per_s']:9.0f} {m['startup_s']:9.3f}")
    print_latest_side_by_side()
    print(
        f"\nlaser, office map, {SCAN_BEAMS} beams: {laser['beams_per_s'] / 1e6:.2f} M beams/s "
        f"({laser['ms_per_scan']:.3f} ms/scan); per-beam Box2D ray cast: {laser['box2d_beams_per_s'] / 1e3:.0f} k beams/s "
        f"({laser['box2d_ms_per_scan']:.1f} ms/scan); {laser['speedup']:.0f}x faster; "
        f"largest difference {laser['max_abs_difference_m']:.2e} m; "
        f"{laser['beams_beyond_tolerance']:.0f} of {laser['beams_compared']:.0f} beams differ by more than "
        f"{EXACT_TOLERANCE:g} m, {laser['beyond_tolerance_unexplained']:.0f} of them not explained by Box2D's "
        f"single precision (ours equal an extended-precision intersection within {EXTENDED_AGREEMENT:g} m)"
    )
    print(
        f"\n{'level streaming (in-process, CPU ms per step)':46} {'ms/step':>8} {'vs small':>9} {'load s':>7} "
        f"{'models':>7} {'edges':>7}"
    )
    for small_name, streamed_name, whole_name in level_scenarios.COMPARISONS:
        small = levels[small_name]["ms_per_step"]
        for name in (small_name, streamed_name, whole_name):
            m = levels[name]
            print(
                f"{name:46} {m['ms_per_step']:8.4f} {m['ms_per_step'] / small:8.2f}x {m['load_s']:7.2f} "
                f"{m['models']:7.0f} {m['edges_in_box2d']:7.0f}"
            )
        streamed, whole = levels[streamed_name]["ms_per_step"], levels[whole_name]["ms_per_step"]
        print(f"  streamed: {streamed / small:.2f}x the small world's step time, {whole / streamed:.1f}x faster than loaded whole")
    print("\nscale")
    for name, m in scale.items():
        if name == "scaling":
            per_robot = ", ".join(f"{count}: {v['us_per_robot_step']:.1f}" for count, v in m.items())
            print(f"  cost per robot and step (us), in-process, by robot count: {per_robot}")
        elif "startup" in name:
            print(f"  {name}: {m['startup_s']:.2f} s, peak {m['peak_rss_mib']:.0f} MiB, {m['edges']:.0f} edges")
        else:
            print(f"  {name}: {m['rtf']:.2f}x real time, {m['ms_per_step']:.2f} ms/step, start-up {m['startup_s']:.1f} s")
    print("\nkinds of robots, 100 each, in-process (us per step; the plugin's cost per robot)")
    for name, m in drives.items():
        cost = f"  {m['us_per_robot']:.3f} us/robot, {m['cost_vs_diff_drive']:.2f}x DiffDrive's" if "us_per_robot" in m else ""
        print(f"  {name:24} {m['us_per_step']:8.1f}{cost}")
    print("\nrendering, office world (ms per picture)")
    for name, m in pictures.items():
        rate = f" ({m['frames_per_s']:.0f} frames/s, stepping included)" if "frames_per_s" in m else ""
        print(f"  {name:28} {m['ms_per_frame']:7.3f} ms{rate}")
    print("\ncrowds")
    for line in crowd_lines(crowds) + crowd_parts.lines(crowd_steps):
        print(line)
    for name, m in viewing.items():
        print(f"\n{name}: {m['rtf_without']:.1f}x real time without, {m['rtf_with']:.1f}x with "
              f"(cost {100 * m['cost']:.1f} %); the client got {m['messages_per_s']:.0f} messages, "
              f"{m['mib_per_s']:.2f} MiB a second")
    print()
    for line in floor.lines(step_floor) + memory.lines(resident):
        print(line)
    print("\nlearning, navigation task (environment steps a second, one core)")
    for name, m in training.items():
        print(f"  {learning.describe(name, m)}")
    print(f"peak RSS {peak_rss_mib:.0f} MiB; medians of {args.repeats} runs of {args.seconds:g} s.")

    result = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "repeats": args.repeats,
        "seconds": args.seconds,
        "medians": medians,
        "laser": laser,
        "runs": runs,
        "laser_runs": laser_runs,
        "levels": levels,
        "scale": scale,
        "drives": drives,
        "level_runs": level_runs,
        "rendering": pictures,
        "rendering_runs": rendering_runs,
        "crowds": crowds,
        "crowd_parts": crowd_steps,
        "live_view": viewing,
        "floor": step_floor,
        "memory": resident,
        "learning": training,
        "learning_runs": learning_runs,
        "peak_rss_mib": peak_rss_mib,
    }
    print("\ntargets")
    for target in TARGETS:
        print(f"  {describe(target, result)}")
    result["targets"] = {target.name: {"value": target.value(result), "met": target.met(result)} for target in TARGETS}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / time.strftime("%Y%m%d-%H%M%S.json")
    out.write_text(json.dumps(result, indent=2))
    picture = render(result, out.with_suffix(".png"), earlier_results(RESULTS_DIR, out))
    print(f"results written to {out.relative_to(REPO_ROOT)} and {picture.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
