"""The baselines driven by the crowd models (sim_server.learning.baselines): they reach the goal
in CrowdNav's circle crossing, drive straight at it when nobody is near, and refuse what they
cannot drive."""

from __future__ import annotations

import numpy as np
import pytest

from sim_server.learning import NavigationEnv
from sim_server.learning.baselines import ModelPolicy
from sim_server.learning.crowdnav import crowdnav_env, crowdnav_vector_env

EPISODES = 24


def success_rate(model: str, kinematics: str = "holonomic") -> float:
    """The share of CrowdNav's first test cases (seeds 1000 on) the baseline ends at its goal."""
    envs = crowdnav_vector_env(EPISODES, kinematics=kinematics)
    try:
        policy = ModelPolicy(envs, model)
        observations, _ = envs.reset(seed=1000)
        ended, success = np.zeros(EPISODES, dtype=bool), np.zeros(EPISODES, dtype=bool)
        while not ended.all():
            observations, _, terminated, truncated, infos = envs.step(policy(observations))
            now = (terminated | truncated) & ~ended
            success[now] = infos["success"][now] == 1.0
            ended |= now
        return float(success.mean())
    finally:
        envs.close()


@pytest.mark.parametrize("model, kinematics, least", [
    ("orca", "holonomic", 0.8), ("orca", "unicycle", 0.8), ("social_force", "holonomic", 0.6),
])
def test_the_baselines_reach_the_goal_in_most_circle_crossings(model: str, kinematics: str, least: float) -> None:
    """With people who see the robot (ORCA reached 23 of 24 here, the social force 20)."""
    assert success_rate(model, kinematics) >= least


@pytest.mark.parametrize("model, expected", [
    ("orca", (0.6, 0.8)),  # the preferred velocity, at once
    ("social_force", (0.8, 0.4)),  # v + dt (v0 e - v) / tau: (1, 0) + 0.25 / 0.5 ((0.6, 0.8) - (1, 0))
])
def test_with_nobody_near_the_robot_heads_for_its_goal(model: str, expected: tuple[float, float]) -> None:
    """The goal 3 m ahead and 4 m to the left of a robot driving ahead at 1 m/s."""
    env = crowdnav_env("circle_crossing")
    try:
        observation, _ = env.reset(seed=1000)
        policy = ModelPolicy(env, model)
        fleet = env.fleet
        people = len(fleet.beam_index) + 5
        alone = observation.copy()
        alone[people:] = 0.0  # nobody observed
        alone[len(fleet.beam_index):len(fleet.beam_index) + 2] = (3.0 / fleet.goal_scale, 4.0 / fleet.goal_scale)
        alone[len(fleet.beam_index) + 2] = 1.0  # already at full speed ahead
        action = policy(alone)
        assert action.shape == (3,) and action[1] == 0.0
        assert (action[0], action[2]) == pytest.approx(expected, abs=1e-6)
    finally:
        env.close()


def test_bad_arguments_are_refused_in_one_line() -> None:
    env = crowdnav_env("circle_crossing")
    plain = NavigationEnv()
    try:
        for model in ("rvo", "", None, 3, "ORCA"):
            with pytest.raises(ValueError, match="model must be one of orca, social_force"):
                ModelPolicy(env, model)
        with pytest.raises(ValueError, match="needs a navigation environment of sim_server.learning, got str"):
            ModelPolicy("env")
        with pytest.raises(ValueError, match=r"needs the task to observe people \(observed_people >= 1\)"):
            ModelPolicy(plain)
        policy = ModelPolicy(env)
        with pytest.raises(ValueError, match=r"observations must have 66 values each, got shape \(2, 65\)"):
            policy(np.zeros((2, 65)))
    finally:
        env.close()
        plain.close()
