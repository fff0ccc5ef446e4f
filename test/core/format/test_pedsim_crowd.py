"""pedsim scenarios as crowds of world files (``pedsim_scenario``, ``pedsim_walls``,
``pedsim_robot``): what each element becomes, the walls as a layer robots and lasers see, the
robot agent as a named pose, what is modelled otherwise named in one line, and bad keys, bad
files and generated abuse each refused in one line naming the world file and the key."""

from __future__ import annotations

import logging
import math
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from sim_server.core.errors import ConfigError
from sim_server.core.format.crowd_entries import NO_QUEUE
from sim_server.core.format.pedsim_crowd import ELDER_SPEED, PEDSIM_GROUP_SIZE_MEAN
from sim_server.core.format.pedsim_scenario import read_pedsim_scenario
from sim_server.core.world import World
from test.conftest import DATA_DIR, REPO_ROOT
from test.core.test_abuse import HOSTILE_VALUES, assert_clean_outcome

DATA = DATA_DIR / "pedsim"
STATION = REPO_ROOT / "config" / "worlds" / "pedsim"


def write_world(tmp_path: Path, crowd: dict[str, Any], scenarios: tuple[str, ...] = ("queue.xml",),
                extra: dict[str, Any] | None = None) -> Path:
    """A world of one empty layer and ``crowd``, with the named test scenarios beside it."""
    for name in scenarios:
        shutil.copy(DATA / name, tmp_path / name)
    document = {"properties": {}, "layers": [{"name": "floor"}], "pedestrians": [crowd], **(extra or {})}
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump(document, default_flow_style=True, width=1 << 30))
    return path


def load_error(path: Path) -> str:
    with pytest.raises(ConfigError) as raised:
        World.from_file(path).close()
    message = str(raised.value)
    assert "\n" not in message and "world.yaml" in message and len(message) < 1000, message
    return message


def test_a_queue_scenario_becomes_walls_stops_queues_and_people(tmp_path: Path) -> None:
    scenario = read_pedsim_scenario(DATA / "queue.xml")
    world = World.from_file(write_world(tmp_path, {"name": "hall", "pedsim_scenario": "queue.xml", "seed": 1}))
    crowd = world.crowds.named("hall")
    spec = crowd.spec
    assert crowd.people.count == scenario.people == 15
    assert spec.walls == tuple((o.x1, o.y1, o.x2, o.y2) for o in scenario.obstacles)
    assert [layer.name for layer in world.layers] == ["floor"]  # no pedsim_walls: the people's walls alone
    assert len(crowd._wall_index().segments) == 4
    travellers, children = spec.agents
    assert travellers.count == 12 and children.count == 3
    assert travellers.route.waypoints == ((2.0, 8.0), (20.0, 8.0), (12.0, 14.0), (12.0, 2.0))
    assert [stop.queue for stop in travellers.route.stops] == [NO_QUEUE, 0, 1, NO_QUEUE]
    assert [stop.radius for stop in travellers.route.stops] == [1.5, 0.0, 0.0, 2.0]
    assert travellers.route.loop  # pedsim walks a route round again
    assert [stop.queue for stop in children.route.stops] == [1, NO_QUEUE]  # a queue named by addwaypoint
    assert spec.queues == scenario.queues
    # people who queue walk alone; the others in Poisson groups
    assert travellers.group_size_mean == 0.0 and (crowd.people.rows("group") == -1).all()
    # placed in the cluster's box (dx x dy about x, y)
    placed = crowd.local_positions()[:12]
    assert (np.abs(placed - (4.0, 8.0)) <= (1.0, 2.0)).all()
    world.close()


def test_pedsim_walls_make_a_layer_that_robots_and_lasers_see(tmp_path: Path) -> None:
    world = World.from_file(write_world(tmp_path, {"name": "hall", "pedsim_scenario": "queue.xml", "pedsim_walls": True}))
    assert [layer.name for layer in world.layers] == ["floor", "hall_walls"]
    layer = world.layers[1]
    assert layer.body is not None and len(layer.edges) == 4
    assert np.allclose(np.sort(layer.world_edges(), axis=0), np.sort(np.array(world.crowds.named("hall").spec.walls), axis=0))
    assert len(world.crowds.named("hall")._wall_index().segments) == 4  # the layer's, not twice
    # a ray from the hall's middle eastwards meets the east wall (x = 24)
    from Box2D import b2

    class Nearest(b2.rayCastCallback):
        def __init__(self) -> None:
            super().__init__()
            self.x = math.inf

        def ReportFixture(self, fixture, point, normal, fraction):  # noqa: N802 - Box2D's name
            self.x = min(self.x, point[0])
            return fraction

    ray = Nearest()
    world.physics.RayCast(ray, (12.0, 8.0), (40.0, 8.0))
    assert ray.x == pytest.approx(24.0, abs=1e-6)
    world.close()


