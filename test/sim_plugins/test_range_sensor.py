"""Range: against walls at known distances the nearest hit in the cone is the range; nothing in
range is +inf and too close is -inf (REP 117); the cone's width decides what is seen; many
rangers cast in one call give what each alone gives; bad keys (topics and frames ROS refuses
among them) are one line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sim_server.core import World
from sim_server.core.errors import ConfigError
from test.sim_plugins.sensor_worlds import robot_model, sensor_world

SONAR = """  - type: Range
    name: sonar
    body: base
    update_rate: .inf
{keys}"""


def _world(folder: Path, keys: str = "", walls: tuple = ((2.0, -1.0, 1.0),), robots: int = 1) -> World:
    """Robots at (0, 20 k) facing +x; each wall (x, y0, y1) is a segment of a layer, in front of
    every robot."""
    segments = [(x, y0, x, y1) for x, y0, y1 in walls]
    return sensor_world(folder, [robot_model(SONAR.format(keys=keys))], segments, robots)


def _rangers(world: World) -> list:
    return [p for model in world.models.values() for p in world.plugins.plugins_of(model) if p.context.name == "sonar"]


@pytest.mark.parametrize(("walls", "keys", "expected"), [
    (((2.0, -1.0, 1.0),), "", 2.0),
    (((2.0, -1.0, 1.0),), "    origin: [0.3, 0, 0]", 1.7),
    (((6.0, -1.0, 1.0),), "", math.inf),  # beyond range_max (4 m)
    (((0.12, -1.0, 1.0),), "    range_min: 0.2", -math.inf),  # too close
    # off-axis, inside the cone: the ray at 0.3 rad meets it first, 1 / cos(0.3) m along
    (((2.0, -1.0, 1.0), (1.0, 0.3, 0.5)), "    field_of_view: 0.8\n    beams: 9", 1.0 / math.cos(0.3)),
    (((2.0, -1.0, 1.0), (1.0, 0.5, 0.7)), "    field_of_view: 0.4\n    beams: 9", 2.0),  # off-axis, outside it
])
def test_the_range_is_the_nearest_hit_in_the_cone(tmp_path: Path, walls: tuple, keys: str, expected: float) -> None:
    world = _world(tmp_path, keys, walls)
    try:
        world.step(2)
        ranger = _rangers(world)[0]
        assert ranger.last_range == pytest.approx(expected, abs=1e-4) and ranger.last_range_ns == world.time.time_ns - 10_000_000
    finally:
        world.close()


def test_many_rangers_in_one_call_give_what_each_gives(tmp_path: Path) -> None:
    world = _world(tmp_path, "    beams: 3", walls=((1.5, -1.0, 1.0),), robots=12)
    try:
        world.step(2)
        assert [r.last_range for r in _rangers(world)] == pytest.approx([1.5] * 12, abs=1e-4)
    finally:
        world.close()


@pytest.mark.parametrize(("keys", "fault"), [
    ("    beams: 0", "beams"), ("    beams: 100000", "beams"), ("    field_of_view: -1", "field_of_view"),
    ("    range_min: 5", "range_min"), ("    radiation_type: laser", "radiation_type"), ("    range_max: .nan", "range_max"),
    ("    layers: [nope]", "layers"), ('    topic: ""', "topic"), ("    topic: /a//b", "topic"), ("    topic: 1abc", "topic"),
    ('    topic: "bad topic!!"', "topic"), ("    topic: " + "x" * 300, "topic"), ('    frame: ""', "frame"),
    ('    frame: "a b"', "frame"), ("    frame: " + "f" * 300, "frame"),
])
def test_bad_keys_are_one_line_naming_the_key(tmp_path: Path, keys: str, fault: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _world(tmp_path, keys).close()
    assert f'key "{fault}"' in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("keys", ["    field_of_view: 0", "    field_of_view: 0.0", "    field_of_view: 5e-324",
                                  "    field_of_view: 1e-7\n    beams: 2"])
def test_a_cone_too_narrow_for_several_beams_is_one_line_naming_both(tmp_path: Path, keys: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _world(tmp_path, keys).close()
    message = str(raised.value)
    assert 'key "field_of_view"' in message and "beams: " in message and "failed to initialise" not in message
    assert "\n" not in message


@pytest.mark.parametrize("fov", ["0", "5e-324", "0.5"])
def test_one_beam_is_a_single_ray_straight_ahead_whatever_the_cone(tmp_path: Path, fov: str) -> None:
    world = _world(tmp_path, f"    field_of_view: {fov}\n    beams: 1", walls=((2.0, -0.1, 0.1),))
    try:
        world.step(2)
        ranger = _rangers(world)[0]
        assert list(ranger.scanner.local_angles) == [0.0] and ranger.last_range == pytest.approx(2.0, abs=1e-4)
    finally:
        world.close()


@pytest.mark.parametrize(("keys", "topic", "frame"), [
    ("    topic: /top/sonar_1\n    frame: /sonar_link", "/top/sonar_1", "sonar_link"),
    ("    topic: front/range\n    frame: front", "r0/front/range", "r0_front"),
])
def test_topics_and_frames_as_ros_names_them(tmp_path: Path, keys: str, topic: str, frame: str) -> None:
    world = _world(tmp_path, keys)
    try:
        ranger = _rangers(world)[0]
        assert (ranger.topic_name.lstrip("/"), ranger.frame_id) == (topic.lstrip("/"), frame)
    finally:
        world.close()


def test_over_ros_the_range_is_published_as_sensor_msgs_range(ros_context, tmp_path: Path) -> None:
    from sensor_msgs.msg import Range

    from test.ros.conftest import Harness

    _world(tmp_path, "    radiation_type: infrared\n    field_of_view: 0.3").close()
    harness = Harness(ros_context, tmp_path / "world.yaml")
    try:
        got: list = []
        harness.client.create_subscription(Range, "/r0/range", got.append, 10)
        harness.run_until(lambda: len(got) >= 2, "Range messages")
    finally:
        harness.close()
    message = got[-1]
    assert message.header.frame_id == "r0_sonar" and message.radiation_type == Range.INFRARED
    assert (message.field_of_view, message.min_range, message.max_range) == pytest.approx((0.3, 0.02, 4.0))
    assert message.range == pytest.approx(2.0, abs=1e-4)
