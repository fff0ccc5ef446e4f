"""Waiting queues and the stops of pedsim scenarios, walked: people line up behind each other in
the order they came, against the queue's direction and apart; the first waits at the head as
pedsim's gamma wait says and goes on; sinks take people out of the world; a waypoint's radius is
where it counts as reached; copies of a world keep their own lines."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core.crowd import queues
from sim_server.core.crowd.people import APPROACHING_QUEUE, IN_QUEUE, ON_ROUTE
from sim_server.core.physics.replicas import Replicas
from sim_server.core.world import World

STEP = 0.02


def scenario_world(tmp_path: Path, body: str, model: str = "social_force", seed: int = 1, **kwargs) -> World:
    (tmp_path / "scene.xml").write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<scenario>\n{body}</scenario>\n')
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - name: floor\npedestrians:\n"
        f"  - {{name: hall, model: {model}, pedsim_scenario: scene.xml, seed: {seed}, speed: [1.2, 1.4]}}\n"
    )
    return World.from_file(tmp_path / "world.yaml", step_size=STEP, **kwargs)


#: A corridor 40 x 8 m; a queue at x = 30 facing east (the line grows west), then a sink.
CORRIDOR = (
    '<obstacle x1="0" y1="0" x2="40" y2="0"/><obstacle x1="40" y1="0" x2="40" y2="8"/>\n'
    '<obstacle x1="40" y1="8" x2="0" y2="8"/><obstacle x1="0" y1="8" x2="0" y2="0"/>\n'
    '<queue id="desk" x="30" y="4" direction="0"/>\n'
    '<waypoint id="exit" x="37" y="1.5" r="1" b="2"/>\n'
)


def arrivals(count: int, spacing: float) -> str:
    """People coming one after another from the west, ``spacing`` m apart."""
    return "".join(
        f'<agent x="{4 + spacing * k:g}" y="4" n="1"><addqueue id="desk"/><addwaypoint id="exit"/></agent>\n'
        for k in reversed(range(count))
    )


@pytest.mark.parametrize("model", ["social_force", "orca"])
def test_people_line_up_in_the_order_they_came_and_pass_one_by_one(tmp_path: Path, model: str) -> None:
    world = scenario_world(tmp_path, CORRIDOR + arrivals(6, 0.8), model)
    crowd = world.crowds.named("hall")
    lines = crowd.goals.queues.lines[0]
    numbers_by_x = crowd.people.rows("number")[np.argsort(-crowd.local_positions()[:, 0])].tolist()
    joined: list[int] = []
    passed: list[int] = []
    lined_up = False
    for _ in range(int(120 / STEP / 2)):
        world.step(2)  # one crowd update
        passed += [number for number in joined if number not in lines[0] and number not in passed]
        joined += [number for number in lines[0] if number not in joined]
        people = crowd.people
        in_line = people.rows("activity") == IN_QUEUE
        if in_line.sum() >= 4:
            lined_up = True
            local = crowd.local_positions()[in_line]
            # the line grows west of the head (the queue faces east), its people apart
            assert (local[:, 0] < 30.0 + 0.6).all()
            gaps = np.linalg.norm(local[:, None] - local[None], axis=2) + np.eye(len(local)) * 9
            assert gaps.min() > 2 * crowd.spec.radius - 0.1, gaps.min()
        if people.count == 0:
            break
    assert lined_up
    assert sorted(joined) == sorted(numbers_by_x)  # everyone queued
    assert passed == joined  # first come, first served
    assert crowd.people.count == 0
    world.close()


def test_the_wait_at_the_head_is_pedsims_gamma_on_average(tmp_path: Path) -> None:
    world = scenario_world(tmp_path, CORRIDOR + arrivals(12, 0.8))
    crowd = world.crowds.named("hall")
    waits: dict[float, float] = {}
    for _ in range(int(200 / STEP)):
        world.step(1)
        release = crowd.goals.queues.release[0][0]
        if math.isfinite(release) and release not in waits:
            waits[release] = release - (world.time.sim_time - STEP)  # drawn at the update before this step
        if crowd.people.count == 0:
            break
    assert crowd.people.count == 0 and len(waits) == 12
    assert queues.WAIT_SHAPE * queues.WAIT_SCALE == 1.0  # pedsim's: 1 s on average
    values = np.array(list(waits.values()))
    assert (values > 0.0).all()
    assert 0.4 < values.mean() < 1.6, values  # 12 draws of a gamma(2, 0.5): sd of the mean 0.2 s
    world.close()


def test_people_walking_to_a_line_join_its_end_not_its_head(tmp_path: Path) -> None:
    # five stand in line already (they start at the head); one comes from the east, past the head
    body = CORRIDOR.replace('direction="0"', 'direction="180"')  # facing west: the line grows east
    body += "".join(f'<agent x="{30 + 1.2 * k:g}" y="4" n="1"><addqueue id="desk"/></agent>\n' for k in range(5))
    body += '<agent x="12" y="4" n="1"><addqueue id="desk"/></agent>\n'
    world = scenario_world(tmp_path, body)
    crowd = world.crowds.named("hall")
    late = int(crowd.people.rows("number")[np.argmin(crowd.local_positions()[:, 0])])
    for _ in range(400):
        world.step(5)
        row = int(np.flatnonzero(crowd.people.rows("number") == late)[0])
        if crowd.people.activity[row] == IN_QUEUE:
            break
    line = crowd.goals.queues.lines[0][0]
    assert crowd.people.activity[row] == IN_QUEUE and late in line[-2:] and len(line) >= 4
    # it walked past the head (x = 30) to the line's end, east of it
    assert crowd.local_positions()[row, 0] > 30.0 + 1.5, crowd.local_positions()[row]
    world.close()


def test_a_waypoints_radius_is_where_it_counts_as_reached(tmp_path: Path) -> None:
    body = ('<waypoint id="a" x="0" y="0" r="3"/><waypoint id="b" x="20" y="0" r="3"/>\n'
            '<agent x="10" y="0" n="1"><addwaypoint id="a"/><addwaypoint id="b"/></agent>\n')
    world = scenario_world(tmp_path, body)
    crowd = world.crowds.named("hall")
    turned_at = None
    for _ in range(int(12 / STEP)):
        before = math.hypot(*crowd.local_positions()[0])
        world.step(1)
        if crowd.people.waypoint[0] == 1:
            turned_at = before  # where it was at the update that gave it b
            break
    # it turns for b once within 3 m of a, at the first update there (an update's walk at most)
    assert turned_at is not None and 3.0 - 1.4 * crowd.dt - 0.01 < turned_at <= 3.0, turned_at
    world.close()


def test_sinks_take_people_out_and_plain_stops_do_not(tmp_path: Path) -> None:
    body = ('<waypoint id="a" x="0" y="0" r="1"/><waypoint id="out" x="10" y="0" r="1" b="2"/>\n'
            '<waypoint id="src" x="10" y="5" r="1" b="1"/>\n'
            '<agent x="3" y="0" n="3" dx="1" dy="1"><addwaypoint id="a"/><addwaypoint id="out"/></agent>\n'
            '<agent x="3" y="5" n="2" dx="1" dy="1"><addwaypoint id="src"/><addwaypoint id="a"/></agent>\n')
    world = scenario_world(tmp_path, body)
    crowd = world.crowds.named("hall")
    world.step(int(30 / STEP))
    assert crowd.people.count == 2  # the three went out; a source is a plain stop
    world.close()


def test_copies_of_a_world_keep_their_own_lines_and_the_first_queues_as_alone(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    alone = scenario_world(tmp_path / "a", CORRIDOR + arrivals(5, 2.0), seed=7)
    copied = scenario_world(tmp_path / "b", CORRIDOR + arrivals(5, 2.0), seed=7, replicas=Replicas(3, 2.0))
    alone.crowds.named("hall").restart(0, 11)
    copied.crowds.named("hall").restart(0, 11)
    for _ in range(40):
        alone.step(50)
        copied.step(50)
        mine = copied.crowds.named("hall")
        lines = mine.goals.queues.lines
        numbers = dict(zip(mine.people.rows("number").tolist(), mine.people.rows("copy").tolist()))
        for copy, copy_lines in enumerate(lines):
            assert all(numbers[number] == copy for number in copy_lines[0])
        first = mine.local_positions()[mine.people.rows("copy") == 0]
        assert np.allclose(np.sort(first, axis=0), np.sort(alone.crowds.named("hall").local_positions(), axis=0), atol=1e-3)
    alone.close()
    copied.close()


def test_people_go_on_along_their_route_after_the_queue(tmp_path: Path) -> None:
    body = CORRIDOR.replace('b="2"', 'b="0"') + (
        '<agent x="10" y="4" n="2" dx="1" dy="1"><addqueue id="desk"/><addwaypoint id="exit"/></agent>\n')
    world = scenario_world(tmp_path, body)
    crowd = world.crowds.named("hall")
    activities = set()
    for _ in range(300):
        world.step(10)
        activities |= set(crowd.people.rows("activity").tolist())
    assert {APPROACHING_QUEUE, IN_QUEUE, ON_ROUTE} <= activities
    assert crowd.people.count == 2  # exit is plain here: they loop back to the queue
    world.close()
