"""Which people's bodies are active in Box2D: everyone a dynamic body may reach before the next
check, and nobody else; people walk the same either way, and robots meet them wherever they go."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim_server.core import Pose2D
from sim_server.core.crowd import touch
from sim_server.core.crowd.touch import REACH_HYSTERESIS, within_reach
from test.core.crowd.test_crowd import WALKERS, make_world

#: Radii (m) of a person and of the test robot.
PERSON, ROBOT = 0.3, 0.25


@pytest.mark.parametrize("seed", range(5))
def test_within_reach_is_every_pair_s_answer(seed: int) -> None:
    rng = np.random.default_rng(seed)
    people = rng.uniform(-20.0, 20.0, (300, 2))
    bodies = rng.uniform(-20.0, 20.0, (12, 2))
    reach = rng.uniform(0.5, 4.0, 12)
    active = rng.random(300) < 0.5
    out = np.zeros(300, dtype=bool)
    within_reach(people, 300, bodies, reach, REACH_HYSTERESIS, active, out)
    distances = np.linalg.norm(people[:, None, :] - bodies[None, :, :], axis=2)
    must = (distances <= reach[None, :]).any(axis=1)
    may = (distances <= reach[None, :] + REACH_HYSTERESIS).any(axis=1)
    assert np.array_equal(out, must | (active & may))
    assert must.any() and not must.all()


def test_without_bodies_nobody_is_active() -> None:
    out = np.ones(3, dtype=bool)
    within_reach(np.zeros((3, 2)), 3, np.zeros((0, 2)), np.zeros(0), REACH_HYSTERESIS, np.ones(3, dtype=bool), out)
    assert not out.any()


def test_only_people_near_a_robot_are_active(tmp_path: Path) -> None:
    world = make_world(tmp_path, WALKERS, robot=True)
    crowd = world.crowds.named("people")
    body = world.models["robot"].first_body.physics_body  # people walking into it push it
    seen_active = seen_inactive = 0
    world.step(1)
    walked = 2 * 1.5 * world.time.step_size  # at most, by a person and the robot since the check (m)
    for _ in range(100):
        world.step(crowd.every)  # a check ran one step ago, on the crowd's update
        gaps = np.linalg.norm(crowd.positions() - np.array(body.position), axis=1) - PERSON - ROBOT
        active = crowd.people.rows("active")
        assert active[gaps <= touch.REACH_SLACK - walked].all()  # whoever the still robot may touch
        fastest = float(np.hypot(*crowd.people.rows("velocity").T).max())  # (m/s) as the last check saw them
        assert not active[gaps > touch.REACH_SLACK + REACH_HYSTERESIS + fastest * crowd.dt + walked].any()
        assert np.array_equal(active, [body.active for body in crowd.people.bodies])
        seen_active += active.sum()
        seen_inactive += (~active).sum()
    assert seen_active and seen_inactive
    world.close()


def test_people_walk_the_same_whether_bodies_are_active_or_not(tmp_path: Path, monkeypatch) -> None:
    """Inactive people move on the crowd's arrays as Box2D would have moved their bodies."""
    default = make_world(tmp_path / "a", WALKERS, robot=True) if (tmp_path / "a").mkdir() is None else None
    default.step(500)
    monkeypatch.setattr(touch, "REACH_SLACK", 1e4)  # every body active
    everyone = make_world(tmp_path / "b", WALKERS, robot=True) if (tmp_path / "b").mkdir() is None else None
    everyone.step(500)
    assert everyone.crowds.named("people").people.rows("active").all()
    assert not default.crowds.named("people").people.rows("active").all()
    a, b = default.crowds.named("people").positions(), everyone.crowds.named("people").positions()
    assert np.abs(a - b).max() < 1e-4  # float32 integration in Box2D against float64 on the arrays
    default.close()
    everyone.close()


def _touching(world, name: str) -> bool:
    return any(name in (contact.entity_a, contact.entity_b) and "robot" in (contact.entity_a, contact.entity_b)
               for contact in world.contacts())


def test_a_robot_put_on_a_person_meets_it_before_the_next_update(tmp_path: Path) -> None:
    world = make_world(tmp_path, "  - name: one\n    agents:\n      - {start: [3, 0]}\n", robot=True)
    crowd = world.crowds.named("one")
    world.step(crowd.every + 1)  # the next update is every - 1 steps away
    assert crowd.every >= 3 and not crowd.people.rows("active").any()  # the robot is 6 m away
    world.move_model("robot", Pose2D(3.4, 0.0, 0.0))  # overlapping the person
    world.step(2)  # Box2D pairs new bodies on the step after they enter its broad phase
    assert crowd.people.rows("active").all()
    assert _touching(world, "one_0")
    world.step(crowd.every)
    robot = world.models["robot"].first_body.physics_body
    assert np.linalg.norm(np.array(robot.position) - (3.0, 0.0)) > PERSON + ROBOT - 0.02  # pushed out
    world.close()


@pytest.mark.parametrize("speed", [2.0, 40.0])
def test_a_robot_that_speeds_up_between_updates_still_meets_people(tmp_path: Path, speed: float) -> None:
    """A robot standing still when the crowd last looked, then launched at a person: the person
    stops it, however fast it comes (the speed guard checks again on the step it speeds up)."""
    world = make_world(tmp_path, "  - name: one\n    agents:\n      - {start: [-1.5, 0]}\n", robot=True)
    crowd = world.crowds.named("one")
    robot = world.models["robot"].first_body.physics_body  # at (-3, 0)
    world.step(crowd.every + 1)  # the last update was a step ago: the next is every - 1 steps away
    assert crowd.every >= 3 and not crowd.people.rows("active").any()
    touched = False
    for _ in range(200):
        if robot.position.x < -2.0:
            robot.linearVelocity = (speed, 0.0)
        world.step()
        touched |= _touching(world, "one_0")
        assert robot.position.x < -1.5 - PERSON - ROBOT + 0.02  # Box2D's slop, no more
    assert touched
    world.close()
