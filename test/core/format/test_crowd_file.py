"""Bad crowds in world files: every one ends in one clear line naming the file, the crowd and the
key, or loads and steps with finite poses."""

from __future__ import annotations

import copy
import math
import random
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.crowd_file import OrcaParameters, SocialForceParameters, parse_crowds
from sim_server.core.format.yaml_reader import REQUIRED, YamlReader
from sim_server.core.world import World
from test.core.test_abuse import HOSTILE_VALUES, _get, _paths, _remove, _replace, assert_clean_outcome

ROOM = "-6 -4 6 -4\n6 -4 6 4\n6 4 -6 4\n-6 4 -6 -4\n0 -4 0 -1\n0 1 0 4\n0 -1 0 1\n"  # the door closed
CROWD: dict[str, Any] = {
    "name": "people",
    "model": "social_force",
    "radius": 0.3,
    "speed": [1.0, 1.4],
    "update_rate": 20,
    "layers": ["walls"],
    "seed": 4,
    "parameters": {"social_factor": 5.1, "neighbor_range": 8.0},
    "regions": {"left": [-5.5, -3.5, -0.5, 3.5]},
    "goals_per_region": 8,
    "navigation_cell": 0.2,
    "agents": [
        {"count": 4, "start": "left", "goals": "left", "wait": [0, 1], "group": True},
        {"count": 1, "start": [-3, 0], "waypoints": [[-3, 2], [-2, -2]], "loop": False, "speed": 1.2},
    ],
    "spawners": [{"at": [-5, 0], "rate": 1.0, "limit": 3, "total": 5, "size": 1, "waypoints": [[-1, 0]]}],
}


def write_world(tmp_path: Path, crowds: Any) -> Path:
    (tmp_path / "room.dat").write_text(ROOM)
    (tmp_path / "room.yaml").write_text("type: line_segments\ndata: room.dat\nscale: 1\norigin: [0, 0, 0]\n")
    document = {"properties": {}, "layers": [{"name": "walls", "map": "room.yaml"}], "pedestrians": crowds}
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump(document, default_flow_style=True, width=1 << 30))
    return path


def load_error(tmp_path: Path, crowds: Any) -> str:
    with pytest.raises(ConfigError) as raised:
        World.from_file(write_world(tmp_path, crowds)).close()
    message = str(raised.value)
    assert "\n" not in message and "world.yaml" in message, message
    return message


def changed(path: tuple, value: Any) -> list[Any]:
    return [_replace(CROWD, path, value)]


def test_the_example_crowd_loads_and_walks(tmp_path: Path) -> None:
    world = World.from_file(write_world(tmp_path, [CROWD]))
    world.step(500)
    assert world.crowds.named("people").people.count >= 5
    world.close()


@pytest.mark.parametrize(("crowds", "words"), [
    (changed(("agents", 0, "count"), -1), 'key "count" must be an integer >= 0'),
    (changed(("seed",), -1), 'key "seed" must be an integer >= 0'),
    (changed(("seed",), 2**63), 'key "seed" must be an integer >= 0'),
    (changed(("radius",), math.nan), 'key "radius" must be a finite number >= 0.05'),
    (changed(("parameters", "social_factor"), math.inf), 'key "social_factor" must be a finite number'),
    (changed(("parameters", "relaxation_time"), 0), 'key "relaxation_time" must be a finite number > 0'),
    (changed(("parameters", "gamma"), 0.0), 'key "gamma" must be a finite number > 0'),
    (changed(("parameters", "wrap_angle"), False), 'unrecognized key(s) "wrap_angle"'),
    (changed(("speed",), [2.0, 1.0]), "low <= high"),
    (changed(("speed",), -1.0), 'key "speed" must be a finite number > 0'),
    (changed(("spawners", 0, "rate"), 0), 'key "rate" must be a finite number > 0'),
    (changed(("spawners", 0, "size"), 9), 'key "size" must be at most the limit (3)'),
    (changed(("model",), "boids"), 'key "model" must be one of social_force, orca'),
    (changed(("layers",), ["nowhere"]), 'names layer "nowhere", which the world does not have'),
    (changed(("agents", 0, "goals"), "moon"), 'names region "moon", which the crowd does not have'),
    (changed(("regions", "left"), [1, 1, 0, 0]), "min < max"),
    (changed(("agents", 1, "waypoints"), [[1e9, 0]]), "waypoint 0 must be a point [x, y] of a finite number"),
    (changed(("agents", 1, "waypoints"), []), "non-empty list"),
    (changed(("agents", 1, "goals"), "left"), "exclude each other"),
    ([_remove(CROWD, ("spawners", 0, "waypoints"))], "nowhere to go"),
    ([CROWD, CROWD], 'names a crowd "people" that exists already'),
], ids=lambda value: value if isinstance(value, str) else None)
def test_bad_values_get_one_line_naming_the_key(tmp_path: Path, crowds: Any, words: str) -> None:
    message = load_error(tmp_path, crowds)
    assert words in message, message
    assert 'pedestrians[' in message, message


