"""CrowdNav's scenarios (sim_server.learning.crowdnav): the people drawn as CrowdNav draws them,
the world files, the robot's kinematics, the people's view of the robot, the time limit and bad
arguments."""

from __future__ import annotations

import math

import gymnasium
import numpy as np
import pytest

import sim_server.learning  # noqa: F401 - registers the environments
from sim_server.core.format.world_file import load_world_file
from sim_server.core.world import World
from sim_server.learning.crowdnav import (
    CROWDNAV_WORLDS, ROBOT_GOAL, ROBOT_START, SCENARIOS, crowdnav_env, crowdnav_task, crowdnav_world, draw_people,
)


def crowdnav_draw(rule: str, seed: int, count: int = 5, radius: float = 0.3, speed: float = 1.0,
                  width: float = 10.0, circle: float = 4.0, discomfort: float = 0.2) -> list[tuple]:
    """An oracle written from crowd_sim.py's reset: np.random.seed(seed) and the module-level
    generator, the robot at (0, -4) to (0, 4), people drawn one after another."""
    np.random.seed(seed)
    agents = [(0.0, -circle, 0.0, circle, 0.3)]  # px, py, gx, gy, radius
    for _ in range(count):
        if rule == "circle_crossing":
            while True:
                angle = np.random.random() * np.pi * 2
                px = circle * np.cos(angle) + (np.random.random() - 0.5) * speed
                py = circle * np.sin(angle) + (np.random.random() - 0.5) * speed
                if all(np.hypot(px - a[0], py - a[1]) >= radius + a[4] + discomfort
                       and np.hypot(px - a[2], py - a[3]) >= radius + a[4] + discomfort for a in agents):
                    break
            agents.append((px, py, -px, -py, radius))
        else:
            sign = -1 if np.random.random() > 0.5 else 1
            while True:
                px = np.random.random() * width * 0.5 * sign
                py = (np.random.random() - 0.5) * width
                if all(np.hypot(px - a[0], py - a[1]) >= radius + a[4] + discomfort for a in agents):
                    break
            while True:
                gx = np.random.random() * width * 0.5 * -sign
                gy = (np.random.random() - 0.5) * width
                if all(np.hypot(gx - a[2], gy - a[3]) >= radius + a[4] + discomfort for a in agents):
                    break
            agents.append((px, py, gx, gy, radius))
    return agents[1:]


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("seed", [0, 1000, 1007, 123456])
def test_people_are_drawn_as_crowdnav_draws_them(scenario: str, seed: int) -> None:
    starts, goals = draw_people(scenario, 5, seed, 0.3, 1.0)
    expected = np.array(crowdnav_draw(scenario, seed))
    np.testing.assert_array_equal(starts, expected[:, 0:2])
    np.testing.assert_array_equal(goals, expected[:, 2:4])


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_world_files_walk_test_case_0(scenario: str) -> None:
    """The world files hold CrowdNav's test case 0 (seed 1000), to four decimals, and load."""
    spec = load_world_file(CROWDNAV_WORLDS / f"{scenario}.yaml")
    (crowd,) = spec.crowds
    starts, goals = draw_people(scenario, 5, 1000, 0.3, 1.0)
    np.testing.assert_allclose([agent.start.point for agent in crowd.agents], starts.round(4), atol=1e-9)
    np.testing.assert_allclose([agent.route.waypoints[0] for agent in crowd.agents], goals.round(4), atol=1e-9)
    world = World.from_file(CROWDNAV_WORLDS / f"{scenario}.yaml")
    try:
        assert world.crowds[0].people.count == 5
        for _ in range(50):
            world.step()
    finally:
        world.close()


