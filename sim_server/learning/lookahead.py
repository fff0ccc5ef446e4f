"""A robot policy of a value network and a one-step lookahead, CrowdNav's way (CADRL).

CrowdNav's learned policies (Chen et al., ICRA 2019; their CADRL, after Chen et al., ICRA 2017)
choose each action by looking one step ahead: for every action of a fixed set, the robot's
next state is predicted (it moves at the action's velocity for the 0.25 s step; the people it
observes keep their velocities), the step's reward is computed from it (reaching the goal, a
collision on the way, coming within the discomfort distance), and the action of the largest
``reward + gamma ** (step * preferred speed) * V(next state)`` is taken. ``V`` is a value
network (:class:`~sim_server.learning.value_network.ValueNetwork`) of the joint state seen
from the robot with its goal ahead (CrowdNav's rotated state), trained by
:mod:`sim_server.learning.train_lookahead`.

Here the network learns what the crowd changes: ``V = gamma ** max(distance to goal - goal
radius, 0) + network(state)``, the first term being the value of walking straight to the goal
through empty space (it arrives after that distance over the preferred speed; the discount's
exponent is time times preferred speed, CrowdNav's), so that an untrained network already
heads for the goal and training needs to learn only how to meet people.

The state of a robot (:func:`state_features`): its distance to the goal and its velocity, in
the frame whose x axis points at the goal, then for each observed person, nearest first, their
position and velocity in that frame, their distance and the gap between the two bodies (a
person not observed is far behind, standing). The actions are CrowdNav's: a holonomic robot
moves at 5 speeds (exponentially spaced up to the preferred speed) in 16 directions, or stops;
a unicycle turns by one of 16 angles within +-pi/4 per step and drives at one of the 5 speeds,
or stops. The policy reads nothing but the observations
(:class:`~sim_server.learning.observed.ObservationReader`), as the baselines do.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from sim_server.core.errors import ConfigError
from sim_server.learning.observed import ObservationReader, Observed
from sim_server.learning.value_network import ValueNetwork

#: CrowdNav's discount per second at the preferred speed (``gamma`` of its train config).
GAMMA = 0.9
#: CrowdNav's action set: speeds and directions (or turns) sampled.
SPEED_SAMPLES = 5
ROTATION_SAMPLES = 16
#: A unicycle's largest turn in one step (rad): CrowdNav's rotations of +-pi/4.
UNICYCLE_TURN = math.pi / 4.0
#: Values of the robot's part of a state, and of each person's.
ROBOT_FEATURES = 3
PERSON_FEATURES = 6
#: Where a person not observed is put (m, in the goal's frame: behind, far) and the distance
#: that scales positions and distances in a state (m: CrowdNav's circle radius).
ABSENT_POSITION = (-20.0, 0.0)
LENGTH_SCALE = 4.0
#: The version of the policy files this module writes and reads.
POLICY_FORMAT = 1


def action_velocities(holonomic: bool, speed: float) -> np.ndarray:
    """(A, 2) CrowdNav's actions as velocities in the robot's frame (m/s), the stop first; a
    unicycle's are the velocity it turns towards (its heading after the step)."""
    speeds = (np.exp((np.arange(SPEED_SAMPLES) + 1.0) / SPEED_SAMPLES) - 1.0) / (math.e - 1.0) * speed
    if holonomic:
        angles = np.arange(ROTATION_SAMPLES) * (2.0 * math.pi / ROTATION_SAMPLES)
    else:
        angles = np.linspace(-UNICYCLE_TURN, UNICYCLE_TURN, ROTATION_SAMPLES)
    moving = np.stack([np.outer(speeds, np.cos(angles)).ravel(), np.outer(speeds, np.sin(angles)).ravel()], axis=-1)
    return np.concatenate([np.zeros((1, 2)), moving])


