"""The Gymnasium navigation environment: Gymnasium's own checks, registration, seeds, rewards
for reaching the goal and for collisions, pictures, and tasks that cannot be used."""

from __future__ import annotations

import math
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sim_server.learning import NAVIGATION_ID, NavigationEnv, NavigationTask

ROBOT = """
bodies:
  - name: base
    color: [0.2, 0.4, 1.0, 0.9]
    footprints: [{type: circle, radius: 0.2, density: 10}]
plugins:
  - {type: DiffDrive, name: drive, body: base}
  - {type: Laser, name: laser, body: base, range: 8, update_rate: 0, angle: {min: -3.14159265, max: 3.12413936, increment: 0.01745329}}
"""


@pytest.fixture
def empty_room(tmp_path: Path) -> Path:
    """A 10 x 10 m room with nothing in it."""
    (tmp_path / "room.dat").write_text("-5 -5 5 -5\n5 -5 5 5\n5 5 -5 5\n-5 5 -5 -5\n")
    (tmp_path / "room.yaml").write_text("type: line_segments\ndata: room.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "robot.model.yaml").write_text(ROBOT)
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - {name: walls, map: room.yaml, color: [0, 1, 0, 1]}\n"
        "models:\n  - {name: robot, model: robot.model.yaml, pose: [0, 0, 0]}\n"
    )
    return tmp_path / "world.yaml"


def steer(observation: np.ndarray) -> np.ndarray:
    """A proportional controller towards the goal (the observation's goal vector)."""
    ahead, left = float(observation[-4]), float(observation[-3])
    bearing = math.atan2(left, ahead)
    return np.array([1.0 if abs(bearing) < 0.3 else 0.0, np.clip(2.0 * bearing, -1.0, 1.0)], dtype=np.float32)


def test_gymnasium_s_checks_pass() -> None:
    env = gymnasium.make(NAVIGATION_ID, render_mode="rgb_array", disable_env_checker=True)
    try:
        check_env(env.unwrapped, skip_render_check=False)
    finally:
        env.close()


def test_made_by_its_registered_id_with_a_time_limit() -> None:
    env = gymnasium.make(f"sim_server.learning:{NAVIGATION_ID}")
    try:
        assert env.spec.max_episode_steps == 500 and isinstance(env.unwrapped, NavigationEnv)
        observation, info = env.reset(seed=3)
        assert env.observation_space.contains(observation) and observation.shape == (40,)
        truncated = False
        for _ in range(500):
            observation, reward, terminated, truncated, info = env.step(np.zeros(2, dtype=np.float32))
            assert not terminated  # standing still: neither the goal nor a wall
        assert truncated
    finally:
        env.close()


def test_the_same_seed_and_actions_give_the_same_episode() -> None:
    runs = []
    for _ in range(2):
        env = NavigationEnv()
        try:
            observation, _ = env.reset(seed=42)
            actions = np.random.default_rng(7).uniform(-1, 1, (60, 2))
            trace = [observation]
            for action in actions:
                observation, reward, terminated, truncated, _ = env.step(action)
                trace.append(np.append(observation, reward))
                if terminated:
                    observation, _ = env.reset()
            runs.append(np.concatenate(trace))
        finally:
            env.close()
    assert np.array_equal(runs[0], runs[1])


def test_reaching_the_goal_is_rewarded_and_ends_the_episode(empty_room: Path) -> None:
    env = NavigationEnv(empty_room)
    try:
        for seed in range(5):
            observation, info = env.reset(seed=seed)
            start_distance, total = info["distance"], 0.0
            for _ in range(400):
                observation, reward, terminated, truncated, info = env.step(steer(observation))
                total += reward
                if terminated:
                    break
            assert info["reached"] and not info["collided"], (seed, info)
            assert info["distance"] <= env.task.goal_radius
            # Progress (start distance less what is left), the goal, and the cost of each action.
            assert total > start_distance - env.task.goal_radius + env.task.goal_reward - 4.0
    finally:
        env.close()


def test_touching_a_wall_is_penalised_and_ends_the_episode(empty_room: Path) -> None:
    env = NavigationEnv(empty_room)
    try:
        env.reset(seed=0)
        for _ in range(300):
            _, reward, terminated, _, info = env.step(np.array([1.0, 0.0]))
            if terminated:
                break
        assert info["collided"] and not info["reached"]
        assert reward < env.task.collision_reward + 1.0
    finally:
        env.close()