def test_an_episode_starts_as_crowdnav_does() -> None:
    env = crowdnav_env("square_crossing")
    try:
        env.reset(seed=1007)
        robot = env.world.models["robot"].first_body.physics_body
        assert (robot.position.x, robot.position.y) == pytest.approx(ROBOT_START)
        assert robot.angle == pytest.approx(math.pi / 2)
        assert env.goal == pytest.approx(ROBOT_GOAL)
        crowd = env.world.crowds[0]
        starts, goals = draw_people("square_crossing", 5, 1007, 0.3, 1.0)
        np.testing.assert_allclose(crowd.local_positions(), starts, atol=1e-9)
        np.testing.assert_allclose(crowd.people.rows("goal"), goals, atol=1e-9)
    finally:
        env.close()


def test_the_holonomic_robot_moves_at_most_at_its_preferred_speed() -> None:
    env = crowdnav_env("circle_crossing")
    try:
        env.reset(seed=1000)
        for _ in range(3):
            env.step([1.0, 0.0, 1.0])
        vx, vy = env.world.models["robot"].first_body.physics_body.linearVelocity
        assert math.hypot(vx, vy) == pytest.approx(1.0, abs=0.02)
    finally:
        env.close()


def test_a_robot_that_stands_still_times_out_after_25_s() -> None:
    env = gymnasium.make("sim_server.learning:sim_server/CircleCrossing-v0", kinematics="unicycle")
    try:
        env.reset(seed=1001)
        assert env.action_space.shape == (2,)
        steps, truncated, info = 0, False, {}
        while not truncated:
            _, _, terminated, truncated, info = env.step([0.0, 0.0])
            steps += 1
            assert not terminated
        assert steps == 100 and info["time"] == pytest.approx(25.0)
        assert (info["timeout"], info["success"], info["collision"]) == (1.0, 0.0, 0.0)
    finally:
        env.close()


def people_paths(robot_visible: bool) -> np.ndarray:
    env = crowdnav_env("circle_crossing", robot_visible=robot_visible)
    try:
        env.reset(seed=1000)
        paths = []
        for _ in range(16):
            env.step([1.0, 0.0, 0.0])
            paths.append(env.world.crowds[0].local_positions().copy())
        return np.array(paths)
    finally:
        env.close()


def test_an_invisible_robot_changes_the_peoples_paths() -> None:
    """People who see the robot driving through the circle walk elsewhere than people who do not."""
    seen, unseen = people_paths(True), people_paths(False)
    assert np.abs(seen - unseen).max() > 0.1
    assert np.array_equal(unseen, people_paths(False))


@pytest.mark.parametrize("arguments, message", [
    ({"scenario": "circle"}, "scenario must be one of circle_crossing, square_crossing, got 'circle'"),
    ({"scenario": 3}, "scenario must be one of"),
    ({"kinematics": "car"}, "kinematics must be one of holonomic, unicycle, got 'car'"),
    ({"kinematics": None}, "kinematics must be one of"),
    ({"people": "boids"}, "people must be one of orca, social_force, got 'boids'"),
    ({"robot_visible": 1}, "robot_visible must be True or False, got 1"),
    ({"robot_visible": "no"}, "robot_visible must be True or False, got 'no'"),
])
def test_bad_arguments_are_refused_in_one_line(arguments: dict, message: str) -> None:
    with pytest.raises(ValueError) as error:
        crowdnav_world(**arguments)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_generated_bad_values_are_refused_in_one_line() -> None:
    rng = np.random.default_rng(5)
    values = [None, 0, -1, 1.5, math.nan, "", "x" * 300, b"orca", [], {}, object(), True]
    for _ in range(40):
        key = str(rng.choice(["scenario", "kinematics", "people", "robot_visible"]))
        value = values[int(rng.integers(len(values)))]
        if key == "robot_visible" and isinstance(value, bool):
            continue
        with pytest.raises(ValueError) as error:
            crowdnav_world(**{key: value})
        assert key in str(error.value) and "\n" not in str(error.value) and len(str(error.value)) < 300
    with pytest.raises(ValueError, match="kinematics must be one of"):
        crowdnav_task("omni")
