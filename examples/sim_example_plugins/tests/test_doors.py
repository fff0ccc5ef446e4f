"""The Doors world plugin: the door follows its schedule (closed, opening, open, closing), can be
held open or closed and given back to its schedule, blocks a robot while closed and lets it
through while open; a bad configuration fails the world in one line naming the key, leaving no
door behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim_example_plugins import TWO_ROOMS
from sim_example_plugins.doors import CLOSED, CLOSING, OPEN, OPENING, Doors
from sim_server.core import ConfigError, World


def _doors(world: World) -> Doors:
    (doors,) = world.plugins.world_plugins
    return doors


def test_the_door_follows_its_schedule(world: World) -> None:
    doors = _doors(world)
    seen = []
    for _ in range(120):  # 12 s: closed 4 s, 1.5 s sliding, open 4 s, sliding back
        world.step(10)
        state = doors.state("door1")
        if not seen or seen[-1] != state:
            seen.append(state)
    assert seen == [CLOSED, OPENING, OPEN, CLOSING, CLOSED]
    assert abs(world.model("door1").pose.y) < 1e-4  # back where it closes the doorway


def test_a_held_door_stays_and_goes_back_to_its_schedule(world: World) -> None:
    doors = _doors(world)
    doors.hold("door1", True)
    world.step(300)
    assert doors.state("door1") == OPEN and abs(world.model("door1").pose.y - 1.35) < 1e-4
    world.step(1000)  # its schedule would have closed it by now
    assert doors.state("door1") == OPEN
    doors.follow_schedule("door1")  # at 13 s: 2 s into the 11 s schedule's closed part
    world.step(100)
    assert doors.state("door1") == CLOSING
    with pytest.raises(KeyError, match='no door named "door9"'):
        doors.hold("door9", True)


def _drive_to_the_right_room(world: World, seconds: float) -> float:
    drive = world.plugins.find(world.model("robot"), "drive")
    drive.command.linear = 0.5
    world.step(round(seconds / world.time.step_size))
    return world.model("robot").pose.x


def test_a_closed_door_blocks_the_robot_an_open_one_lets_it_through(world: World) -> None:
    doors = _doors(world)
    doors.hold("door1", False)
    x = _drive_to_the_right_room(world, 8.0)
    assert -0.35 < x < -0.25  # stopped at the door's face, its 0.25 m radius away
    doors.hold("door1", True)
    x = _drive_to_the_right_room(world, 8.0)
    assert x > 1.0  # through the doorway


@pytest.mark.parametrize(
    ("entry", "key"),
    [("{name: door1, closed: [0, 0, 0], open: [0, 0, 0]}", "open"),
     ("{name: door1, closed: [0, 0, 0], open: [0, 1, 0], speed: 0}", "speed"),
     ("{name: door1, closed: [0, 0, 0], open: [0, 1, 0], open_for: -1}", "open_for"),
     ("{name: door1, closed: [0, 0, .nan], open: [0, 1, 0]}", "closed"),
     ("{name: door1, closed: [0, 0, 0], open: [0, 1, 0], hinge: left}", "hinge"),
     ("{name: robot, closed: [0, 0, 0], open: [0, 1, 0]}", "robot")],
)
def test_a_bad_door_fails_the_world_in_one_line(tmp_path: Path, entry: str, key: str) -> None:
    text = TWO_ROOMS.read_text().split("    doors:\n")[0] + f"    doors:\n      - {entry}\n"
    for name in ("rooms.yaml", "rooms.dat", "door.model.yaml", "robot.model.yaml"):
        (tmp_path / name).write_text((TWO_ROOMS.parent / name).read_text())
    (tmp_path / "world.yaml").write_text(text)
    with pytest.raises(ConfigError) as raised:
        World.from_file(tmp_path / "world.yaml")
    message = str(raised.value)
    assert key in message and "\n" not in message, message
