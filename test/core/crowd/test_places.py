"""Places of a crowd out of reach: every start, waypoint, goal region and spawner place is
checked, as the world loads, against where its people are; generated places are judged by the
room's geometry, independently of the walking grid."""

from __future__ import annotations

import copy
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sim_server.core.errors import RequestError
from sim_server.core.world import World
from test.core.format.test_crowd_file import CROWD, load_error, write_world

#: The walls of test_crowd_file's ROOM: a 12 x 8 m building split by a closed wall at x = 0.
WALLS = [(-6, -4, 6, -4), (6, -4, 6, 4), (6, 4, -6, 4), (-6, 4, -6, -4), (0, -4, 0, 4)]
RADIUS = 0.3
#: Places nearer than this (m) to where a body would touch a wall are not generated: the walking
#: grid's cells (0.2 m) decide them either way.
AMBIGUOUS = 0.3


def wall_distance(x: float, y: float) -> float:
    """Distance (m) from (x, y) to the nearest wall."""
    best = math.inf
    for ax, ay, bx, by in WALLS:
        dx, dy = bx - ax, by - ay
        t = min(max(((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy), 0.0), 1.0)
        best = min(best, math.hypot(ax + t * dx - x, ay + t * dy - y))
    return best


def side(x: float, y: float) -> str:
    """Which side of the walls (x, y) lies on: "left" or "right" (the rooms) or "outside"."""
    if -6 < x < 6 and -4 < y < 4:
        return "left" if x < 0 else "right"
    return "outside"


def zone(x: float, y: float) -> str:
    """Where a body at (x, y) stands: "wall" (touching one), else its :func:`side`."""
    return "wall" if wall_distance(x, y) < RADIUS else side(x, y)


def clear_point(rng: random.Random) -> tuple[float, float]:
    """A point not within :data:`AMBIGUOUS` of the radius band around a wall (or a far one)."""
    if rng.random() < 0.1:
        return rng.choice([(200.0, 200.0), (1000.0, 0.0), (-3000.0, 50.0), (0.0, -400.0)])
    while True:
        x, y = round(rng.uniform(-12, 12), 2), round(rng.uniform(-9, 9), 2)
        if abs(wall_distance(x, y) - RADIUS) > AMBIGUOUS:
            return x, y


def expected_error(start_key: str, start: tuple[float, float], waypoints: list[tuple[float, float]]) -> str | None:
    """The words the load must fail with, by the geometry (None: it must load)."""
    if zone(*start) == "wall":
        return f'key "{start_key}" ({start[0]:g}, {start[1]:g}) lies within'
    for index, point in enumerate(waypoints):
        if zone(*point) == "wall":
            return f'waypoint {index} ({point[0]:g}, {point[1]:g}) lies within'
        if zone(*point) != zone(*start):
            return f"waypoint {index} {[float(v) for v in point]} cannot be reached from"
    return None


def _cases() -> list[Any]:
    rng = random.Random("places out of reach")
    cases = []
    for number in range(60):
        start = clear_point(rng)
        waypoints = [clear_point(rng) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.5:  # more often in the start's zone, so that some load
            waypoints = [point for point in waypoints if zone(*point) == zone(*start)] or waypoints
        spawner = number % 3 == 0
        cases.append(pytest.param(start, waypoints, spawner, id=f"{'spawner' if spawner else 'agent'}-{start}-{waypoints}"))
    return cases


@pytest.mark.parametrize(("start", "waypoints", "spawner"), _cases())
def test_generated_places_load_exactly_when_their_people_can_walk_them(
    tmp_path: Path, start: tuple[float, float], waypoints: list[tuple[float, float]], spawner: bool
) -> None:
    crowd = copy.deepcopy(CROWD)
    if spawner:
        crowd["spawners"] = [{"at": list(start), "rate": 5.0, "limit": 2, "waypoints": [list(p) for p in waypoints]}]
        crowd["agents"] = []
        key, where = "at", "spawners[0]"
    else:
        crowd["agents"] = [{"count": 2, "start": list(start), "waypoints": [list(p) for p in waypoints]}]
        crowd["spawners"] = []
        key, where = "start", "agents[0]"
    wanted = expected_error(key, start, waypoints)
    if wanted is not None:
        message = load_error(tmp_path, [crowd])
        assert wanted in message and f'("people").{where}' in message, (wanted, message)
        return
    world = World.from_file(write_world(tmp_path, [crowd]))
    try:
        world.step(100)
        people = world.crowds.named("people")
        assert np.isfinite(people.positions()).all()
        for x, y in people.positions():
            assert side(float(x), float(y)) == side(*start), (x, y)
    finally:
        world.close()


def test_the_abuse_run_s_places_out_of_reach_are_refused_in_one_line(tmp_path: Path) -> None:
    crowd = copy.deepcopy(CROWD)
    crowd["agents"][1]["waypoints"] = [[-3, 2], [200, 200]]  # beyond the map, from inside the building
    message = load_error(tmp_path, [crowd])
    assert 'agents[1]: key "waypoints": waypoint 1 [200.0, 200.0] cannot be reached from waypoint 0: it lies outside the walls' in message, message
    crowd = copy.deepcopy(CROWD)
    crowd["regions"]["far"] = [100, 100, 120, 110]  # a goal region entirely beyond the map
    crowd["agents"][0]["goals"] = "far"
    message = load_error(tmp_path, [crowd])
    assert 'agents[0]: key "goals": region "far" cannot be reached from any place of region "left": it lies outside the walls' in message, message
    crowd = copy.deepcopy(CROWD)
    crowd["agents"][1]["start"] = [1000, 0]  # 1 km outside the building, its waypoints inside
    message = load_error(tmp_path, [crowd])
    assert 'agents[1]: key "waypoints": waypoint 0 [-3.0, 2.0] cannot be reached from the start: walls close it off' in message, message
    crowd = copy.deepcopy(CROWD)
    crowd["spawners"][0]["at"] = [-3000, 50]
    message = load_error(tmp_path, [crowd])
    assert "spawners[0]: key \"waypoints\": waypoint 0 [-1.0, 0.0] cannot be reached from the spawner's place" in message, message


def test_a_region_across_walls_places_people_only_where_their_route_goes_on(tmp_path: Path) -> None:
    crowd = copy.deepcopy(CROWD)
    crowd["regions"]["porch"] = [-9.0, -3.0, -3.0, 3.0]  # half outside the building, half in its left room
    crowd["agents"] = [
        {"count": 12, "start": "porch", "waypoints": [[-2, 0]]},  # inside: only the room's half will do
        {"count": 12, "start": "porch", "waypoints": [[-10, 5]]},  # outside: only the porch's outer half
        {"count": 6, "start": "porch", "goals": "left"},
    ]
    crowd["spawners"] = [{"at": "porch", "rate": 20.0, "limit": 10, "waypoints": [[-3, 3]]}]
    world = World.from_file(write_world(tmp_path, [crowd]))
    try:
        people = world.crowds.named("people")
        zones = [side(float(x), float(y)) for x, y in people.positions()]
        assert zones[:12] == ["left"] * 12 and zones[12:24] == ["outside"] * 12 and zones[24:] == ["left"] * 6
        world.step(100)  # the spawner's people too
        rows = people.people.rows("spawned")
        arrived = [side(float(x), float(y)) for x, y in people.positions()[rows]]
        assert arrived and set(arrived) <= {"left"}
    finally:
        world.close()
    crowd["agents"] = [{"count": 1, "start": "porch", "waypoints": [[3, 0]]}]  # the right room: from no part of it
    message = load_error(tmp_path, [crowd])
    assert 'waypoint 0 [3.0, 0.0] cannot be reached from any place of region "porch": walls close it off' in message, message


def test_people_outside_walk_round_the_building_to_a_place_beyond_the_map(tmp_path: Path) -> None:
    crowd = copy.deepcopy(CROWD)
    crowd["agents"] = [{"count": 1, "start": [-8, 0.5], "waypoints": [[16, 0.5]], "loop": False}]
    crowd["spawners"] = []
    world = World.from_file(write_world(tmp_path, [crowd]))
    try:
        people = world.crowds.named("people")
        for _ in range(80):
            world.step(100)
            if math.dist(people.positions()[0], (16, 0.5)) < 0.6:
                break
        assert math.dist(people.positions()[0], (16, 0.5)) < 0.6, people.positions()
    finally:
        world.close()


def test_run_time_people_and_places_keep_to_where_their_goals_can_be_reached(tmp_path: Path) -> None:
    world = World.from_file(write_world(tmp_path, [CROWD]))
    try:
        people = world.crowds.named("people")
        with pytest.raises(RequestError, match=r"goal 0 \(200, 200\) cannot be reached"):
            people.add((-3.0, 0.0), [(200.0, 200.0)])
        name = people.add((-9.0, 0.0), [(200.0, 200.0)])  # outside both: fine
        with pytest.raises(RequestError, match="goals cannot be reached"):
            people.place(people.row_of(name), -3.0, 0.0, 0.0, 0.0, 0.0)  # into the building
        row = 4  # the entry walking waypoints in the left room
        with pytest.raises(RequestError, match="goals cannot be reached"):
            people.place(row, 3.0, 0.0, 0.0, 0.0, 0.0)  # into the right room
        people.place(row, -2.0, 1.0, 0.0, 0.0, 0.0)  # elsewhere in its room
    finally:
        world.close()