def test_a_crowd_with_its_own_layers_gets_the_walls_layer_too(tmp_path: Path) -> None:
    path = write_world(tmp_path, {"name": "hall", "pedsim_scenario": "queue.xml", "pedsim_walls": True, "layers": ["floor"]})
    world = World.from_file(path)
    assert world.crowds.named("hall").spec.layers == ("floor", "hall_walls")
    assert len(world.crowds.named("hall")._wall_index().segments) == 4
    world.close()


def test_the_robot_agent_is_a_named_pose_or_ignored(tmp_path: Path) -> None:
    path = write_world(tmp_path, {"name": "room", "pedsim_scenario": "robot.xml", "pedsim_robot": "robot_start"},
                       ("robot.xml",), {"named_poses": [{"name": "dock", "pose": [3, 3, 0]}]})
    world = World.from_file(path)
    poses = {pose.name: pose for pose in world.spec.named_poses}
    assert set(poses) == {"dock", "robot_start"}
    assert (poses["robot_start"].pose.x, poses["robot_start"].pose.y) == (1.0, 1.0)
    assert "spawn" in poses["robot_start"].tags
    assert world.crowds.named("room").people.count == 5  # the robot is no person
    world.close()
    ignored = World.from_file(write_world(tmp_path, {"name": "room", "pedsim_scenario": "robot.xml"}, ("robot.xml",)))
    assert not ignored.spec.named_poses and ignored.crowds.named("room").people.count == 5
    ignored.close()


def test_elders_walk_slower_and_clusters_split_into_poisson_groups(tmp_path: Path) -> None:
    (tmp_path / "many.xml").write_text(
        '<?xml version="1.0"?>\n<scenario>\n'
        '<waypoint id="a" x="0" y="0" r="1"/><waypoint id="b" x="60" y="0" r="1"/>\n'
        '<agent x="30" y="0" n="400" dx="50" dy="40"><addwaypoint id="a"/><addwaypoint id="b"/></agent>\n'
        '<agent x="30" y="30" n="20" dx="10" dy="4" type="3"><addwaypoint id="a"/></agent>\n'
        "</scenario>\n"
    )
    world = World.from_file(write_world(tmp_path, {"name": "crowd", "pedsim_scenario": "many.xml", "seed": 5}, ()))
    people = world.crowds.named("crowd").people
    speeds, groups = people.rows("speed"), people.rows("group")
    assert (speeds[400:] <= ELDER_SPEED).all() and (speeds[:400] > ELDER_SPEED).any()
    mine = groups[:400]
    sizes = [1] * int((mine < 0).sum()) + np.bincount(mine[mine >= 0]).tolist()
    sizes = [size for size in sizes if size]
    assert sum(sizes) == 400
    # Poisson(1.1) without 0: mean 1.1 / (1 - e^-1.1) = 1.65; 240 groups give its mean within 0.15
    expected = PEDSIM_GROUP_SIZE_MEAN / (1.0 - math.exp(-PEDSIM_GROUP_SIZE_MEAN))
    assert abs(np.mean(sizes) - expected) < 0.15, np.mean(sizes)
    world.close()


def test_what_is_modelled_otherwise_is_named_in_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sim_server"):
        World.from_file(write_world(tmp_path, {"name": "hall", "pedsim_scenario": "queue.xml"})).close()
        World.from_file(write_world(tmp_path, {"name": "street", "pedsim_scenario": "shopping.xml"}, ("shopping.xml",))).close()
    lines = [record.getMessage() for record in caplog.records if "modelled otherwise" in record.getMessage()]
    assert len(lines) == 2 and all("\n" not in line for line in lines), lines
    assert "queue.xml" in lines[0] and "walk alone" in lines[0]
    assert "shopping.xml" in lines[1] and "elders" in lines[1]


def test_the_example_station_loads_and_its_people_queue_shop_and_leave() -> None:
    world = World.from_file(STATION / "world.yaml", step_size=0.05)
    crowd = world.crowds.named("hall")
    assert crowd.people.count == 20
    assert "hall_walls" in [layer.name for layer in world.layers]
    seen = set()
    for _ in range(60):
        world.step(40)
        seen |= set(crowd.people.rows("activity").tolist())
    assert {1, 2, 3} <= seen  # walking to the queue, in it, at a shop
    assert crowd.people.count < 20  # travellers left by the stair (a sink)
    world.close()


