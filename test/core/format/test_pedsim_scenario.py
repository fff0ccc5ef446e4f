"""pedsim scenario files: files written in pedsim's format read to the expected dataclasses, the
structures of pedsim's bundled scenarios, limits at their bounds, and generated abuse (every
attribute of every element given hostile values, removed, duplicated; elements removed,
duplicated, renamed, unknown ones added; broken XML, entity bombs, external entities, special
files), each refused in one line naming the file and the line, quickly and in bounded memory."""

from __future__ import annotations

import dataclasses
import math
import os
import tracemalloc
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import pytest

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format import pedsim_scenario
from sim_server.core.format.pedsim_scenario import (
    AgentCluster,
    AgentType,
    Attraction,
    Obstacle,
    PedsimScenario,
    Queue,
    Waypoint,
    WaypointBehaviour,
    read_pedsim_scenario,
)
from test.conftest import DATA_DIR

DATA = DATA_DIR / "pedsim"
ADULT, CHILD, ROBOT, ELDER = AgentType.ADULT, AgentType.CHILD, AgentType.ROBOT, AgentType.ELDER


def refused(path: Path, line: int | None = None) -> str:
    """The error reading ``path`` gives: one line naming the file (at ``line`` when given)."""
    with pytest.raises(ConfigError) as raised:
        read_pedsim_scenario(path)
    message = str(raised.value)
    assert "\n" not in message and len(message) < 1000, message
    if line is None:
        assert str(path) in message, message
    else:
        assert message.startswith(f"{path}:{line}: "), message
    return message


def write(tmp_path: Path, content: str | bytes, name: str = "scenario.xml") -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def scene(*lines: str) -> str:
    """A scenario of ``lines`` (one element each): the declaration is line 1, <scenario> line 2,
    the first of ``lines`` line 3."""
    return '<?xml version="1.0" encoding="UTF-8"?>\n<scenario>\n' + "".join(f"{line}\n" for line in lines) + "</scenario>\n"


# ------------------------------------------------------------------------------------ files read
def test_a_corridor_with_two_waypoints_and_a_cluster() -> None:
    scenario = read_pedsim_scenario(DATA / "corridor.xml")
    assert scenario == PedsimScenario(
        path=DATA / "corridor.xml",
        obstacles=(Obstacle(0, 0, 20, 0), Obstacle(0, 4, 20, 4)),
        waypoints=(Waypoint("west_end", 1.5, 2, 1), Waypoint("east_end", 18.5, 2, 1)),
        agents=(AgentCluster(4, 2, 6, 4, 2, ADULT, ("east_end", "west_end")),),
    )
    assert [item.line for item in (*scenario.obstacles, *scenario.waypoints, *scenario.agents)] == [5, 6, 8, 9, 11]
    assert scenario.people == 6
    assert scenario.place("east_end") is scenario.waypoints[1]
    with pytest.raises(KeyError):
        scenario.place("nowhere")


def test_a_queue_scene() -> None:
    scenario = read_pedsim_scenario(DATA / "queue.xml")
    assert scenario.queues == (Queue("counter", 20, 8, 0.0), Queue("gate", 12, 14, math.pi / 2))
    assert scenario.waypoints == (Waypoint("entrance", 2, 8, 1.5), Waypoint("platform", 12, 2, 2))
    assert scenario.agents == (
        AgentCluster(4, 8, 12, 2, 4, ADULT, ("entrance", "counter", "gate", "platform")),
        AgentCluster(6, 4, 3, 1, 1, CHILD, ("gate", "platform")),
    )
    assert isinstance(scenario.place("gate"), Queue)  # named by <addwaypoint>: pedsim queues there too
    assert len(scenario.obstacles) == 4 and scenario.robots == () and scenario.attractions == ()


def test_an_attraction_scene() -> None:
    scenario = read_pedsim_scenario(DATA / "shopping.xml")
    assert scenario.attractions == (
        Attraction("bakery", 10, 10, 6, 3, 5),
        Attraction("bookshop", 28, 10, 8, 3.5, 50),
        Attraction("board", 20, 1, 4, 1, 0),
    )
    assert scenario.agents == (
        AgentCluster(5, 6, 8, 3, 3, ADULT, ("east", "west")),
        AgentCluster(20, 6, 4, 6, 2, ELDER, ("west",)),
    )


def test_the_robot_agent_is_kept_apart() -> None:
    scenario = read_pedsim_scenario(DATA / "robot.xml")
    assert scenario.robots == (AgentCluster(1, 1, 1, 0, 0, ROBOT, ("robot_start", "robot_goal")),)
    assert scenario.agents == (AgentCluster(7.5, 3, 5, 4, 2, ADULT, ("north", "south")),)
    assert scenario.people == 5
    assert scenario.obstacles[0] == Obstacle(-0.5, -0.5, 15.5, -0.5)


