"""The plugin API's naming rules (topics and frames in a model's namespace, every form the reader
accepts) and the update timer at rates whose period overflows a float."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from sim_server.core.plugins import PluginContext, UpdateTimer
from sim_server.core.timing.timekeeper import TimeKeeper


def context(namespace: str) -> PluginContext:
    """A plugin's context on a model in ``namespace`` (the world is not needed for names)."""
    return PluginContext("p", "T", world=None, model=SimpleNamespace(name="m", namespace=namespace))  # type: ignore[arg-type]


@pytest.mark.parametrize(("namespace", "topic", "expected"), [
    ("r1", "scan", "r1/scan"),
    ("/r1/", "scan", "r1/scan"),
    ("a/b", "x/y", "a/b/x/y"),
    ("r1", "/scan", "/scan"),
    ("r1", "~/scan", "~/scan"),  # the server node's own: rclpy makes it /sim_server/scan
    ("", "scan", "scan"),
    ("", "~/scan", "~/scan"),
])
def test_topics_in_a_namespace(namespace: str, topic: str, expected: str) -> None:
    assert context(namespace).topic(topic) == expected


@pytest.mark.parametrize(("namespace", "frame", "expected", "world"), [
    ("r1", "laser", "r1_laser", "laser"),
    ("r1", "/map", "map", "map"),
    ("", "laser", "laser", "laser"),
    ("r1", "a/b", "r1_a/b", "a/b"),
])
def test_frames_in_a_namespace_and_of_the_world(namespace: str, frame: str, expected: str, world: str) -> None:
    assert context(namespace).frame(frame) == expected and context(namespace).world_frame(frame) == world


@pytest.mark.parametrize("rate", [5e-324, 1e-300, 1e-305])
def test_a_rate_whose_period_overflows_fires_only_at_the_start(rate: float) -> None:
    timer = UpdateTimer(rate)
    time = TimeKeeper(0.01)
    fired = []
    for _ in range(100):
        fired.append(timer.check(time))
        time.advance()
    assert timer.period_ns is None and fired[0] and not any(fired[1:])


def test_a_slow_rate_whose_period_is_a_number_keeps_it() -> None:
    timer = UpdateTimer(1e-200)
    time = TimeKeeper(0.01)
    assert timer.period_ns == int(round(1e9 / 1e-200)) and timer.check(time)
    time.advance()
    assert not timer.check(time)