def test_goals_inside_walls_and_out_of_reach_are_named(tmp_path: Path) -> None:
    inside = load_error(tmp_path, changed(("agents", 1, "waypoints"), [[-3, 2], [0.1, 2.0]]))
    assert 'agents[1]: key "waypoints": waypoint 1 (0.1, 2) lies within 0.3 m' in inside, inside
    beyond = load_error(tmp_path, changed(("agents", 1, "waypoints"), [[3, 0]]))  # the other room
    assert 'waypoint 0 [3.0, 0.0] cannot be reached from the start' in beyond, beyond
    crowd = copy.deepcopy(CROWD)
    crowd["regions"]["right"] = [0.5, -3.5, 5.5, 3.5]
    crowd["agents"][0]["goals"] = "right"
    region = load_error(tmp_path, [crowd])
    assert 'key "goals": region "right" cannot be reached from any place of region "left": walls close it off' in region, region
    crowd["regions"]["right"] = [-0.2, -3.5, 0.2, 3.5]  # the wall itself
    crowd["agents"][0]["goals"] = "left"
    walled = load_error(tmp_path, [crowd])
    assert 'region "right" has no place where a pedestrian of radius 0.3 m fits' in walled, walled
    crowd = copy.deepcopy(CROWD)
    crowd["agents"][1]["start"] = [-6, 0]
    assert 'key "start" (-6, 0) lies within 0.3 m' in load_error(tmp_path, [crowd])


def test_no_room_to_start_is_named(tmp_path: Path) -> None:
    crowd = copy.deepcopy(CROWD)
    crowd["regions"]["nook"] = [-5.9, -3.9, -5.1, -3.1]
    crowd["agents"][0].update(count=50, start="nook", goals="left")
    message = load_error(tmp_path, [crowd])
    assert 'agents[0]: key "start": no room for 50 pedestrians' in message, message


def test_too_many_spawners_people_and_crowds_are_refused(tmp_path: Path) -> None:
    crowd = copy.deepcopy(CROWD)
    crowd["spawners"] = [CROWD["spawners"][0]] * 1000
    assert f"lists 1000 spawners, more than the limit of {limits.MAX_SPAWNERS}" in load_error(tmp_path, [crowd])
    crowd = copy.deepcopy(CROWD)
    crowd["agents"][0]["count"] = limits.MAX_PEDESTRIANS + 1
    assert "must be an integer >= 0 and <= 10000" in load_error(tmp_path, [crowd])
    many = [dict(CROWD, name=f"c{i}", agents=[], spawners=[]) for i in range(limits.MAX_CROWDS + 1)]
    assert f"must list at most {limits.MAX_CROWDS} crowds" in load_error(tmp_path, many)


def _crowd_variants() -> list[Any]:
    variants = []
    for path in _paths(CROWD):
        for value in HOSTILE_VALUES:
            variants.append(pytest.param(_replace(CROWD, path, value), id=f"{list(path)} = {value!r:.30}"))
        if path:
            variants.append(pytest.param(_remove(CROWD, path), id=f"{list(path)} removed"))
    return random.Random("crowd abuse").sample(variants, 120)


