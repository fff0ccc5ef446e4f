"""The live view in the ROS node: off unless asked; with ``foxglove:=true`` a client of the
protocol sees the world and the lasers scan for it though no ROS node subscribes, calls the
node's services and drives its robot (unless ``foxglove_control:=false``); ``foxglove_record``
writes MCAP; bad foxglove parameters stop the start with one line, as they do in a node made
without the live view (sim_server.node_view composes the two)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcap.reader import make_reader

from sim_server.core.errors import ConfigError
from test.conftest import REPO_ROOT
from test.live.client import Client
from test.ros.conftest import Harness, make_server

CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"


def test_off_unless_asked(ros_context) -> None:
    h = Harness(ros_context, CROWD_WORLD)
    try:
        assert h.server.live_view is None
    finally:
        h.close()


def test_a_client_sees_the_node_s_world_and_its_scans(ros_context) -> None:
    h = Harness(ros_context, CROWD_WORLD, foxglove=True, foxglove_port=0)
    try:
        view = h.server.live_view
        assert view.world is h.server.world and view.url.startswith("ws://localhost:")
        client = Client(view.url)
        try:
            topics = {"/scene", "/scene/static", "/scan"}
            client.until(lambda: topics <= client.topics(), between=lambda: h.run_ticks(2))
            client.subscribe(*topics)
            client.until(lambda: topics <= set(client.messages), between=lambda: h.run_ticks(5))
        finally:
            client.close()
        ids = {entity.id for topic in ("/scene", "/scene/static") for update in client.messages[topic]
               for entity in update.entities}
        assert {"layer/2d", "model/cleaner1", "crowd/people"} <= ids
        assert len(client.messages["/scan"][-1].ranges) == 1081  # scanned for the view: no ROS subscriber
        assert client.times
    finally:
        h.close()


def test_a_client_acts_as_the_node_s_services_do(ros_context) -> None:
    h = Harness(ros_context, CROWD_WORLD, foxglove=True, foxglove_port=0)
    try:
        client = Client(h.server.live_view.url)
        loop = lambda: h.run_ticks(2)  # noqa: E731
        try:
            assert client.call("/pause", {}, loop)["success"] and h.server.paused
            iterations = h.server.world.time.iterations
            stepped = client.call("/step_world", {"steps": 25}, loop)
            assert stepped["success"] and h.server.world.time.iterations == iterations + 25, stepped
            assert client.call("/move_model", {"name": "cleaner1", "pose": {"x": 14.0, "y": 1.0}}, loop)["success"]
            assert h.server.world.models["cleaner1"].pose.x == 14.0
            refused = client.call("/spawn_model", {"yaml_path": "/etc/passwd", "name": "p"}, loop)
            assert not refused["success"] and "outside the folders" in refused["message"]
            spawned = client.call("/spawn_model", {"yaml_path": "../demo/turtlebot.model.yaml", "name": "bot", "ns": "bot",
                                                   "pose": {"x": 20.0}}, loop)
            assert spawned["success"], spawned
            assert client.call("/resume", {}, loop)["success"] and not h.server.paused
            command = next(p.command for p in h.server.world.plugins.plugins_of(h.server.world.models["bot"])
                           if getattr(p, "command", None))
            client.publish(client.advertise("/bot/cmd_vel"), {"linear": {"x": 0.3}, "angular": {"z": 0.1}})
            client.until(lambda: (command.linear, command.angular) == (0.3, 0.1), loop)
            assert client.call("/reset_world", {}, loop)["success"] and "bot" not in h.server.world.models
        finally:
            client.close()
    finally:
        h.close()


def test_foxglove_control_false_lets_clients_only_watch(ros_context) -> None:
    h = Harness(ros_context, CROWD_WORLD, foxglove=True, foxglove_port=0, foxglove_control=False)
    try:
        client = Client(h.server.live_view.url)
        try:
            assert not {"services", "clientPublish"} & set(client.server_info["capabilities"])
        finally:
            client.close()
    finally:
        h.close()


def test_the_node_records_mcap_when_asked(ros_context, tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    h = Harness(ros_context, CROWD_WORLD, foxglove_record=str(path))
    try:
        assert h.server.live_view.url is None  # recording only: no server
        h.run_until(lambda: h.server.world.time.time_ns >= 500_000_000, "half a second of sim time")
    finally:
        h.close()
    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    counts = {summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()}
    assert counts["/scene"] >= 10 and counts["/tf"] >= 10 and counts["/scan"] >= 10


def test_a_ros2_recording_holds_messages_rclpy_reads(ros_context, tmp_path: Path) -> None:
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import LaserScan
    from tf2_msgs.msg import TFMessage

    path = tmp_path / "run.mcap"
    h = Harness(ros_context, CROWD_WORLD, foxglove_record=str(path), foxglove_record_encoding="ros2")
    try:
        h.run_until(lambda: h.server.world.time.time_ns >= 300_000_000, "0.3 s of sim time")
        laser = next(p for p in h.server.world.plugins.plugins_of(h.server.world.models["cleaner1"]) if hasattr(p, "scanner"))
        frame = laser.frame_id
    finally:
        h.close()
    with path.open("rb") as stream:
        messages = {}
        for schema, channel, message in make_reader(stream).iter_messages(topics=["/scan", "/tf"]):
            messages.setdefault(channel.topic, []).append((schema.name, message.data))
    assert {name for name, _ in messages["/scan"]} == {"sensor_msgs/msg/LaserScan"}
    scan = deserialize_message(messages["/scan"][-1][1], LaserScan)
    assert scan.header.frame_id == frame and len(scan.ranges) == 1081
    tree = {t.child_frame_id: t.header.frame_id for t in deserialize_message(messages["/tf"][-1][1], TFMessage).transforms}
    assert tree[frame] == "base" and tree["base"] == "map"


@pytest.mark.parametrize(
    ("params", "fault"),
    [
        ({"foxglove_port": 70000}, 'parameter "foxglove_port"'),
        ({"foxglove_port": "8765"}, 'parameter "foxglove_port"'),
        ({"foxglove_rate": 0.0}, 'parameter "foxglove_rate"'),
        ({"foxglove_address": "256.0.0.1"}, "cannot serve"),
        ({"foxglove_record": "/nonexistent/folder/run.mcap", "foxglove": False}, "cannot record"),
        ({"foxglove_record": "run.bag", "foxglove": False}, ".mcap"),
        ({"foxglove_record": "run.mcap", "foxglove_record_encoding": "protobuf", "foxglove": False}, "record_encoding"),
    ],
)
def test_bad_foxglove_parameters_stop_the_start_in_one_line(ros_context, params: dict, fault: str) -> None:
    arguments = {"foxglove": True, "foxglove_port": 0, **params}
    with pytest.raises(ConfigError) as raised:
        make_server(ros_context, world_path=str(CROWD_WORLD), update_rate=0.0, show_viz=False, **arguments)
    message = str(raised.value)
    assert fault in message and "\n" not in message


def test_a_node_made_without_the_live_view_refuses_the_foxglove_parameters_in_one_line(ros_context) -> None:
    from rclpy.parameter import Parameter

    from sim_server.ros.server_node import SimServerNode

    overrides = [Parameter("world_path", value=str(CROWD_WORLD)), Parameter("show_viz", value=False),
                 Parameter("foxglove", value=True), Parameter("foxglove_port", value=0)]
    with pytest.raises(ConfigError) as raised:
        SimServerNode(context=ros_context, parameter_overrides=overrides)  # no live_view given
    message = str(raised.value)
    assert "sim_server.node_view.live_view_of" in message and "\n" not in message
