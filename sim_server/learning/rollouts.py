"""Rollouts: a policy steps a vector environment for a batch of steps, returned as arrays.

:func:`rollout` steps a :class:`~sim_server.learning.vector_env.NavigationVectorEnv` (or any
Gymnasium vector environment of Box actions) ``steps`` times, each step's actions the policy's
for the observations of the step before, and returns a :class:`Rollout` of arrays shaped
``(steps, num_envs, ...)``. It is what each Ray actor does with the policy it holds
(:meth:`RayVectorEnv.rollout <sim_server.learning.distributed.RayVectorEnv.rollout>`, the
batch sent back once instead of a round trip a step), and it runs in one process as well.

A policy is any callable of observations ``(num_envs, size)`` to actions ``(num_envs, action
size)`` (or to a tuple whose first item they are, as a Stable-Baselines3 model's ``predict``
gives); one with a ``set_weights(weights)`` method can be given new weights without being
sent again. :class:`LinearPolicy` is the training example's (``tanh(W @ observation + b)``),
with its weights shared by every environment or one set per environment.

Autoreset is the environment's (next-step): the step after an episode ended resets that
environment, ignores its action and gives reward 0 with neither ``terminated`` nor ``truncated``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from sim_server.core import limits
from sim_server.core.errors import one_line
from sim_server.learning.navigation_env import checked_actions

Policy = Callable[[np.ndarray], Any]


@dataclass
class Rollout:
    """A batch of ``steps`` vector steps of ``num_envs`` environments.

    Attributes:
        observations: (steps, num_envs, size) float32: what each step's actions were chosen from.
        actions: (steps, num_envs, action size) float64: the policy's actions as it gave them
            (the environment clips them to [-1, 1]).
        rewards: (steps, num_envs) float64.
        terminated: (steps, num_envs) bool: the episode ended at that step (goal or collision).
        truncated: (steps, num_envs) bool: the episode was cut at that step (time limit).
        infos: each info key's values by step, (steps, num_envs) (``distance`` in m,
            ``reached``, ``collided``, ``success``, the episode's metrics; their ``_key`` masks,
            always true, are left out).
        last_observations: (num_envs, size) float32: the observations after the last step (the
            next rollout's first).
        seconds: (num_envs,) float64: the time (s) the process that stepped each environment
            spent on the batch, the policy's calls included (an actor's, for its worlds).
    """

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    infos: dict[str, np.ndarray]
    last_observations: np.ndarray
    seconds: np.ndarray

    @property
    def steps(self) -> int:
        """Vector steps of the batch."""
        return len(self.rewards)

    @property
    def num_envs(self) -> int:
        """Environments of the batch."""
        return self.rewards.shape[1]


def joined(parts: list[Rollout]) -> Rollout:
    """Rollouts of the same steps in environments side by side (actors' batches, in order) as one."""
    return Rollout(
        np.concatenate([part.observations for part in parts], axis=1),
        np.concatenate([part.actions for part in parts], axis=1),
        np.concatenate([part.rewards for part in parts], axis=1),
        np.concatenate([part.terminated for part in parts], axis=1),
        np.concatenate([part.truncated for part in parts], axis=1),
        {key: np.concatenate([part.infos[key] for part in parts], axis=1) for key in parts[0].infos},
        np.concatenate([part.last_observations for part in parts]),
        np.concatenate([part.seconds for part in parts]),
    )


def checked_steps(steps: Any, num_envs: int) -> int:
    """``steps`` as an int, or ValueError: a whole number from 1 to
    :data:`~sim_server.core.limits.MAX_ROLLOUT_STEPS`, and ``steps * num_envs`` at most
    :data:`~sim_server.core.limits.MAX_ROLLOUT_ENVIRONMENT_STEPS` (one process's batch)."""
    most = limits.MAX_ROLLOUT_STEPS
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or not 1 <= steps <= most:
        raise ValueError(f"steps must be a whole number from 1 to {most}, got {steps!r:.100}")
    if steps * num_envs > limits.MAX_ROLLOUT_ENVIRONMENT_STEPS:
        raise ValueError(
            f"a rollout of {steps} steps of {num_envs} environments is more than "
            f"{limits.MAX_ROLLOUT_ENVIRONMENT_STEPS} environment steps in one process: fewer steps a rollout"
        )
    return int(steps)


def checked_policy(policy: Any) -> Policy:
    """``policy`` if it is callable, else ValueError."""
    if not callable(policy):
        raise ValueError(f"a policy must be callable (observations to actions), got {type(policy).__name__}")
    return policy


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message, cut as every quoted foreign error is
    (:func:`~sim_server.core.errors.one_line`); empty for none."""
    said = str(error).strip().splitlines()
    return one_line(said[0]) if said else ""


def error_line(error: BaseException) -> str:
    """``error``'s kind and the first line of its message (:func:`first_line`)."""
    said = first_line(error)
    return f"{type(error).__name__}: {said}" if said else type(error).__name__


def policy_actions(policy: Policy, observations: np.ndarray, action_size: int, step: int) -> np.ndarray:
    """The policy's actions for ``observations`` as (num_envs, action_size) float64, unclipped.

    Raises:
        RuntimeError: the policy raised (its error in one line).
        ValueError: the actions are not num_envs rows of action_size finite numbers.
    """
    try:
        given = policy(observations)
    except Exception as error:  # noqa: BLE001 - the user's policy failed: one line
        raise RuntimeError(f"the policy raised {error_line(error)} at step {step} of the rollout") from None
    if isinstance(given, tuple):
        given = given[0] if given else None
    try:
        checked_actions(given, len(observations), action_size)
    except ValueError as error:
        raise ValueError(f"the policy's actions at step {step} of the rollout: {error}") from None
    return np.asarray(given, dtype=np.float64).reshape(len(observations), action_size)


def rollout(envs: VectorEnv, policy: Policy, observations: np.ndarray, steps: int, seconds: float | None = None) -> Rollout:
    """``steps`` vector steps of ``envs`` from ``observations`` (those of its last reset or
    step), each step's actions ``policy``'s. ``seconds``: most time the batch may take (s; None:
    no limit), checked between steps.

    Raises:
        ValueError: bad ``steps`` or ``policy``, or actions that are not the policy's to give
            (wrong shape, not finite).
        RuntimeError: the policy raised, or the time ran out. The environments are left as the
            last step left them (reset them to start afresh).
    """
    steps = checked_steps(steps, envs.num_envs)
    checked_policy(policy)
    action_size = envs.single_action_space.shape[0]
    started = time.perf_counter()
    deadline = None if seconds is None else time.monotonic() + seconds
    seen, done, rewards, terminated, truncated, infos = [], [], [], [], [], []
    for step in range(steps):
        if deadline is not None and time.monotonic() > deadline:
            raise RuntimeError(f"the rollout took more than {seconds:g} s: {step} of its {steps} steps were taken")
        actions = policy_actions(policy, observations, action_size, step)
        seen.append(observations)
        done.append(actions)
        observations, reward, ended, cut, info = envs.step(actions)
        rewards.append(reward)
        terminated.append(ended)
        truncated.append(cut)
        infos.append(info)
    keys = [key for key in infos[0] if not key.startswith("_")]
    return Rollout(
        np.stack(seen), np.stack(done), np.stack(rewards), np.stack(terminated), np.stack(truncated),
        {key: np.stack([info[key] for info in infos]) for key in keys}, np.asarray(observations),
        np.full(envs.num_envs, time.perf_counter() - started),
    )


class LinearPolicy:
    """``action = tanh(W @ observation + b)``, the training example's policy.

    Its weights are one flat vector ``theta``: ``W`` (action_size x observation_size) row by row,
    then ``b`` (action_size), :attr:`size` numbers. Shape ``(size,)``: one policy for every
    environment; shape ``(num_envs, size)``: one for each environment (as evolution strategies
    run a perturbed copy in each world; the observations must then be ``num_envs`` rows).

    Args:
        observation_size: numbers of an observation.
        action_size: numbers of an action (2: linear and angular).
        weights: ``theta`` (default: zeros, every action 0).

    Raises:
        ValueError: bad sizes or weights.
    """

    def __init__(self, observation_size: int, action_size: int = 2, weights: np.ndarray | None = None) -> None:
        for name, value, bounds in (("observation_size", observation_size, limits.POLICY_INPUTS),
                                    ("action_size", action_size, limits.POLICY_OUTPUTS)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not bounds.contains(int(value)):
                raise ValueError(f"{name} must be a whole number from 1 to {int(bounds.high)}, got {value!r:.100}")
        self.observation_size, self.action_size = int(observation_size), int(action_size)
        self.size = self.action_size * (self.observation_size + 1)
        self.weights = np.zeros(self.size)
        if weights is not None:
            self.set_weights(weights)

    def set_weights(self, weights: Any) -> None:
        """New ``theta`` (see the class), or ValueError."""
        try:
            given = np.array(weights, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"a linear policy's weights must be numbers, got {type(weights).__name__}") from None
        if given.ndim not in (1, 2) or given.shape[-1] != self.size or not np.isfinite(given).all():
            raise ValueError(
                f"a linear policy's weights must be {self.size} finite numbers, or a row of them for each environment, "
                f"got shape {given.shape}" + ("" if np.isfinite(given).all() else " with numbers that are not finite")
            )
        self.weights = given

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        """Actions (num_envs, action_size) for observations (num_envs, observation_size)."""
        observations = np.asarray(observations, dtype=np.float64)
        if observations.ndim != 2 or observations.shape[1] != self.observation_size:
            raise ValueError(f"observations must be rows of {self.observation_size} numbers, got shape {observations.shape}")
        split = self.action_size * self.observation_size
        if self.weights.ndim == 1:
            matrix = self.weights[:split].reshape(self.action_size, self.observation_size)
            return np.tanh(observations @ matrix.T + self.weights[split:])
        if len(self.weights) != len(observations):
            raise ValueError(f"weights for {len(self.weights)} environments, observations of {len(observations)}")
        matrices = self.weights[:, :split].reshape(-1, self.action_size, self.observation_size)
        return np.tanh(np.einsum("kij,kj->ki", matrices, observations) + self.weights[:, split:])
