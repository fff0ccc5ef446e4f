"""Vector environments as Ray actors, on a local Ray instance: the same steps and rollouts as one
vector environment of all the worlds, the example's throughput run, bad input, and a cluster
started by `ray start` on this machine."""

from __future__ import annotations

import math
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is an optional extra (make setup installs it)")

from sim_server.core import limits  # noqa: E402
from sim_server.learning import NavigationTask, NavigationVectorEnv  # noqa: E402
from sim_server.learning.distributed import RayVectorEnv  # noqa: E402
from sim_server.learning import ray_example  # noqa: E402
from sim_server.learning.rollouts import LinearPolicy  # noqa: E402
from test.learning.test_navigation_env import steer  # noqa: E402
from test.learning.test_vector_env import DRIFT  # noqa: E402

#: Longest wait for a killed actor to be seen dead (s).
DEATH_TIMEOUT = 60.0


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


def test_rollouts_in_the_actors_are_what_one_vector_environment_gives(local_ray: None) -> None:
    """2 actors of 3 worlds, seeded 7, a linear policy held in the actors: a rollout of 10 steps
    with weights shared by every world, then of 15 with a row of weights for each world, equal
    what stepping NavigationVectorEnv(6) seeded 7 with the same policy gives (up to float32
    rounding, as above), autoreset included."""
    size = 40
    rng = np.random.default_rng(3)
    shared = rng.normal(0.0, 0.3, 2 * size + 2)
    rows = rng.normal(0.0, 0.3, (6, 2 * size + 2))
    remote = RayVectorEnv(2, 3)
    local = NavigationVectorEnv(6)
    try:
        remote.reset(seed=7)
        observations, _ = local.reset(seed=7)
        remote.set_policy(LinearPolicy(size, 2, shared))
        first = remote.rollout(10)
        remote.set_weights(rows, per_environment=True)
        second = remote.rollout(15)
        policy = LinearPolicy(size, 2, shared)
        running = np.ones(6, dtype=bool)
        for batch, weights in ((first, shared), (second, rows)):
            policy.set_weights(weights)
            assert batch.observations.shape == (batch.steps, 6, size) and batch.actions.shape == (batch.steps, 6, 2)
            assert batch.rewards.shape == batch.terminated.shape == batch.truncated.shape == (batch.steps, 6)
            assert set(batch.infos) >= {"distance", "reached", "collided", "success"} and batch.infos["distance"].shape == (batch.steps, 6)
            for step in range(batch.steps):
                np.testing.assert_allclose(batch.observations[step][running], observations[running], atol=DRIFT)
                actions = policy(observations)
                np.testing.assert_allclose(batch.actions[step][running], actions[running], atol=DRIFT)
                observations, rewards, terminated, truncated, infos = local.step(actions)
                np.testing.assert_allclose(batch.rewards[step][running], rewards[running], atol=DRIFT)
                np.testing.assert_allclose(batch.infos["distance"][step][running], infos["distance"][running], atol=DRIFT)
                assert (batch.terminated[step][running] == terminated[running]).all()
                assert (batch.truncated[step][running] == truncated[running]).all()
                running &= ~terminated
            np.testing.assert_allclose(batch.last_observations[running], observations[running], atol=DRIFT)
        assert running.sum() >= 3  # most worlds compared throughout
        np.testing.assert_array_equal(second.observations[0], first.last_observations)  # the next goes on
        assert second.seconds.shape == (6,) and (second.seconds > 0).all()
    finally:
        remote.close()
        local.close()


def test_the_example_measures_one_and_two_workers(local_ray: None) -> None:
    for workers in (1, 2):
        figures = ray_example.main(["--workers", str(workers), "--envs", "4", "--seconds", "0.5", "--rollout-steps", "5"])
        assert figures["workers"] == workers and figures["steps_per_s"] > 0 and figures["actors_steps_per_s"] > 0
        assert figures["rollout_steps_per_s"] > 0 and figures["rollout_share"] == figures["rollout_steps_per_s"] / figures["actors_steps_per_s"]
        assert 0 < figures["rollout_busy_share"] == figures["rollout_steps_per_s"] / figures["rollout_actors_steps_per_s"]
    assert "of the actors' own rate (target >= 0.67: " in ray_example.summary(figures)


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


