"""Reset, state datapacks, joint motors, contacts, world-plugin phases and determinism, in-process."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import EntityError, Pose2D, World
from sim_server.core.errors import RequestError
from sim_server.core.state import joint_states, link_states, model_state
from test.conftest import DEMO_WORLD, LOAD_WORLD_TESTS, plugin


def test_reset_restores_the_loaded_state() -> None:
    world = World.from_file(DEMO_WORLD, seed=3)
    loaded = {name: model.pose for name, model in world.models.items()}
    drive = plugin(world, "cleaner1", "cleaner_drive")
    drive.command.linear, drive.command.angular = 0.8, 0.3
    world.step(300)
    world.spawn_model("turtlebot.model.yaml", "visitor", pose=Pose2D(1.0, 1.0, 0.0))
    world.move_model("walker1", Pose2D(5.0, 5.0, 1.0))
    world.reset()
    assert world.time.time_ns == 0 and world.time.iterations == 0
    assert set(world.models) == set(loaded)
    for name, pose in loaded.items():
        now = world.models[name].pose
        assert (now.x, now.y, now.theta) == pytest.approx((pose.x, pose.y, pose.theta), abs=1e-6)
    fresh = plugin(world, "cleaner1", "cleaner_drive")
    assert fresh is not drive and fresh.command.linear == 0.0 and fresh.speed == 0.0
    world.step(10)
    world.close()


def test_model_link_and_joint_states_match_physics() -> None:
    world = World.from_file(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml")
    model = world.models["turtlebot2"]
    world.set_model_state("turtlebot2", Pose2D(3.0, 4.5, 0.5), 0.4, -0.2, 0.1)
    state = model_state(model)
    base = model.bodies["base"].physics_body
    assert (state.x, state.y, state.theta) == pytest.approx((3.0, 4.5, 0.5), abs=1e-5)
    assert (state.vx, state.vy, state.wz) == pytest.approx((0.4, -0.2, 0.1), abs=1e-5)
    links = {link.name: link for link in link_states(model)}
    assert set(links) == {f"turtlebot2::{name}" for name in model.bodies}
    wheel = links["turtlebot2::left_wheel"]
    physics = model.bodies["left_wheel"].physics_body
    assert (wheel.x, wheel.y, wheel.theta) == pytest.approx((physics.position.x, physics.position.y, physics.angle))
    # Rigid motion: the wheel 1 m behind the base (turned 0.5 rad) moves with v + w x r.
    rx, ry = physics.position.x - base.position.x, physics.position.y - base.position.y
    assert (wheel.vx, wheel.vy) == pytest.approx((0.4 - 0.1 * ry, -0.2 + 0.1 * rx), abs=1e-5)
    joints = {joint.name: joint for joint in joint_states(model, world.time.step_size)}
    assert set(joints) == {"turtlebot2::tail_revolute", "turtlebot2::antenna_revolute"}
    world.close()


def test_joint_motor_turns_a_joint(tmp_path: Path) -> None:
    (tmp_path / "arm.model.yaml").write_text(
        "bodies:\n"
        "  - {name: base, type: static, footprints: [{type: circle, radius: 0.2, density: 1}]}\n"
        "  - {name: arm, footprints: [{type: polygon, density: 1, points: [[0, -0.05], [1, -0.05], [1, 0.05], [0, 0.05]]}]}\n"
        "joints:\n"
        "  - {name: shoulder, type: revolute, bodies: [{name: base, anchor: [0, 0]}, {name: arm, anchor: [0, 0]}]}\n"
    )
    (tmp_path / "world.yaml").write_text("properties: {}\nmodels:\n  - {name: arm, model: arm.model.yaml}\n")
    world = World.from_file(tmp_path / "world.yaml", step_size=0.01)
    world.set_joint_motor("arm", "shoulder", True, 2.0, 100.0)
    world.step(50)
    (shoulder,) = joint_states(world.models["arm"], 0.01)
    assert shoulder.name == "arm::shoulder"
    assert shoulder.velocity == pytest.approx(2.0, rel=1e-3) and shoulder.position == pytest.approx(1.0, rel=0.05)
    world.close()
    world = World.from_file(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml", step_size=0.01)
    with pytest.raises(RequestError, match="weld joint, not revolute"):
        world.set_joint_motor("turtlebot1", "left_wheel_weld", True, 1.0, 1.0)
    with pytest.raises(EntityError, match='has no joint named "nope"'):
        world.set_joint_motor("turtlebot1", "nope", True, 1.0, 1.0)
    with pytest.raises(RequestError, match="max_torque"):
        world.set_joint_motor("turtlebot1", "tail_revolute", True, 1.0, -1.0)
    world.close()


def test_bad_model_states_are_refused() -> None:
    world = World.from_file(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml")
    before = world.models["turtlebot1"].pose
    with pytest.raises(RequestError, match=r"twist \(nan, 0, 0\) must be finite"):
        world.set_model_state("turtlebot1", Pose2D(1.0, 1.0, 0.0), math.nan, 0.0, 0.0)
    assert world.models["turtlebot1"].pose == before
    with pytest.raises(EntityError, match='model with name "ghost" does not exist'):
        world.set_model_state("ghost", Pose2D(), 0.0, 0.0, 0.0)
    world.close()


def test_contacts_list_touching_pairs(tmp_path: Path) -> None:
    world = World.from_file(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml")
    world.step(2)
    pairs = {(c.entity_a, c.entity_b) for c in world.contacts()} | {(c.entity_b, c.entity_a) for c in world.contacts()}
    assert ("turtlebot1", "turtlebot1") in pairs or ("turtlebot1", "2d") in pairs
    assert all(len(c.points) <= 2 for c in world.contacts())
    world.close()


def run_seeded(seed: int | None, steps: int = 1000) -> tuple[list[np.ndarray], list[tuple]]:
    world = World.from_file(DEMO_WORLD, seed=seed)
    drive = plugin(world, "cleaner1", "cleaner_drive")
    laser = plugin(world, "cleaner1", "laser_front")
    scans, odometry = [], []
    for step in range(steps):
        drive.command.linear, drive.command.angular = 0.6, 0.4 * math.sin(step / 100.0)
        world.step()
        if laser.last_ranges is not None and (not scans or laser.last_ranges is not scans[-1]):
            scans.append(laser.last_ranges)
        noisy = drive.odometry.last_odometry
        odometry.append((noisy.pose.x, noisy.pose.y, noisy.pose.theta, noisy.vx, noisy.wz))
    world.close()
    return scans, odometry


def test_two_seeded_runs_are_identical() -> None:
    scans_a, odometry_a = run_seeded(42)
    scans_b, odometry_b = run_seeded(42)
    assert len(scans_a) == len(scans_b) > 100
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(scans_a, scans_b))
    assert odometry_a == odometry_b
    scans_c, _ = run_seeded(7, steps=50)
    assert not np.array_equal(scans_a[0], scans_c[0], equal_nan=True)
