"""TricycleDrive in process: a batch of tricycles, its bodies reached in memory, is the SWIG
path's twin bit for bit (steering, front joint, odometry of the velocity before the step),
through changing commands, collisions and a model leaving mid-run."""

from __future__ import annotations

import shutil
from pathlib import Path

from sim_plugins.tricycle_drive import TricycleDrive
from test.sim_plugins.drive_tracks import DriveRun, body_row, plain_hooks, track
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


def _row(drive: TricycleDrive) -> tuple:
    truth = drive.odometry.last_truth
    return (
        *body_row(drive), drive.steer, drive.speed, drive.front_joint.limits,
        None if truth is None else (truth.pose, truth.vx, truth.vy, truth.wz, drive.odometry.last_odometry.pose),
    )


RUN = DriveRun(
    "cleaner_drive", seed=5, command_seed=11, every=50, linear=0.8, angular=0.6, leaving="c4", leaves_at=120, row=_row
)


def run(world_file: Path, steps: int, in_memory: bool) -> list:
    return track(world_file, steps, in_memory, RUN)


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
    with plain_hooks(TricycleDrive):
        plain = run(world_file, 80, True)
    assert batched == plain