def _refused(remote: RayVectorEnv, kind: type, fault: str, call) -> None:
    """``call`` raises ``kind`` in one line naming ``fault``, and the actors go on rolling out."""
    with pytest.raises(kind, match=fault) as raised:
        call()
    said = str(raised.value)
    assert "\n" not in said and "Traceback" not in said and "ray::" not in said, said
    remote.set_policy(LinearPolicy(40))
    assert remote.rollout(2).rewards.shape == (2, 4)


def test_bad_policies_and_steps_are_refused_in_one_line_and_the_actors_go_on(local_ray: None) -> None:
    remote = RayVectorEnv(2, 2)
    try:
        with pytest.raises(RuntimeError, match=r"the actors hold no policy: set_policy\(policy\) first"):
            remote.rollout(3)
        with pytest.raises(RuntimeError, match=r"never reset: reset\(\) before a rollout"):
            remote.set_policy(LinearPolicy(40))
            remote.rollout(3)
        remote.reset(seed=0)

        class FailsLater:
            """Actions of zeros, then an error of two lines (defined here: pickled by value)."""

            def __init__(self) -> None:
                self.calls = 0

            def __call__(self, observations: np.ndarray) -> np.ndarray:
                self.calls += 1
                if self.calls > 1:
                    raise ValueError("first line of two\nthe second")
                return np.zeros((len(observations), 2))

        def rolled_out_with(policy, steps: int = 3):
            return lambda: (remote.set_policy(policy), remote.rollout(steps))

        cases = [
            (RuntimeError, r"the policy raised ZeroDivisionError: division by zero at step 0 of the rollout",
             rolled_out_with(lambda observations: 1 / 0)),
            (RuntimeError, r"the policy raised ValueError: first line of two at step 1 of the rollout", rolled_out_with(FailsLater())),
            (ValueError, r"the policy's actions at step 0 of the rollout: actions must be 2 pair\(s\).*got float64 of shape \(3, 2\)",
             rolled_out_with(lambda observations: np.zeros((3, 2)))),
            (ValueError, r"the policy's actions at step 0 of the rollout: actions must be 2 pair\(s\).*got <U2",
             rolled_out_with(lambda observations: "go")),
            (ValueError, r"the policy's actions at step 0 of the rollout: an action must be finite",
             rolled_out_with(lambda observations: np.full((2, 2), np.inf))),
            (ValueError, r"a policy must be callable \(observations to actions\), got int", lambda: remote.set_policy(3)),
            (ValueError, r"it does not pickle \(TypeError: cannot pickle '_thread.lock' object\)",
             lambda: remote.set_policy(lambda observations, lock=threading.Lock(): observations)),
            (RuntimeError, r"the rollout took more than 1e-09 s: 0 of its 3 steps were taken",
             lambda: remote.rollout(3, timeout=1e-9)),
            (ValueError, r"timeout must be a number of seconds > 0", lambda: remote.rollout(3, timeout=math.inf)),
            (ValueError, r"the policy \(function\) has no set_weights\(weights\)",
             lambda: (remote.set_policy(lambda observations: observations[:, :2]), remote.set_weights(np.zeros(82)))),
            (ValueError, r"set_weights refused the weights: a linear policy's weights must be 82 finite numbers.*got shape \(5,\)",
             lambda: remote.set_weights(np.zeros(5))),
            (ValueError, r"per-environment weights must be a NumPy array of 4 rows", lambda: remote.set_weights(np.zeros((3, 82)), True)),
            (RuntimeError, r"the policy raised ValueError: weights for 4 environments, observations of 2 at step 0",
             lambda: (remote.set_weights(np.zeros((4, 82)), per_environment=True), remote.set_weights(np.zeros((4, 82))),
                      remote.rollout(3))),
        ]
        for steps in (0, -1, 1.5, True, "3", limits.MAX_ROLLOUT_STEPS + 1):
            cases.append((ValueError, rf"steps must be a whole number from 1 to {limits.MAX_ROLLOUT_STEPS}, got",
                          lambda steps=steps: remote.rollout(steps)))
        for kind, fault, call in cases:
            _refused(remote, kind, fault, call)
    finally:
        remote.close()


