"""Vector environments as Ray actors: more cores than one process uses, or more machines.

:class:`RayVectorEnv` is a Gymnasium vector environment whose environments live in
``num_workers`` Ray actors, each a :class:`~sim_server.learning.vector_env.NavigationVectorEnv`
of ``envs_per_worker`` copies of the world (one process, one core each). A step sends every actor
its slice of the actions at once and gathers their results in order: environment ``i`` is copy
``i % envs_per_worker`` of actor ``i // envs_per_worker``, and ``reset(seed=s)`` seeds it with
``s + i``, as one NavigationVectorEnv of all of them would. Autoreset is the actors' (next-step).

Ray is an optional extra (``pip install ray``; ``make setup`` installs it): this module needs it,
nothing else in the simulator does. Connect to Ray before making the environment, on one
machine with ``ray.init()``, or on a cluster started with ``ray start --head`` on one machine and
``ray start --address=HEAD:6379`` on the others, then ``ray.init(address="auto")`` on any of
them: the actors are placed wherever a core is free.

Rollouts keep the policy in the actors, as RLlib's env runners do: :meth:`RayVectorEnv.set_policy`
sends a policy (a picklable callable of observations to actions, such as
:class:`~sim_server.learning.rollouts.LinearPolicy`) to every actor once,
:meth:`RayVectorEnv.set_weights` gives it new weights, and :meth:`RayVectorEnv.rollout` has every
actor step its worlds ``steps`` times with it at once, returning the batches as one
:class:`~sim_server.learning.rollouts.Rollout` of arrays ``(steps, num_envs, ...)``: one round
trip a batch instead of one a step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import ray
except ImportError as error:  # pragma: no cover - the environment installs it
    raise ImportError(
        "sim_server.learning.distributed needs Ray, an optional extra: pip install ray (make setup installs it)"
    ) from error

from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sim_server.core import limits
from sim_server.core.physics.replicas import MAX_REPLICAS
from sim_server.learning.navigation_env import checked_actions, checked_options, checked_seed
from sim_server.learning.rollouts import Policy, Rollout, checked_policy, checked_steps, error_line, first_line, joined, rollout
from sim_server.learning.throughput import steps_per_second

#: Most actors of one environment.
MAX_WORKERS = 1024
#: Longest wait for the actors to start and make their environments (s).
START_TIMEOUT = 300.0
#: Longest wait for the actors to take a policy or its weights (s).
ANSWER_TIMEOUT = 60.0
#: Longest a rollout may take by default (s): each actor stops its batch when it has run that long.
ROLLOUT_TIMEOUT = 600.0
#: Time beyond a rollout's own limit the driver waits for the actors' answers (s): the transport.
ROLLOUT_MARGIN = 30.0
_WORKER_DIED = "a Ray worker of the environment died (its process ended): close the environment and make another"


class _Worker:
    """A Ray actor holding one NavigationVectorEnv (made in the actor's process). An environment
    that cannot be made is reported by :meth:`spaces`, not by the actor's death (whose message
    would be a remote traceback)."""

    def __init__(self, options: dict[str, Any]) -> None:
        import numba

        from sim_server.core.errors import SimError
        from sim_server.learning.vector_env import NavigationVectorEnv

        numba.set_num_threads(1)  # one core an actor: its ray caster's threads would share it
        self.envs = None
        self.error = ""
        self.policy: Policy | None = None
        #: The observations of the last reset or step (None before the first reset).
        self.observations: np.ndarray | None = None
        try:
            self.envs = NavigationVectorEnv(**options)
        except (ValueError, TypeError, RuntimeError, SimError) as error:
            self.error = str(error) or type(error).__name__

    def spaces(self):
        """The single environment's observation and action spaces, or the error that kept it
        from being made (a string)."""
        if self.envs is None:
            return self.error
        return self.envs.single_observation_space, self.envs.single_action_space

    def reset(self, seed: int | None, options: dict[str, Any] | None):
        self.observations, infos = self.envs.reset(seed=seed, options=options)
        return self.observations, infos

    def step(self, actions: np.ndarray):
        result = self.envs.step(actions)
        self.observations = result[0]
        return result

    def set_policy(self, pickled: bytes) -> None:
        """Hold the policy ``pickled`` (cloudpickle's bytes)."""
        from ray import cloudpickle

        try:
            policy = cloudpickle.loads(pickled)
        except Exception as error:  # noqa: BLE001 - whatever unpickling raised: one line
            raise RuntimeError(f"a Ray worker could not unpickle the policy: {error_line(error)}") from None
        self.policy = checked_policy(policy)

    def set_weights(self, weights: Any) -> None:
        """Give the policy held new weights (its ``set_weights``)."""
        setter = getattr(self._policy(), "set_weights", None)
        if not callable(setter):
            raise ValueError(f"the policy ({type(self.policy).__name__}) has no set_weights(weights): send it again with set_policy")
        try:
            setter(weights)
        except ValueError as error:
            raise ValueError(f"the policy's set_weights refused the weights: {first_line(error)}") from None
        except Exception as error:  # noqa: BLE001 - the user's policy failed: one line
            raise RuntimeError(f"the policy's set_weights raised {error_line(error)}") from None

    def rollout(self, steps: int, seconds: float) -> Rollout:
        """``steps`` vector steps with the policy held, from the last observations, taking at
        most ``seconds`` (s). After an error the worlds stay where the failing step left them."""
        policy = self._policy()
        if self.observations is None:
            raise RuntimeError("the environment was never reset: reset() before a rollout")
        try:
            batch = rollout(self.envs, policy, self.observations, steps, seconds)
        except BaseException:
            self.observations = self.envs.fleet.observations()  # the next rollout goes on from there
            raise
        self.observations = batch.last_observations
        return batch

    def _policy(self) -> Policy:
        if self.policy is None:
            raise RuntimeError("the actors hold no policy: set_policy(policy) first")
        return self.policy

    def steps_per_second(self, seconds: float, seed: int) -> float:
        """Steps a second of random actions in the actor alone (no round trips)."""
        return steps_per_second(self.envs, seconds, seed)

    def close(self) -> None:
        if self.envs is not None:
            self.envs.close()


class RayVectorEnv(VectorEnv):
    """See the module's docstring.

    Args:
        num_workers: Ray actors (each one process on one core).
        envs_per_worker: environments (copies of the world) in each actor.
        **options: the rest of :class:`~sim_server.learning.vector_env.NavigationVectorEnv`'s
            arguments (world_path, task, step_size, max_episode_steps); no rendering.

    Raises:
        RuntimeError: Ray is not initialised (``ray.init()`` first).
        ValueError: bad counts or options (the actors' own errors are raised as they are).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_workers: int = 2, envs_per_worker: int = 64, **options: Any) -> None:
        for name, value, most in (("num_workers", num_workers, MAX_WORKERS), ("envs_per_worker", envs_per_worker, MAX_REPLICAS)):
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
                raise ValueError(f"{name} must be a whole number from 1 to {most}, got {value!r}")
        if options.get("render_mode") is not None:
            raise ValueError("RayVectorEnv does not render: its worlds are in other processes")
        if not ray.is_initialized():
            raise RuntimeError("Ray is not initialised: call ray.init() (or ray.init(address='auto') on a cluster) first")
        cpus = ray.cluster_resources().get("CPU", 0.0)
        if num_workers > cpus:
            raise ValueError(
                f"num_workers ({num_workers}) needs as many CPUs in the Ray cluster, which has {cpus:g}: "
                "fewer workers, or more CPUs for Ray (ray.init(num_cpus=...), ray start --num-cpus=..., more machines)"
            )
        self.num_workers = num_workers
        self.envs_per_worker = envs_per_worker
        self.num_envs = num_workers * envs_per_worker
        actor = ray.remote(num_cpus=1)(_Worker)
        self._workers = [actor.remote(dict(options, num_envs=envs_per_worker)) for _ in range(num_workers)]
        try:
            made = self._gather([worker.spaces.remote() for worker in self._workers], START_TIMEOUT)
        except BaseException:
            self.close()
            raise
        problem = next((each for each in made if isinstance(each, str)), None)
        if problem is not None:
            self.close()
            raise ValueError(f"the workers' environments could not be made: {problem}")
        self.single_observation_space, self.single_action_space = made[0]
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._check_open()
        seed = checked_seed(seed)
        options = checked_options(options)
        mask = None
        if "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(f"reset: options['reset_mask'] must be {self.num_envs} booleans, got {mask!r:.200}")
        futures = []
        for index, worker in enumerate(self._workers):
            part = None if mask is None else {"reset_mask": mask[self._slice(index)]}
            futures.append(worker.reset.remote(None if seed is None else seed + index * self.envs_per_worker, part))
        results = self._gather(futures)
        return np.concatenate([observations for observations, _ in results]), _joined([infos for _, infos in results])

    def step(self, actions):
        self._check_open()
        actions = checked_actions(actions, self.num_envs, self.single_action_space.shape[0])  # here, before any actor steps
        results = self._gather([worker.step.remote(actions[self._slice(index)]) for index, worker in enumerate(self._workers)])
        observations, rewards, terminated, truncated, infos = zip(*results)
        return (
            np.concatenate(observations), np.concatenate(rewards), np.concatenate(terminated),
            np.concatenate(truncated), _joined(list(infos)),
        )

    def set_policy(self, policy: Policy) -> None:
        """Send ``policy`` to every actor, once (pickled by cloudpickle and put in Ray's object
        store; every actor unpickles its own copy). It must be callable and picklable, and its
        module importable in the actors (on every machine of a cluster).

        Raises:
            ValueError: the policy is not callable or cannot be pickled.
            RuntimeError: an actor could not unpickle it, or did not answer within
                :data:`ANSWER_TIMEOUT`.
        """
        self._check_open()
        checked_policy(policy)
        from ray import cloudpickle

        try:
            pickled = cloudpickle.dumps(policy)
        except Exception as error:  # noqa: BLE001 - whatever pickling raised: one line
            raise ValueError(f"the policy cannot be sent to the Ray workers: it does not pickle ({error_line(error)})") from None
        reference = ray.put(pickled)
        self._gather([worker.set_policy.remote(reference) for worker in self._workers], ANSWER_TIMEOUT)

    def set_weights(self, weights: Any, per_environment: bool = False) -> None:
        """Give every actor's policy new weights (its ``set_weights(weights)``), without sending
        the policy again: the same weights to all (put in Ray's object store once) or, with
        ``per_environment``, an array whose first axis is the environments, each actor getting
        its rows (``LinearPolicy``'s per-environment weights).

        Raises:
            ValueError: per-environment weights without a row for each environment; a policy
                without ``set_weights``, or whose ``set_weights`` refused them.
            RuntimeError: no policy was set, its ``set_weights`` raised, or an actor did not
                answer within :data:`ANSWER_TIMEOUT`.
        """
        self._check_open()
        if per_environment:
            rows = np.asarray(weights) if isinstance(weights, np.ndarray) else None
            if rows is None or rows.ndim == 0 or len(rows) != self.num_envs:
                raise ValueError(
                    f"per-environment weights must be a NumPy array of {self.num_envs} rows (one for each environment), "
                    f"got {type(weights).__name__} of shape {np.shape(weights) if rows is not None else '?'}"
                )
            futures = [worker.set_weights.remote(rows[self._slice(index)]) for index, worker in enumerate(self._workers)]
        else:
            reference = ray.put(weights)
            futures = [worker.set_weights.remote(reference) for worker in self._workers]
        self._gather(futures, ANSWER_TIMEOUT)

    def rollout(self, steps: int, timeout: float = ROLLOUT_TIMEOUT) -> Rollout:
        """Every actor steps its worlds ``steps`` times with the policy it holds, all at once,
        from where the last reset, step or rollout left them; their batches joined in
        environment order (:class:`~sim_server.learning.rollouts.Rollout`, arrays
        ``(steps, num_envs, ...)``). ``timeout``: most time (s) an actor's batch may take.

        Raises:
            ValueError: bad ``steps`` or ``timeout``; the policy's actions were not
                ``envs_per_worker`` rows of finite numbers of the action's size.
            RuntimeError: no policy was set, the environment was never reset, the policy raised,
                or the time ran out. The actors stay usable; their worlds stay where the failing
                step left them (reset to start afresh).
        """
        self._check_open()
        checked_steps(steps, self.envs_per_worker)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not limits.DURATION.contains(timeout) or timeout <= 0:
            raise ValueError(f"timeout must be a number of seconds > 0 and <= {limits.DURATION.high:g}, got {timeout!r:.100}")
        futures = [worker.rollout.remote(int(steps), float(timeout)) for worker in self._workers]
        return joined(self._gather(futures, timeout + ROLLOUT_MARGIN))

    def worker_steps_per_second(self, seconds: float, seed: int = 0) -> list[float]:
        """Each actor's steps a second of random actions, run in all actors at once, without
        round trips (what the actors can give; :meth:`step`'s rate is that less the transport)."""
        self._check_open()
        return self._gather([worker.steps_per_second.remote(seconds, seed + index) for index, worker in enumerate(self._workers)])

    def close_extras(self, **kwargs: Any) -> None:
        workers, self._workers = getattr(self, "_workers", []), []
        if workers:
            ray.wait([worker.close.remote() for worker in workers], num_returns=len(workers), timeout=30)
            for worker in workers:
                ray.kill(worker)

    def _check_open(self) -> None:
        if not self._workers:
            raise RuntimeError("the environment is closed")

    def _slice(self, index: int) -> slice:
        return slice(index * self.envs_per_worker, (index + 1) * self.envs_per_worker)

    def _gather(self, futures: list, timeout: float | None = None) -> list:
        """The futures' results, every one awaited (so no actor's error is left unread); the
        first error is raised, an actor's ValueError or RuntimeError as one of its own (its
        message, without the remote traceback). RuntimeError when ``timeout`` (s) passes first."""
        ready, _ = ray.wait(futures, num_returns=len(futures), timeout=timeout)
        if len(ready) < len(futures):
            raise RuntimeError(f"the Ray workers did not answer within {timeout:g} s")
        results, first_error = [], None
        for future in futures:
            try:
                results.append(ray.get(future))
            except ray.exceptions.RayTaskError as error:
                first_error = first_error or error
            except ray.exceptions.RayActorError:
                first_error = first_error or _WORKER_DIED
        if first_error is _WORKER_DIED:
            raise RuntimeError(_WORKER_DIED)
        if first_error is not None:
            for kind in (ValueError, RuntimeError):
                if isinstance(first_error.cause, kind):
                    raise kind(str(first_error.cause)) from None
            raise first_error
        return results


def _joined(infos: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The actors' info dicts (arrays with their ``_key`` masks) as one, in actor order."""
    return {key: np.concatenate([info[key] for info in infos]) for key in infos[0]}
