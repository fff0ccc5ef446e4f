"""OmniDrive in process: a holonomic base strafes sideways without turning, moves along its own
axes while it turns (its origin then drives a circle of radius |v| / w), obeys each axis's
limits and a mecanum base's wheel speed limit; a batch of bases moves as each alone does; drives
that cannot slide refuse a sideways command; bad keys are one line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import World
from sim_server.core.errors import ConfigError
from sim_plugins.omni_drive import OmniDrive
from sim_plugins.velocity_command import VelocityCommand
from test.sim_plugins.drive_tracks import DriveRun, body_row, plain_hooks, track
from test.sim_plugins.test_ackermann_drive import _circle_fit

BASE = """
bodies:
  - name: base
    type: dynamic
    footprints:
      - {{type: polygon, points: [[-0.3, -0.25], [0.35, -0.25], [0.35, 0.25], [-0.3, 0.25]], density: 5}}
plugins:
  - type: OmniDrive
    name: drive
    body: base
{keys}
"""
STEP = 0.01


def _world(folder: Path, keys: str = "", bases: int = 1, spacing: float = 4.0, heading: float = 0.0) -> World:
    (folder / "base.model.yaml").write_text(BASE.format(keys=keys))
    lines = ["properties: {}", "models:"]
    for index in range(bases):
        lines.append(f"  - {{name: b{index}, model: base.model.yaml, namespace: b{index}, pose: [{spacing * index}, 0, {heading}]}}")
    (folder / "world.yaml").write_text("\n".join(lines) + "\n")
    return World.from_file(folder / "world.yaml", step_size=STEP, seed=2)


def _drive(world: World, name: str = "b0") -> OmniDrive:
    return world.plugins.find(world.models[name], "drive")


@pytest.mark.parametrize("heading", [0.0, 0.9])
def test_a_base_strafes_along_its_own_y_axis_without_turning(tmp_path: Path, heading: float) -> None:
    world = _world(tmp_path, heading=heading)
    try:
        drive = _drive(world)
        drive.command.lateral = 0.5
        world.step(200)  # 2 s: 1 m to its left
        body = drive.body
        assert body.angle == pytest.approx(heading, abs=1e-6)  # (Box2D keeps angles in float32)
        assert (body.position.x, body.position.y) == pytest.approx((-math.sin(heading), math.cos(heading)), abs=1e-4)
        truth = drive.odometry.last_truth
        assert (truth.vx, truth.vy, truth.wz) == pytest.approx((0.0, 0.5, 0.0), abs=1e-6)
    finally:
        world.close()


def test_moving_along_its_axes_while_turning_the_origin_drives_a_circle_of_v_over_w(tmp_path: Path) -> None:
    world = _world(tmp_path)
    try:
        drive = _drive(world)
        drive.command.linear, drive.command.lateral, drive.command.angular = 0.6, 0.8, 0.5
        points = []
        for _ in range(1300):  # one turn
            world.step()
            points.append((drive.body.position.x, drive.body.position.y))
        assert _circle_fit(np.array(points))[2] == pytest.approx(1.0 / 0.5, rel=0.005)
        truth = drive.odometry.last_truth
        assert (truth.vx, truth.vy, truth.wz) == pytest.approx((0.6, 0.8, 0.5), rel=1e-6)
    finally:
        world.close()


def test_each_axis_obeys_its_limits(tmp_path: Path) -> None:
    keys = """    linear_dynamics: {acceleration_limit: 1.0}
    lateral_dynamics: {acceleration_limit: 0.5, velocity_limit: 0.4}
    angular_dynamics: {velocity_limit: 1.0}"""
    world = _world(tmp_path, keys)
    try:
        drive = _drive(world)
        drive.command.linear, drive.command.lateral, drive.command.angular = 2.0, -1.0, 3.0
        world.step(50)
        assert drive.state.tolist() == pytest.approx([0.5, -0.25, 1.0])
        world.step(300)
        assert drive.state.tolist() == pytest.approx([2.0, -0.4, 1.0])
    finally:
        world.close()


def test_a_mecanum_base_keeps_its_fastest_wheel_within_its_limit(tmp_path: Path) -> None:
    """Wheels at (+-0.2, +-0.2): the fastest turns at |vx| + |vy| + 0.4 |wz|; asking 1 + 1 + 0
    of a 1 m/s wheel gets half of each, in the same direction."""
    world = _world(tmp_path, "    max_wheel_speed: 1.0\n    wheelbase: 0.4\n    track_width: 0.4")
    try:
        drive = _drive(world)
        drive.command.linear, drive.command.lateral = 1.0, 1.0
        world.step(10)
        assert drive.state.tolist() == pytest.approx([0.5, 0.5, 0.0])
        drive.command.linear, drive.command.lateral, drive.command.angular = 0.5, 0.0, 2.5
        world.step(10)
        vx, vy, wz = drive.state.tolist()
        assert abs(vx) + abs(vy) + 0.4 * abs(wz) == pytest.approx(1.0) and wz / vx == pytest.approx(5.0)
        drive.command.linear, drive.command.angular = 0.3, 0.5  # within the limit: as asked
        world.step(10)
        assert drive.state.tolist() == pytest.approx([0.3, 0.0, 0.5])
    finally:
        world.close()


def test_a_drive_that_cannot_slide_refuses_a_sideways_command(tmp_path: Path) -> None:
    (tmp_path / "bot.model.yaml").write_text(
        "bodies:\n  - {name: base, type: dynamic, footprints: [{type: circle, radius: 0.2, density: 1}]}\n"
        "plugins:\n  - {type: DiffDrive, name: drive, body: base}\n")
    (tmp_path / "world.yaml").write_text("properties: {}\nmodels:\n  - {name: bot, model: bot.model.yaml}\n")
    world = World.from_file(tmp_path / "world.yaml", step_size=STEP)
    try:
        command = world.plugins.find(world.models["bot"], "drive").command
        with pytest.raises(ValueError, match="cannot move sideways"):
            command.lateral = 0.5
        with pytest.raises(ValueError, match="cannot move sideways"):
            VelocityCommand.set_all([command], [1.0], [0.0], [0.2])
        assert (command.linear, command.lateral) == (0.0, 0.0)  # nothing half-set
        command.lateral = 0.0
        VelocityCommand.set_all([command], [1.0], [0.5], [0.0])
        assert (command.linear, command.angular) == (1.0, 0.5)
    finally:
        world.close()


def _row(drive: OmniDrive) -> tuple:
    truth = drive.odometry.last_truth
    return (*body_row(drive), drive.body.linearVelocity.y, *drive.state.tolist(),
            None if truth is None else (truth.pose, truth.vx, truth.vy, truth.wz),
            None if truth is None else drive.odometry.last_odometry.pose)


RUN = DriveRun("drive", seed=4, command_seed=17, every=30, linear=1.5, angular=1.0, leaving="b3", leaves_at=90, row=_row,
               lateral=1.0)
LIMITS = """    linear_dynamics: {acceleration_limit: 2.0, velocity_limit: 1.2}
    lateral_dynamics: {acceleration_limit: 1.0, deceleration_limit: 3.0}
    angular_dynamics: {acceleration_limit: 4.0}
    max_wheel_speed: 1.5
    wheelbase: 0.5
    track_width: 0.4
    odom_pose_noise: [0.0001, 0.0001, 0.00001]
    odom_drift: {translation_from_translation: 0.01, rotation_from_rotation: 0.001}"""


def test_a_batch_of_bases_moves_as_each_alone_and_as_the_swig_path(tmp_path: Path) -> None:
    _world(tmp_path, LIMITS, bases=6, spacing=0.8).close()  # close enough to collide
    world_file = tmp_path / "world.yaml"
    batched = track(world_file, 160, True, RUN)
    assert batched == track(world_file, 160, False, RUN)
    with plain_hooks(OmniDrive):
        assert batched == track(world_file, 160, True, RUN)
    assert len({row[0] for row in batched if row[4] != 0.0 and row[5] != 0.0}) == 6  # all drove and turned


def test_sideways_commands_of_a_batch_are_each_bases_own(tmp_path: Path) -> None:
    world = _world(tmp_path, bases=3)
    try:
        drives = [_drive(world, f"b{i}") for i in range(3)]
        VelocityCommand.set_all([d.command for d in drives], [0.0, 0.1, 0.0], [0.0, 0.0, 0.3], [0.2, -0.4, 0.0])
        world.step(100)
        assert np.array([d.state for d in drives]) == pytest.approx(np.array([[0.0, 0.2, 0.0], [0.1, -0.4, 0.0], [0.0, 0.0, 0.3]]))
        assert drives[1].body.position.y == pytest.approx(-0.4, abs=1e-4)
    finally:
        world.close()


@pytest.mark.parametrize(
    ("keys", "fault"),
    [
        ("    max_wheel_speed: -1", 'key "max_wheel_speed"'),
        ("    max_wheel_speed: .inf", 'key "max_wheel_speed"'),
        ("    wheelbase: -0.2", 'key "wheelbase"'),
        ("    track_width: wide", 'key "track_width"'),
        ("    lateral_dynamics: {acceleration_limit: .nan}", 'key "acceleration_limit"'),
        ("    lateral_dynamics: 3", 'key "lateral_dynamics"'),
        ("    sideways_dynamics: {}", "sideways_dynamics"),
    ],
)
def test_bad_keys_are_one_line_naming_the_key(tmp_path: Path, keys: str, fault: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _world(tmp_path, keys).close()
    assert fault in str(raised.value) and "\n" not in str(raised.value)