def test_observations_stay_in_their_space_and_actions_are_clipped() -> None:
    env = NavigationEnv()
    try:
        observation, _ = env.reset(seed=1)
        rng = np.random.default_rng(1)
        for _ in range(200):
            observation, _, terminated, _, _ = env.step(rng.uniform(-5, 5, 2))  # beyond the bounds: clipped
            assert env.observation_space.contains(observation)
            if terminated:
                env.reset()
        for bad in ([math.nan, 0.0], [0.0, math.inf]):
            with pytest.raises(ValueError, match="finite"):
                env.step(np.array(bad))
    finally:
        env.close()


def test_starts_and_goals_are_free_and_apart() -> None:
    env = NavigationEnv()
    try:
        for seed in range(30):
            _, info = env.reset(seed=seed)
            pose = env.world.model("robot").pose
            assert env.fleet.wall_distance(pose.x, pose.y) >= env.task.clearance
            assert env.fleet.wall_distance(*info["goal"]) >= env.task.clearance
            assert info["distance"] >= env.task.min_goal_distance
    finally:
        env.close()


def test_a_picture_shows_the_goal() -> None:
    env = NavigationEnv(render_mode="rgb_array", pixels=200)
    try:
        env.reset(seed=5)
        picture = env.render()
        assert picture.shape == (200, 200, 3)
        assert ((picture == (255, 220, 0)).all(axis=2)).sum() >= 5  # the goal's yellow cross
        assert NavigationEnv().render() is None
    finally:
        env.close()


BAD_TASKS = [
    {"robot": ""}, {"area": (1.0, 0.0, 0.0, 1.0)}, {"area": (0.0, 0.0, math.nan, 1.0)}, {"clearance": 0.0},
    {"goal_radius": -1.0}, {"max_linear": math.inf}, {"control_period": 0.0}, {"beams": 0}, {"beams": 2.5},
    {"max_episode_steps": 0}, {"min_goal_distance": -1.0}, {"goal_reward": math.nan}, {"step_reward": True},
]


@pytest.mark.parametrize("fields", BAD_TASKS, ids=lambda f: next(iter(f)))
def test_tasks_that_cannot_be_used_are_refused_naming_the_field(fields: dict) -> None:
    with pytest.raises(ValueError, match=f"NavigationTask.{next(iter(fields))}"):
        NavigationTask(**fields)


@pytest.mark.parametrize("task, fault", [
    (NavigationTask(robot="nobody"), "missing"), (NavigationTask(drive="laser"), "must be a drive"),
    (NavigationTask(control_period=0.015), "whole number of steps"),
])
def test_tasks_that_do_not_fit_the_world_are_refused(task: NavigationTask, fault: str) -> None:
    with pytest.raises(ValueError, match=fault):
        NavigationEnv(task=task)


def test_an_area_with_no_free_point_is_said_so() -> None:
    env = NavigationEnv(task=NavigationTask(area=(4.9, 4.9, 5.0, 5.0)))
    try:
        with pytest.raises(RuntimeError, match="no free point"):
            env.reset(seed=0)
    finally:
        env.close()


@pytest.mark.parametrize("action", [np.zeros((2, 1)), np.zeros(3), np.zeros((1, 3)), np.array(["0", "0"]), [1j, 0]])
def test_actions_of_another_shape_or_kind_are_refused(action) -> None:
    env = NavigationEnv()
    try:
        env.reset(seed=0)
        with pytest.raises(ValueError, match=r"actions must be 1 pair\(s\) of real numbers"):
            env.step(action)
        env.step(np.zeros((1, 2)))  # a pair in a row of one is a pair
    finally:
        env.close()


@pytest.mark.parametrize(
    "fields, fault",
    [
        ({"area": (1, 2, 3)}, "area must be"),
        ({"area": (-1e308, -1e308, 1e308, 1e308)}, "within"),
        ({"area": (-1e6, -1e6, 1e6, 1e6)}, "within"),
        ({"max_linear": 1e6}, "max_linear must be <="),
        ({"max_angular": 2e4}, "max_angular must be <="),
        ({"control_period": 1000.0}, "control_period must be <="),
    ],
)
def test_tasks_that_could_never_run_are_refused(fields: dict, fault: str) -> None:
    with pytest.raises(ValueError, match=fault):
        NavigationTask(**fields)
