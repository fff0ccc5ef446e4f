"""Rollouts in one process: a policy's failure is said in one bounded line."""

from __future__ import annotations

import numpy as np
import pytest

from sim_server.core.errors import QUOTED_TEXT_LIMIT
from sim_server.learning import NavigationVectorEnv
from sim_server.learning.rollouts import LinearPolicy, rollout


def test_a_policy_raising_a_huge_message_is_said_in_one_bounded_line() -> None:
    def shouting(_observations: np.ndarray) -> np.ndarray:
        raise ValueError("x" * 100_000 + "\nsecond line")

    envs = NavigationVectorEnv(2)
    try:
        observations, _ = envs.reset(seed=1)
        with pytest.raises(RuntimeError, match=r"^the policy raised ValueError: x+\.\.\. at step 0 of the rollout$") as raised:
            rollout(envs, shouting, observations, 3)
        assert len(str(raised.value)) < QUOTED_TEXT_LIMIT + 100 and "second line" not in str(raised.value)
        batch = rollout(envs, LinearPolicy(envs.single_observation_space.shape[0]), observations, 3)  # the worlds go on
        assert batch.rewards.shape == (3, 2)
    finally:
        envs.close()
