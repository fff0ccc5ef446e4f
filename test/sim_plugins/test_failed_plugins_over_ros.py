"""A built-in plugin that fails to load, at any point of its initialisation, leaves nothing on
the node: no publisher, subscription, service, timer or client, no TF claim or static
transform. Generated from every plugin of the bundled models: an unknown key (refused after
the plugin made everything), a missing body, and each key given a value of the wrong type."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sim_server.core.errors import ConfigError
from sim_server.core.format.model_file import load_model_text
from sim_server.ros.tf_broadcast import broadcaster_for
from test.conftest import REPO_ROOT
from test.ros.conftest import Harness

DEMO = REPO_ROOT / "config" / "worlds" / "demo"
#: Plugins none of the bundled models carries, on the demo's turtlebot.
MORE = [
    {"type": "Bumper", "name": "bumper", "world_frame_id": "map", "topic": "bumps", "update_rate": 10},
    {"type": "Gps", "name": "gps", "body": "base"},
    {"type": "Camera", "name": "camera", "body": "base", "field": [4, 3], "pixels": [40, 30], "update_rate": 5,
     "origin": [0.5, 0, 0], "topic": "picture", "frame": "lens", "broadcast_tf": True, "always_publish": True},
    {"type": "Camera", "name": "up", "body": "base", "north_up": True},
]


def plugin_cases() -> list[tuple[Path, dict]]:
    cases = []
    for path in sorted(DEMO.glob("*.model.yaml")):
        for plugin in yaml.safe_load(path.read_text()).get("plugins", []):
            cases.append((path, plugin))
    cases += [(DEMO / "turtlebot.model.yaml", plugin) for plugin in MORE]
    return cases


def mutations(plugin: dict) -> list[tuple[str, dict]]:
    changed = [("an unknown key", {**plugin, "no_such_key": 1})]
    if "body" in plugin:
        changed.append(("a missing body", {**plugin, "body": "no_such_body"}))
    for key in plugin:
        if key not in ("type", "name"):
            changed.append((f"{key} of the wrong type", {**plugin, key: [[1], {"a": 2}]}))
    return changed


@pytest.fixture(scope="module")
def harness():
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    h = Harness(context, DEMO / "world.yaml", start_paused=True)
    broadcaster_for(h.server)  # the shared /tf and /tf_static publishers: made once, kept
    yield h
    h.close()
    rclpy.try_shutdown(context=context)


def footprint(harness: Harness) -> tuple:
    server = harness.server
    broadcaster = broadcaster_for(server)
    return (
        sorted(p.topic_name for p in server.publishers), sorted(s.topic_name for s in server.subscriptions),
        len(list(server.services)), len(list(server.timers)), len(list(server.clients)),
        sorted(broadcaster.claimed_frames), sorted(broadcaster._static_transforms),
    )


def with_plugin(path: Path, plugin: dict):
    data = yaml.safe_load(path.read_text())
    data["plugins"] = [plugin]
    return load_model_text(yaml.safe_dump(data), path)


@pytest.mark.parametrize("path, plugin", plugin_cases(), ids=lambda value: value["type"] if isinstance(value, dict) else value.stem)
def test_a_failing_plugin_leaves_nothing_on_the_node(harness, path: Path, plugin: dict) -> None:
    world = harness.server.world
    before = footprint(harness)
    world.add_model(with_plugin(path, plugin), "probe", "probe")  # as given, it loads
    world.delete_model("probe")
    assert footprint(harness) == before
    for what, changed in mutations(plugin):
        with pytest.raises(ConfigError):
            world.add_model(with_plugin(path, changed), "probe", "probe")
        assert footprint(harness) == before, what
        assert "probe" not in world.models