def test_every_element_and_attribute_and_the_ways_pedsim_writes_them() -> None:
    scenario = read_pedsim_scenario(DATA / "every_feature.xml")
    assert scenario == PedsimScenario(
        path=DATA / "every_feature.xml",
        obstacles=(Obstacle(0, 0, 30, 0), Obstacle(30, 0, 30, 20), Obstacle(30, 20, -0.5, 20), Obstacle(-0.5, 20, -0.5, 0)),
        waypoints=(
            Waypoint("plain", 2, 2, 1.5, WaypointBehaviour.SIMPLE),
            Waypoint("simple", 4, 2, 2, WaypointBehaviour.SIMPLE),
            Waypoint("source", 6, 2, 2, WaypointBehaviour.SOURCE),
            Waypoint("sink", 28, 18, 10, WaypointBehaviour.SINK),
            Waypoint("caf\u00e9 & bar", 7, 12.5, 0.5),
        ),
        queues=(
            Queue("east", 20, 10, 0.0),
            Queue("north", 21, 10, math.pi / 2),
            Queue("south", 22, 10, -math.pi / 2),
            Queue("round", 23, 10, math.pi / 2),
            Queue("west", 24, 10, math.pi),
        ),
        attractions=(Attraction("shop", 15, 15, 10, 4, 2), Attraction("window", 15, 0.5, 0, 0, 0.25)),
        agents=(
            AgentCluster(5, 5, 3, 0, 0, ADULT, ("plain",)),
            AgentCluster(10, 10, 7, 4, 2.5, CHILD, ("simple", "east", "north", "caf\u00e9 & bar", "sink")),
            AgentCluster(12, 12, 2, 1, 1, ELDER, ()),
            AgentCluster(14, 14, 0, 0, 0, ADULT, ()),
        ),
        robots=(AgentCluster(1, 19, 1, 0, 0, ROBOT, ("source", "west")),),
    )
    assert scenario.obstacles[3].line == 8  # a start tag over five lines: the line it starts on
    assert scenario.agents[1].line == 31


@pytest.mark.parametrize("variant", ["crlf", "bom", "single-quotes", "tabs", "one-line"])
def test_layout_does_not_change_what_is_read(tmp_path: Path, variant: str) -> None:
    text = (DATA / "corridor.xml").read_text()
    changed: str | bytes = {
        "crlf": text.replace("\n", "\r\n"),
        "single-quotes": text.replace('"', "'"),
        "tabs": text.replace("  ", "\t").replace(" x", "\t x"),
        "one-line": text.replace("\n", " ").replace("?> ", "?>"),
    }.get(variant, b"\xef\xbb\xbf" + text.encode())
    scenario = read_pedsim_scenario(write(tmp_path, changed))
    assert dataclasses.replace(scenario, path=DATA / "corridor.xml") == read_pedsim_scenario(DATA / "corridor.xml")


@pytest.mark.parametrize(("degrees", "radians"), [
    ("0", 0.0), ("90", math.pi / 2), ("95", math.radians(95)), ("180", math.pi), ("-180", math.pi),
    ("270", -math.pi / 2), ("540", math.pi), ("-450", -math.pi / 2), ("359.5", math.radians(-0.5)),
])
def test_queue_directions_are_radians_wrapped_as_pedsim_wraps_them(tmp_path: Path, degrees: str, radians: float) -> None:
    path = write(tmp_path, scene(f'<queue id="q" x="0" y="0" direction="{degrees}"/>'))
    direction = read_pedsim_scenario(path).queues[0].direction
    assert direction == pytest.approx(radians, abs=1e-12) and -math.pi < direction <= math.pi


# ------------------------------------------------------------------------------------ pedsim's bundled scenarios
#: Files of ours in the structure of pedsim_ros' bundled scenarios (pedsim_simulator/scenarios),
#: with what each holds: obstacles, waypoints, queues, attractions, clusters, robots, people.
STRUCTURES = {
    "structure_airport.xml": (6, 4, 2, 4, 3, 0, 71),  # airport.xml, airport2.xml
    "structure_activities.xml": (3, 4, 2, 2, 3, 1, 115),  # airport_activities.xml, airport_activities2.xml
    "structure_contexts.xml": (4, 4, 2, 0, 2, 1, 40),  # contexts/*.xml, social_contexts.xml
    "structure_scenes.xml": (7, 6, 0, 0, 3, 1, 201),  # scene1-4.xml, singleagent.xml, blank_world.xml, nav_test1.xml
}


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_the_structures_of_pedsims_bundled_scenarios_are_read(name: str) -> None:
    scenario = read_pedsim_scenario(DATA / name)
    counts = (
        len(scenario.obstacles), len(scenario.waypoints), len(scenario.queues), len(scenario.attractions),
        len(scenario.agents), len(scenario.robots), scenario.people,
    )
    assert counts == STRUCTURES[name]
    for cluster in (*scenario.agents, *scenario.robots):
        for stop in cluster.route:
            assert scenario.place(stop).line < cluster.line