@pytest.mark.parametrize("crowd", _crowd_variants())
def test_generated_bad_crowds_load_cleanly_or_fail_in_one_line(tmp_path: Path, crowd: Any) -> None:
    assert_clean_outcome(write_world(tmp_path, [crowd]))


def test_the_most_people_load_in_reasonable_time_and_no_more_arrive(tmp_path: Path, monkeypatch) -> None:
    import time as clock

    crowd = copy.deepcopy(CROWD)
    crowd["regions"]["left"] = [-5.7, -3.7, -0.3, 3.7]
    crowd["radius"] = 0.05
    crowd["agents"] = [{"count": 1000, "start": "left", "goals": "left"}]
    crowd["spawners"][0].update(rate=100, limit=limits.MAX_PEDESTRIANS, total=None)
    del crowd["spawners"][0]["total"]
    started = clock.process_time()
    world = World.from_file(write_world(tmp_path, [crowd]))
    assert clock.process_time() - started < 30.0  # placing them is not quadratic
    monkeypatch.setattr(limits, "MAX_PEDESTRIANS", 1010)  # the world's limit, ten above
    world.step(400)  # 2 s of a spawner of 100 a second
    assert world.pedestrian_count() == 1010
    world.close()


def test_replicas_may_not_multiply_people_beyond_the_limit(tmp_path: Path) -> None:
    from sim_server.core.physics.replicas import Replicas

    crowd = copy.deepcopy(CROWD)
    crowd["agents"] = [{"count": 100, "start": "left", "goals": "left"}]
    with pytest.raises(ConfigError, match="hold 10100 pedestrians, more than the limit"):
        World.from_file(write_world(tmp_path, [crowd]), replicas=Replicas(101, 1.0))


# ------------------------------------------------------------------------------------ every numeric key's range
#: Every key of both models, each parameter at its default, so that every range is recorded.
FULL_CROWDS = {
    "social_force": dict(CROWD, parameters={f.name: f.default for f in fields(SocialForceParameters)
                                            if f.name != "wrap_angle"}),
    "orca": dict(CROWD, model="orca", parameters={f.name: f.default for f in fields(OrcaParameters)}),
}


#: Values within their key's range tried (a seeded sample; each walks a crowd for a while).
MAX_CROWD_VALUES_IN_RANGE = 120


class _RangeRecorder(YamlReader):
    """A reader that logs, for every number read with a range, where (the entry), the key, the
    reader and the range."""

    log: list[tuple[str, str, str, Any, Any]] = []

    def _child(self, data: Any, location: str) -> YamlReader:
        return _RangeRecorder(data, self.file, location)

    def get_float(self, key: str, default: Any = REQUIRED, **kwargs: Any) -> float:
        _RangeRecorder.log.append((self.location, key, "float", kwargs.get("within"), default))
        return super().get_float(key, default, **kwargs)

    def get_int(self, key: str, default: Any = REQUIRED, **kwargs: Any) -> int:
        _RangeRecorder.log.append((self.location, key, "int", kwargs.get("within"), default))
        return super().get_int(key, default, **kwargs)

    def get_floats(self, key: str, size: int, default: Any = REQUIRED, **kwargs: Any) -> tuple[float, ...]:
        _RangeRecorder.log.append((self.location, key, f"floats{size}", kwargs.get("within"), default))
        return super().get_floats(key, size, default, **kwargs)


def _document_path(location: str, key: str) -> tuple:
    """The path in a crowd's mapping of ``key`` read at ``location`` (``pedestrians[0]
    ("people").agents[1]``)."""
    path: list[Any] = []
    for part in location.split(")", 1)[1].split(".")[1:]:
        name, _, index = part.partition("[")
        path += [name, int(index.rstrip("]"))] if index else [name]
    return (*path, key)


