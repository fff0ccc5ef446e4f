"""The robots' social metrics on ROS: one message per robot a second of sim time, the metrics of
sim_server.core.crowd.social_metrics by name, measured only while somebody subscribes."""

from __future__ import annotations

import math

import pytest

from sim_msgs.msg import SocialMetrics
from sim_server.core.crowd import world_metrics
from sim_server.core.crowd.social_metrics import SocialMetrics as CoreMetrics
from sim_server.ros.names import SOCIAL_METRICS_TOPIC
from test.ros.conftest import Harness

def test_one_message_per_robot_each_second_with_every_metric(crowd: Harness) -> None:
    received: list[SocialMetrics] = []
    topic = crowd.server.resolve_topic_name(SOCIAL_METRICS_TOPIC)
    assert topic.endswith("/social_metrics")
    crowd.client.create_subscription(SocialMetrics, topic, received.append, 50)
    crowd.run_until(lambda: len(received) >= 3, "social metrics")
    message = received[-1]
    assert message.robot == "cleaner1" and message.header.frame_id == "map"
    assert {m.robot for m in received} == {"cleaner1"}  # the world's one robot
    assert tuple(message.names) == CoreMetrics(1, 0.1).keys
    values = dict(zip(message.names, message.values))
    assert values["steps"] > 0 and values["time"] == pytest.approx(values["steps"] * 0.1)
    assert math.isfinite(values["min_person_gap"])  # 55 people in the office
    assert values["finished"] == 0.0 and math.isnan(values["path_efficiency"])
    first, second = received[-2].header.stamp, received[-1].header.stamp
    assert (second.sec - first.sec) * 10**9 + second.nanosec - first.nanosec == 1_000_000_000


def test_nothing_is_measured_without_subscribers(crowd: Harness, monkeypatch) -> None:
    measured = []
    monkeypatch.setattr(world_metrics.WorldSocialMetrics, "after_step", lambda self, time: measured.append(1))
    crowd.run_ticks(300)
    assert not measured


def test_a_reset_starts_the_episodes_again(crowd: Harness) -> None:
    received: list[SocialMetrics] = []
    crowd.client.create_subscription(SocialMetrics, crowd.server.resolve_topic_name(SOCIAL_METRICS_TOPIC),
                                     received.append, 50)
    crowd.run_until(lambda: len(received) >= 3, "social metrics")
    before = dict(zip(received[-1].names, received[-1].values))["steps"]
    crowd.server.world.reset()
    received.clear()
    crowd.run_until(lambda: len(received) >= 1, "social metrics after the reset")
    after = dict(zip(received[-1].names, received[-1].values))["steps"]
    assert after < before and after <= 10  # a second of 0.1 s measurements, from the reset
