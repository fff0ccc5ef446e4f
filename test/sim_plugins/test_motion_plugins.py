"""Tween, ModelTfPublisher and TricycleDrive against the reference's tests (in-process)."""

from __future__ import annotations

import math

import pytest

from sim_server.core import ConfigError, Pose2D, World
from test.conftest import PLUGIN_TESTS, plugin

TWEEN = PLUGIN_TESTS / "tween_tests"
TF = PLUGIN_TESTS / "model_tf_publisher_tests"
TRICYCLE = PLUGIN_TESTS / "tricycle_drive_tests"


def xyt(pose: Pose2D) -> tuple[float, float, float]:
    return (pose.x, pose.y, pose.theta)


def tween_track(world_file: str, steps: int) -> list[tuple[float, float, float]]:
    world = World.from_file(TWEEN / world_file, step_size=0.5)
    body = world.models["robot1"].bodies["base"]
    track = [xyt(body.pose)]
    for _ in range(steps):
        world.step()
        track.append(xyt(body.pose))
    world.close()
    return track


def test_tween_once() -> None:
    track = tween_track("once.world.yaml", 3)
    expected = [(2, 1, 0), (2.5, 2.5, 1.0), (3, 4, 2.0), (3, 4, 2.0)]
    for got, want in zip(track, expected):
        assert got == pytest.approx(want, abs=1e-5)


def test_tween_yoyo() -> None:
    track = tween_track("yoyo.world.yaml", 5)
    assert [p[0] for p in track] == pytest.approx([0, 5, 10, 5, 0, 5], abs=1e-5)
    assert [p[1] for p in track] == pytest.approx([0, 5, 10, 5, 0, 5], abs=1e-5)
    assert [p[2] for p in track] == pytest.approx([0, 0.5, 1.0, 0.5, 0, 0.5], abs=1e-5)


def test_tween_loop() -> None:
    track = tween_track("loop.world.yaml", 6)
    assert [track[i][0] for i in (1, 3, 4, 5, 6)] == pytest.approx([2.5, 7.5, 10, 2.5, 5.0], abs=1e-5)
    assert [track[i][2] for i in (1, 3, 4, 5, 6)] == pytest.approx([0.25, 0.75, 1.0, 0.25, 0.5], abs=1e-5)


def tf_world(case: str) -> World:
    world = World.from_file(TF / case / "world.yaml", step_size=1.0)
    world.step(100)
    return world


def test_model_tf_publisher_a() -> None:
    world = tf_world("tf_publish_test_A")
    publisher = plugin(world, "robot1", "model_tf_publisher")
    assert publisher.timer.rate == 5000 and publisher.reference.name == "antenna"
    transforms = {(parent, child): pose for parent, child, pose in publisher.transforms()}
    antenna_world = transforms[("world", "my_robot_antenna")]
    assert xyt(antenna_world) == pytest.approx((8, 6, -0.575958653), abs=1e-4)
    base = transforms[("my_robot_antenna", "my_robot_base")]
    base_world = antenna_world.compose(base)
    assert xyt(base_world) == pytest.approx((8, 6, -0.575958653), abs=1e-4)
    for wheel, y in (("left_wheel", 1.0), ("right_wheel", -1.0)):
        relative = base.inverse().compose(transforms[("my_robot_antenna", f"my_robot_{wheel}")])
        assert xyt(relative) == pytest.approx((-0.25, y, 0.0), abs=1e-4)
    children = {child for _, child in transforms}
    assert "my_robot_front_bumper" not in children and "my_robot_rear_bumper" not in children
    world.close()


def test_model_tf_publisher_b_defaults() -> None:
    world = tf_world("tf_publish_test_B")
    publisher = plugin(world, "robot1", "model_tf_publisher")
    assert publisher.timer.rate == math.inf and publisher.reference.name == "base"
    transforms = {child: xyt(pose) for parent, child, pose in publisher.transforms()}
    expected = {"antenna": (0, 0, 0), "left_wheel": (-0.25, 1, 0), "right_wheel": (-0.25, -1, 0),
                "front_bumper": (2, 0, 0), "rear_bumper": (-2, 0, 0)}
    assert set(transforms) == set(expected)
    for child, pose in expected.items():
        assert transforms[child] == pytest.approx(pose, abs=1e-4)
    assert all(parent != "map" for parent, _, _ in publisher.transforms())
    world.close()


