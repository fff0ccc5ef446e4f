"""The evaluation command (sim_server.learning.evaluate): its table and JSON line, policies given
as module:callable, the same results in one process and over Ray workers, bad arguments."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from sim_server.learning.evaluate import evaluate, main, parse_args, summary

#: The rates, the navigation time and the social navigation metrics of the JSON line (some).
KEYS = {"episodes", "success_rate", "collision_rate", "timeout_rate", "mean_time", "discomfort_frequency", "path_length",
        "path_efficiency", "path_irregularity", "acceleration_mean", "jerk_mean", "min_person_gap",
        "min_time_to_collision", "intimate_time", "personal_time", "personal_entries", "people_slowdown",
        "collided_person", "collided_other"}


def ahead(observations: np.ndarray) -> np.ndarray:
    """A holonomic robot driving straight ahead at full speed (a module:callable policy)."""
    return np.tile([1.0, 0.0, 0.0], (len(observations), 1))


def words(observations: np.ndarray) -> str:
    """A policy giving no numbers."""
    return "left"


class Predictor:
    """Stands for an SB3 model: ``predict`` gives (actions, state)."""

    def predict(self, observations: np.ndarray) -> tuple[np.ndarray, None]:
        return np.tile([0.0, 0.0, 0.0], (len(observations), 1)), None


MODEL = Predictor()


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


def test_it_prints_a_table_and_a_json_line(capsys: pytest.CaptureFixture) -> None:
    assert main(["--episodes", "6", "--envs", "3", "--policy", "orca"]) == 0
    out = capsys.readouterr().out
    numbers = last_json(out)
    assert KEYS <= set(numbers) and numbers["episodes"] == 6
    assert numbers["success_rate"] + numbers["collision_rate"] + numbers["timeout_rate"] == pytest.approx(1.0)
    assert out.splitlines()[4].split() == ["success_rate", f"{numbers['success_rate']:.4f}"] and out.count("\n") > len(numbers)


def test_module_callables_and_predict_methods_are_policies(capsys: pytest.CaptureFixture) -> None:
    assert main(["--episodes", "4", "--envs", "4", "--policy", "test.learning.test_evaluate:ahead"]) == 0
    straight = last_json(capsys.readouterr().out)
    assert straight["timeout_rate"] == 0.0 and straight["path_irregularity"] == pytest.approx(0.0, abs=1e-6)
    assert main(["--episodes", "2", "--envs", "2", "--policy", "test.learning.test_evaluate:MODEL.predict",
                 "--scenario", "square_crossing"]) == 0
    still = last_json(capsys.readouterr().out)
    assert still["path_length"] < 0.5 and still["success_rate"] == 0.0
    assert still["mean_time"] == 25.0  # CrowdNav's navigation time when nothing succeeded: the time limit


def test_batches_give_the_same_episodes_whatever_runs_before_them() -> None:
    options = vars(parse_args(["--episodes", "6", "--envs", "3", "--invisible-robot", "--seed", "40"]))
    both = evaluate(options)
    second = evaluate(dict(options, seed=43, episodes=3))
    for key, values in second.items():
        np.testing.assert_array_equal(values, both[key][3:], err_msg=key)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray = pytest.importorskip("ray", reason="Ray is an optional extra (make setup installs it)")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


def test_one_and_two_workers_give_what_one_process_gives(local_ray: None) -> None:
    options = vars(parse_args(["--episodes", "6", "--envs", "2", "--invisible-robot", "--policy", "social_force"]))
    alone = evaluate(options)
    for workers in (1, 2):
        spread = evaluate(dict(options, workers=workers))
        for key, values in alone.items():
            np.testing.assert_array_equal(spread[key], values, err_msg=f"{key}, {workers} workers")
    assert summary(alone) == summary(evaluate(dict(options, workers=2)))


@pytest.mark.parametrize("argv, message", [
    (["--scenario", "circle"], "argument --scenario: invalid choice: 'circle'"),
    (["--episodes", "0"], "--episodes must be a whole number from 1 to 1000000, got 0"),
    (["--episodes", "1.5"], "argument --episodes: invalid int value: '1.5'"),
    (["--envs", "0"], "--envs must be a whole number from 1 to 1024, got 0"),
    (["--workers", "-1"], "--workers must be a whole number from 0 to 1024, got -1"),
    (["--seed", "-3"], "--seed must leave every episode's seed within"),
    (["--kinematics", "car"], "argument --kinematics: invalid choice: 'car'"),
    (["--people", "boids"], "argument --people: invalid choice: 'boids'"),
    (["--policy", "rvo"], "--policy must be orca, social_force, FILE.npz or module:callable, got 'rvo'"),
    (["--policy", "no_such.npz"], "--policy: policy file \"no_such.npz\" does not exist"),
    (["--policy", "no_such_module_here:act"], "--policy no_such_module_here:act: cannot import no_such_module_here"),
    (["--policy", "test.learning.test_evaluate:nothing"], "test.learning.test_evaluate has no nothing"),
    (["--policy", "test.learning.test_evaluate:KEYS"], "KEYS is not callable"),
    (["--policy", "test.learning.test_evaluate:last_json"], "--policy test.learning.test_evaluate:last_json raised"),
    (["--policy", "test.learning.test_evaluate:words"], "must give 1 actions of 3 finite numbers, got str of shape ()"),
    (["--kinematics", "unicycle", "--policy", "test.learning.test_evaluate:ahead"], "must give 1 actions of 2 finite"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
])
def test_bad_arguments_are_refused_in_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert main(argv + (["--episodes", "1", "--envs", "1"] if "--episodes" not in argv and "--envs" not in argv else [])) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and captured.err.count("\n") == 1
    assert captured.err.startswith("python -m sim_server.learning.evaluate: error: ")


def test_generated_bad_values_are_refused_in_one_line(capsys: pytest.CaptureFixture) -> None:
    rng = np.random.default_rng(36)
    values = ["", "-1", "nan", "1e99", "x" * 500, "0x10", "None", "--", "2000000", "-0.5", ":", "a:", ":b", "a b:c"]
    for _ in range(30):
        option = str(rng.choice(["--episodes", "--envs", "--workers", "--seed", "--scenario", "--policy", "--kinematics",
                                 "--people"]))
        value = str(rng.choice(values))
        assert main([option, value, "--episodes" if option != "--episodes" else "--envs", "1"]) == 2, (option, value)
        captured = capsys.readouterr()
        assert captured.err.count("\n") == 1 and len(captured.err) < 400, (option, value, captured.err)