def state_features(goal: np.ndarray, velocity: np.ndarray, present: np.ndarray, positions: np.ndarray,
                   velocities: np.ndarray, radii: float) -> np.ndarray:
    """(..., features) the states of robots with ``goal`` (..., 2; m), ``velocity`` (..., 2;
    m/s) and observed people (``present`` (..., K), ``positions`` and ``velocities``
    (..., K, 2)), all in the robot's frame; ``radii`` is the robot's and a person's radius
    together (m). The values are the same in any frame the robot's may be turned to."""
    distance = np.hypot(goal[..., 0], goal[..., 1])
    angle = np.arctan2(goal[..., 1], goal[..., 0])
    cos, sin = np.cos(angle)[..., None], np.sin(angle)[..., None]

    def turned(v: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
        return np.stack([v[..., 0] * c + v[..., 1] * s, v[..., 1] * c - v[..., 0] * s], axis=-1)

    robot_velocity = turned(velocity, cos[..., 0], sin[..., 0])
    apart = np.where(present, np.hypot(positions[..., 0], positions[..., 1]), math.hypot(*ABSENT_POSITION))
    places = np.where(present[..., None], turned(positions, cos, sin), np.array(ABSENT_POSITION))
    speeds = np.where(present[..., None], turned(velocities, cos, sin), 0.0)
    order = np.argsort(apart, axis=-1, kind="stable")
    apart = np.take_along_axis(apart, order, axis=-1)
    places = np.take_along_axis(places, order[..., None], axis=-2)
    speeds = np.take_along_axis(speeds, order[..., None], axis=-2)
    gap = apart - radii
    people = np.concatenate([places / LENGTH_SCALE, speeds, (gap / LENGTH_SCALE)[..., None],
                             np.minimum(gap, 1.0)[..., None]], axis=-1)
    return np.concatenate([(distance / LENGTH_SCALE)[..., None], robot_velocity,
                           people.reshape(*people.shape[:-2], -1)], axis=-1)


def free_value(features: np.ndarray, goal_radius: float) -> np.ndarray:
    """The value of walking straight to the goal through empty space, by the distance to the
    goal a state holds (its first value)."""
    return GAMMA ** np.maximum(features[..., 0] * LENGTH_SCALE - goal_radius, 0.0)


class LookaheadPolicy:
    """Observations of ``env`` to actions, by ``network``'s values one step ahead (the
    module's docstring); ``epsilon`` of the actions (0 to 1) are drawn at random from
    ``rng`` instead (exploration while training).

    Raises:
        ValueError: ``env`` is not a navigation environment of this package that observes
            people, or ``network`` takes another number of inputs than its states have.
    """

    def __init__(self, env: Any, network: ValueNetwork, epsilon: float = 0.0, rng: np.random.Generator | None = None) -> None:
        self.reader = ObservationReader(env)
        task = self.reader.task
        self.network = network
        self.epsilon = epsilon
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.radii = self.reader.robot_radius + self.reader.person_radius
        self.goal_radius = task.goal_radius
        self.speed = task.max_linear
        self.step = task.control_period
        self.discount = GAMMA ** (self.step * self.speed)
        self.velocities = action_velocities(self.reader.holonomic, self.speed)
        size = ROBOT_FEATURES + PERSON_FEATURES * task.observed_people
        if network.inputs != size:
            raise ValueError(f"the network takes {network.inputs} values, the states of this task have {size} "
                             f"({task.observed_people} people observed)")
        #: The task's rewards (CrowdNav's): the goal, a collision, the discomfort distance (m) and factor.
        self._rewards = (task.goal_reward, task.collision_reward, task.discomfort_distance, task.discomfort_penalty)

    @classmethod
    def from_file(cls, env: Any, path: Path) -> "LookaheadPolicy":
        """The policy saved in ``path`` by :mod:`sim_server.learning.train_lookahead` for
        ``env`` (ConfigError: one line naming the file)."""
        network, extra = ValueNetwork.load(path)
        found = extra.get("format")
        if found is None or found.shape != () or found.dtype.kind not in "iu" or int(found) != POLICY_FORMAT:
            raise ConfigError(f'policy file "{path}" is not a lookahead policy of format {POLICY_FORMAT}')
        reader = ObservationReader(env)
        holonomic = str(extra.get("kinematics", np.array(""))) == "holonomic"
        if holonomic != reader.holonomic:
            raise ConfigError(f'policy file "{path}" was trained for a {"holonomic" if holonomic else "unicycle"} robot, '
                              f'the environment\'s is {"holonomic" if reader.holonomic else "a unicycle"}')
        try:
            return cls(env, network)
        except ValueError as error:
            raise ConfigError(f'policy file "{path}": {error}') from None

    def features(self, seen: Observed) -> np.ndarray:
        """(N, features) the robots' states now."""
        return state_features(seen.goal, seen.velocity, seen.present, seen.positions, seen.velocities, self.radii)

    def value(self, features: np.ndarray) -> np.ndarray:
        """V of states (..., features)."""
        return free_value(features, self.goal_radius) + self.network(features)

    def choose(self, seen: Observed) -> np.ndarray:
        """(N, 2) the velocity (m/s, each robot's frame) of each robot's best action."""
        n, actions = len(seen.goal), len(self.velocities)
        velocity = np.broadcast_to(self.velocities[None], (n, actions, 2))
        if self.reader.holonomic:
            moved = velocity * self.step
        else:  # a unicycle turns as it drives: it ends along the chord of its arc
            half = np.arctan2(velocity[..., 1], velocity[..., 0]) / 2.0
            speed = np.hypot(velocity[..., 0], velocity[..., 1]) * self.step
            moved = np.stack([speed * np.cos(half), speed * np.sin(half)], axis=-1)
        goal = seen.goal[:, None] - moved
        relative = seen.velocities[:, None] - moved[:, :, None] / self.step  # (n, A, K, 2)
        start = np.broadcast_to(seen.positions[:, None], relative.shape)
        closest_time = np.clip(-(start * relative).sum(-1) / np.maximum((relative**2).sum(-1), 1e-12), 0.0, self.step)
        closest = start + relative * closest_time[..., None]
        gaps = np.where(seen.present[:, None], np.hypot(closest[..., 0], closest[..., 1]) - self.radii, np.inf)
        gap = gaps.min(axis=-1) if gaps.shape[-1] else np.full((n, actions), np.inf)
        reach_reward, collision_reward, discomfort, factor = self._rewards
        reached = np.hypot(goal[..., 0], goal[..., 1]) < self.goal_radius
        collided = gap < 0.0
        reward = np.where(collided, collision_reward, np.where(reached, reach_reward, np.where(
            gap < discomfort, (gap - discomfort) * factor * self.step, 0.0)))
        people = start + np.broadcast_to(seen.velocities[:, None], relative.shape) * self.step - moved[:, :, None]
        present = np.broadcast_to(seen.present[:, None], relative.shape[:-1])
        after = state_features(goal, velocity, present, people, np.broadcast_to(seen.velocities[:, None], relative.shape), self.radii)
        ahead = self.value(after.reshape(n * actions, -1)).reshape(n, actions)
        total = reward + np.where(collided | reached, 0.0, self.discount * ahead)
        best = total.argmax(axis=1)
        if self.epsilon > 0.0:
            explore = self.rng.random(n) < self.epsilon
            best = np.where(explore, self.rng.integers(0, actions, n), best)
        return self.velocities[best]

    def __call__(self, observations: Any) -> np.ndarray:
        """(N, action size) actions for (N, observation size) observations (one row may be
        given alone: then one action)."""
        rows, single = self.reader.rows(observations)
        actions = self.act(self.reader.read(rows))
        return actions[0] if single else actions

    def act(self, seen: Observed) -> np.ndarray:
        """(N, action size) the actions of :meth:`choose`'s velocities."""
        velocities = self.choose(seen)
        if self.reader.holonomic:
            return self.reader.actions(velocities)
        # a unicycle turns by the action's angle over the step, driving at its speed all along
        return self.reader.unicycle_actions(np.hypot(velocities[:, 0], velocities[:, 1]),
                                            np.arctan2(velocities[:, 1], velocities[:, 0]) / self.step)