def _range_cases() -> list[Any]:
    """The bounds of each range and the numbers next to them, with the probes of the plugin-key
    test (the values of the wrong type are :func:`_crowd_variants`'), for every key of the
    social force crowd and the parameters of the ORCA one."""
    from test.sim_plugins.test_plugin_key_abuse import BAD_NUMBERS, REFUSED, WRONG_TYPES, number_values

    generic = [repr(value) for value in BAD_NUMBERS + WRONG_TYPES]
    cases = []
    for model, crowd in FULL_CROWDS.items():
        _RangeRecorder.log = []
        parse_crowds(_RangeRecorder({"pedestrians": [crowd]}, Path("world.yaml")), {"walls"})
        seen = set()
        for location, key, kind, within, default in _RangeRecorder.log:
            path = _document_path(location, key)
            if within is None or path in seen or (model != "social_force" and path[0] != "parameters"):
                continue
            seen.add(path)
            bounds = list(within) if isinstance(within, (list, tuple)) else [within] * int(kind[6:] or 1)
            for position, bound in enumerate(bounds if kind.startswith("floats") else [bound for bound in bounds[:1]]):
                for value, expect in number_values(bound, whole=kind == "int"):
                    if repr(value) in generic:
                        continue
                    if kind.startswith("floats"):
                        try:
                            current = list(_get(crowd, path))
                        except (KeyError, IndexError):  # not in the file: its default
                            current = list(default)
                        current[position] = value
                        value = current
                    cases.append(pytest.param(model, path, value, expect, id=f"{model}:{list(path)}={value!r:.40}"))
    refused = [case for case in cases if case.values[3] == REFUSED]
    others = [case for case in cases if case.values[3] != REFUSED]
    return refused + random.Random("crowd ranges").sample(others, min(len(others), MAX_CROWD_VALUES_IN_RANGE))


@pytest.mark.parametrize(("model", "path", "value", "expect"), _range_cases())
def test_every_numeric_crowd_key_takes_its_whole_range_and_nothing_beyond(
    tmp_path: Path, model: str, path: tuple, value: Any, expect: str
) -> None:
    """Each number a crowd reads with a range of sim_server.core.limits: a value beyond the
    range is refused in one line naming the key; a value within it (its bounds, the numbers
    next to them, 0, 1e-300 ...) loads and walks with finite people, or is refused in one line."""
    from test.sim_plugins.test_plugin_key_abuse import REFUSED
    crowd = _replace(FULL_CROWDS[model], path, value)
    try:
        world = World.from_file(write_world(tmp_path, [crowd]))
    except ConfigError as exc:  # in range, it may still not fit the rest (a radius too wide for the room)
        message = str(exc)
        assert "\n" not in message and "world.yaml" in message, message
        assert expect != REFUSED or f'key "{path[-1]}"' in message, message
        return
    try:
        assert expect != REFUSED, f"{list(path)} = {value!r} was accepted"
        for _ in range(3):
            world.step(40)
            people = world.crowds.named("people")
            assert np.isfinite(people.positions()).all() and np.isfinite(people.people.rows("velocity")).all()
            for body in world.physics.bodies:
                assert math.isfinite(body.position[0]) and math.isfinite(body.position[1])
    finally:
        world.close()


@pytest.mark.parametrize("model", sorted(FULL_CROWDS))
def test_every_range_a_crowd_reads_is_stated_in_limits(model: str) -> None:
    _RangeRecorder.log = []
    parse_crowds(_RangeRecorder({"pedestrians": [FULL_CROWDS[model]]}, Path("world.yaml")), {"walls"})
    constants = [value for value in vars(limits).values() if isinstance(value, limits.Range)]
    ranges = [(key, within) for _, key, _, within, _ in _RangeRecorder.log if within is not None]
    assert ranges
    stray = [key for key, within in ranges
             if not all(any(bound is constant for constant in constants)
                        for bound in (within if isinstance(within, (list, tuple)) else [within]))]
    assert not stray, f"ranges not stated in sim_server.core.limits: {stray}"
