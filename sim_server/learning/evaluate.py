"""Evaluate a robot policy on CrowdNav's scenarios, as CrowdNav's test phase does.

``python -m sim_server.learning.evaluate --scenario circle_crossing --policy orca --episodes 500``
runs ``episodes`` episodes of the scenario (:mod:`sim_server.learning.crowdnav`) and prints a
table of the results, then, as its last line, one JSON object: ``episodes``, ``success_rate``,
``collision_rate``, ``timeout_rate``, ``mean_time`` (s: the mean time to goal of the successful
episodes, CrowdNav's navigation time; the time limit when none succeeded, as CrowdNav reports
it), ``discomfort_frequency`` (the actions ending with a person within the discomfort distance
over all actions, CrowdNav's), and the mean over the episodes of every social navigation
metric of ``info`` (:mod:`sim_server.learning.metrics`; each over the episodes where it is
defined and finite, null where none is: ``path_efficiency`` and ``time_to_goal`` are of
successful episodes, ``min_time_to_collision`` of episodes with a person on a collision course).

* ``--policy``: ``orca`` or ``social_force`` (the baselines of
  :mod:`sim_server.learning.baselines`), a ``.npz`` file that
  :mod:`sim_server.learning.train_lookahead` wrote (a value network's lookahead policy,
  :mod:`sim_server.learning.lookahead`), or ``module:callable``, a callable of the module (a
  dotted path after the colon: ``my_agent:model.predict``) that takes a batch of observations
  (N, observation size) and gives their actions (N, action size), or a tuple whose first item
  they are (an SB3 model's ``predict``).
* ``--seed S`` (default 1000): episode ``k`` (from 0) is seeded ``S + k``; with the default it
  is CrowdNav's test case ``k``.
* ``--invisible-robot``: people do not see the robot (CrowdNav's default configuration and
  its paper's tables); ``--kinematics`` (holonomic or unicycle), ``--people`` (the people's
  model: orca or social_force).
* ``--envs B`` (default 16): episodes run B at a time, as the copies of one vector environment
  (:class:`~sim_server.learning.vector_env.NavigationVectorEnv`); episode ``k`` always runs in
  copy ``k % B`` of a batch of its own, ``k // B``, in an environment made for it, so that what
  it gives depends on ``S``, ``k`` and ``B`` alone.
* ``--workers N``: the batches are spread over N Ray workers (one core each; a local Ray is
  started unless one is running), with the same seeds and so the same results as one process.

Bad arguments are refused in one line (exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence

import numpy as np

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.learning.baselines import MODELS, ModelPolicy
from sim_server.learning.crowdnav import KINEMATICS, PEOPLE_MODELS, SCENARIOS, TIME_LIMIT, crowdnav_vector_env
from sim_server.learning.lookahead import LookaheadPolicy
from sim_server.learning.metrics import DISCOMFORT_ZONE

PROG = "python -m sim_server.learning.evaluate"
#: CrowdNav's test cases start at this seed (its ``np.random.seed(1000 + k)``).
DEFAULT_SEED = 1000
#: Most episodes of one evaluation, copies of a batch and workers.
MAX_EPISODES = 1_000_000
MAX_BATCH = 1024
MAX_WORKERS = 1024
DEFAULT_BATCH = 16
#: The end of the name of a policy file (train_lookahead's).
POLICY_SUFFIX = ".npz"
#: The keys of the outcome, summarised as rates.
OUTCOMES = ("success", "collision", "timeout")
#: Keys of info that are no metrics of the episode.
NOT_METRICS = ("finished", "steps")


class UsageError(Exception):
    """Arguments that cannot be used: one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line, checked (:class:`UsageError` for a bad one)."""
    parser = _Parser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", choices=SCENARIOS, default="circle_crossing", help="the scenario")
    parser.add_argument("--policy", default="orca",
                        help=f"{', '.join(MODELS)} (the baselines), FILE.npz (a policy of train_lookahead), "
                             "or module:callable (observations to actions)")
    parser.add_argument("--episodes", type=int, default=500, help="episodes (default 500, CrowdNav's test set)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"episode k is seeded S + k (default {DEFAULT_SEED})")
    parser.add_argument("--invisible-robot", action="store_true", help="people do not see the robot")
    parser.add_argument("--kinematics", choices=tuple(KINEMATICS), default="holonomic", help="the robot's kinematics")
    parser.add_argument("--people", choices=tuple(PEOPLE_MODELS), default="orca", help="the people's crowd model")
    parser.add_argument("--envs", type=int, default=DEFAULT_BATCH, help=f"episodes run at once (default {DEFAULT_BATCH})")
    parser.add_argument("--workers", type=int, default=0, help="Ray workers (default 0: this process alone)")
    args = parser.parse_args(argv)
    for name, value, low, high in (("--episodes", args.episodes, 1, MAX_EPISODES), ("--envs", args.envs, 1, MAX_BATCH),
                                   ("--workers", args.workers, 0, MAX_WORKERS)):
        if not low <= value <= high:
            raise UsageError(f"{name} must be a whole number from {low} to {high}, got {value}")
    if not limits.SEED.contains(args.seed) or not limits.SEED.contains(args.seed + args.episodes - 1 + args.envs):
        raise UsageError(f"--seed must leave every episode's seed within {limits.SEED.describe()}, got {args.seed}")
    check_policy_name(args.policy)
    return args


def check_policy_name(policy: Any) -> None:
    """UsageError unless ``policy`` names a baseline, a .npz file or has the form ``module:callable``."""
    if not isinstance(policy, str) or (policy not in MODELS and not _split(policy) and not _is_file_name(policy)):
        raise UsageError(f"--policy must be {', '.join(MODELS)}, FILE.npz or module:callable, got {policy!r:.100}")


def _is_file_name(policy: str) -> bool:
    return policy.endswith(POLICY_SUFFIX) and len(policy) <= limits.MAX_PATH_CHARS


def _split(policy: str) -> tuple[str, list[str]] | None:
    """``module:a.b`` as ("module", ["a", "b"]), or None where it is not of that form."""
    module, colon, path = policy.partition(":")
    parts = path.split(".")
    if not colon or not all(part.isidentifier() for part in module.split(".")) or not all(p.isidentifier() for p in parts):
        return None
    return module, parts


def load_policy(policy: str, env: Any) -> Callable[[np.ndarray], Any]:
    """The policy ``policy`` names, for the observations of ``env`` (UsageError where it cannot
    be had)."""
    check_policy_name(policy)
    if policy in MODELS:
        return ModelPolicy(env, policy)
    if _is_file_name(policy):
        try:
            return LookaheadPolicy.from_file(env, Path(policy))
        except ConfigError as error:
            raise UsageError(f"--policy: {error}") from None
    module_name, path = _split(policy)
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - any import failure is the user's module's: one line
        raise UsageError(f"--policy {policy}: cannot import {module_name}: {type(error).__name__}: {error}") from None
    for part in path:
        if not hasattr(found, part):
            raise UsageError(f"--policy {policy}: {module_name} has no {'.'.join(path)}")
        found = getattr(found, part)
    if not callable(found):
        raise UsageError(f"--policy {policy}: {'.'.join(path)} is not callable")
    return found


def policy_actions(policy: Callable, name: str, observations: np.ndarray, size: int) -> np.ndarray:
    """``policy``'s actions for ``observations``, as (N, size) floats (UsageError where they are not)."""
    try:
        given = policy(observations)
    except UsageError:
        raise
    except Exception as error:  # noqa: BLE001 - the user's policy failed: one line
        raise UsageError(f"--policy {name} raised {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}") from None
    if isinstance(given, tuple):
        given = given[0] if given else None
    try:
        actions = np.asarray(given, dtype=np.float64)
    except (TypeError, ValueError):
        actions = np.zeros(0)
    if actions.shape != (len(observations), size) or not np.isfinite(actions).all():
        raise UsageError(f"--policy {name} must give {len(observations)} actions of {size} finite numbers, got "
                         f"{type(given).__name__} of shape {np.shape(given)}")
    return actions


