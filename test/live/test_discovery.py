"""One discovery of what a live view feeds and drives, by what plugins offer: the bundled
plugins are found as what they are (a Range, which casts rays but makes no scans, is no laser),
and a drive of a kind the view has never heard of is found by its velocity command, listed in
the layout and driven by the viewer."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sim_server.core import Pose2D, World
from sim_server.live.discovery import (
    CAMERA, LASER, ODOMETRY, absolute_topic, drive_command, drive_commands, sensor_kind, sensor_topics, world_plugins,
)
from sim_server.live.layout import world_layout, world_topics
from sim_server.live.teleop import Teleop
from test.conftest import DEMO_WORLD
from test.sim_plugins.sensor_worlds import robot_model

SONAR = robot_model("  - {type: Range, name: sonar, body: base}")


def test_the_bundled_plugins_are_found_as_what_they_are(tmp_path: Path) -> None:
    (tmp_path / "sonar.model.yaml").write_text(SONAR)
    world = World.from_file(DEMO_WORLD)
    try:
        world.spawn_model(DEMO_WORLD.parent / "turtlebot.model.yaml", "turtle", "turtle", Pose2D(3.0, 3.0, 0.0))
        world.spawn_model(tmp_path / "sonar.model.yaml", "sonar_bot", "sonar_bot", Pose2D(-3.0, 3.0, 0.0))
        kinds = {(p.model.name, p.context.name): sensor_kind(p) for p in world_plugins(world)}
        assert {key for key, kind in kinds.items() if kind is not None} == {
            ("cleaner1", "laser_front"), ("cleaner1", "camera"), ("cleaner1", "cleaner_drive"), ("turtle", "turtlebot_drive"),
        }
        assert kinds[("cleaner1", "laser_front")] == LASER and kinds[("cleaner1", "camera")] == CAMERA
        assert kinds[("cleaner1", "cleaner_drive")] == kinds[("turtle", "turtlebot_drive")] == ODOMETRY
        assert kinds[("sonar_bot", "sonar")] is None  # rays, but no scans
        commands = drive_commands(world)
        assert sorted(commands) == ["/cmd_vel", "/turtle/cmd_vel"]
        drives = [p for p in world_plugins(world) if drive_command(p) is not None]
        assert sorted(p.context.name for p in drives) == ["cleaner_drive", "turtlebot_drive"]
        assert [c for cs in commands.values() for c in cs] == [p.command for p in drives]
        lasers, cameras, topics = world_topics(world)
        assert (lasers, cameras, topics) == (["/scan"], ["/image_raw"], ["/cmd_vel", "/turtle/cmd_vel"])
        assert "/sonar_bot/range" not in json.dumps(world_layout(world))
        assert sensor_topics(world, ODOMETRY) == ["/odometry/filtered", "/turtle/odometry/filtered"]
    finally:
        world.close()


class _Command:
    """A velocity command of another make than sim_plugins' (what a drive of a new kind may carry:
    a TwistCommand)."""

    def __init__(self, topic: Any) -> None:
        self.topic = topic
        self.linear = 0.0
        self.angular = 0.0
        self.lateral = 0.0
        self.uses_lateral = False


class OmniDrive:
    """A drive plugin the view has never heard of."""

    def __init__(self, topic: Any) -> None:
        self.command = _Command(topic)


class _StandInWorld:
    """What the view reads of a world: its models, their plugins and its listeners."""

    def __init__(self, plugins: dict[str, list[Any]]) -> None:
        self.models = {name: SimpleNamespace(name=name, pose=Pose2D()) for name in plugins}
        self.plugins = SimpleNamespace(plugins_of=lambda model: plugins[model.name])
        self.listeners: list[Any] = []
        self.layers: list[Any] = []

    def add_listener(self, listener: Any) -> None:
        self.listeners.append(listener)

    def remove_listener(self, listener: Any) -> None:
        self.listeners.remove(listener)


def test_a_drive_of_a_new_kind_is_found_and_driven() -> None:
    omni, twin = OmniDrive("omni/cmd_vel"), OmniDrive("/omni/cmd_vel")
    not_drives = [SimpleNamespace(command=None), SimpleNamespace(command=SimpleNamespace(topic="a", linear=0.0)),
                  SimpleNamespace(command=_Command(7)), SimpleNamespace(topic_name="scan"),
                  SimpleNamespace(command=SimpleNamespace(topic="a", linear=0.0, angular=0.0))]  # no lateral: not a TwistCommand
    world: Any = _StandInWorld({"omni1": [omni], "omni2": [twin], "other": not_drives})
    assert [drive_command(p) for p in not_drives] == [None] * 5
    assert drive_commands(world) == {"/omni/cmd_vel": [omni.command, twin.command]}  # one topic, two drives
    assert world_topics(world) == ([], [], ["/omni/cmd_vel"])
    assert world_layout(world)["configById"]["Teleop!sim"]["topic"] == "/omni/cmd_vel"
    teleop = Teleop(world)
    try:
        teleop.advertised(1, 1, "/omni/cmd_vel", "json")
        teleop.message(1, 1, json.dumps({"linear": {"x": 0.4}, "angular": {"z": -0.2}}).encode())
        teleop.apply()
        assert (omni.command.linear, omni.command.angular) == (twin.command.linear, twin.command.angular) == (0.4, -0.2)
        teleop.unadvertised(1, 1)  # the client went: the drives stop
        teleop.apply()
        assert (omni.command.linear, omni.command.angular) == (0.0, 0.0) and teleop.dropped == 0
    finally:
        teleop.close()
    assert world.listeners == []


def test_topics_are_absolute() -> None:
    assert [absolute_topic(t) for t in ("scan", "/scan", "//r1/scan", "r1/cmd_vel", "~/scan")] == [
        "/scan", "/scan", "/r1/scan", "/r1/cmd_vel", "/sim_server/scan"]
