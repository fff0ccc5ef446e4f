"""Learning among people: sim_server/CrowdNavigation-v0, its observations, the discomfort
penalty and the social navigation metrics, in the single, vector and parallel environments."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import sim_server.learning  # noqa: F401 - registers the environments
from sim_server.learning import CROWD_NAVIGATION_ID, NavigationEnv
from sim_server.learning.fleet import PERSON_VALUES, STATE_VALUES
from sim_server.learning.parallel_env import NavigationParallelEnv
from sim_server.learning.task import CROWD_NAVIGATION, CROWD_WORLD, LEARNING_WORLDS, PEOPLE_WORLD

METRICS = {"path_length", "time", "min_person_gap", "intrusions", "collided_person", "collided_other"}


def test_observations_hold_the_nearest_people_and_info_the_metrics() -> None:
    env = gymnasium.make(CROWD_NAVIGATION_ID)
    observation, info = env.reset(seed=3)
    fleet = env.unwrapped.fleet
    assert env.observation_space.contains(observation)
    people = observation[len(fleet.beam_index) + STATE_VALUES:].reshape(5, PERSON_VALUES)
    assert (people[:, 0] == 1.0).all()  # five of the ten are observed
    gaps = np.sort(fleet._people._gaps(fleet._bodies.poses()[:, :2], fleet._people._people())[0][0])
    assert gaps[4] < gaps[5]
    assert METRICS <= set(info) and info["time"] == 0.0
    for _ in range(20):
        observation, reward, terminated, truncated, info = env.step([0.5, 0.0])
        if terminated:
            break
    assert info["time"] == pytest.approx(0.1 * min(_ + 1, 20)) and info["path_length"] > 0.0
    assert "success" in info
    env.close()


def test_the_same_seed_and_actions_give_the_same_episode() -> None:
    runs = []
    for _ in range(2):
        env = gymnasium.make(CROWD_NAVIGATION_ID)
        observation, _ = env.reset(seed=11)
        trace = [observation]
        for step in range(30):
            observation, reward, terminated, truncated, _ = env.step([0.3, 0.2 * math.sin(step)])
            trace += [observation, np.array([reward])]
        runs.append(np.concatenate([np.ravel(part) for part in trace]))
        env.close()
    assert np.array_equal(runs[0], runs[1])


def test_a_person_in_personal_space_costs_and_a_touch_ends_the_episode() -> None:
    env = NavigationEnv(PEOPLE_WORLD, replace(CROWD_NAVIGATION, max_linear=0.5))
    env.reset(seed=1)
    fleet, world = env.fleet, env.world
    for crowd in world.crowds:  # only the one the test places
        for name in crowd.names():
            world.crowds.remove(name)
    robot = world.models["robot"].first_body.physics_body
    x, y = robot.position
    heading = robot.angle
    radius = fleet.robot_radii[0]
    # standing 0.1 m ahead of the robot's circle: inside its personal space
    ahead = (x + math.cos(heading) * (radius + 0.25 + 0.1), y + math.sin(heading) * (radius + 0.25 + 0.1))
    world.spawn_pedestrian("people", ahead)
    _, reward, terminated, _, info = env.step([0.0, 0.0])
    expected = env.task.step_reward + (0.1 - 0.2) * 0.5 * 0.1
    assert info["intrusions"] == 1 and info["min_person_gap"] == pytest.approx(0.1, abs=0.02)
    assert reward == pytest.approx(expected, abs=0.02 * 0.5 * 0.1 + 1e-3)
    for _ in range(20):
        _, reward, terminated, _, info = env.step([1.0, 0.0])  # drive into it
        if terminated:
            break
    assert terminated and info["collided"] and info["collided_person"] and not info["collided_other"]
    env.close()


def test_vector_environments_see_only_their_own_people() -> None:
    envs = gymnasium.make_vec(CROWD_NAVIGATION_ID, num_envs=4)
    observations, infos = envs.reset(seed=0)
    assert observations.shape == (4, envs.single_observation_space.shape[0])
    for key in METRICS:
        assert infos[key].shape == (4,) and infos[f"_{key}"].all()
    fleet = envs.unwrapped.fleet if hasattr(envs, "unwrapped") else envs.fleet
    gaps, indices = fleet._people._gaps(fleet._bodies.poses()[:, :2] - fleet.offsets, fleet._people._people())
    assert (np.isfinite(gaps).sum(axis=1) == 10).all()  # ten people each, the others' not counted
    copies = fleet._people._people()[2]
    assert all((copies[indices[robot]] == fleet.copies[robot]).all() for robot in range(4))
    for _ in range(5):
        observations, rewards, terminated, truncated, infos = envs.step(np.zeros((4, 2)))
    assert "success" in infos and (infos["time"] > 0).all()
    envs.close()


def test_worlds_without_people_keep_their_observations() -> None:
    env = NavigationEnv()
    observation, info = env.reset(seed=0)
    assert observation.shape == (len(env.fleet.beam_index) + STATE_VALUES,)
    assert set(info) >= {"path_length", "time"} and "min_person_gap" not in info
    env.close()


def test_the_parallel_environment_among_people(tmp_path: Path) -> None:
    from pettingzoo.test import parallel_api_test

    text = CROWD_WORLD.read_text().replace("map: room.yaml", f"map: {LEARNING_WORLDS / 'room.yaml'}")
    text = text.replace("model: robot.model.yaml", f"model: {LEARNING_WORLDS / 'robot.model.yaml'}")
    text += ("pedestrians:\n  - name: people\n    radius: 0.25\n    regions: {room: [-4.6, -4.6, 4.6, 4.6]}\n"
             "    agents: [{count: 6, start: room, goals: room}]\n")
    (tmp_path / "world.yaml").write_text(text)
    env = NavigationParallelEnv(tmp_path / "world.yaml", task=CROWD_NAVIGATION)
    parallel_api_test(env, num_cycles=50)
    _, infos = env.reset(seed=2)
    assert all(METRICS <= set(info) for info in infos.values())
    env.close()