@pytest.mark.parametrize(("crowd", "scenarios", "extra", "words"), [
    ({"pedsim_walls": True}, (), None, 'key "pedsim_walls" needs a pedsim_scenario'),
    ({"pedsim_robot": "x"}, (), None, 'key "pedsim_robot" needs a pedsim_scenario'),
    ({"pedsim_scenario": "missing.xml"}, (), None, 'key "pedsim_scenario"'),
    ({"pedsim_scenario": "queue.xml", "pedsim_robot": "r"}, ("queue.xml",), None, "it has 0 of them"),
    ({"pedsim_scenario": "robot.xml", "pedsim_robot": "dock"}, ("robot.xml",),
     {"named_poses": [{"name": "dock", "pose": [0, 0, 0]}]}, 'names pose "dock", which exists already'),
    ({"pedsim_scenario": "queue.xml", "pedsim_walls": True, "name": "floor"}, ("queue.xml",),
     {"layers": [{"name": "floor"}, {"name": "floor_walls"}]}, 'makes layer "floor_walls"'),
    ({"pedsim_scenario": "queue.xml", "pedsim_walls": "yes"}, ("queue.xml",), None, 'key "pedsim_walls"'),
    ({"pedsim_scenario": ["queue.xml"]}, ("queue.xml",), None, 'key "pedsim_scenario"'),
    ({"pedsim_scenario": "queue.xml", "pedsim_robot": ""}, ("queue.xml",), None, 'key "pedsim_robot"'),
])
def test_bad_keys_are_named_in_one_line(tmp_path: Path, crowd: dict, scenarios: tuple, extra: dict | None, words: str) -> None:
    message = load_error(write_world(tmp_path, {"name": "hall", **crowd}, scenarios, extra))
    assert words in message, message


def test_too_many_layers_for_the_walls_layer(tmp_path: Path) -> None:
    layers = [{"name": f"l{index}"} for index in range(16)]
    message = load_error(write_world(tmp_path, {"name": "hall", "pedsim_scenario": "queue.xml", "pedsim_walls": True},
                                     extra={"layers": layers}))
    assert 'adds layer "hall_walls" (pedsim_walls) to 16 layers' in message, message


@pytest.mark.parametrize("content", [
    '<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>\n<scenario>&b;</scenario>\n',
    '<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<scenario>&x;</scenario>\n',
    '<?xml version="1.0"?>\n<scenario><agent x="1" y="1" n="2"><addqueue id="nowhere"/></agent></scenario>\n',
    '<?xml version="1.0"?>\n<scenario><obstacle x1="0" y1="0" x2="nan" y2="1"/></scenario>\n',
    "<scenario>",
])
def test_bad_scenario_files_are_refused_in_one_line_naming_the_world_key_and_file(tmp_path: Path, content: str) -> None:
    (tmp_path / "bad.xml").write_text(content)
    message = load_error(write_world(tmp_path, {"name": "hall", "pedsim_scenario": "bad.xml"}, ()))
    assert 'key "pedsim_scenario"' in message and "bad.xml" in message, message


def test_scenario_places_in_walls_or_out_of_reach_are_named(tmp_path: Path) -> None:
    (tmp_path / "closed.xml").write_text(
        '<?xml version="1.0"?>\n<scenario>\n'
        '<obstacle x1="0" y1="0" x2="4" y2="0"/><obstacle x1="4" y1="0" x2="4" y2="4"/>\n'
        '<obstacle x1="4" y1="4" x2="0" y2="4"/><obstacle x1="0" y1="4" x2="0" y2="0"/>\n'
        '<waypoint id="out" x="10" y="2" r="1"/>\n'
        '<agent x="2" y="2" n="2" dx="1" dy="1"><addwaypoint id="out"/></agent>\n'
        "</scenario>\n"
    )
    message = load_error(write_world(tmp_path, {"name": "hall", "pedsim_scenario": "closed.xml"}, ()))
    assert "closed.xml:6: <agent>" in message and "cannot be reached" in message, message


def _abuse_cases() -> list[Any]:
    base = {"name": "hall", "pedsim_scenario": "queue.xml", "pedsim_walls": True, "pedsim_robot": "r", "seed": 1}
    cases = []
    for key in ("pedsim_scenario", "pedsim_walls", "pedsim_robot", "name"):
        for value in HOSTILE_VALUES:
            cases.append(pytest.param({**base, key: value}, id=f"{key} = {value!r:.30}"))
    return random.Random("pedsim crowd abuse").sample(cases, 40)


@pytest.mark.parametrize("crowd", _abuse_cases())
def test_generated_bad_keys_load_cleanly_or_fail_in_one_line(tmp_path: Path, crowd: dict) -> None:
    assert_clean_outcome(write_world(tmp_path, crowd, ("queue.xml", "robot.xml")))
