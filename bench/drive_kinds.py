"""What each kind of robot costs per step: 100 robots of one kind in an open field, stepped
in-process (physics 100 Hz), against 100 DiffDrive robots.

Kinds: bodies coasting with no plugin (what Box2D alone costs), DiffDrive, AckermannDrive,
OmniDrive, and a DiffDrive carrying a noise-free Imu, a noisy Imu, or a Range sensor
(10 Hz, 5 rays). Commands change every half second (one ``set_all`` for the fleet), as a
controller's would. Runs of the kinds are interleaved and repeated; the median counts.

A plugin's cost is a kind's step time less that of the robots without it: a drive's less the
coasting bodies', a sensor's less the DiffDrive robots'. The issue's target: every new kind
costs per robot no more than DiffDrive does (``cost_vs_diff_drive`` <= 1).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from sim_plugins.velocity_command import VelocityCommand
from sim_server.core import World

ROBOTS = 100
STEP = 0.01
#: Steps between new commands (half a second).
COMMAND_PERIOD = 50
BODY = "bodies:\n  - {name: base, type: dynamic, footprints: [{type: circle, radius: 0.3, density: 10}]}\n"
DIFF = "  - {type: DiffDrive, name: drive, body: base}\n"
KINDS: dict[str, str] = {
    "coasting bodies": "",
    "DiffDrive": DIFF,
    "AckermannDrive": "  - {type: AckermannDrive, name: drive, body: base, wheelbase: 0.5, max_steer_angle: 0.5,"
                      " angular_dynamics: {velocity_limit: 1.0}, linear_dynamics: {acceleration_limit: 2.0}}\n",
    "OmniDrive": "  - {type: OmniDrive, name: drive, body: base, max_wheel_speed: 2.0, wheelbase: 0.4, track_width: 0.4,"
                 " linear_dynamics: {acceleration_limit: 2.0}}\n",
    "DiffDrive + Imu": DIFF + "  - {type: Imu, name: imu, body: base}\n",
    "DiffDrive + noisy Imu": DIFF + "  - {type: Imu, name: imu, body: base, angular_velocity_noise: [0, 0, 1e-4],"
                             " linear_acceleration_noise: [1e-3, 1e-3, 0], orientation_noise: [0, 0, 1e-4]}\n",
    "DiffDrive + Range": DIFF + "  - {type: Range, name: range, body: base, range_max: 4, field_of_view: 0.3,"
                                " beams: 5, update_rate: 10, origin: [0.3, 0, 0]}\n",
}
#: What each kind's plugin cost is measured against.
BASELINE = {kind: ("coasting bodies" if "+" not in kind else "DiffDrive") for kind in KINDS}


def _world(folder: Path, kind: str) -> World:
    plugins = KINDS[kind]
    model = folder / f"{abs(hash(kind))}.model.yaml"
    model.write_text(BODY + ("plugins:\n" + plugins if plugins else ""))
    side = int(np.ceil(np.sqrt(ROBOTS)))
    lines = ["properties: {}", "models:"]
    for index in range(ROBOTS):
        lines.append(f"  - {{name: r{index}, model: {model.name}, pose: [{3.0 * (index % side)}, {3.0 * (index // side)}, 0]}}")
    path = folder / f"{abs(hash(kind))}.world.yaml"
    path.write_text("\n".join(lines) + "\n")
    return World.from_file(path, step_size=STEP, seed=1)


def _time_steps(world: World, steps: int, seed: int) -> float:
    """Microseconds per step of ``steps`` steps with commands changing every half second."""
    drives = [plugin for model in world.models.values() for plugin in world.plugins.plugins_of(model)
              if plugin.context.name == "drive"]
    commands = [drive.command for drive in drives]
    bodies = [model.first_body.physics_body for model in world.models.values()]
    rng = np.random.default_rng(seed)
    started = 0.0
    elapsed = 0.0
    for step in range(steps):
        if step % COMMAND_PERIOD == 0:
            linear, angular = rng.uniform(-1.0, 1.0, len(bodies)), rng.uniform(-0.5, 0.5, len(bodies))
            if commands:
                VelocityCommand.set_all(commands, linear.tolist(), angular.tolist())
            else:  # no drive: the bodies coast at the speeds a drive would give them
                for body, v, w in zip(bodies, linear.tolist(), angular.tolist()):
                    body.linearVelocity, body.angularVelocity = (v * np.cos(body.angle), v * np.sin(body.angle)), w
        started = time.perf_counter()
        world.step()
        elapsed += time.perf_counter() - started
    return 1e6 * elapsed / steps


def run(quick: bool = False) -> dict[str, dict[str, float]]:
    """Every kind: µs per step (median of interleaved repeats), the plugin's cost per robot and
    step (µs) and that cost against DiffDrive's."""
    steps, repeats = (1000, 3) if quick else (3000, 5)
    with tempfile.TemporaryDirectory(prefix="sim_bench_drives_") as tmp:
        worlds = {kind: _world(Path(tmp), kind) for kind in KINDS}
        try:
            for kind, world in worlds.items():  # warm up: compiled kernels, first batches
                _time_steps(world, 200, 0)
            samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
            for repeat in range(repeats):
                for kind, world in worlds.items():
                    samples[kind].append(_time_steps(world, steps, repeat + 1))
        finally:
            for world in worlds.values():
                world.close()
    per_step = {kind: statistics.median(values) for kind, values in samples.items()}
    diff_cost = (per_step["DiffDrive"] - per_step["coasting bodies"]) / ROBOTS
    results: dict[str, dict[str, float]] = {}
    for kind, us in per_step.items():
        figures = {"us_per_step": us}
        if kind != "coasting bodies":
            cost = (us - per_step[BASELINE[kind]]) / ROBOTS
            figures["us_per_robot"] = cost
            figures["cost_vs_diff_drive"] = cost / diff_cost if diff_cost > 0 else float("inf")
        results[kind] = figures
    return results


def main() -> None:
    for kind, figures in run().items():
        extra = ""
        if "us_per_robot" in figures:
            extra = f"  plugin {figures['us_per_robot']:6.3f} us/robot  ({figures['cost_vs_diff_drive']:.2f}x DiffDrive's)"
        print(f"{kind:24} {figures['us_per_step']:8.1f} us/step{extra}")


if __name__ == "__main__":
    main()
