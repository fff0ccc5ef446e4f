"""DiffDrive in process: a batch of drives, its bodies reached in memory, is the SWIG path's
twin bit for bit, through changing commands, dynamics limits, noisy odometry at several rates,
collisions and models leaving mid-run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sim_server.core import World
from sim_server.core.physics import body_memory
from sim_plugins.diff_drive import DiffDrive
from test.sim_plugins.drive_tracks import DriveRun, body_row, plain_hooks, track

ROBOT = """
bodies:
  - name: base
    footprints:
      - {{type: polygon, points: [[-0.3, -0.2], [0.4, -0.2], [0.4, 0.25], [-0.3, 0.25]], density: 3}}
      - {{type: circle, center: [0.3, 0.1], radius: 0.1, density: 5}}
plugins:
  - type: DiffDrive
    name: drive
    body: base
    pub_rate: {rate}
{noise}{limits}
"""
NOISE = """    odom_pose_noise: [0.01, 0.01, 0.005]
    odom_twist_noise: [0.02, 0.0, 0.01]
"""
LIMITS = """    linear_dynamics: {acceleration_limit: 0.8, deceleration_limit: 1.5, velocity_limit: 0.9}
    angular_dynamics: {acceleration_limit: 2.0, velocity_limit: 1.2}
"""


def crowd_world(folder: Path, robots: int = 16) -> Path:
    """Robots of three odometry rates, some with dynamics limits, some with noise, close enough
    to collide."""
    lines = ["properties: {}", "models:"]
    for rate, limited, noisy in (("10", False, True), ("25", True, True), (".inf", False, False), ("10", True, False)):
        name = f"robot_{rate.strip('.')}_{int(limited)}_{int(noisy)}"
        (folder / f"{name}.model.yaml").write_text(
            ROBOT.format(rate=rate, limits=LIMITS if limited else "", noise=NOISE if noisy else "")
        )
    kinds = sorted(path.name for path in folder.glob("robot_*.model.yaml"))
    for index in range(robots):
        x, y = 1.1 * (index % 4), 1.1 * (index // 4)
        lines.append(
            f"  - {{name: r{index}, model: {kinds[index % len(kinds)]}, namespace: r{index}, pose: [{x}, {y}, {0.4 * index}]}}"
        )
    path = folder / "crowd.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _row(drive: DiffDrive) -> tuple:
    truth, odometry = drive.odometry.last_truth, drive.odometry.last_odometry
    return (
        *body_row(drive), drive.linear, drive.angular, drive.last_twist,
        None if truth is None else (truth.pose, truth.vx, truth.vy, truth.wz, odometry.pose),
    )


RUN = DriveRun("drive", seed=7, command_seed=3, every=40, linear=1.0, angular=1.5, leaving="r5", leaves_at=150, row=_row)


def run(world_file: Path, steps: int, in_memory: bool) -> list:
    return track(world_file, steps, in_memory, RUN)


def test_batched_drives_match_the_swig_path(tmp_path: Path) -> None:
    world_file = crowd_world(tmp_path)
    fast, slow = run(world_file, 300, True), run(world_file, 300, False)
    assert len(fast) == len(slow)
    for fast_row, slow_row in zip(fast, slow):
        assert fast_row == slow_row
    moved = {row[0] for row in fast if row[4] != 0.0}
    assert len(moved) == 16  # every robot was driven (r5 until it left)


def test_a_lone_drive_runs_the_plain_hook(tmp_path: Path) -> None:
    """The per-plugin hook (used when a batch is split) drives as the batch does."""
    world_file = crowd_world(tmp_path, robots=4)
    batched = run(world_file, 60, True)
    with plain_hooks(DiffDrive):
        plain = run(world_file, 60, True)
    assert batched == plain


@pytest.mark.parametrize("in_memory", [True, False])
def test_a_sleeping_robot_wakes_for_a_command(tmp_path: Path, in_memory: bool) -> None:
    body_memory.use_memory_access(None if in_memory else False)
    try:
        world = World.from_file(crowd_world(tmp_path, robots=1), step_size=0.01)
        drive = world.plugins.find(world.models["r0"], "drive")
        world.step(200)  # idle long enough for Box2D to put the body to sleep
        assert not drive.body.awake
        drive.command.linear = 0.5
        world.step(50)
        assert drive.body.awake and drive.body.position.x > 0.1
        world.close()
    finally:
        body_memory.use_memory_access(None)


def test_odometry_nobody_reads_is_built_when_read(tmp_path: Path) -> None:
    """Noise-free odometry is noted as numbers and built on reading: the same states as
    measuring at once, and the last noted wins over an earlier measurement."""
    world = World.from_file(crowd_world(tmp_path, robots=4), step_size=0.01)
    drive = next(d for d in (world.plugins.find(m, "drive") for m in world.models.values()) if not (d.odometry.noisy or d._limited))
    drive.command.linear, drive.command.angular = 0.4, 0.3
    world.step(30)
    body = drive.body
    pose_before = (body.position.x, body.position.y, body.angle)
    world.step()
    truth = drive.odometry.last_truth
    assert (truth.pose.x, truth.pose.y, truth.pose.theta) == pose_before
    assert truth.stamp_ns == world.time.time_ns - world.time.step_ns
    assert drive.odometry.last_odometry == truth
    theta = truth.pose.theta
    measured, _ = drive.odometry.measure(truth.stamp_ns, truth.pose, 0.4 * math.cos(theta), 0.4 * math.sin(theta), 0.3)
    assert measured == truth
    world.close()


def test_noisy_odometry_is_never_deferred(tmp_path: Path) -> None:
    """Deferring would draw the noise at reading time, so seeded runs would depend on readers."""
    world = World.from_file(crowd_world(tmp_path, robots=4), step_size=0.01, seed=1)
    noisy = next(d for d in (world.plugins.find(m, "drive") for m in world.models.values()) if d.odometry.noisy)
    with pytest.raises(ValueError, match="noise"):
        noisy.odometry.defer(None, 0)
    world.close()
