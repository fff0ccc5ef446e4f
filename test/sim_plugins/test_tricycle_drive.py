"""TricycleDrive in process: a batch of tricycles, its bodies reached in memory, is the SWIG
path's twin bit for bit (steering, front joint, odometry of the velocity before the step),
through changing commands, collisions and a model leaving mid-run."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from sim_server.core import World, body_memory
from sim_plugins.tricycle_drive import TricycleDrive
from test.conftest import PLUGIN_TESTS

TRICYCLE = PLUGIN_TESTS / "tricycle_drive_tests"
MODELS = ("cleaner.model.yaml", "cleaner2.model.yaml", "cleaner3.model.yaml")


def fleet_world(folder: Path, robots: int = 9) -> Path:
    """The reference's three cleaners (different steering limits), packed so that they collide."""
    for name in MODELS + ("map.yaml", "map.png", "map3d.yaml", "map3d.png"):
        shutil.copy(TRICYCLE / name, folder / name)
    lines = ["properties: {}", "layers:", '  - {name: "2d", map: "map.yaml"}', '  - {name: "3d", map: "map3d.yaml"}', "models:"]
    for index in range(robots):
        x, y = 10.0 + 0.9 * (index % 3), -1.0 + 0.9 * (index // 3)
        lines.append(f"  - {{name: c{index}, model: {MODELS[index % 3]}, pose: [{x}, {y}, {0.7 * index}], namespace: c{index}}}")
    path = folder / "fleet.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(world_file: Path, steps: int, in_memory: bool) -> list:
    body_memory.use_memory_access(None if in_memory else False)
    try:
        world = World.from_file(world_file, step_size=0.01, seed=5)
        drives = {name: world.plugins.find(model, "cleaner_drive") for name, model in world.models.items()}
        rng = np.random.default_rng(11)
        track = []
        for step in range(steps):
            if step % 50 == 0:
                for drive in drives.values():
                    drive.command.linear, drive.command.angular = rng.uniform(-0.8, 0.8), rng.uniform(-0.6, 0.6)
            if step == 120:
                world.delete_model("c4")
                del drives["c4"]
            world.step()
            for name, drive in sorted(drives.items()):
                body, truth = drive.body, drive.odometry.last_truth
                track.append((
                    name, body.position.x, body.position.y, body.angle, body.linearVelocity.x, body.angularVelocity,
                    drive.steer, drive.speed, drive.front_joint.limits,
                    None if truth is None else (truth.pose, truth.vx, truth.vy, truth.wz, drive.odometry.last_odometry.pose),
                ))
        world.close()
        return track
    finally:
        body_memory.use_memory_access(None)


def test_batched_tricycles_match_the_swig_path(tmp_path: Path) -> None:
    world_file = fleet_world(tmp_path)
    fast, slow = run(world_file, 240, True), run(world_file, 240, False)
    assert len(fast) == len(slow)
    for fast_row, slow_row in zip(fast, slow):
        assert fast_row == slow_row
    assert len({row[0] for row in fast if row[4] != 0.0 and row[6] != 0.0}) == 9  # all drove and steered


def test_a_lone_tricycle_runs_the_plain_hook(tmp_path: Path) -> None:
    world_file = fleet_world(tmp_path, robots=3)
    batched = run(world_file, 80, True)
    original = TricycleDrive.before_physics_step_batch
    try:
        del TricycleDrive.before_physics_step_batch  # the plugin manager then calls each plugin's hook
        plain = run(world_file, 80, True)
    finally:
        TricycleDrive.before_physics_step_batch = original
    assert batched == plain
