"""RViz configurations generated for any world: displays, topics as the server offers them, a view
that covers the map, one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from rclpy.expand_topic_name import expand_topic_name
from rclpy.parameter import Parameter

from sim_plugins.camera import Camera
from sim_plugins.laser import Laser
from sim_plugins.range_sensor import RangeSensor
from sim_server.core.errors import ConfigError
from sim_server.core.world import World
from sim_server.ros.rviz_config import (
    Extent,
    View,
    expand_topic,
    line_width_for,
    readable_line_width,
    rviz_config,
    visible_extent,
    write_rviz_config,
)
from sim_server.ros.server_node import SimServerNode
from test.conftest import DATA_DIR, DEMO_WORLD, LOAD_WORLD_TESTS, REPO_ROOT

WORLDS = [
    DEMO_WORLD,
    REPO_ROOT / "config" / "worlds" / "levels" / "world.yaml",
    REPO_ROOT / "config" / "worlds" / "tunnel" / "world.yaml",
    REPO_ROOT / "config" / "worlds" / "vehicles" / "world.yaml",
    DATA_DIR / "levels" / "world.yaml",
    LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml",
]


def _topics_of(world: World, plugin_class: type) -> list[str]:
    """The topics the world's plugins of ``plugin_class`` publish on, sorted."""
    return sorted(
        plugin._publisher.topic_name
        for model in world.models.values()
        for plugin in world.plugins.plugins_of(model)
        if isinstance(plugin, plugin_class)
    )


def displays(config: dict, kind: str) -> list[dict]:
    return [d for d in config["Visualization Manager"]["Displays"] if d["Class"] == f"rviz_default_plugins/{kind}"]


def view_of(config: dict) -> View:
    current = config["Visualization Manager"]["Views"]["Current"]
    assert current["Class"] == "rviz_default_plugins/TopDownOrtho"
    return View(current["X"], current["Y"], current["Scale"])


def map_extent(world_path: Path) -> Extent:
    """Where the world's walls are, from the core's layers (every tile, loaded or not)."""
    world = World.from_file(world_path)
    try:
        points = []
        for layer in world.layers:
            edges = layer.edges.reshape(-1, 2)
            if len(edges):
                origin = layer.origin
                c, s = np.cos(origin.theta), np.sin(origin.theta)
                points.append(np.column_stack([origin.x + c * edges[:, 0] - s * edges[:, 1],
                                               origin.y + s * edges[:, 0] + c * edges[:, 1]]))
        every = np.vstack(points)
        low, high = every.min(axis=0), every.max(axis=0)
        return Extent(low[0], low[1], high[0], high[1])
    finally:
        world.close()


