"""Odometry that drifts: over many seeded robots the errors have the spread the variance rates
give (distance error ~ sqrt(rate * distance), heading error likewise), whatever the odometry
rate; a model placed by hand starts afresh; seeded runs repeat; without the keys odometry is
ground truth and draws nothing; bad keys are one line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import World
from sim_server.core.errors import ConfigError
from sim_server.core.geometry import Pose2D

ROBOT = """
bodies:
  - name: base
    type: dynamic
    footprints: [{{type: circle, radius: 0.2, density: 1, layers: []}}]
plugins:
  - type: {drive}
    name: drive
    body: base
{keys}
"""
STEP = 0.02


def _world(folder: Path, keys: str, robots: int, drive: str = "DiffDrive", seed: int | None = 7) -> World:
    (folder / "robot.model.yaml").write_text(ROBOT.format(drive=drive, keys=keys))
    lines = ["properties: {}", "models:"]
    for index in range(robots):  # (footprints in no layer: the robots drive through each other)
        lines.append(f"  - {{name: r{index}, model: robot.model.yaml, pose: [0, {0.01 * index}, 0]}}")
    (folder / "world.yaml").write_text("\n".join(lines) + "\n")
    return World.from_file(folder / "world.yaml", step_size=STEP, seed=seed)


def _drives(world: World) -> list:
    return [world.plugins.find(model, "drive") for model in world.models.values()]


def _errors(world: World) -> np.ndarray:
    """(N, 3): each robot's odometry error along its heading, across it (m) and in heading (rad)."""
    rows = []
    for drive in _drives(world):
        truth, odometry = drive.odometry.last_truth.pose, drive.odometry.last_odometry.pose
        cos, sin = math.cos(truth.theta), math.sin(truth.theta)
        dx, dy = odometry.x - truth.x, odometry.y - truth.y
        rows.append((cos * dx + sin * dy, -sin * dx + cos * dy, math.remainder(odometry.theta - truth.theta, 2 * math.pi)))
    return np.array(rows)


@pytest.mark.parametrize(("drive", "rate"), [("DiffDrive", 50), ("DiffDrive", 5), ("OmniDrive", 20)])
def test_driving_straight_the_distance_error_spreads_as_the_rate_times_the_distance(tmp_path: Path, drive: str, rate: float) -> None:
    keys = f"    pub_rate: {rate}\n    odom_drift: {{translation_from_translation: 0.004, rotation_from_translation: 0.0005}}"
    world = _world(tmp_path, keys, robots=300, drive=drive)
    try:
        for each in _drives(world):
            each.command.linear = 1.0
        world.step(round(10.0 / STEP))  # 10 m
        along, across, heading = _errors(world).T
        assert np.std(along) == pytest.approx(math.sqrt(0.004 * 10.0), rel=0.15)
        assert abs(np.mean(along)) < 3 * math.sqrt(0.004 * 10.0 / 300)
        assert np.std(heading) == pytest.approx(math.sqrt(0.0005 * 10.0), rel=0.15)
        # A heading error grows as the robot drives on: the error across the track grows as
        # distance^1.5 (variance rate * D^3 / 3), far more than along.
        assert np.std(across) == pytest.approx(math.sqrt(0.0005 * 10.0**3 / 3.0), rel=0.2)
    finally:
        world.close()


def test_turning_in_place_the_heading_error_spreads_as_the_rate_times_the_angle(tmp_path: Path) -> None:
    world = _world(tmp_path, "    pub_rate: 25\n    odom_drift: {rotation_from_rotation: 0.01}", robots=300)
    try:
        for each in _drives(world):
            each.command.angular = 1.0
        world.step(round(4 * math.pi / STEP))  # two turns: 4 pi rad
        along, across, heading = _errors(world).T
        assert np.std(heading) == pytest.approx(math.sqrt(0.01 * 4 * math.pi), rel=0.15)
        assert np.abs(along).max() < 1e-6 and np.abs(across).max() < 1e-6  # it does not move
    finally:
        world.close()


def test_a_model_placed_by_hand_starts_its_odometry_afresh(tmp_path: Path) -> None:
    for drive in ("DiffDrive", "AckermannDrive"):
        keys = "    odom_drift: {translation_from_translation: 0.05, rotation_from_translation: 0.01}"
        if drive == "AckermannDrive":
            keys += "\n    wheelbase: 0.5"
        world = _world(tmp_path, keys, robots=1, drive=drive)
        try:
            (robot,) = _drives(world)
            robot.command.linear = 1.0
            world.step(200)
            assert abs(_errors(world)[0, 0]) > 1e-3  # it drifted
            world.move_model("r0", Pose2D(-3.0, 2.0, 1.0))
            world.step(1)
            odometry, truth = robot.odometry.last_odometry.pose, robot.odometry.last_truth.pose
            assert (odometry.x, odometry.y, odometry.theta) == pytest.approx((truth.x, truth.y, truth.theta), abs=1e-6)
            assert truth.x == pytest.approx(-3.0, abs=0.05)
        finally:
            world.close()


def _run(folder: Path, keys: str, seed: int | None, drive: str = "OmniDrive") -> np.ndarray:
    world = _world(folder, keys, robots=5, drive=drive, seed=seed)
    try:
        for index, each in enumerate(_drives(world)):
            each.command.linear, each.command.angular = 0.5 + 0.1 * index, 0.2
        world.step(100)
        states = [d.odometry.last_odometry for d in _drives(world)]
        return np.array([[s.pose.x, s.pose.y, s.pose.theta, s.vx] for s in states])
    finally:
        world.close()


def test_seeded_runs_repeat_and_seeds_differ(tmp_path: Path) -> None:
    keys = "    odom_pose_noise: [0.001, 0.001, 0.0001]\n    odom_twist_noise: [0.01, 0, 0]\n    odom_drift: {translation_from_translation: 0.01}"
    first, again, other = _run(tmp_path, keys, 3), _run(tmp_path, keys, 3), _run(tmp_path, keys, 4)
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    assert len({row[0] for row in first.tolist()}) == 5  # every robot its own noise


def test_without_the_keys_odometry_is_ground_truth_and_draws_nothing(tmp_path: Path) -> None:
    world = _world(tmp_path, "    pub_rate: 50", robots=2, drive="OmniDrive")
    try:
        for each in _drives(world):
            each.command.linear, each.command.lateral = 0.7, 0.2
        world.step(50)
        assert np.abs(_errors(world)).max() == 0.0
        assert all(d.odometry.noise.stream.drawn == 0 and not d.odometry.noisy for d in _drives(world))
    finally:
        world.close()


@pytest.mark.parametrize(
    ("keys", "fault"),
    [
        ("    odom_drift: {translation_from_translation: -0.1}", 'key "translation_from_translation"'),
        ("    odom_drift: {rotation_from_rotation: .nan}", 'key "rotation_from_rotation"'),
        ("    odom_drift: {rotation_from_translation: lots}", 'key "rotation_from_translation"'),
        ("    odom_drift: {slip: 0.1}", "slip"),
        ("    odom_drift: 0.1", 'key "odom_drift"'),
        ("    odom_pose_noise: [0.1, -0.1, 0]", 'key "odom_pose_noise"'),
    ],
)
def test_bad_keys_are_one_line_naming_the_key(tmp_path: Path, keys: str, fault: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _world(tmp_path, keys, robots=1).close()
    assert fault in str(raised.value) and "\n" not in str(raised.value)
