"""Hand-broken copies of the valid reference files: every one is rejected with file, entry and key.

Each mutation is applied to a copy of simple_test_A; the world must fail to load with a
one-line :class:`ConfigError` naming the broken file and the key, and Box2D never sees it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import yaml

from sim_server.core import ConfigError, World
from test.conftest import LOAD_WORLD_TESTS

SOURCE = LOAD_WORLD_TESTS / "simple_test_A"
FILES = ["world.yaml", "turtlebot.model.yaml", "chair.model.yaml", "person.model.yaml", "map.yaml", "map_lines.yaml"]


def mappings(node: Any, path: tuple = ()) -> Iterator[tuple[tuple, dict]]:
    """Every mapping of a parsed YAML tree with its path (plugin configs are the plugins' own)."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key != "plugins":
                yield from mappings(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from mappings(value, path + (index,))


def unknown_key_cases() -> list[tuple[str, tuple]]:
    cases = []
    for name in FILES:
        data = yaml.safe_load((SOURCE / name).read_text())
        cases += [(name, path) for path, _ in mappings(data)]
    return cases


def get(node: Any, path: tuple) -> Any:
    for step in path:
        node = node[step]
    return node


def broken_copy(tmp_path: Path, name: str, mutate: Callable[[Any], None]) -> Path:
    folder = tmp_path / "world"
    shutil.copytree(SOURCE, folder)
    data = yaml.safe_load((folder / name).read_text())
    mutate(data)
    (folder / name).write_text(yaml.safe_dump(data))
    return folder / "world.yaml"


def load_error(world: Path) -> str:
    with pytest.raises(ConfigError) as info:
        World.from_file(world)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("name", "path"), unknown_key_cases(), ids=lambda v: str(v))
def test_unknown_key_anywhere_is_named(tmp_path: Path, name: str, path: tuple) -> None:
    world = broken_copy(tmp_path, name, lambda data: get(data, path).update(bogus_key=1))
    message = load_error(world)
    assert name in message and 'unrecognized key(s) "bogus_key"' in message


BREAKAGES = [
    # (file, description, mutation, facts in the message)
    ("world.yaml", "pose not a list", lambda d: d["models"][1].update(pose="far away"), ['models[1] ("turtlebot2")', 'key "pose"']),
    ("world.yaml", "model file missing", lambda d: d["models"][0].pop("model"), ['models[0] ("turtlebot1")', 'key "model" is missing']),
    ("world.yaml", "iterations not an integer", lambda d: d["properties"].update(velocity_iterations=1.5), ['properties', 'key "velocity_iterations"']),
    ("turtlebot.model.yaml", "density not a number", lambda d: d["bodies"][0]["footprints"][1].update(density="heavy"), ['bodies[0] ("base").footprints[1]', 'key "density"']),
    ("turtlebot.model.yaml", "negative density", lambda d: d["bodies"][0]["footprints"][1].update(density=-1), ['footprints[1]', 'key "density"', ">= 0 and <= 1e+06 kg/m^2, got -1"]),
    ("turtlebot.model.yaml", "radius missing", lambda d: d["bodies"][0]["footprints"][0].pop("radius"), ['footprints[0]', 'key "radius" is missing']),
    ("turtlebot.model.yaml", "zero radius", lambda d: d["bodies"][0]["footprints"][0].update(radius=0), ['footprints[0]', 'key "radius"', ">= 0.0001 and <= 10000 m, got 0"]),
    ("turtlebot.model.yaml", "body name missing", lambda d: d["bodies"][1].pop("name"), ["bodies[1]", 'key "name" is missing']),
    ("turtlebot.model.yaml", "unknown body type", lambda d: d["bodies"][1].update(type="floating"), ['bodies[1] ("left_wheel")', 'key "type"', "floating"]),
    ("turtlebot.model.yaml", "concave polygon", lambda d: d["bodies"][1]["footprints"][0].update(points=[[0, 0], [1, 0], [0.2, 0.2], [0, 1]]), ['bodies[1] ("left_wheel").footprints[0]', 'key "points"', "not convex"]),
    ("turtlebot.model.yaml", "degenerate polygon", lambda d: d["bodies"][2]["footprints"][0].update(points=[[0, 0], [1, 1], [2, 2]]), ['bodies[2] ("right_wheel").footprints[0]', 'key "points"', "degenerate"]),
    ("turtlebot.model.yaml", "infinite coordinate", lambda d: d["bodies"][2]["footprints"][0].update(points=[[0, 0], [float("inf"), 0], [0, 1]]), ['footprints[0]', 'key "points"', "finite"]),
    ("turtlebot.model.yaml", "joint type", lambda d: d["joints"][0].update(type="prismatic"), ['joints[0] ("left_wheel_weld")', 'key "type"', "prismatic"]),
    ("turtlebot.model.yaml", "inverted limits", lambda d: d["joints"][3].update(limits=[1, -1]), ['joints[3] ("antenna_revolute")', 'key "limits"']),
    ("turtlebot.model.yaml", "three joint bodies", lambda d: d["joints"][0]["bodies"].append({"name": "tail", "anchor": [0, 0]}), ['joints[0] ("left_wheel_weld")', 'key "bodies"', "exactly 2"]),
    ("turtlebot.model.yaml", "color of 3", lambda d: d["bodies"][0].update(color=[1, 0, 0]), ['bodies[0] ("base")', 'key "color"', "4 numbers"]),
    ("map.yaml", "resolution missing", lambda d: d.pop("resolution"), ["map.yaml", 'key "resolution" is missing']),
    ("map.yaml", "negative resolution", lambda d: d.update(resolution=-0.05), ["map.yaml", 'key "resolution"', "> 0 and <= 10000 m, got -0.05"]),
    ("map_lines.yaml", "scale not a number", lambda d: d.update(scale="big"), ["map_lines.yaml", 'key "scale"']),
]


@pytest.mark.parametrize(("name", "what", "mutate", "facts"), BREAKAGES, ids=[b[1] for b in BREAKAGES])
def test_broken_values_are_named(tmp_path: Path, name: str, what: str, mutate, facts: list[str]) -> None:
    message = load_error(broken_copy(tmp_path, name, mutate))
    assert name in message
    for fact in facts:
        assert fact in message, f"{fact!r} not in {message!r}"