def test_the_airport_structure_in_detail() -> None:
    scenario = read_pedsim_scenario(DATA / "structure_airport.xml")
    assert scenario.agents[0] == AgentCluster(-60, 20, 1, 0, 0, CHILD, ())  # <agent .../>: stands
    assert scenario.agents[1].route == ("EntryWest", "CheckPre", "Check", "CheckPost", "Gate", "Boarding")
    assert scenario.queues == (Queue("Check", -22, 0, 0.0), Queue("Boarding", 80, 30, math.pi / 2))
    assert scenario.attractions[2] == Attraction("WindowNorth", 50, 39, 80, 2, 1)


def test_the_activities_structure_in_detail() -> None:
    scenario = read_pedsim_scenario(DATA / "structure_activities.xml")
    assert scenario.robots[0].route == ("B", "decision", "C", "decision", "A")  # comments skipped, stops repeat
    assert scenario.queues[0].direction == pytest.approx(math.radians(95))
    assert [attraction.id for attraction in scenario.attractions] == ["info", "books"]
    assert [cluster.type for cluster in scenario.agents] == [ADULT, CHILD, ELDER]


def test_a_source_as_in_pedsims_corridor_is_refused_naming_it() -> None:
    path = DATA / "structure_sources.xml"
    message = refused(path, 19)
    assert message == (
        f"{path}:19: element <source> is not supported (supported: obstacle, waypoint, queue, attraction, agent); "
        "pedsim adds its n people again every spawn_period s, a parameter of pedsim's node the file does not hold: "
        "give the world file's crowd a spawner instead"
    )


def test_a_stop_commented_out_as_in_pedsims_small_airport_is_refused_naming_it() -> None:
    path = DATA / "structure_commented_stop.xml"
    assert refused(path, 15) == (
        f'{path}:15: element <addwaypoint id="Outside">: attribute "id" names "Outside", which no <waypoint> or '
        "<queue> above it defines (pedsim reads the file in order: define it before the agent)"
    )


# ------------------------------------------------------------------------------------ messages and limits
def test_an_error_names_file_line_element_attribute_and_value(tmp_path: Path) -> None:
    path = write(tmp_path, (DATA / "corridor.xml").read_text().replace('r="1"/>\n  <waypoint id="east', 'r="abc"/>\n  <waypoint id="east'))
    assert refused(path, 8) == (
        f'{path}:8: element <waypoint id="west_end">: attribute "r" must be a finite number > 0 and <= 10000 m, got "abc"'
    )


def agents_line(n: int, kind: int = 0, route: str = "") -> str:
    return f'<agent x="0" y="0" n="{n}" type="{kind}">{route}</agent>'


