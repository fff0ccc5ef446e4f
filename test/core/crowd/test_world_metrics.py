"""The robots' social metrics in a running world: a robot driven past a standing person is
measured at the period, its gap and path agree with geometry, touching a person counts, and the
episodes start afresh when a model moves or the world is reset."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sim_server.core import Pose2D
from sim_server.core.crowd.world_metrics import WorldSocialMetrics
from test.core.crowd.test_crowd import make_world

STANDING = "  - name: people\n    radius: 0.3\n    agents:\n      - {start: [-1.5, 1]}\n"
SPEED = 0.5


def drive(world, metrics: WorldSocialMetrics, steps: int, vx: float = SPEED, vy: float = 0.0) -> None:
    body = world.models["robot"].bodies["base"].physics_body
    for _ in range(steps):
        body.linearVelocity = (vx, vy)
        body.angularVelocity = 0.0
        world.step()
        metrics.after_step(world.time)


def test_a_robot_driven_past_a_standing_person(tmp_path: Path) -> None:
    world = make_world(tmp_path, STANDING, robot=True)  # the robot at (-3, 0), radius 0.25
    metrics = WorldSocialMetrics(world, world.time.step_size)
    assert metrics.every == 10  # 0.1 s of 0.01 s steps
    drive(world, metrics, 400)  # 4 s at 0.5 m/s: from x = -3 to x = -1, under the person at (-1.5, 1)
    results = metrics.results()
    assert list(results) == ["robot"]
    robot = results["robot"]
    x, _ = world.models["robot"].bodies["base"].physics_body.position
    assert robot["path_length"] == pytest.approx(x + 3.0, abs=0.06)  # measured from the first step's end
    # closest: the robot's disc under the person's, 1 m apart centre to centre
    assert robot["min_person_gap"] == pytest.approx(1.0 - 0.25 - 0.3, abs=0.02)
    assert robot["personal_steps"] > 0 and robot["intimate_steps"] > 0
    assert robot["person_collisions"] == 0 and robot["finished"] == 0
    assert math.isnan(robot["path_efficiency"])  # no goal on the server
    world.close()


def test_touching_a_person_counts_and_a_move_starts_a_new_episode(tmp_path: Path) -> None:
    world = make_world(tmp_path, STANDING, robot=True)
    metrics = WorldSocialMetrics(world, world.time.step_size)
    drive(world, metrics, 100)  # 0.5 m
    world.move_model("robot", Pose2D(-1.5, 0.3, 0.0))
    drive(world, metrics, 1)
    drive(world, metrics, 100, 0.0, 0.4)  # into the person above it
    robot = metrics.results()["robot"]
    assert robot["person_collisions"] >= 1
    assert robot["path_length"] < 0.5  # the episode began at the move
    world.reset()
    metrics.after_step(world.time)
    drive(world, metrics, 10, 0.0, 0.0)
    assert metrics.results()["robot"]["person_collisions"] == 0
    world.close()
