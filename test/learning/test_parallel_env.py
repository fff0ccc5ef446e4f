"""PettingZoo's parallel API over several robots in one world: PettingZoo's own test, seeds,
starts apart, touches between robots, agents leaving, the step limit, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test

from sim_server.core import Pose2D
from sim_server.learning import NavigationTask
from sim_server.learning.parallel_env import CROWD_ROBOTS, NavigationParallelEnv
from sim_server.learning.task import DEFAULT_WORLD


@pytest.fixture
def env() -> NavigationParallelEnv:
    made = NavigationParallelEnv()
    yield made
    made.close()


def test_pettingzoo_s_checks_pass(env: NavigationParallelEnv) -> None:
    parallel_api_test(env, num_cycles=200)
    parallel_seed_test(NavigationParallelEnv)


def test_starts_are_apart_and_goals_free(env: NavigationParallelEnv) -> None:
    task = env.task
    for seed in range(20):
        observations, infos = env.reset(seed=seed)
        assert list(observations) == list(CROWD_ROBOTS) == env.agents
        positions = np.array([[env.world.model(name).pose.x, env.world.model(name).pose.y] for name in CROWD_ROBOTS])
        for i in range(4):
            assert env.fleet.wall_distance(*positions[i]) >= task.clearance
            assert env.fleet.wall_distance(*infos[CROWD_ROBOTS[i]]["goal"]) >= task.clearance
            for j in range(i + 1, 4):
                assert np.hypot(*(positions[i] - positions[j])) >= 2 * task.clearance


def test_a_touch_between_two_robots_ends_both_episodes(env: NavigationParallelEnv) -> None:
    env.reset(seed=0)
    # robot1 and robot2 face each other 0.8 m apart in the open; the others stay still.
    env.world.set_model_state("robot1", Pose2D(-0.5, -0.5, 0.0), 0.0, 0.0, 0.0)
    env.world.set_model_state("robot2", Pose2D(0.3, -0.5, math.pi), 0.0, 0.0, 0.0)
    ended = set()
    for _ in range(20):
        actions = {agent: np.array([1.0, 0.0], dtype=np.float32) if agent in ("robot1", "robot2") else np.zeros(2) for agent in env.agents}
        _, rewards, terminated, _, infos = env.step(actions)
        for agent in ("robot1", "robot2"):
            if agent in terminated and terminated[agent]:
                assert infos[agent]["collided"] and rewards[agent] < env.task.collision_reward / 2
                ended.add(agent)
        if ended:
            break
    assert ended == {"robot1", "robot2"}
    assert env.agents == ["robot3", "robot4"]
    # They stay where they stopped, still, while the others go on.
    stopped = env.world.model("robot1").pose
    for _ in range(5):
        env.step({agent: np.zeros(2) for agent in env.agents})
    assert env.world.model("robot1").pose.x == pytest.approx(stopped.x, abs=0.02)
    with pytest.raises(ValueError, match="not running"):
        env.step({"robot1": np.zeros(2)})


def test_episodes_are_cut_at_the_step_limit() -> None:
    env = NavigationParallelEnv(task=NavigationTask(max_episode_steps=3))
    try:
        env.reset(seed=1)
        for step in range(3):
            _, _, terminated, truncated, _ = env.step({agent: np.zeros(2) for agent in env.agents})
            assert not any(terminated.values())
            assert all(truncated.values()) == (step == 2)
        assert env.agents == []
        env.reset()
        assert env.agents == list(CROWD_ROBOTS)
    finally:
        env.close()


def test_the_same_seed_and_actions_give_the_same_episode() -> None:
    traces = []
    for _ in range(2):
        env = NavigationParallelEnv()
        try:
            observations, _ = env.reset(seed=4)
            rng = np.random.default_rng(4)
            trace = [np.concatenate(list(observations.values()))]
            for _ in range(40):
                if not env.agents:
                    break
                observations, rewards, _, _, _ = env.step({agent: rng.uniform(-1, 1, 2) for agent in env.agents})
                trace.append(np.concatenate(list(observations.values()) + [np.array(list(rewards.values()))]))
            traces.append(trace)
        finally:
            env.close()
    assert len(traces[0]) == len(traces[1])
    for first, second in zip(*traces):
        np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize(
    "actions, fault",
    [
        ([0.0, 0.0], "dict of actions"),
        ({"robot9": np.zeros(2)}, "not running"),
        ({"robot1": np.array([math.nan, 0.0])}, "finite"),
        ({"robot1": np.zeros(3)}, "pair"),
        ({"robot1": "fast"}, "pair"),
    ],
)
def test_bad_actions_are_refused(env: NavigationParallelEnv, actions, fault: str) -> None:
    env.reset(seed=0)
    with pytest.raises(ValueError, match=fault):
        env.step(actions)
    env.step({agent: np.zeros(2) for agent in env.agents})  # and it goes on


@pytest.mark.parametrize(
    "robots, fault",
    [
        (("robot1", "nobody"), "the task's robot, drive or laser is missing"),
        (("robot1", "robot1"), "different names"),
        ((), "different names"),
        ("robot1", "list of model names"),
        ((1, 2), "list of model names"),
    ],
)
def test_robots_that_cannot_be_used_are_refused(robots, fault: str) -> None:
    with pytest.raises(ValueError, match=fault):
        NavigationParallelEnv(robots=robots)


def test_one_robot_of_a_world_works_too() -> None:
    env = NavigationParallelEnv(world_path=DEFAULT_WORLD, robots=["robot"])
    try:
        observations, _ = env.reset(seed=0)
        assert list(observations) == ["robot"] and env.state().shape == (40,)
    finally:
        env.close()


def test_steps_before_a_reset_and_calls_after_close_are_refused() -> None:
    env = NavigationParallelEnv()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step({})
    env.reset(seed=0)
    env.close()
    env.close()
    for call in (lambda: env.step({}), lambda: env.reset(seed=0), env.state):
        with pytest.raises(RuntimeError, match="the environment is closed"):
            call()


@pytest.mark.parametrize("robots", [None, (name for name in CROWD_ROBOTS), {"robot1": 1}, b"robot1"])
def test_robots_must_be_a_list_of_names(robots) -> None:
    with pytest.raises(ValueError, match="robots must be a list of model names"):
        NavigationParallelEnv(robots=robots)


@pytest.mark.parametrize("seed", [-1, 1.5, True, "1"])
def test_bad_seeds_and_options_are_refused(env: NavigationParallelEnv, seed) -> None:
    with pytest.raises(ValueError, match="seed must be"):
        env.reset(seed=seed)
    with pytest.raises(ValueError, match="options must be"):
        env.reset(options=7)
    env.reset(seed=0)