@pytest.mark.parametrize("namespace", ["", "/fleet/a"])
@pytest.mark.parametrize("world_path", WORLDS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_a_scan_display_per_laser_on_the_topic_the_server_publishes(ros_context, tmp_path, world_path, namespace) -> None:
    out = tmp_path / "world.rviz"
    # The width for the written view (whose scale the file holds rounded).
    assert write_rviz_config(str(world_path), str(out), "sim", namespace) == pytest.approx(
        readable_line_width(world_path), rel=1e-3
    )
    assert out.stat().st_mode & 0o777 == 0o644
    text = out.read_text()
    assert text.startswith("# ")
    config = yaml.safe_load(text)
    assert set(config) == {"Panels", "Visualization Manager", "Window Geometry"}
    manager = config["Visualization Manager"]
    assert manager["Global Options"]["Fixed Frame"] == "map"
    assert [d["Class"] for d in manager["Displays"][:4]] == [
        "rviz_default_plugins/Grid", "rviz_default_plugins/TF",
        "rviz_default_plugins/MarkerArray", "rviz_default_plugins/MarkerArray",
    ]
    server = SimServerNode(
        "sim", context=ros_context, namespace=namespace,
        parameter_overrides=[Parameter("world_path", value=str(world_path)), Parameter("update_rate", value=0.0)],
    )
    try:
        world = server.world
        lasers = _topics_of(world, Laser)
        scans = displays(config, "LaserScan")
        assert sorted(d["Topic"]["Value"] for d in scans) == lasers
        cameras = _topics_of(world, Camera)
        images = displays(config, "Image")
        assert sorted(d["Topic"]["Value"] for d in images) == cameras
        assert all(d["Topic"]["Reliability Policy"] == "Reliable" for d in images)
        assert all(d["Enabled"] and d["Topic"]["Reliability Policy"] == "Best Effort" for d in scans)
        markers = displays(config, "MarkerArray")
        assert tuple(d["Topic"]["Value"] for d in markers) == server.visualization.all_topics
        for display in markers:
            assert display["Topic"]["Durability Policy"] == "Transient Local" and display["Topic"]["Depth"] == 1
        offered = {name for name, _ in server.get_topic_names_and_types()}
        odometry = displays(config, "Odometry")
        assert all(d["Topic"]["Value"] in offered and not d["Enabled"] for d in odometry)
        drives = sorted(
            plugin.odometry.publishers[1].topic_name  # (ground truth, then the odometry)
            for model in world.models.values()
            for plugin in world.plugins.plugins_of(model)
            if getattr(plugin, "odometry", None) is not None and plugin.odometry.publishers
        )
        assert sorted(d["Topic"]["Value"] for d in odometry) == drives
        rangers = _topics_of(world, RangeSensor)
        ranges = displays(config, "Range")
        assert sorted(d["Topic"]["Value"] for d in ranges) == rangers
        assert all(d["Enabled"] and d["Topic"]["Reliability Policy"] == "Best Effort" for d in ranges)
        if world_path.parent.name == "vehicles":
            assert len(drives) == 2 and len(rangers) == 6
    finally:
        server.destroy_node()
    width, height = config["Window Geometry"]["Width"], config["Window Geometry"]["Height"]
    shown, walls = visible_extent(view_of(config), width, height), map_extent(world_path)
    assert shown.x_min <= walls.x_min and shown.y_min <= walls.y_min
    assert shown.x_max >= walls.x_max and shown.y_max >= walls.y_max
    # Not absurdly far out either: the map fills at least a third of the view on one axis.
    assert max(walls.width / shown.width, walls.height / shown.height) > 0.33


def test_the_shipped_configuration_is_the_demo_worlds(tmp_path) -> None:
    shipped = yaml.safe_load((REPO_ROOT / "config" / "sim.rviz").read_text())
    assert shipped == rviz_config(REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml")
    view = view_of(shipped)
    shown = visible_extent(view)
    # The office: 1310 x 505 pixels of 0.05 m from (-16.6, -6.65), wholly in view.
    assert shown.x_min <= -16.6 and shown.x_max >= -16.6 + 65.5 and shown.y_min <= -6.65 and shown.y_max >= -6.65 + 25.25
    # The server's default line width is at least 1.4 pixels there.
    from sim_server.ros.parameter_spec import DEFAULT_MARKER_LINE_WIDTH

    assert DEFAULT_MARKER_LINE_WIDTH * view.scale >= 1.4
    assert line_width_for(view.scale) * view.scale == pytest.approx(2.0)
    assert readable_line_width(REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml") == pytest.approx(
        2.0 / view.scale, rel=1e-3
    )


@pytest.mark.parametrize(
    "topic, node, namespace",
    [("scan", "sim_server", ""), ("/scan", "sim_server", "/a"), ("r1/scan", "n", "/a/b"), ("~/debug", "n", "/x"),
     ("~/debug/layers", "sim_server", ""), ("{node}/x", "n", "/ns"), ("r1/scan", "n", "a/")],
)
def test_topics_expand_as_rclpy_expands_them(topic: str, node: str, namespace: str) -> None:
    normalized = "/" + namespace.strip("/") if namespace.strip("/") else "/"
    assert expand_topic(topic, node, namespace) == expand_topic_name(topic, node, normalized)


def test_model_topics_follow_param_values(tmp_path) -> None:
    (tmp_path / "bot.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.3, density: 1}]\n"
        "plugins:\n  - {type: Laser, name: front, body: base, range: 5, topic: \"$eval param('scan_topic', 'scan')\","
        " angle: {min: -1, max: 1, increment: 0.1}}\n"
    )
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nmodels:\n  - {name: a, model: bot.model.yaml, namespace: ns_a}\n"
        "  - {name: b, model: bot.model.yaml, pose: [40, 30, 0]}\n"
    )
    config = rviz_config(tmp_path / "world.yaml", parameters={"scan_topic": "front_scan"})
    assert sorted(d["Topic"]["Value"] for d in displays(config, "LaserScan")) == ["/front_scan", "/ns_a/front_scan"]
    # No map: the view fits the models' positions.
    shown = visible_extent(view_of(config))
    assert shown.x_min <= 0 and shown.y_min <= 0 and shown.x_max >= 40 and shown.y_max >= 30


def test_a_private_topic_in_a_namespace_is_the_server_node_s(tmp_path) -> None:
    (tmp_path / "bot.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.3, density: 1}]\n"
        "plugins:\n  - {type: Laser, name: front, body: base, range: 5, topic: ~/front_scan, angle: {min: -1, max: 1, increment: 0.1}}\n"
    )
    (tmp_path / "world.yaml").write_text("properties: {}\nmodels:\n  - {name: a, model: bot.model.yaml, namespace: ns_a}\n")
    config = rviz_config(tmp_path / "world.yaml")
    assert [d["Topic"]["Value"] for d in displays(config, "LaserScan")] == ["/sim_server/front_scan"]


def test_errors_are_one_line(tmp_path) -> None:
    broken = tmp_path / "world.yaml"
    broken.write_text("properties: {}\nlayers:\n  - {name: w, map: missing.yaml}\n")
    for world, out in ((tmp_path / "nothing.yaml", tmp_path / "a.rviz"), (broken, tmp_path / "b.rviz"),
                       (DEMO_WORLD, tmp_path),  # the output is a folder
                       (DEMO_WORLD, tmp_path / "no_such_folder" / "d.rviz")):
        with pytest.raises(ConfigError) as raised:
            write_rviz_config(str(world), str(out))
        message = str(raised.value)
        assert "\n" not in message and message.startswith(f"no RViz configuration for {world}")
    assert list(tmp_path.iterdir()) == [broken]  # nothing half-written
    with pytest.raises(ConfigError, match="unexpected keyword"):
        write_rviz_config(str(DEMO_WORLD), str(tmp_path / "c.rviz"), colour="red")


def test_command_line(tmp_path) -> None:
    out = tmp_path / "demo.rviz"
    done = subprocess.run(
        [sys.executable, "-m", "sim_server.ros.rviz_config", str(DEMO_WORLD), str(out), "--namespace", "/sim"],
        capture_output=True, text=True, cwd=REPO_ROOT,
    )
    assert done.returncode == 0 and done.stdout == f"wrote {out}\n", done.stderr
    config = yaml.safe_load(out.read_text())
    assert [d["Topic"]["Value"] for d in displays(config, "LaserScan")] == ["/sim/scan"]
    failed = subprocess.run(
        [sys.executable, "-m", "sim_server.ros.rviz_config", str(tmp_path / "none.yaml"), str(out)],
        capture_output=True, text=True, cwd=REPO_ROOT,
    )
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1 and failed.stderr.startswith("rviz_config: error: no RViz configuration")


def test_worlds_with_crowds_get_a_pedestrians_display() -> None:
    crowd_world = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"
    displays = rviz_config(crowd_world)["Visualization Manager"]["Displays"]
    shown = [d for d in displays if d["Name"] == "Pedestrians"]
    assert len(shown) == 1 and shown[0]["Topic"]["Value"] == "/sim_server/debug/pedestrians"
    plain = rviz_config(DEMO_WORLD)["Visualization Manager"]["Displays"]
    assert not [d for d in plain if d["Name"] == "Pedestrians"]