def run_batches(options: dict[str, Any], batches: Sequence[int]) -> dict[int, dict[str, np.ndarray]]:
    """Run the batches ``batches`` (numbers) of the evaluation ``options`` (the parsed
    arguments' values): per batch, each episode's metrics by key (arrays, the batch's episodes
    in order)."""
    found = {}
    for batch in batches:
        found[batch] = _run_batch(options, batch)
    return found


def _run_batch(options: dict[str, Any], batch: int) -> dict[str, np.ndarray]:
    """Batch ``batch``: episodes ``batch * envs`` on, each in its own copy, until every one ends."""
    size = options["envs"]
    first = batch * size
    count = min(size, options["episodes"] - first)
    envs = crowdnav_vector_env(size, options["scenario"], options["kinematics"], not options["invisible_robot"],
                               options["people"])
    try:
        policy = load_policy(options["policy"], envs)
        observations, _ = envs.reset(seed=[options["seed"] + first + index for index in range(size)])
        keys = list(envs.fleet.metrics())
        results = {key: np.full(size, np.nan) for key in keys}
        ended = np.zeros(size, dtype=bool)
        ended[count:] = True  # copies past the last episode run, unread
        action_size = envs.single_action_space.shape[0]
        while not ended.all():
            actions = policy_actions(policy, options["policy"], observations, action_size)
            observations, _, terminated, truncated, infos = envs.step(actions)
            now = (terminated | truncated) & ~ended
            for key in keys:
                results[key][now] = infos[key][now]
            ended |= now
    finally:
        envs.close()
    return {key: values[:count] for key, values in results.items()}


