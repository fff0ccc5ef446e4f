"""Attractions of pedsim scenarios, walked: people nearby are drawn at pedsim's rate (0.02 x
strength x closeness per second, none beyond 7 m or at strength 0), stay at spots inside the box
that they can reach, leave at 0.03 per second and go back to their routes; a group goes
together."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from sim_server.core.crowd import attractions
from sim_server.core.crowd.people import AT_ATTRACTION, ON_ROUTE
from sim_server.core.world import World

STEP = 0.05


def scenario_world(tmp_path: Path, body: str, seed: int = 1) -> World:
    (tmp_path / "scene.xml").write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<scenario>\n{body}</scenario>\n')
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - name: floor\npedestrians:\n"
        f"  - {{name: street, pedsim_scenario: scene.xml, seed: {seed}, update_rate: 20}}\n"
    )
    return World.from_file(tmp_path / "world.yaml", step_size=STEP)


def test_a_strong_attraction_draws_a_person_standing_nearby_into_its_box(tmp_path: Path) -> None:
    world = scenario_world(tmp_path, '<attraction id="shop" x="10" y="0" width="4" height="2" strength="50"/>\n'
                                     '<agent x="8" y="-3" n="1"/>\n')
    crowd = world.crowds.named("street")
    drawn_at = None
    inside = 0
    for update in range(int(60 / STEP)):
        world.step(1)
        if crowd.people.activity[0] == AT_ATTRACTION and drawn_at is None:
            drawn_at = update * STEP
        x, y = crowd.local_positions()[0]
        inside += abs(x - 10) <= 2 + 0.5 and abs(y) <= 1 + 0.5
    # rate 0.02 x 50 x (1 - 3.6 / 7) = 0.49 per second: drawn within 20 s but for e^-10
    assert drawn_at is not None and drawn_at < 20.0
    assert inside * STEP > 20.0  # most of the minute in (or at the edge of) the shop
    world.close()


def test_no_pull_at_strength_zero_or_beyond_seven_metres(tmp_path: Path) -> None:
    world = scenario_world(tmp_path, '<attraction id="board" x="0" y="0" width="2" height="2" strength="0"/>\n'
                                     '<attraction id="far" x="30" y="0" width="2" height="2" strength="1000"/>\n'
                                     '<agent x="1" y="3" n="1"/><agent x="22.9" y="0" n="1"/>\n')
    crowd = world.crowds.named("street")
    for _ in range(int(60 / STEP / 20)):
        world.step(20)
        assert (crowd.people.rows("activity") == ON_ROUTE).all()
    world.close()


def test_people_are_drawn_at_pedsims_rate(tmp_path: Path) -> None:
    # 40 people in a column 1.5 m apart, each 3.5 m from an attraction of its own of strength 1:
    # 0.02 x 1 x (1 - 3.5 / 7) = 0.01 per second; over 50 s, 1 - e^-0.5 = 39 % of them
    body = "".join(f'<attraction id="a{k}" x="3.5" y="{1.5 * k:g}" width="0.5" height="0.5" strength="1"/>\n'
                   f'<agent x="0" y="{1.5 * k:g}" n="1"/>\n' for k in range(40))
    world = scenario_world(tmp_path, body, seed=3)
    crowd = world.crowds.named("street")
    ever = np.zeros(40, dtype=bool)
    numbers = crowd.people.rows("number").copy()
    for _ in range(int(50 / STEP)):
        world.step(1)
        ever[np.searchsorted(numbers, crowd.people.rows("number")[crowd.people.rows("activity") == AT_ATTRACTION])] = True
    expected = 1.0 - math.exp(-attractions.BASE_RATE * 1.0 * 0.5 * 50.0)
    assert abs(ever.mean() - expected) < 0.2, (ever.mean(), expected)  # sd of the fraction: 0.08
    world.close()


def test_people_leave_at_pedsims_rate_and_go_back_to_their_route(tmp_path: Path) -> None:
    body = ('<waypoint id="w" x="-2" y="0" r="1"/><waypoint id="e" x="14" y="0" r="1"/>\n'
            '<attraction id="shop" x="6" y="5" width="12" height="4" strength="10000"/>\n'
            '<agent x="6" y="0" n="30" dx="12" dy="4"><addwaypoint id="w"/><addwaypoint id="e"/></agent>\n')
    world = scenario_world(tmp_path, body)
    crowd = world.crowds.named("street")
    shopping_time = 0.0
    leaves = 0
    before = crowd.people.rows("activity").copy()
    for _ in range(int(120 / STEP)):
        world.step(1)
        now = crowd.people.rows("activity")
        shopping_time += float((before == AT_ATTRACTION).sum()) * STEP
        left = (before == AT_ATTRACTION) & (now == ON_ROUTE)
        leaves += int(left.sum())
        for goal in crowd.people.rows("goal")[left].tolist():
            assert goal in ([-2.0, 0.0], [14.0, 0.0])  # back to the waypoint they were walking to
        before = now.copy()
    # a group leaves together: as many leaves as people, on average LEAVE_RATE per second at the shop
    expected = attractions.LEAVE_RATE * shopping_time
    assert 0.7 * expected < leaves < 1.3 * expected, (leaves, expected)  # sd about 12 %
    assert shopping_time > 0.5 * 30 * 120  # strength 10,000: back to the shop right away
    world.close()


def test_a_group_goes_to_the_attraction_and_leaves_it_together(tmp_path: Path) -> None:
    body = ('<waypoint id="w" x="0" y="0" r="1"/><waypoint id="e" x="12" y="0" r="1"/>\n'
            '<attraction id="shop" x="6" y="4" width="6" height="2" strength="20"/>\n'
            '<agent x="6" y="0" n="12" dx="6" dy="2"><addwaypoint id="w"/><addwaypoint id="e"/></agent>\n')
    world = scenario_world(tmp_path, body, seed=4)
    crowd = world.crowds.named("street")
    groups = crowd.people.rows("group")
    assert (groups >= 0).any()
    seen_shopping = False
    for _ in range(int(90 / STEP / 2)):
        world.step(2)
        activity, groups = crowd.people.rows("activity"), crowd.people.rows("group")
        for group in set(groups[groups >= 0].tolist()):
            members = activity[groups == group]
            assert (members == members[0]).all(), members
            seen_shopping |= bool(members[0] == AT_ATTRACTION)
    assert seen_shopping
    world.close()


def test_spots_are_never_inside_walls_or_cut_off(tmp_path: Path) -> None:
    # the shop's box covers a closed square room: nobody may be sent into it
    body = ('<obstacle x1="8" y1="8" x2="12" y2="8"/><obstacle x1="12" y1="8" x2="12" y2="12"/>\n'
            '<obstacle x1="12" y1="12" x2="8" y2="12"/><obstacle x1="8" y1="12" x2="8" y2="8"/>\n'
            '<attraction id="shop" x="10" y="10" width="9" height="9" strength="1000"/>\n'
            '<agent x="10" y="4" n="15" dx="8" dy="1"/>\n')
    world = scenario_world(tmp_path, body, seed=2)
    crowd = world.crowds.named("street")
    spots = []
    for _ in range(int(120 / STEP / 5)):
        world.step(5)
        at = crowd.people.rows("activity") == AT_ATTRACTION
        spots += crowd.people.rows("spot")[at].tolist()
        local = crowd.local_positions()
        assert not ((np.abs(local - 10.0) < 2.0).all(axis=1)).any()
    spots = np.array(spots)
    assert len(spots) and not ((np.abs(spots - 10.0) < 2.0).all(axis=1)).any()  # none in the closed room
    assert (np.abs(spots - 10.0) <= 4.5 + 1e-9).all()  # inside the box
    world.close()