@pytest.mark.parametrize(("case", "body"), [("invalid_A", "random_body"), ("invalid_B", "random_body_1")])
def test_model_tf_publisher_unknown_bodies(case: str, body: str) -> None:
    with pytest.raises(ConfigError, match=f'names body "{body}", which does not exist'):
        World.from_file(TF / case / "world.yaml")


def drive(world: World, linear: float, angular: float, steps: int) -> None:
    command = plugin(world, "cleaner1", "cleaner_drive").command
    command.linear, command.angular = linear, angular
    world.step(steps)


def ground_truth(world: World):
    return plugin(world, "cleaner1", "cleaner_drive").odometry.last_truth


@pytest.mark.parametrize(("world_file", "reached"), [("world.yaml", 12.5), ("world2.yaml", 12.2)])
def test_tricycle_drives_within_velocity_limits(world_file: str, reached: float) -> None:
    world = World.from_file(TRICYCLE / world_file, step_size=0.01)
    drive(world, 0.0, 0.0, 100)
    assert ground_truth(world).pose.x == pytest.approx(12.0, abs=0.01)
    drive(world, 0.5, 0.0, 100)
    truth = ground_truth(world)
    assert truth.vx == pytest.approx(reached - 12.0, abs=0.01) and truth.wz == pytest.approx(0.0, abs=0.01)
    assert truth.pose.x == pytest.approx(reached, abs=0.01)
    drive(world, 0.0, 0.0, 100)
    assert ground_truth(world).vx == pytest.approx(0.0, abs=0.01)
    assert ground_truth(world).pose.x == pytest.approx(reached, abs=0.01)
    world.close()


def test_tricycle_steering_rate_limit() -> None:
    world = World.from_file(TRICYCLE / "world3.yaml", step_size=0.01)
    drive(world, 0.0, 0.0, 100)
    drive(world, 0.0, 0.5, 100)
    truth = ground_truth(world)
    assert truth.vx == pytest.approx(0.0, abs=0.01) and truth.pose.x == pytest.approx(12.0, abs=0.01)
    drive(world, 0.5, 0.0, 10)
    truth = ground_truth(world)
    assert truth.vx == pytest.approx(0.5, abs=0.01)
    assert truth.wz == pytest.approx(0.11, abs=0.01)
    assert truth.pose.x == pytest.approx(12 + math.cos(0.2) * 0.05, abs=0.01)
    assert truth.pose.y == pytest.approx(math.sin(0.2) * 0.05, abs=0.01)
    world.close()


def test_tween_trigger_mode(tmp_path) -> None:
    (tmp_path / "door.model.yaml").write_text(
        "bodies:\n  - name: door\n    type: kinematic\n    footprints: [{type: circle, radius: 0.2, density: 1}]\n"
        "plugins:\n  - {type: Tween, name: slide, body: door, mode: trigger, delta: [2, 0, 0], duration: 1.0,"
        " trigger_topic: open}\n"
    )
    (tmp_path / "world.yaml").write_text("properties: {}\nmodels:\n  - {name: door, model: door.model.yaml}\n")
    world = World.from_file(tmp_path / "world.yaml", step_size=0.25)
    slide = plugin(world, "door", "slide")
    door = world.models["door"].bodies["door"]
    world.step(4)
    assert door.pose.x == pytest.approx(0.0, abs=1e-9)  # the first step moves, then it returns
    slide.triggered = True
    world.step(6)
    assert door.pose.x == pytest.approx(2.0)
    slide.triggered = False
    world.step(2)
    assert door.pose.x == pytest.approx(1.5)
    world.close()
