"""The value network's lookahead policy (sim_server.learning.lookahead) and its training
command (sim_server.learning.train_lookahead): states the same in any frame, the lookahead's
choices where the answer is known, a small training run the evaluation takes, and bad
arguments and policy files refused in one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core.errors import ConfigError
from sim_server.learning.crowdnav import crowdnav_env, crowdnav_vector_env
from sim_server.learning.evaluate import main as evaluate_main
from sim_server.learning.lookahead import (
    GAMMA, PERSON_FEATURES, ROBOT_FEATURES, LookaheadPolicy, action_velocities, free_value, state_features,
)
from sim_server.learning.observed import Observed
from sim_server.learning.train_lookahead import discounted_returns, main as train_main
from sim_server.learning.value_network import ValueNetwork


def _turn(v: np.ndarray, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.stack([c * v[..., 0] - s * v[..., 1], s * v[..., 0] + c * v[..., 1]], axis=-1)


def test_a_state_is_the_same_in_any_frame_and_orders_people_by_distance() -> None:
    rng = np.random.default_rng(7)
    goal, velocity = rng.uniform(-5, 5, (6, 2)), rng.uniform(-1, 1, (6, 2))
    present = rng.random((6, 5)) < 0.7
    positions, velocities = rng.uniform(-4, 4, (6, 5, 2)), rng.uniform(-1, 1, (6, 5, 2))
    features = state_features(goal, velocity, present, positions, velocities, 0.6)
    assert features.shape == (6, ROBOT_FEATURES + PERSON_FEATURES * 5)
    for angle in (0.3, -2.0, math.pi):
        turned = state_features(_turn(goal, angle), _turn(velocity, angle), present, _turn(positions, angle),
                                _turn(velocities, angle), 0.6)
        assert np.allclose(turned, features, atol=1e-9)
    people = features[:, ROBOT_FEATURES:].reshape(6, 5, PERSON_FEATURES)
    assert (np.diff(people[:, :, 4], axis=1) >= 0).all()  # nearest first (the gaps grow)
    order = rng.permutation(5)
    shuffled = state_features(goal, velocity, present[:, order], positions[:, order], velocities[:, order], 0.6)
    assert np.allclose(shuffled, features)


def test_actions_are_crowdnavs() -> None:
    holonomic, unicycle = action_velocities(True, 1.0), action_velocities(False, 1.0)
    assert holonomic.shape == unicycle.shape == (81, 2) and not holonomic[0].any()
    speeds = np.hypot(holonomic[1:, 0], holonomic[1:, 1])
    assert speeds.max() == pytest.approx(1.0) and speeds.min() == pytest.approx((math.exp(0.2) - 1) / (math.e - 1))
    turns = np.arctan2(unicycle[1:, 1], unicycle[1:, 0])
    assert turns.min() == pytest.approx(-math.pi / 4) and turns.max() == pytest.approx(math.pi / 4)


def _policy(env, seed: int = 0) -> LookaheadPolicy:
    network = ValueNetwork([ROBOT_FEATURES + PERSON_FEATURES * 5, 8, 1], np.random.default_rng(seed))
    network.weights[-1][:] = 0.0  # V is the free value alone
    return LookaheadPolicy(env, network)


def _seen(goal, people=()) -> Observed:
    k = 5
    present = np.zeros((1, k), dtype=bool)
    positions, velocities = np.zeros((1, k, 2)), np.zeros((1, k, 2))
    for index, (place, speed) in enumerate(people):
        present[0, index], positions[0, index], velocities[0, index] = True, place, speed
    return Observed(np.array([goal], dtype=float), np.zeros((1, 2)), present, positions, velocities)


def test_with_nobody_about_it_heads_for_the_goal_at_full_speed_and_stops_on_it() -> None:
    env = crowdnav_env("circle_crossing")
    try:
        policy = _policy(env)
        for goal in ((8.0, 0.0), (0.0, -3.0), (-2.0, 2.0)):
            velocity = policy.choose(_seen(goal))[0]
            assert np.hypot(*velocity) == pytest.approx(1.0)
            assert math.cos(math.atan2(velocity[1], velocity[0]) - math.atan2(goal[1], goal[0])) > math.cos(math.pi / 16) - 1e-9
        assert policy.choose(_seen((0.2, 0.0)))[0] @ np.array([1.0, 0.0]) >= 0.0  # within the goal's reach: any step ends
        assert free_value(np.array([[8.0 / 4.0]]), 0.3)[0] == pytest.approx(GAMMA ** 7.7)
    finally:
        env.close()


def test_it_never_steps_into_a_person_it_sees_coming() -> None:
    env = crowdnav_env("circle_crossing")
    try:
        policy = _policy(env)
        for place, speed in (((0.9, 0.0), (0.0, 0.0)), ((1.5, 0.0), (-1.0, 0.0)), ((0.8, 0.4), (0.0, -0.5))):
            seen = _seen((8.0, 0.0), [(place, speed)])
            velocity = policy.choose(seen)[0]
            relative = np.array(speed) - velocity
            start = np.array(place)
            t = np.clip(-(start @ relative) / max(relative @ relative, 1e-12), 0.0, policy.step)
            assert np.hypot(*(start + relative * t)) >= policy.radii, (place, speed, velocity)
    finally:
        env.close()


def test_policies_give_the_environments_actions() -> None:
    for kinematics, size in (("holonomic", 3), ("unicycle", 2)):
        envs = crowdnav_vector_env(3, "circle_crossing", kinematics, robot_visible=False)
        try:
            policy = _policy(envs)
            observations, _ = envs.reset(seed=[1000, 1001, 1002])
            actions = policy(observations)
            assert actions.shape == (3, size) and actions.dtype == np.float32 and (abs(actions) <= 1.0).all()
            assert policy(observations[0]).shape == (size,)
            if kinematics == "unicycle":  # the goal is straight ahead: full speed, the least of CrowdNav's turns
                assert actions[:, 0] == pytest.approx(1.0) and abs(actions[:, 1]) == pytest.approx(1.0 / 15.0)
        finally:
            envs.close()


def test_discounted_returns() -> None:
    assert discounted_returns([0.0, -0.1, 1.0], 0.5) == pytest.approx([0.5 * -0.1 + 0.25, -0.1 + 0.5, 1.0])


def test_a_small_training_writes_a_policy_the_evaluation_runs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "policy.npz"
    assert train_main(["--out", str(out), "--invisible-robot", "--imitation-episodes", "3", "--imitation-epochs", "2",
                       "--episodes", "3", "--batches", "2", "--envs", "2", "--hidden", "16,8", "--seed", "4"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    numbers = json.loads(lines[-1])
    assert numbers["out"] == str(out) and numbers["episodes"] >= 3 and 0.0 <= numbers["imitation_success_rate"] <= 1.0
    assert lines[0].startswith("imitation: 3 episodes of the ORCA baseline")
    network, extra = ValueNetwork.load(out)
    assert network.sizes == [ROBOT_FEATURES + PERSON_FEATURES * 5, 16, 8, 1]
    assert str(extra["kinematics"]) == "holonomic" and not bool(extra["robot_visible"])
    assert evaluate_main(["--policy", str(out), "--invisible-robot", "--episodes", "2", "--envs", "2"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["episodes"] == 2 and result["success_rate"] + result["collision_rate"] + result["timeout_rate"] == pytest.approx(1.0)
    # a policy of a holonomic robot is no unicycle's
    assert evaluate_main(["--policy", str(out), "--kinematics", "unicycle", "--episodes", "1", "--envs", "1"]) == 2
    assert "was trained for a holonomic robot, the environment's is a unicycle" in capsys.readouterr().err


def test_imitation_alone_writes_a_policy_and_reports_no_rates(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "imitated.npz"
    assert train_main(["--out", str(out), "--imitation-episodes", "2", "--imitation-epochs", "1", "--episodes", "0",
                       "--envs", "2", "--hidden", "8"]) == 0
    numbers = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert numbers["episodes"] == 0 and numbers["success_rate"] is None and numbers["collision_rate"] is None
    assert ValueNetwork.load(out)[0].sizes == [ROBOT_FEATURES + PERSON_FEATURES * 5, 8, 1]


def test_bad_policy_files_are_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    env = crowdnav_env("circle_crossing")
    try:
        rng = np.random.default_rng(1)
        wrong_size = tmp_path / "size.npz"
        ValueNetwork([7, 4, 1], rng).save(wrong_size, format=np.array(1), kinematics=np.array("holonomic"))
        no_format = tmp_path / "format.npz"
        ValueNetwork([33, 4, 1], rng).save(no_format)
        with pytest.raises(ConfigError, match="the network takes 7 values, the states of this task have 33"):
            LookaheadPolicy.from_file(env, wrong_size)
        with pytest.raises(ConfigError, match="is not a lookahead policy of format 1"):
            LookaheadPolicy.from_file(env, no_format)
    finally:
        env.close()
    (tmp_path / "junk.npz").write_bytes(b"\x00" * 100)
    assert evaluate_main(["--policy", str(tmp_path / "junk.npz"), "--episodes", "1", "--envs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a policy saved by sim_server" in err and "junk.npz" in err


@pytest.mark.parametrize(("argv", "message"), [
    ([], "the following arguments are required: --out"),
    (["--out", "x.txt"], "--out must be a .npz file in a folder that exists, got 'x.txt'"),
    (["--out", "/no/such/folder/p.npz"], "--out must be a .npz file in a folder that exists"),
    (["--out", "p.npz", "--episodes", "-1"], "--episodes must be a whole number from 0 to 1000000, got -1"),
    (["--out", "p.npz", "--imitation-episodes", "0"], "--imitation-episodes must be a whole number from 1 to 1000000"),
    (["--out", "p.npz", "--envs", "5000"], "--envs must be a whole number from 1 to 1024, got 5000"),
    (["--out", "p.npz", "--hidden", "10,x"], "must be whole numbers separated by commas"),
    (["--out", "p.npz", "--hidden", "0"], "each a finite number >= 1 and <= 4096"),
    (["--out", "p.npz", "--hidden", ",".join(["4"] * 20)], "must be at most 15 sizes"),
    (["--out", "p.npz", "--seed", "-1"], "--seed must be"),
    (["--out", "p.npz", "--scenario", "maze"], "invalid choice: 'maze'"),
])
def test_bad_arguments_are_refused_in_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert train_main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and captured.err.count("\n") == 1
    assert captured.err.startswith("python -m sim_server.learning.train_lookahead: error: ")
