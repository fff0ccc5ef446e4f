"""The training example runs (a few thousand steps) and refuses bad arguments; it is an example,
so nothing is asserted of how well it learns."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim_server.learning import train_example


def test_it_trains_a_few_thousand_steps(capsys: pytest.CaptureFixture[str]) -> None:
    history = train_example.main(["--worlds", "16", "--iterations", "3", "--horizon", "60", "--seed", "1"])
    assert [entry["iteration"] for entry in history] == [0, 1, 2]
    assert all(math.isfinite(entry["mean_return"]) and entry["steps_per_s"] > 0 for entry in history)
    assert capsys.readouterr().out.count("mean return") == 3


def test_it_trains_on_ray_actors(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ray", reason="Ray is an optional extra (make setup installs it)")
    history = train_example.main(["--worlds", "8", "--iterations", "2", "--horizon", "20", "--seed", "1", "--workers", "2"])
    assert [entry["iteration"] for entry in history] == [0, 1]
    assert all(math.isfinite(entry["mean_return"]) and entry["steps_per_s"] > 0 for entry in history)


def test_first_episode_returns_count_until_the_first_end() -> None:
    rewards = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [4.0, 4.0, 4.0]])
    ended = np.array([[False, True, False], [False, False, True], [True, False, False]])
    assert train_example.first_episode_returns(rewards, ended).tolist() == [7.0, 1.0, 3.0]


def test_centred_ranks() -> None:
    assert train_example.centred_ranks(np.array([3.0, -1.0, 10.0])).tolist() == [0.0, -0.5, 0.5]


@pytest.mark.parametrize(
    "argv, fault",
    [
        (["--worlds", "1"], "--worlds must be from 2"),
        (["--iterations", "0"], "--iterations must be from 1"),
        (["--horizon", "-5"], "--horizon must be from 1"),
        (["--sigma", "0"], "--sigma must be > 0"),
        (["--learning-rate", "nan"], "--learning-rate must be > 0"),
        (["--worlds", "many"], "invalid int value"),
        (["--seed", "-1"], "--seed must be a whole number from 0 to 9223372036854775807, got -1"),
        (["--workers", "-1"], "--workers must be from 0 to 64"),
        (["--worlds", "9", "--workers", "2"], "--worlds (9) must be a multiple of --workers (2)"),
    ],
)
def test_bad_arguments_are_one_line(argv: list[str], fault: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        train_example.main(argv)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert fault in error and "Traceback" not in error
