"""Train a lookahead policy on CrowdNav's scenarios, as CrowdNav trains its value networks.

    python -m sim_server.learning.train_lookahead --out circle.npz --invisible-robot

writes a :class:`~sim_server.learning.lookahead.LookaheadPolicy` (a value network and a
one-step lookahead) that the evaluation runs: ``python -m sim_server.learning.evaluate
--policy circle.npz --invisible-robot``. NumPy only, in one process, on the vector environment
(:func:`~sim_server.learning.crowdnav.crowdnav_vector_env`, ``--envs`` copies). The recipe is
CrowdNav's (``crowd_nav/train.py`` and its ``train.config``), smaller where it costs:

1. **Imitation**: the ORCA baseline (:mod:`sim_server.learning.baselines`) drives the robot for
   ``--imitation-episodes`` episodes; the value network is fitted to the discounted returns of
   the states it went through (``--imitation-epochs`` passes, batches of 100, Adam).
2. **Reinforcement**: the policy drives, an ``epsilon`` of its actions random (0.5 falling to
   0.1 over the first 40 % of ``--episodes``); every transition goes to a memory of the last
   100,000; after each episode that ends, ``--batches`` batches of 100 from the memory fit the
   network to ``reward + gamma ** (step * speed) * V_target(next state)`` (0 after the last
   state), V_target being a copy of the network taken every 50 episodes.

Training episodes are drawn from ``--seed`` (not CrowdNav's test cases, seeded 1000 on). It
prints a line every 100 episodes (success and collision rates of those episodes, epsilon, the
seconds so far) and, as its last line, one JSON object: ``out``, ``imitation_success_rate``,
``episodes``, the last 100 episodes' ``success_rate`` and ``collision_rate`` (with
exploration; null without reinforcement), ``seconds``. Bad arguments are refused in one line
(exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any, NoReturn, Sequence

import numpy as np

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.learning.baselines import ModelPolicy
from sim_server.learning.crowdnav import KINEMATICS, PEOPLE_MODELS, SCENARIOS, crowdnav_vector_env
from sim_server.learning.lookahead import (
    POLICY_FORMAT, PERSON_FEATURES, ROBOT_FEATURES, LookaheadPolicy, free_value,
)
from sim_server.learning.value_network import ValueNetwork

PROG = "python -m sim_server.learning.train_lookahead"
#: CrowdNav's training constants: batch size, memory, target network period (episodes),
#: exploration (start, end, share of the episodes it falls over), learning rate.
BATCH_SIZE = 100
MEMORY = 100_000
TARGET_PERIOD = 50
EPSILON_START, EPSILON_END, EPSILON_FALL = 0.5, 0.1, 0.4
LEARNING_RATE = 1e-3
#: The last layer's weights start this small: the network starts near 0 (V near the free value).
LAST_LAYER_SCALE = 0.01
#: Episodes between two progress lines.
REPORT_EVERY = 100
#: Limits of the arguments.
MAX_EPISODES = 1_000_000
MAX_ENVS = 1024
MAX_EPOCHS = 10_000
MAX_BATCHES = 10_000


class UsageError(Exception):
    """Arguments that cannot be used: one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _layers(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be whole numbers separated by commas, got {text!r:.60}") from None
    if not sizes or not limits.POLICY_LAYERS.contains(len(sizes) + 1) or not all(limits.POLICY_UNITS.contains(s) for s in sizes):
        raise argparse.ArgumentTypeError(f"must be at most {int(limits.POLICY_LAYERS.high) - 1} sizes, each "
                                         f"{limits.POLICY_UNITS.describe()}, got {text!r:.60}")
    return sizes


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line, checked (:class:`UsageError` for a bad one)."""
    parser = _Parser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="the policy file to write (.npz)")
    parser.add_argument("--scenario", choices=SCENARIOS, default="circle_crossing", help="the scenario")
    parser.add_argument("--kinematics", choices=tuple(KINEMATICS), default="holonomic", help="the robot's kinematics")
    parser.add_argument("--invisible-robot", action="store_true", help="people do not see the robot")
    parser.add_argument("--people", choices=tuple(PEOPLE_MODELS), default="orca", help="the people's crowd model")
    parser.add_argument("--imitation-episodes", type=int, default=500, help="episodes of the ORCA baseline (500)")
    parser.add_argument("--imitation-epochs", type=int, default=50, help="passes over them (50)")
    parser.add_argument("--episodes", type=int, default=3000, help="episodes of reinforcement (3000)")
    parser.add_argument("--batches", type=int, default=50, help="batches trained after each episode (50)")
    parser.add_argument("--envs", type=int, default=32, help="episodes run at once (32)")
    parser.add_argument("--hidden", type=_layers, default=[150, 100, 100], help="hidden layers' sizes (150,100,100)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the network and the episodes (0)")
    args = parser.parse_args(argv)
    for name, value, low, high in (("--imitation-episodes", args.imitation_episodes, 1, MAX_EPISODES),
                                   ("--imitation-epochs", args.imitation_epochs, 0, MAX_EPOCHS),
                                   ("--episodes", args.episodes, 0, MAX_EPISODES), ("--batches", args.batches, 0, MAX_BATCHES),
                                   ("--envs", args.envs, 1, MAX_ENVS)):
        if not low <= value <= high:
            raise UsageError(f"{name} must be a whole number from {low} to {high}, got {value}")
    if not limits.SEED.contains(args.seed):
        raise UsageError(f"--seed must be {limits.SEED.describe()}, got {args.seed}")
    out = Path(args.out)
    if out.suffix != ".npz" or not out.parent.is_dir() or out.is_dir():
        raise UsageError(f"--out must be a .npz file in a folder that exists, got {args.out!r:.200}")
    return args


def discounted_returns(rewards: Sequence[float], discount: float) -> np.ndarray:
    """Each step's return: its reward plus the discounted returns after it."""
    returns = np.zeros(len(rewards))
    following = 0.0
    for k in range(len(rewards) - 1, -1, -1):
        following = rewards[k] + discount * following
        returns[k] = following
    return returns


def train(args: argparse.Namespace, report=print) -> dict[str, Any]:
    """Train as the module's docstring says; returns the JSON line's numbers."""
    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    envs = crowdnav_vector_env(args.envs, args.scenario, args.kinematics, not args.invisible_robot, args.people)
    try:
        observed = envs.fleet.task.observed_people
        network = ValueNetwork([ROBOT_FEATURES + PERSON_FEATURES * observed, *args.hidden, 1], rng, LAST_LAYER_SCALE)
        policy = LookaheadPolicy(envs, network, rng=rng)
        seeds = rng.integers(0, limits.SEED.high, args.envs).tolist()
        imitation_success = _imitate(args, envs, policy, seeds, rng, report)
        numbers = _reinforce(args, envs, policy, rng, report, started)
    finally:
        envs.close()
    network.save(Path(args.out), format=np.array(POLICY_FORMAT), kinematics=np.array(args.kinematics),
                 scenario=np.array(args.scenario), robot_visible=np.array(not args.invisible_robot),
                 people=np.array(args.people))
    return {"out": str(args.out), "imitation_success_rate": imitation_success, **numbers,
            "seconds": round(time.perf_counter() - started, 1)}


def _imitate(args, envs, policy: LookaheadPolicy, seeds: list[int], rng: np.random.Generator, report) -> float:
    """Phase 1: the ORCA baseline's episodes, and the network fitted to their returns."""
    teacher = ModelPolicy(envs, "orca")
    observations, _ = envs.reset(seed=seeds)
    states: list[list[np.ndarray]] = [[] for _ in range(args.envs)]
    rewards: list[list[float]] = [[] for _ in range(args.envs)]
    inputs, targets, successes, episodes = [], [], 0.0, 0
    ended = np.zeros(args.envs, dtype=bool)
    while episodes < args.imitation_episodes:
        features = policy.features(policy.reader.read(observations.astype(np.float64)))
        observations, reward, terminated, truncated, infos = envs.step(teacher(observations))
        for copy in np.flatnonzero(~ended):
            states[copy].append(features[copy])
            rewards[copy].append(float(reward[copy]))
            if terminated[copy] or truncated[copy]:
                if episodes < args.imitation_episodes:
                    inputs.extend(states[copy])
                    targets.extend(discounted_returns(rewards[copy], policy.discount))
                    successes += float(infos["success"][copy])
                    episodes += 1
                states[copy], rewards[copy] = [], []
        ended = terminated | truncated
    x, y = np.array(inputs), np.array(targets)
    offset = free_value(x, policy.goal_radius)
    for _ in range(args.imitation_epochs):
        order = rng.permutation(len(x))
        for at in range(0, len(x), BATCH_SIZE):
            rows = order[at:at + BATCH_SIZE]
            policy.network.fit(x[rows], y[rows], LEARNING_RATE, offset[rows])
    report(f"imitation: {episodes} episodes of the ORCA baseline, success {successes / episodes:.2f}, "
           f"{len(x)} states fitted")
    return successes / episodes


def _reinforce(args, envs, policy: LookaheadPolicy, rng: np.random.Generator, report, started: float) -> dict[str, Any]:
    """Phase 2: the policy drives and learns from its own transitions."""
    network = policy.network
    target = network.copy()
    memory = Memory(MEMORY, network.inputs)
    recent: deque[tuple[float, float]] = deque(maxlen=REPORT_EVERY)
    observations, _ = envs.reset(seed=rng.integers(0, limits.SEED.high, args.envs).tolist())
    ended = np.zeros(args.envs, dtype=bool)
    episodes, targeted = 0, 0
    fall = max(EPSILON_FALL * args.episodes, 1.0)
    seen = policy.reader.read(observations.astype(np.float64))
    features = policy.features(seen)
    while episodes < args.episodes:
        policy.epsilon = max(EPSILON_END, EPSILON_START - (EPSILON_START - EPSILON_END) * episodes / fall)
        observations, reward, terminated, truncated, infos = envs.step(policy.act(seen))
        seen = policy.reader.read(observations.astype(np.float64))
        following = policy.features(seen)
        finished = 0
        for copy in np.flatnonzero(~ended):
            memory.add(features[copy], float(reward[copy]), following[copy], bool(terminated[copy]))
            if terminated[copy] or truncated[copy]:
                finished += 1
                recent.append((float(infos["success"][copy]), float(infos["collision"][copy])))
                if (episodes + finished) % REPORT_EVERY == 0:
                    rates = np.mean(recent, axis=0)
                    report(f"episodes {episodes + finished}: success {rates[0]:.2f}, collision {rates[1]:.2f} "
                           f"(epsilon {policy.epsilon:.2f}), {time.perf_counter() - started:.0f} s")
        ended = terminated | truncated
        features = following
        episodes += finished
        if finished and memory.count >= BATCH_SIZE:
            _fit_from(memory, network, target, policy, finished * args.batches, rng)
        if episodes - targeted >= TARGET_PERIOD:
            target, targeted = network.copy(), episodes
    policy.epsilon = 0.0
    if not recent:  # no reinforcement (--episodes 0): no rates
        return {"episodes": episodes, "success_rate": None, "collision_rate": None}
    rates = np.mean(recent, axis=0)
    return {"episodes": episodes, "success_rate": float(rates[0]), "collision_rate": float(rates[1])}


class Memory:
    """The last ``size`` transitions (state, reward, next state, whether it ended there)."""

    def __init__(self, size: int, features: int) -> None:
        self.states = np.zeros((size, features))
        self.following = np.zeros((size, features))
        self.rewards = np.zeros(size)
        self.last = np.zeros(size, dtype=bool)
        self.count = 0
        self._next = 0

    def add(self, state: np.ndarray, reward: float, following: np.ndarray, last: bool) -> None:
        at = self._next
        self.states[at], self.rewards[at], self.following[at], self.last[at] = state, reward, following, last
        self._next = (at + 1) % len(self.rewards)
        self.count = min(self.count + 1, len(self.rewards))


def _fit_from(memory: Memory, network: ValueNetwork, target: ValueNetwork, policy: LookaheadPolicy, batches: int,
              rng: np.random.Generator) -> None:
    states, rewards, following, last = memory.states, memory.rewards, memory.following, memory.last
    goal_radius = policy.goal_radius
    for _ in range(batches):
        rows = rng.integers(0, memory.count, BATCH_SIZE)
        ahead = free_value(following[rows], goal_radius) + target(following[rows])
        wanted = rewards[rows] + np.where(last[rows], 0.0, policy.discount * ahead)
        network.fit(states[rows], wanted, LEARNING_RATE, free_value(states[rows], goal_radius))


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        numbers = train(args, report=lambda line: print(line, flush=True))
    except (UsageError, ConfigError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(numbers, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