@pytest.mark.parametrize(("lines", "line", "words"), [
    ([f'<obstacle x1="{-1e5}" y1="{1e5}" x2="1e5" y2="-100000"/>'], None, None),
    (['<obstacle x1="100000.001" y1="0" x2="1" y2="0"/>'], 3, 'attribute "x1" must be a finite number >= -100000'),
    (['<obstacle x1="1" y1="2" x2="1" y2="2"/>'], 3, "has zero length"),
    (['<waypoint id="w" x="0" y="0" r="1e-300"/>', '<waypoint id="v" x="0" y="0" r="10000"/>'], None, None),
    (['<waypoint id="w" x="0" y="0" r="0"/>'], 3, 'attribute "r" must be a finite number > 0'),
    (['<waypoint id="w" x="0" y="0" r="10000.01"/>'], 3, 'attribute "r" must be'),
    (['<waypoint id="w" x="0" y="0" r="1" b="3"/>'], 3, 'attribute "b" must be 0 (simple), 1 (source) or 2 (sink), got "3"'),
    (['<queue id="q" x="0" y="0" direction="-10000"/>', '<queue id="p" x="0" y="0" direction="1e4"/>'], None, None),
    (['<queue id="q" x="0" y="0" direction="10000.5"/>'], 3, 'attribute "direction" must be a finite number >= -10000 and <= 10000 deg'),
    (['<attraction id="a" x="0" y="0" width="0" height="10000" strength="10000"/>'], None, None),
    (['<attraction id="a" x="0" y="0" width="-0.1" height="1" strength="1"/>'], 3, 'attribute "width"'),
    (['<attraction id="a" x="0" y="0" width="1" height="1" strength="10001"/>'], 3, 'attribute "strength"'),
    (['<attraction id="a" x="99999" y="0" width="2" height="1" strength="1"/>'], None, None),
    (['<attraction id="a" x="99999" y="0" width="4" height="1" strength="1"/>'], 3, 'attribute "width" makes the box reach beyond +-100000 m'),
    (['<agent x="0" y="-99999" n="1" dy="4"/>'], 3, 'attribute "dy" makes the box reach beyond'),
    ([agents_line(limits.MAX_PEDESTRIANS), agents_line(1, 2)], None, None),
    ([agents_line(limits.MAX_PEDESTRIANS + 1)], 3, f'attribute "n" must be a whole number from 0 to {limits.MAX_PEDESTRIANS}'),
    ([agents_line(5000), agents_line(5001)], 4, f"brings the scenario's people to 10001, more than the limit of {limits.MAX_PEDESTRIANS}"),
    ([agents_line(2, 2)], 3, 'attribute "n" must be 1 for a robot agent (type="2"), got "2"'),
    ([agents_line(1, 4)], 3, 'attribute "type" must be 0 (adult), 1 (child), 2 (robot) or 3 (elder), got "4"'),
    (['<waypoint id="w" x="0" y="0" r="1"/>', agents_line(1, 0, '<addwaypoint id="w"/>' * limits.MAX_WAYPOINTS)], None, None),
    (['<waypoint id="w" x="0" y="0" r="1"/>', agents_line(1, 0, '<addwaypoint id="w"/>' * (limits.MAX_WAYPOINTS + 1))], 4,
     f"is one stop more than the limit of {limits.MAX_WAYPOINTS}"),
    ([f'<waypoint id="{"w" * limits.MAX_NAME_LENGTH}" x="0" y="0" r="1"/>'], None, None),
    ([f'<waypoint id="{"w" * (limits.MAX_NAME_LENGTH + 1)}" x="0" y="0" r="1"/>'], 3, 'attribute "id" must be a name of 1 to 100 printable characters'),
    (['<waypoint id="w" x="0" y="0" r="1"/>', '<queue id="w" x="0" y="0"/>'], 4, 'attribute "id" is defined already, by the <waypoint> at line 3'),
    (['<attraction id="w" x="0" y="0" width="1" height="1" strength="1"/>', '<waypoint id="w" x="0" y="0" r="1"/>'], None, None),
    (['<attraction id="a" x="0" y="0" width="1" height="1" strength="1"/>'] * 2, 4, "is defined already, by the <attraction> at line 3"),
    (['<waypoint id="w" x="0" y="0" r="1"/>', agents_line(1, 0, '<addqueue id="w"/>')], 4, 'names the <waypoint> at line 3, not a <queue>'),
    ([agents_line(1, 0, '<addwaypoint id="w"/>'), '<waypoint id="w" x="0" y="0" r="1"/>'], 3, 'names "w", which no <waypoint> or <queue> above it'),
])
def test_limits_at_their_bounds(tmp_path: Path, lines: list[str], line: int | None, words: str | None) -> None:
    path = write(tmp_path, scene(*lines))
    if line is None:
        assert isinstance(read_pedsim_scenario(path), PedsimScenario)
    else:
        assert words in refused(path, line)


def test_elements_are_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    obstacle = '<obstacle x1="0" y1="0" x2="1" y2="0"/>'
    monkeypatch.setattr(limits, "MAX_SCENARIO_ELEMENTS", 10)
    assert len(read_pedsim_scenario(write(tmp_path, scene(*[obstacle] * 9))).obstacles) == 9  # and <scenario>
    assert "more than the limit of 10 elements" in refused(write(tmp_path, scene(*[obstacle] * 10)), 12)
    monkeypatch.undo()
    path = write(tmp_path, "<scenario>\n" + (obstacle + "\n") * limits.MAX_SCENARIO_ELEMENTS + "</scenario>\n")
    assert f"more than the limit of {limits.MAX_SCENARIO_ELEMENTS} elements" in refused(path, limits.MAX_SCENARIO_ELEMENTS + 1)


def test_attributes_in_a_row_are_counted_before_parsing(tmp_path: Path) -> None:
    def pairs(count: int) -> str:
        return " ".join(f'a{index}="1"' for index in range(count))

    message = refused(write(tmp_path, scene(f"<obstacle {pairs(limits.MAX_SCENARIO_ATTRIBUTES)}/>")), 3)
    assert 'attribute "a0" is not supported (supported: x1, y1, x2, y2)' in message
    message = refused(write(tmp_path, scene("", f"<obstacle {pairs(limits.MAX_SCENARIO_ATTRIBUTES + 1)}/>")), 4)
    assert f"more than the limit of {limits.MAX_SCENARIO_ATTRIBUTES} attributes in a row" in message


def test_the_byte_limit(tmp_path: Path) -> None:
    body = "<scenario></scenario>\n"
    path = write(tmp_path, body + " " * (limits.MAX_SCENARIO_BYTES - len(body)))
    assert read_pedsim_scenario(path) == PedsimScenario(path=path)
    path = write(tmp_path, body + " " * (limits.MAX_SCENARIO_BYTES - len(body) + 1))
    assert "more than the limit of 16 MiB" in refused(path)


