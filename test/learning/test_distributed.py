"""Vector environments as Ray actors, on a local Ray instance: the same steps as one vector
environment of all the worlds, the example's throughput run, and bad input."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is an optional extra (make setup installs it)")

from sim_server.learning import NavigationTask, NavigationVectorEnv  # noqa: E402
from sim_server.learning.distributed import RayVectorEnv  # noqa: E402
from sim_server.learning import ray_example  # noqa: E402
from test.learning.test_navigation_env import steer  # noqa: E402
from test.learning.test_vector_env import DRIFT  # noqa: E402


def test_without_ray_initialised_it_says_so() -> None:
    if ray.is_initialized():
        pytest.skip("Ray was initialised by an earlier test")
    with pytest.raises(RuntimeError, match=r"Ray is not initialised: call ray.init\(\)"):
        RayVectorEnv(1, 1)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_the_actors_step_as_one_vector_environment_would(local_ray: None) -> None:
    """2 actors of 3 worlds, seeded 7: what NavigationVectorEnv(6) seeded 7 gives, the same
    actions (up to float32 rounding: the copies lie elsewhere), autoreset included."""
    remote = RayVectorEnv(2, 3)
    local = NavigationVectorEnv(6)
    try:
        assert remote.num_envs == 6 and remote.observation_space == local.observation_space
        observations, infos = remote.reset(seed=7)
        expected, expected_infos = local.reset(seed=7)
        np.testing.assert_allclose(observations, expected, atol=DRIFT)
        np.testing.assert_allclose(infos["distance"], expected_infos["distance"], atol=DRIFT)
        running = np.ones(6, dtype=bool)
        for _ in range(25):
            actions = np.stack([steer(observation) for observation in observations])
            observations, rewards, terminated, truncated, infos = remote.step(actions)
            expected, expected_rewards, expected_terminated, _, _ = local.step(actions)
            assert observations.shape == (6, 40) and set(infos) >= {"distance", "reached", "collided", "_reached"}
            np.testing.assert_allclose(observations[running], expected[running], atol=DRIFT)
            np.testing.assert_allclose(rewards[running], expected_rewards[running], atol=DRIFT)
            assert (terminated[running] == expected_terminated[running]).all()
            running &= ~terminated  # past an episode's end, the copies' next episodes may part
    finally:
        remote.close()
        local.close()


def test_the_example_measures_one_and_two_workers(local_ray: None) -> None:
    for workers in (1, 2):
        figures = ray_example.main(["--workers", str(workers), "--envs", "4", "--seconds", "0.5"])
        assert figures["workers"] == workers and figures["steps_per_s"] > 0 and figures["actors_steps_per_s"] > 0


@pytest.mark.parametrize(
    "options, fault",
    [
        ({"world_path": "/nowhere/world.yaml"}, 'world file "/nowhere/world.yaml" does not exist'),
        ({"task": NavigationTask(robot="nobody")}, 'model with name "nobody" does not exist'),
        ({"step_size": 0.03}, "whole number of steps"),
        ({"bogus": 1}, "unexpected keyword argument 'bogus'"),
        ({"render_mode": "rgb_array"}, "does not render"),
    ],
)
def test_environments_that_cannot_be_made_are_said_so(local_ray: None, options: dict, fault: str) -> None:
    with pytest.raises(ValueError, match=fault):
        RayVectorEnv(2, 2, **options)


def test_more_workers_than_cpus_are_refused_at_once(local_ray: None) -> None:
    with pytest.raises(ValueError, match=r"num_workers \(3\) needs as many CPUs in the Ray cluster, which has 2"):
        RayVectorEnv(3, 1)


@pytest.mark.parametrize("workers, envs", [(0, 2), (2, 0), (1.5, 2), (2, True), (2, 5000)])
def test_bad_counts_are_refused(local_ray: None, workers, envs) -> None:
    with pytest.raises(ValueError, match="must be a whole number"):
        RayVectorEnv(workers, envs)


def test_bad_actions_are_refused_before_any_actor_steps(local_ray: None) -> None:
    remote = RayVectorEnv(2, 2)
    try:
        remote.reset(seed=0)
        for actions, fault in ((np.zeros((3, 2)), "4 pair"), (np.full((4, 2), math.nan), "finite"), ("go", "4 pair")):
            with pytest.raises(ValueError, match=fault):
                remote.step(actions)
        remote.step(np.zeros((4, 2)))  # and it goes on
        with pytest.raises(ValueError, match="reset_mask"):
            remote.reset(options={"reset_mask": [1, 0, 1, 0]})
        remote.reset(options={"reset_mask": np.array([True, False, False, True])})
        for seed in (-1, 1.5, "1"):
            with pytest.raises(ValueError, match="seed must be"):
                remote.reset(seed=seed)
    finally:
        remote.close()
    with pytest.raises(RuntimeError, match="the environment is closed"):
        remote.step(np.zeros((4, 2)))
