"""Shared by the debug marker tests: the all-layers and all-models topics, a collector of what they
send, and what RViz needs of a MarkerArray."""

from __future__ import annotations

from collections import defaultdict

import pytest
from visualization_msgs.msg import Marker, MarkerArray

from test.ros.conftest import Harness
from test.ros.test_server_node import LATCHED

LAYERS = "/sim_server/debug/layers"
MODELS = "/sim_server/debug/models"
LINES = (Marker.LINE_LIST, Marker.LINE_STRIP)


class Collector:
    """Every MarkerArray received on the topics subscribed through it, by topic."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.messages: dict[str, list[MarkerArray]] = defaultdict(list)

    def watch(self, *topics: str) -> "Collector":
        for topic in topics:
            self.harness.client.create_subscription(MarkerArray, topic, self.messages[topic].append, LATCHED)
        return self

    def last(self, topic: str) -> MarkerArray:
        return self.messages[topic][-1]

    def wait(self, topic: str, condition=lambda array: True, what: str = "markers") -> MarkerArray:
        """Run the server until the newest message on ``topic`` satisfies ``condition``."""
        self.harness.run_until(lambda: bool(self.messages[topic]) and condition(self.messages[topic][-1]), what)
        return self.messages[topic][-1]

    def all_markers(self):
        for arrays in self.messages.values():
            for array in arrays:
                yield from array.markers


def added(array: MarkerArray) -> dict[str, list[Marker]]:
    """The ADD markers of an array by namespace."""
    result: dict[str, list[Marker]] = defaultdict(list)
    for marker in array.markers:
        if marker.action == Marker.ADD:
            result[marker.ns].append(marker)
    return result


def deleted(array: MarkerArray) -> dict[str, set[int]]:
    result: dict[str, set[int]] = defaultdict(set)
    for marker in array.markers:
        if marker.action == Marker.DELETE:
            result[marker.ns].add(marker.id)
    return result


def check_array(array: MarkerArray) -> None:
    """What RViz needs of a MarkerArray: unique (ns, id), no empty or odd line lists, unit quaternions."""
    keys = [(marker.ns, marker.id) for marker in array.markers if marker.action in (Marker.ADD, Marker.DELETE)]
    assert len(keys) == len(set(keys)), "duplicate (ns, id)"
    for marker in array.markers:
        if marker.action != Marker.ADD:
            continue
        if marker.type in LINES:
            assert len(marker.points) >= 2
        if marker.type == Marker.LINE_LIST:
            assert len(marker.points) % 2 == 0
        q = marker.pose.orientation
        assert q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w == pytest.approx(1.0)


def count_rounds(harness: Harness) -> list[int]:
    """Count the refresh rounds of the server's markers (wraps publish_models)."""
    visualization = harness.server.visualization
    rounds = [0]
    original = visualization.publish_models

    def counted() -> None:
        original()
        rounds[0] += 1

    visualization.publish_models = counted
    return rounds