# ------------------------------------------------------------------------------------ generated abuse
#: A scenario with every element and attribute, as (tag, [(attribute, value), ...], children).
Element = tuple[str, list[tuple[str, str]], list[Any]]
BASE: list[Element] = [
    ("obstacle", [("x1", "0"), ("y1", "0"), ("x2", "20"), ("y2", "0")], []),
    ("waypoint", [("id", "door"), ("x", "2"), ("y", "2"), ("r", "1"), ("b", "2")], []),
    ("queue", [("id", "desk"), ("x", "10"), ("y", "3"), ("direction", "90")], []),
    ("attraction", [("id", "shop"), ("x", "15"), ("y", "5"), ("width", "4"), ("height", "2"), ("strength", "3")], []),
    ("agent", [("x", "5"), ("y", "2"), ("n", "4"), ("dx", "2"), ("dy", "1"), ("type", "0")],
     [("addwaypoint", [("id", "door")], []), ("addqueue", [("id", "desk")], [])]),
    ("agent", [("x", "1"), ("y", "1"), ("n", "1"), ("dx", "0"), ("dy", "0"), ("type", "2")],
     [("addwaypoint", [("id", "desk")], [])]),
]
NUMBERS = {"x1", "y1", "x2", "y2", "x", "y", "r", "direction", "width", "height", "strength", "dx", "dy", "n", "type", "b"}
OPTIONAL = {"b", "direction", "dx", "dy", "type"}
#: Values no number attribute accepts.
HOSTILE_NUMBERS = [
    "nan", "NaN", "inf", "-inf", "Infinity", "1e300", "-1e300", "1e400", "9" * 400, "abc", "", " ", "0x10", "1,5",
    "1_0", "\u0661", "1e", "--1", "1 2", "true", "x" * 5000, "4" * 5000, "1e99999",
]
#: Values no id accepts.
HOSTILE_IDS = ["", "x" * 5000, "\u200b", "\x7f", "a\u0085b"]