def test_a_policy_the_actors_cannot_import_is_said_so(local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy of a module only this process finds (pickled by reference): the actors' import
    error in one line, and they go on."""
    (tmp_path / "only_the_driver_has_it.py").write_text("def policy(observations):\n    return observations[:, :2] * 0.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from only_the_driver_has_it import policy

    remote = RayVectorEnv(2, 2)
    try:
        remote.reset(seed=0)
        _refused(remote, RuntimeError, r"a Ray worker could not unpickle the policy: ModuleNotFoundError: No module named "
                 r"'only_the_driver_has_it'", lambda: remote.set_policy(policy))
    finally:
        remote.close()


def test_a_batch_too_big_for_one_actor_is_refused(local_ray: None) -> None:
    remote = RayVectorEnv(1, 256)
    try:
        steps = limits.MAX_ROLLOUT_ENVIRONMENT_STEPS // 256 + 1
        with pytest.raises(ValueError, match=rf"a rollout of {steps} steps of 256 environments is more than 1048576 environment steps"):
            remote.rollout(steps)
    finally:
        remote.close()


def test_a_dead_actor_is_said_so(local_ray: None) -> None:
    remote = RayVectorEnv(2, 1)
    try:
        remote.reset(seed=0)
        ray.kill(remote._workers[1])
        deadline = time.monotonic() + DEATH_TIMEOUT
        while True:  # the kill takes a moment: steps until it has
            assert time.monotonic() < deadline, f"the actor still answered after {DEATH_TIMEOUT} s"
            try:
                remote.step(np.zeros((2, 2)))
            except RuntimeError as error:
                assert str(error).startswith("a Ray worker of the environment died (its process ended)"), error
                break
    finally:
        remote.close()


#: Longest wait for `ray start` to listen, and for the driver's run on its cluster (s).
CLUSTER_TIMEOUT = 120.0
#: Polling interval while waiting for the head to listen (s).
POLL_INTERVAL = 0.2
#: A driver joining the cluster at the address given, rolling out on two actors.
CLUSTER_DRIVER = """
import sys
import ray
from sim_server.learning.distributed import RayVectorEnv
from sim_server.learning.rollouts import LinearPolicy
ray.init(address=sys.argv[1], log_to_driver=False)
envs = RayVectorEnv(2, 2)
envs.reset(seed=0)
envs.set_policy(LinearPolicy(40))
batch = envs.rollout(5)
print("rollout", batch.rewards.shape, "cpus", ray.cluster_resources()["CPU"])
envs.close()
ray.shutdown()
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_a_cluster_started_by_ray_start_takes_rollouts() -> None:
    """`ray start --head` on this machine (its own port, temporary directory and token, blocking
    so that ending it by its process id ends its processes), a driver in another process joining
    it with ray.init(address=...) and rolling out on its actors."""
    ray_command = Path(sys.executable).with_name("ray")
    if not ray_command.exists():
        pytest.skip("no `ray` command beside this Python")
    port = _free_port()
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's sockets live below it
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    head = subprocess.Popen(
        [str(ray_command), "start", "--head", "--block", f"--port={port}", "--num-cpus=2", f"--temp-dir={temp_dir}",
         "--include-dashboard=false", "--disable-usage-stats"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + CLUSTER_TIMEOUT
        while not _listening(port):
            assert head.poll() is None, f"ray start ended: {head.stdout.read()[-2000:]}"
            assert time.monotonic() < deadline, f"ray start did not listen on {port} within {CLUSTER_TIMEOUT} s"
            time.sleep(POLL_INTERVAL)  # between polls
        driver = subprocess.run(
            [sys.executable, "-c", CLUSTER_DRIVER, f"127.0.0.1:{port}"], capture_output=True, text=True, env=env,
            timeout=CLUSTER_TIMEOUT,
        )
        assert driver.returncode == 0, driver.stderr[-3000:]
        assert "rollout (5, 4) cpus 2.0" in driver.stdout
    finally:
        head.terminate()  # ray start --block takes its processes down with it
        try:
            head.communicate(timeout=CLUSTER_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.communicate()
        shutil.rmtree(temp_dir, ignore_errors=True)
