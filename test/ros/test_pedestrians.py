"""The pedestrians on ROS: one states message and one marker array for all of them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from visualization_msgs.msg import Marker, MarkerArray

from sim_msgs.msg import Pedestrians
from sim_server.ros.pedestrians import MARKERS_TOPIC, PEDESTRIANS_TOPIC
from test.ros.conftest import Harness

def test_every_pedestrian_in_one_states_message(crowd: Harness) -> None:
    received: list[Pedestrians] = []
    topic = crowd.server.resolve_topic_name(PEDESTRIANS_TOPIC)
    crowd.client.create_subscription(Pedestrians, topic, received.append, 10)
    crowd.run_until(lambda: len(received) >= 3, "pedestrian states")
    message = received[-1]
    people = crowd.server.world.crowds.named("people")
    count = len(message.names)
    assert count >= 55 and all(len(getattr(message, key)) == count for key in (
        "crowds", "x", "y", "yaw", "vx", "vy", "radius", "group", "state"))
    assert set(message.crowds) == {"people"} and message.header.frame_id == "map"
    assert message.names[0] == "people_0" and message.radius[0] == pytest.approx(0.3)
    assert all(math.isfinite(v) for v in list(message.x) + list(message.vx))
    assert {Pedestrians.WALKING, Pedestrians.STANDING} <= set(message.state)  # two stand and chat
    assert max(message.group) >= 0  # the group doing rounds
    # stamped with sim time, one crowd update apart (25 Hz)
    first, second = received[-2].header.stamp, received[-1].header.stamp
    assert (second.sec - first.sec) * 10**9 + second.nanosec - first.nanosec == 40_000_000
    assert people.people.count == len(people.names())


def test_markers_draw_each_crowd_as_one_list(crowd: Harness) -> None:
    received: list[MarkerArray] = []
    topic = crowd.server.resolve_topic_name(MARKERS_TOPIC)
    crowd.client.create_subscription(MarkerArray, topic, received.append, 10)
    crowd.run_until(lambda: len(received) >= 2, "pedestrian markers")
    markers = received[-1].markers
    assert [(m.ns, m.id, m.type) for m in markers] == [("people", 0, Marker.SPHERE_LIST), ("people", 1, Marker.LINE_LIST)]
    discs, headings = markers
    assert len(discs.points) >= 55 and len(headings.points) == 2 * len(discs.points)
    assert discs.scale.x == pytest.approx(0.6) and discs.header.frame_id == "map"


def test_nothing_is_built_without_subscribers(crowd: Harness, monkeypatch) -> None:
    built = []
    people = crowd.server.world.crowds.named("people")
    monkeypatch.setattr(people, "snapshot", lambda: built.append(1))
    crowd.run_ticks(200)
    assert not built


def test_a_world_without_crowds_publishes_nothing(ros_context, tmp_path: Path) -> None:
    from test.conftest import LOAD_WORLD_TESTS

    h = Harness(ros_context, LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml")
    try:
        received: list[Pedestrians] = []
        h.client.create_subscription(Pedestrians, h.server.resolve_topic_name(PEDESTRIANS_TOPIC), received.append, 10)
        h.run_ticks(300)
        assert not received
    finally:
        h.close()


def test_delete_model_deletes_pedestrians_too(crowd: Harness) -> None:
    from sim_msgs.srv import DeleteModel

    response = crowd.call(DeleteModel, "/delete_model", DeleteModel.Request(name="people_1"))
    assert response.success and "pedestrian" in response.message
    assert crowd.server.world.crowds.find("people_1") is None
    again = crowd.call(DeleteModel, "/delete_model", DeleteModel.Request(name="people_1"))
    assert not again.success