def serialise(elements: list[Element]) -> tuple[str, dict[tuple[int, ...], int]]:
    """The scenario's text, one element a line, and the line of each element by its position."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<scenario>"]
    where: dict[tuple[int, ...], int] = {}

    def emit(element: Element, position: tuple[int, ...], indent: str) -> None:
        tag, attributes, children = element
        text = "".join(f" {key}={quoteattr(value)}" for key, value in attributes)
        where[position] = len(lines) + 1
        if not children:
            lines.append(f"{indent}<{tag}{text}/>")
            return
        lines.append(f"{indent}<{tag}{text}>")
        for index, child in enumerate(children):
            emit(child, position + (index,), indent + "  ")
        lines.append(f"{indent}</{tag}>")

    for index, element in enumerate(elements):
        emit(element, (index,), "  ")
    lines.append("</scenario>")
    return "\n".join(lines) + "\n", where


def positions(elements: list[Element], prefix: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    found = []
    for index, (_, _, children) in enumerate(elements):
        found.append(prefix + (index,))
        found += positions(children, prefix + (index,))
    return found


def get(elements: list[Element], position: tuple[int, ...]) -> Element:
    element = elements[position[0]]
    for index in position[1:]:
        element = element[2][index]
    return element


def edited(position: tuple[int, ...], change: Any) -> list[Element]:
    """A copy of BASE with ``change(siblings, index)`` applied where ``position`` is."""
    elements = [(tag, list(attributes), [(t, list(a), list(c)) for t, a, c in children]) for tag, attributes, children in BASE]
    siblings = elements if len(position) == 1 else get(elements, position[:-1])[2]
    change(siblings, position[-1])
    return elements


def with_attributes(position: tuple[int, ...], new: Any) -> list[Element]:
    def change(siblings: list[Element], index: int) -> None:
        tag, attributes, children = siblings[index]
        siblings[index] = (tag, new(attributes), children)

    return edited(position, change)


def attribute_cases() -> list[Any]:
    cases = []
    for position in positions(BASE):
        tag, attributes, _ = get(BASE, position)
        for key, _value in attributes:
            def replaced(values: list[tuple[str, str]], value: str, key: str = key) -> list[tuple[str, str]]:
                return [(k, value if k == key else v) for k, v in values]

            hostile = HOSTILE_NUMBERS if key in NUMBERS else HOSTILE_IDS
            for value in hostile:
                document = with_attributes(position, lambda values, value=value, replaced=replaced: replaced(values, value))
                cases.append(pytest.param(document, position, key, "must be", id=f"{tag}{list(position)}.{key}={value!r:.20}"))
            removed = with_attributes(position, lambda values, key=key: [(k, v) for k, v in values if k != key])
            expected = None if key in OPTIONAL else "is missing"
            cases.append(pytest.param(removed, position, key, expected, id=f"{tag}{list(position)}.{key} removed"))
            twice = with_attributes(position, lambda values, key=key: values + [(key, dict(values)[key])])
            cases.append(pytest.param(twice, position, None, "duplicate attribute", id=f"{tag}{list(position)}.{key} twice"))
        unknown = with_attributes(position, lambda values: values + [("colour", "red")])
        cases.append(pytest.param(unknown, position, "colour", "is not supported", id=f"{tag}{list(position)} + colour"))
    return cases


@pytest.mark.parametrize(("document", "position", "key", "words"), attribute_cases())
def test_hostile_attributes_are_refused_naming_the_line_and_attribute(
    tmp_path: Path, document: list[Element], position: tuple[int, ...], key: str | None, words: str | None
) -> None:
    text, where = serialise(document)
    path = write(tmp_path, text)
    if words is None:  # an optional attribute left out: pedsim's 0
        assert isinstance(read_pedsim_scenario(path), PedsimScenario)
        return
    message = refused(path, where[position])
    assert words in message, message
    if key is not None:
        assert f'attribute "{key}" ' in message, message


def element_cases() -> list[Any]:
    cases = []
    for position in positions(BASE):
        tag = get(BASE, position)[0]
        label = f"{tag}{list(position)}"
        cases.append(pytest.param(edited(position, lambda s, i: s.pop(i)), position, "removed", id=f"{label} removed"))
        cases.append(pytest.param(edited(position, lambda s, i: s.insert(i, s[i])), position, "twice", id=f"{label} twice"))
        unknown: Element = ("teleporter", [("x", "1")], [])
        cases.append(pytest.param(
            edited(position, lambda s, i, e=unknown: s.insert(i + 1, e)), position[:-1] + (position[-1] + 1,), "unknown",
            id=f"{label} + teleporter",
        ))
        for other in sorted({"obstacle", "waypoint", "queue", "attraction", "agent", "addwaypoint", "addqueue", "source", "scenario", "welcome"} - {tag}):
            def renamed(s: list[Element], i: int, other: str = other) -> None:
                s[i] = (other, s[i][1], s[i][2])

            cases.append(pytest.param(edited(position, renamed), position, "renamed", id=f"{label} as {other}"))
    return cases


@pytest.mark.parametrize(("document", "position", "change"), element_cases())
def test_elements_removed_duplicated_renamed_or_unknown(
    tmp_path: Path, document: list[Element], position: tuple[int, ...], change: str
) -> None:
    text, where = serialise(document)
    path = write(tmp_path, text)
    if change == "unknown":
        assert "element <teleporter> is not supported" in refused(path, where[position])
        return
    tag = get(BASE, position)[0]
    if change == "twice" and tag in ("waypoint", "queue", "attraction"):
        first = where[position]
        assert f"is defined already, by the <{tag}> at line {first}" in refused(path, where[position[:-1] + (position[-1] + 1,)])
    elif change == "removed" and tag in ("waypoint", "queue"):  # the stops that named it
        assert "names " in refused(path)
    elif change == "renamed":
        try:
            scenario = read_pedsim_scenario(path)
        except ConfigError as exc:
            message = str(exc)
            assert "\n" not in message and message.startswith(f"{path}:"), message
            line = int(message.split(":")[1])
            assert line >= where[position], message
        else:
            assert tag in ("addwaypoint", "addqueue") and scenario.robots  # a queue named by either
    else:
        scenario = read_pedsim_scenario(path)
        base = read_pedsim_scenario(write(tmp_path, serialise(BASE)[0], "base.xml"))
        counted = len(scenario.obstacles) + len(scenario.attractions) + len(scenario.agents) + len(scenario.robots)
        counted += sum(len(cluster.route) for cluster in (*scenario.agents, *scenario.robots))
        counted_base = len(base.obstacles) + len(base.attractions) + len(base.agents) + len(base.robots)
        counted_base += sum(len(cluster.route) for cluster in (*base.agents, *base.robots))
        if tag == "agent":  # its stops come and go with it
            counted_base += len(get(BASE, position)[2]) * (1 if change == "twice" else -1)
        assert counted == counted_base + (1 if change == "twice" else -1)


# ------------------------------------------------------------------------------------ bombs and broken files
LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE scenario [\n <!ENTITY a "lol">\n'
    + "".join(f' <!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">\n' for i in range(9))
    + ']>\n<scenario><waypoint id="&j;" x="0" y="0" r="1"/></scenario>\n'
)
QUADRATIC = (
    f'<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY big "{"x" * 100_000}">]>\n<scenario>'
    + '<waypoint id="&big;" x="0" y="0" r="1"/>' * 100 + "</scenario>\n"
)
XXE_FILE = '<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<scenario>&x;</scenario>\n'
XXE_ATTRIBUTE = '<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<scenario><waypoint id="&x;" x="0" y="0" r="1"/></scenario>\n'
XXE_HTTP = '<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY x SYSTEM "http://127.0.0.1:9/evil">]>\n<scenario>&x;</scenario>\n'
XXE_PARAMETER = '<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY % p SYSTEM "http://127.0.0.1:9/evil.dtd"> %p;]>\n<scenario/>\n'
EXTERNAL_DTD = '<?xml version="1.0"?>\n<!DOCTYPE scenario SYSTEM "file:///dev/zero">\n<scenario/>\n'
DECLARATIONS = "declarations (<!DOCTYPE, <!ENTITY, ...)"
DEEP = 10_000

BOMBS = [
    ("billion-laughs", LAUGHS, 2, DECLARATIONS),
    ("quadratic-blowup", QUADRATIC, 2, DECLARATIONS),
    ("xxe-file", XXE_FILE, 2, DECLARATIONS),
    ("xxe-file-in-attribute", XXE_ATTRIBUTE, 2, DECLARATIONS),
    ("xxe-http", XXE_HTTP, 2, DECLARATIONS),
    ("xxe-parameter-entity", XXE_PARAMETER, 2, DECLARATIONS),
    ("external-dtd", EXTERNAL_DTD, 2, DECLARATIONS),
    ("doctype-lowercase", "<!doctype scenario>\n<scenario/>\n", 1, DECLARATIONS),
    ("doctype-split-over-lines", '<?xml version="1.0"?>\n\n<!DOCTYPE\n  scenario\n  [\n]>\n<scenario/>\n', 3, DECLARATIONS),
    ("doctype-after-root", "<scenario/>\n<!DOCTYPE scenario>\n", 2, DECLARATIONS),
    ("element-declaration", '<!ELEMENT scenario ANY>\n<scenario/>\n', 1, DECLARATIONS),
    ("doctype-in-a-comment", "<!-- <!DOCTYPE s> -->\n<scenario/>\n", 1, DECLARATIONS),
    ("undeclared-entity", "<scenario>\n<waypoint id='&x;' x='0' y='0' r='1'/>\n</scenario>\n", 2, "undefined entity"),
    ("entity-in-text", "<scenario>\n&lt;obstacle/&gt;\n</scenario>\n", 2, 'text "<obstacle/>" is not supported inside <scenario>'),
    ("cdata", "<scenario>\n<![CDATA[<obstacle/>]]>\n</scenario>\n", 2, "text"),
    ("text", "<scenario>\n<obstacle x1='0' y1='0' x2='1' y2='0'>wall</obstacle>\n</scenario>\n", 2, 'text "wall" is not supported inside <obstacle>'),
    ("processing-instruction", '<?xml version="1.0"?>\n<?xml-stylesheet href="s.xsl"?>\n<scenario/>\n', 2, "processing instruction <?xml-stylesheet?>"),
    ("encoding-latin-1", '<?xml version="1.0" encoding="ISO-8859-1"?>\n<scenario/>\n', 1, 'encoding "ISO-8859-1" is not supported'),
    ("encoding-utf-16-declared", '<?xml version="1.0" encoding="UTF-16"?>\n<scenario/>\n', 1, 'encoding "UTF-16" is not supported'),
    ("utf-16-with-doctype", '<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE s>\n<scenario/>\n'.encode("utf-16"), 1, "not UTF-8 text"),
    ("binary", bytes(range(256)) * 10, 2, "not UTF-8 text (byte 0x80 at offset 128)"),
    ("latin-1-byte-on-line-3", b"<scenario>\n<!-- \n caf\xe9 -->\n</scenario>\n", 3, "not UTF-8 text (byte 0xe9"),
    ("nul-byte", "<scenario>\n<obstacle x1='0' y1='0' x2='1' y2='0'/>\x00\n</scenario>\n", 2, "invalid XML"),
    ("nul-in-attribute", "<scenario>\n<waypoint id='a\x00' x='0' y='0' r='1'/>\n</scenario>\n", 2, "invalid XML"),
    ("nul-reference", "<scenario>\n<waypoint id='a&#0;' x='0' y='0' r='1'/>\n</scenario>\n", 2, "invalid XML"),
    ("unclosed-tag", "<scenario>\n<obstacle x1='0' y1='0' x2='1' y2='0'\n", 2, "invalid XML at column 1: unclosed token"),
    ("unclosed-root", "<scenario>\n<obstacle x1='0' y1='0' x2='1' y2='0'/>\n", 3, "invalid XML"),
    ("unclosed-comment", "<scenario>\n<!-- <obstacle/>\n</scenario>\n", 2, "invalid XML at column 1: unclosed token"),
    ("mismatched-tag", "<scenario>\n<agent x='0' y='0' n='1'>\n</scenario>\n", 3, "mismatched tag"),
    ("unquoted-attribute", "<scenario>\n<obstacle x1=0 y1='0' x2='1' y2='0'/>\n</scenario>\n", 2, "invalid XML"),
    ("two-roots", "<scenario/>\n<scenario/>\n", 2, "junk after document element"),
    ("empty", "", 1, "no element found"),
    ("only-declaration", '<?xml version="1.0"?>\n', 2, "no element found"),
    ("wrong-root", "<welcome/>\n", 1, "the root element must be <scenario>, got <welcome>"),
    ("namespaced-root", '<p:scenario xmlns:p="urn:x"/>\n', 1, "the root element must be <scenario>, got <p:scenario>"),
    ("root-attribute", '<scenario version="2"/>\n', 1, 'attribute "version" is not supported (<scenario> takes none)'),
    ("long-element-name", "<scenario>\n<" + "a" * 1_000_000 + "/>\n</scenario>\n", 2, "element <aaaaa"),
    ("long-number", "<scenario>\n<obstacle x1='" + "1" * 5_000_000 + "' y1='0' x2='1' y2='0'/>\n</scenario>\n", 2, 'attribute "x1" must be'),
    ("deep-agents", "<scenario>\n" + "<agent x='0' y='0' n='1'>\n" * DEEP + "</agent>\n" * DEEP + "</scenario>\n", 3, "element <agent> is not supported inside <agent>"),
    ("deep-unknown", "<a>" * DEEP + "</a>" * DEEP, 1, "the root element must be <scenario>"),
    ("deep-scenarios", "<scenario>" * DEEP + "</scenario>" * DEEP, 1, "element <scenario> is not supported"),
    ("deep-in-a-leaf", "<scenario>\n<obstacle x1='0' y1='0' x2='1' y2='0'>" + "<obstacle>" * DEEP, 2, "which takes no elements"),
    ("attribute-bomb", "<scenario>\n<obstacle " + " ".join(f"a{i}=''" for i in range(1_000_000)) + "/>\n</scenario>\n", 2, "attributes in a row"),
    ("stop-outside-agent", "<scenario>\n<addwaypoint id='w'/>\n</scenario>\n", 2, "it belongs inside an <agent>"),
]


@pytest.mark.parametrize(("content", "line", "fact"), [pytest.param(c, n, f, id=i) for i, c, n, f in BOMBS])
def test_bombs_and_broken_xml_fail_in_one_line(tmp_path: Path, content: str | bytes, line: int, fact: str) -> None:
    path = write(tmp_path, content)
    message = refused(path, line)
    assert fact in message, message


@pytest.mark.parametrize("name", ["billion-laughs", "xxe-file", "xxe-file-in-attribute", "xxe-http", "xxe-parameter-entity", "external-dtd"])
def test_the_parser_refuses_declarations_again_should_they_get_past_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setattr(pedsim_scenario, "refuse_hazards", lambda text, shown: None)
    content = next(c for i, c, _, _ in BOMBS if i == name)
    message = refused(write(tmp_path, content), 2)
    assert "declarations (<!DOCTYPE, <!ENTITY, ...) and external entities are not supported" in message
    assert "root:" not in message  # nothing of /etc/passwd


@pytest.mark.parametrize("name", ["billion-laughs", "quadratic-blowup", "attribute-bomb", "deep-agents", "long-number"])
def test_bombs_take_bounded_memory(tmp_path: Path, name: str) -> None:
    content = next(c for i, c, _, _ in BOMBS if i == name)
    path = write(tmp_path, content)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError):
            read_pedsim_scenario(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a few copies of the file (its bytes, read a chunk at a time; its text; expat's and the
    # checks' copies of a 5 MB attribute): nothing grows with the limit
    assert peak < 8 * size + 4 * 2**20, (peak, size)


@pytest.mark.parametrize("special", ["fifo", "directory", "missing", "sparse-100-MiB", "/dev/zero", "/dev/urandom"])
def test_special_files_are_refused_before_reading(tmp_path: Path, special: str) -> None:
    target = tmp_path / "scenario.xml"
    if special == "fifo":
        os.mkfifo(target)
    elif special == "directory":
        target.mkdir()
    elif special == "sparse-100-MiB":
        with open(target, "wb") as stream:
            stream.truncate(100 * 2**20)  # no disk used
    elif special.startswith("/dev/"):
        target = Path(special)
    fact = {
        "fifo": "is a FIFO, not a regular file", "directory": "is a directory", "missing": "does not exist",
        "sparse-100-MiB": "has 100 MiB, more than the limit of 16 MiB",
    }.get(special, "is a device")
    message = refused(target)
    assert message.startswith('pedsim scenario file "') and fact in message, message
