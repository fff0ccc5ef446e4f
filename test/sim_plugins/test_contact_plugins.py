"""Bumper and BoolSensor against the reference's bumper_tests (in-process)."""

from __future__ import annotations

import pytest

from sim_server.core import ConfigError, Pose2D, World
from test.conftest import DEMO_WORLD, PLUGIN_TESTS, plugin

BUMPER = PLUGIN_TESTS / "bumper_tests"


def push(world: World, velocity: tuple[float, float], steps: int) -> None:
    body = world.models["robot1"].bodies["base_link_1"].physics_body
    for _ in range(steps):
        body.linearVelocity = velocity
        world.step()


def summary(bumper) -> list[tuple[str, str, str, str, int]]:
    return [(bumper.model.name, c.body_a, c.entity_b, c.body_b, len(bumper.forces(c, 0.01))) for c in bumper.last_collisions]


def test_bumper_collision_sequence() -> None:
    world = World.from_file(BUMPER / "collision_test" / "world.yaml", step_size=0.01)
    a, b = plugin(world, "robot1", "Bumper_A"), plugin(world, "robot1", "Bumper_B")
    assert (a.world_frame_id, b.world_frame_id) == ("map", "world")
    push(world, (0.0, 0.0), 100)
    push(world, (1.0, 0.0), 150)
    assert summary(a) == [("robot1", "base_link_1", "layer_1", "layer_1", 0)]
    assert summary(b) == []
    push(world, (1.0, 0.0), 50)
    assert summary(a) == [("robot1", "base_link_1", "layer_1", "layer_1", 0), ("robot1", "base_link_2", "layer_1", "layer_1", 1)]
    solid = a.last_collisions[1]
    assert a.forces(solid, 0.01)[0] > 0 and solid.normal == pytest.approx((1.0, 0.0), abs=1e-3)
    assert summary(b) == [("robot1", "base_link_2", "layer_1", "layer_1", 1)]
    assert b.last_collisions[0].normal == pytest.approx((1.0, 0.0), abs=1e-3)
    push(world, (-1.0, 0.0), 300)
    assert summary(a) == [] and summary(b) == []
    world.move_model("robot1", Pose2D(4.0, 0.0, 0.0))
    push(world, (-1.0, 0.0), 300)
    assert [c[1] for c in summary(a)] == ["base_link_1", "base_link_2"]
    assert a.last_collisions[1].normal == pytest.approx((-1.0, 0.0), abs=1e-3)
    assert b.last_collisions[0].normal == pytest.approx((-1.0, 0.0), abs=1e-3)
    world.close()


def test_bumper_unknown_excluded_body() -> None:
    with pytest.raises(ConfigError, match='key "exclude" names body "random_body", which does not exist'):
        World.from_file(BUMPER / "invalid_A" / "world.yaml")


def test_bool_sensor_latches_contacts(tmp_path) -> None:
    world = World.from_file(DEMO_WORLD)
    world.delete_model("walker1")  # it walks through the sensor now and then
    (tmp_path / "box.model.yaml").write_text(
        "bodies:\n  - name: box\n    type: static\n"
        "    footprints: [{type: polygon, density: 1, points: [[-0.3, -0.3], [0.3, -0.3], [0.3, 0.3], [-0.3, 0.3]]}]\n"
    )
    world.spawn_model(tmp_path / "box.model.yaml", "box", pose=Pose2D(2.0, 2.0, 0.0))
    sensor = plugin(world, "sensor", "detector0")
    home, obstacle = Pose2D(2.0, 0.0, 0.0), Pose2D(2.0, 2.0, 0.0)
    world.step(40)
    assert sensor.last_value is False
    world.move_model("sensor", obstacle)
    world.step(40)
    assert sensor.last_value is True and sensor.contacts == 1
    world.move_model("sensor", home)
    world.step(40)
    assert sensor.last_value is False
    # A contact that begins and ends between two messages (10 Hz: every 20 steps) is reported once.
    world.step(20 - world.time.iterations % 20)
    world.move_model("sensor", obstacle)
    world.step(2)
    world.move_model("sensor", home)
    world.step(2)
    assert sensor.contacts == 0
    world.step(20)
    assert sensor.last_value is True
    world.step(20)
    assert sensor.last_value is False
    world.close()
