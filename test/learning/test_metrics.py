"""The episode metrics in info (sim_server.learning.metrics): SocialMetrics' keys beside the ones
kept from before, the outcome of each episode in the single, vector and parallel environments,
metrics frozen once an episode ends."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sim_server.core.crowd.social_metrics import BASE_KEYS, EFFECT_KEYS
from sim_server.learning import NavigationEnv
from sim_server.learning.crowdnav import crowdnav_env, crowdnav_vector_env
from sim_server.learning.metrics import LEGACY_KEYS, outcomes_of
from sim_server.learning.parallel_env import NavigationParallelEnv
from sim_server.learning.task import CROWD_NAVIGATION, PEOPLE_WORLD

ZONE_KEYS = {f"{zone}_{what}" for zone in ("discomfort", "intimate", "personal") for what in ("steps", "time", "entries")}


def test_info_holds_every_social_navigation_metric() -> None:
    env = crowdnav_env("circle_crossing")
    try:
        _, info = env.reset(seed=1000)
        assert set(BASE_KEYS) | set(EFFECT_KEYS) | ZONE_KEYS | set(LEGACY_KEYS) <= set(info)
        assert (info["finished"], info["steps"], info["path_length"]) == (0.0, 0.0, 0.0)
        terminated = False
        while not terminated:
            _, _, terminated, _, info = env.step([1.0, 0.0, 0.0])  # straight through the circle
        assert info["finished"] == 1.0 and info["success"] + info["collision"] == 1.0
        assert info["intrusions"] == info["discomfort_steps"]  # the penalty's count, the zone's steps
        assert info["discomfort_time"] == pytest.approx(0.25 * info["discomfort_steps"])
        assert info["personal_steps"] >= info["intimate_steps"] >= info["discomfort_steps"]
        assert info["path_length"] == pytest.approx(info["time"], abs=0.3)  # about 1 m/s
        ended = dict(info)
        _, _, _, _, info = env.step([1.0, 0.0, 0.0])  # past the end: nothing more is counted
        assert {key: info[key] for key in BASE_KEYS} == {key: ended[key] for key in BASE_KEYS}
    finally:
        env.close()


def test_a_collision_and_a_success_are_told_apart() -> None:
    """Seed 1000, straight ahead: the visible robot is let through; the invisible one is walked into."""
    outcomes = {}
    for visible in (True, False):
        env = crowdnav_env("circle_crossing", robot_visible=visible)
        try:
            env.reset(seed=1000)
            terminated, info = False, {}
            while not terminated:
                _, reward, terminated, _, info = env.step([1.0, 0.0, 0.0])
            outcomes[visible] = (info["success"], info["collision"], info["collided_person"], reward)
        finally:
            env.close()
    assert outcomes[True][:2] == (1.0, 0.0) and outcomes[True][3] == 1.0
    assert outcomes[False][:3] == (0.0, 1.0, 1.0) and outcomes[False][3] == -0.25


def test_vector_environments_end_episodes_as_timeouts_when_they_cut_them() -> None:
    envs = crowdnav_vector_env(2, max_episode_steps=5)
    try:
        envs.reset(seed=1000)
        for _ in range(5):
            _, _, terminated, truncated, infos = envs.step(np.zeros((2, 3)))
        assert truncated.all() and not terminated.any()
        assert (infos["timeout"] == 1.0).all() and (infos["finished"] == 1.0).all() and (infos["steps"] == 5).all()
        assert np.isnan(infos["time_to_goal"]).all()
        _, _, _, _, infos = envs.step(np.zeros((2, 3)))  # the autoreset: new episodes
        assert (infos["finished"] == 0.0).all() and (infos["steps"] == 0).all()
    finally:
        envs.close()


def test_the_parallel_environment_gives_each_agent_its_outcome() -> None:
    env = NavigationParallelEnv(PEOPLE_WORLD, robots=("robot",), task=replace(CROWD_NAVIGATION, max_episode_steps=3))
    try:
        env.reset(seed=4)
        for _ in range(3):
            _, _, terminations, truncations, infos = env.step({"robot": np.zeros(2)})
        assert truncations["robot"] and infos["robot"]["timeout"] == 1.0 and infos["robot"]["steps"] == 3
    finally:
        env.close()


def test_outcomes_count_a_collision_before_the_goal_and_both_before_the_time_limit() -> None:
    ended, outcome = outcomes_of(np.array([True, True, False, False]), np.array([True, False, False, False]),
                                 np.array([True, True, True, False]))
    assert ended.tolist() == [True, True, True, False]
    assert outcome[:3].tolist() == [2, 1, 3]  # COLLISION, SUCCESS, TIMEOUT


def test_worlds_without_people_keep_path_length_and_time_alone() -> None:
    env = NavigationEnv()
    try:
        _, info = env.reset(seed=0)
        _, _, _, _, info = env.step([1.0, 0.0])
        assert {"path_length", "time"} <= set(info) and "success" in info and "finished" not in info
        assert info["time"] == pytest.approx(0.1) and info["path_length"] > 0.0
    finally:
        env.close()
