"""Example: training a navigation policy on the vector environment, with NumPy alone.

    python -m sim_server.learning.train_example --worlds 64 --iterations 40

Evolution strategies (Salimans et al., 2017) fit many worlds in one process well: every
iteration each of the ``--worlds`` copies runs one perturbed version of a linear policy
(``action = tanh(W @ observation + b)``, antithetic pairs ``+eps`` and ``-eps``) for
``--horizon`` actions from the start of an episode, and the policy moves along the perturbations
weighted by the centred ranks of their returns. A copy's return counts until its episode ends
(the rest of its run is not counted). It prints each iteration's mean return
and the environment steps a second, training included (an iteration ends early once every copy's
episode has), and returns the history for programs. The policy is
:class:`~sim_server.learning.rollouts.LinearPolicy` with a row of weights for each copy.

With ``--workers N`` the copies are N Ray actors' (:class:`~sim_server.learning.distributed.RayVectorEnv`,
``--worlds`` divided among them; a local Ray is started unless one runs): the policy is sent to
them once, each iteration gives it the candidates' weights and every actor rolls out
``--horizon`` steps with it (no early end), its batch returned at once.
No deep-learning library is needed; a library such as Stable-Baselines3 takes the same
environment through ``gymnasium.make_vec("sim_server.learning:sim_server/Navigation-v0", ...)``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from sim_server.core import limits
from sim_server.learning.rollouts import LinearPolicy
from sim_server.learning.vector_env import NavigationVectorEnv

#: Most Ray workers of the example.
MAX_WORKERS = 64


def centred_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks of ``values`` scaled to [-0.5, 0.5] (the ES update's fitness shaping)."""
    ranks = np.empty(len(values))
    ranks[np.argsort(values)] = np.arange(len(values))
    return ranks / max(len(values) - 1, 1) - 0.5


def first_episode_returns(rewards: np.ndarray, ended: np.ndarray) -> np.ndarray:
    """Each copy's return (num_envs,) over rewards (steps, num_envs) until its first episode
    ended (``ended``: terminated or truncated, that step's reward counted)."""
    before = np.vstack([np.ones((1, rewards.shape[1]), dtype=bool), np.logical_and.accumulate(~ended, axis=0)[:-1]])
    return np.where(before, rewards, 0.0).sum(axis=0)


def train(
    worlds: int, iterations: int, horizon: int, sigma: float, learning_rate: float, seed: int, workers: int = 0,
) -> Iterator[dict[str, float]]:
    """Train, yielding after each iteration: ``mean_return`` and ``best_return`` of the copies,
    ``steps_per_s`` (environment steps a second, the update included). ``workers``: Ray actors
    holding the copies (0: this process; Ray must then be initialised)."""
    rng = np.random.default_rng(seed)
    if workers:
        from sim_server.learning.distributed import RayVectorEnv

        envs = RayVectorEnv(workers, worlds // workers)
    else:
        envs = NavigationVectorEnv(worlds)
    try:
        policy = LinearPolicy(envs.single_observation_space.shape[0], envs.single_action_space.shape[0])
        theta = np.zeros(policy.size)  # W (2 x size) and b (2), flattened
        pairs = worlds // 2
        envs.reset(seed=seed)
        if workers:
            envs.set_policy(policy)
        for iteration in range(iterations):
            started = time.perf_counter()
            observations, _ = envs.reset()  # every candidate from the start of an episode
            noise = rng.standard_normal((pairs, theta.size))
            candidates = np.concatenate([theta + sigma * noise, theta - sigma * noise])
            if worlds % 2:  # an odd copy runs the policy itself
                candidates = np.concatenate([candidates, theta[None]])
            if workers:
                envs.set_weights(candidates, per_environment=True)
                batch = envs.rollout(horizon)
                returns, taken = first_episode_returns(batch.rewards, batch.terminated | batch.truncated), horizon
            else:
                policy.set_weights(candidates)
                returns, taken = _run(envs, policy, observations, horizon)
            fitness = centred_ranks(returns[: 2 * pairs])
            theta = theta + learning_rate / (pairs * sigma) * ((fitness[:pairs] - fitness[pairs:]) @ noise)
            elapsed = time.perf_counter() - started
            yield {
                "iteration": iteration, "mean_return": float(returns.mean()), "best_return": float(returns.max()),
                "steps_per_s": worlds * taken / elapsed,
            }
    finally:
        envs.close()


def _run(envs: NavigationVectorEnv, policy: LinearPolicy, observations: np.ndarray, horizon: int) -> tuple[np.ndarray, int]:
    """Every copy's return until its episode ends, within ``horizon`` actions, and the actions
    taken (fewer once every copy's episode has ended)."""
    returns = np.zeros(envs.num_envs)
    running = np.ones(envs.num_envs, dtype=bool)
    taken = 0
    for _ in range(horizon):
        taken += 1
        observations, rewards, terminated, truncated, _ = envs.step(policy(observations))
        returns += np.where(running, rewards, 0.0)
        running &= ~(terminated | truncated)
        if not running.any():
            break
    return returns, taken


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(prog="python -m sim_server.learning.train_example", description=__doc__.split("\n")[0])
    parser.add_argument("--worlds", type=int, default=64, help="copies of the world, one perturbed policy each (2 or more, default 64)")
    parser.add_argument("--iterations", type=int, default=40, help="policy updates (default 40)")
    parser.add_argument("--horizon", type=int, default=150, help="actions per copy and iteration (default 150)")
    parser.add_argument("--sigma", type=float, default=0.1, help="the perturbations' size (default 0.1)")
    parser.add_argument("--learning-rate", type=float, default=0.05, help="step of an update (default 0.05)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the worlds and the perturbations (default 0)")
    parser.add_argument("--workers", type=int, default=0,
                        help="Ray actors holding the copies, --worlds divided among them (default 0: this process alone)")
    args = parser.parse_args(argv)
    for name, value, low, high in (("--worlds", args.worlds, 2, 4096), ("--iterations", args.iterations, 1, 100_000),
                                   ("--horizon", args.horizon, 1, limits.MAX_ROLLOUT_STEPS), ("--workers", args.workers, 0, MAX_WORKERS)):
        if not low <= value <= high:
            parser.error(f"{name} must be from {low} to {high}, got {value}")
    if args.workers and args.worlds % args.workers:
        parser.error(f"--worlds ({args.worlds}) must be a multiple of --workers ({args.workers})")
    if not limits.SEED.contains(args.seed):
        parser.error(f"--seed must be a whole number from 0 to {int(limits.SEED.high)}, got {args.seed}")
    for name, value in (("--sigma", args.sigma), ("--learning-rate", args.learning_rate)):
        if not 0.0 < value <= 10.0:
            parser.error(f"{name} must be > 0 and <= 10, got {value:g}")
    started_ray = False
    if args.workers:
        try:
            import ray
        except ImportError:
            parser.error("--workers needs Ray, an optional extra: pip install ray (make setup installs it)")
        if not ray.is_initialized():
            ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
            started_ray = True
    history = []
    try:
        for entry in train(args.worlds, args.iterations, args.horizon, args.sigma, args.learning_rate, args.seed, args.workers):
            history.append(entry)
            print(
                f"iteration {entry['iteration']:3d}: mean return {entry['mean_return']:7.2f}, best {entry['best_return']:7.2f}, "
                f"{entry['steps_per_s']:.0f} steps/s"
            )
    except ValueError as error:  # Ray's: too few CPUs in the cluster
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    finally:
        if started_ray:
            ray.shutdown()
    return history


if __name__ == "__main__":
    main()