def evaluate(options: dict[str, Any]) -> dict[str, np.ndarray]:
    """Every episode's metrics by key (arrays in episode order), run in this process or over
    ``options["workers"]`` Ray workers."""
    batches = list(range(math.ceil(options["episodes"] / options["envs"])))
    workers = options["workers"]
    if workers <= 0:
        found = run_batches(options, batches)
    else:
        found = _on_ray(options, batches, workers)
    parts = [found[batch] for batch in batches]
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


def _on_ray(options: dict[str, Any], batches: list[int], workers: int) -> dict[int, dict[str, np.ndarray]]:
    """The batches run by ``workers`` Ray tasks (worker ``w`` runs batches ``w``, ``w + workers``, ...)."""
    try:
        import ray
    except ImportError:
        raise UsageError("--workers needs Ray, an optional extra: pip install ray (make setup installs it)") from None
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        cpus = ray.cluster_resources().get("CPU", 0.0)
        if workers > cpus:
            raise UsageError(f"--workers {workers} needs as many CPUs in the Ray cluster, which has {cpus:g}")
        task = ray.remote(num_cpus=1)(_remote_batches)
        futures = [task.remote(options, batches[index::workers]) for index in range(min(workers, len(batches)))]
        found: dict[int, dict[str, np.ndarray]] = {}
        for result in ray.get(futures):
            if isinstance(result, str):
                raise UsageError(result)
            found.update(result)
        return found
    finally:
        if started:
            ray.shutdown()


def _remote_batches(options: dict[str, Any], batches: list[int]) -> dict[int, dict[str, np.ndarray]] | str:
    """:func:`run_batches` in a Ray worker: a usage error comes back as its message."""
    import numba

    numba.set_num_threads(1)  # one core a worker
    try:
        return run_batches(options, batches)
    except UsageError as error:
        return str(error)


def summary(results: dict[str, np.ndarray]) -> dict[str, Any]:
    """The evaluation's numbers (the module's docstring) from every episode's metrics."""
    episodes = len(results["success"])
    found: dict[str, Any] = {"episodes": episodes}
    for outcome in OUTCOMES:
        found[f"{outcome}_rate"] = float(np.mean(results[outcome]))
    successes = results["success"] == 1.0
    found["mean_time"] = float(np.mean(results["time"][successes])) if successes.any() else TIME_LIMIT
    discomfort = f"{DISCOMFORT_ZONE}_steps"
    if discomfort in results:
        found["discomfort_frequency"] = float(np.sum(results[discomfort]) / max(np.sum(results["steps"]), 1.0))
    for key, values in results.items():
        if key in OUTCOMES or key in NOT_METRICS:
            continue
        finite = values[np.isfinite(values)]
        found[key] = float(np.mean(finite)) if len(finite) else None
    return found


def table(numbers: dict[str, Any]) -> str:
    """The summary as a table of two columns."""
    width = max(len(key) for key in numbers)
    lines = [f"{'metric':<{width}}  value", f"{'-' * width}  -----"]
    for key, value in numbers.items():
        shown = "-" if value is None else (f"{value:d}" if isinstance(value, int) else f"{value:.4f}")
        lines.append(f"{key:<{width}}  {shown}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        numbers = summary(evaluate(vars(args)))
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    print(f"{args.scenario}, policy {args.policy}, {args.kinematics} robot "
          f"{'invisible' if args.invisible_robot else 'visible'} to people walking by {args.people}, "
          f"seeds {args.seed} to {args.seed + args.episodes - 1}")
    print(table(numbers))
    print(json.dumps(numbers, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
