"""The people around the learning robots: what they add to observations, rewards and the
social navigation metrics.

A world with crowds (:mod:`sim_server.core.crowd`) puts people in every copy of the fleet. For
each robot, only the people of its own copy count. Per action this computes, for all robots at
once as arrays:

* the **gap** to the nearest person: the distance between the robot's bounding circle and the
  person's body (m);
* **personal space**: a gap below the task's ``discomfort_distance`` is an intrusion, and adds
  ``(gap - discomfort_distance) * discomfort_penalty * control_period`` to the reward (CrowdNav's
  discomfort penalty: negative, deeper intrusions cost more);
* the **metrics** of the episode so far: path length (m), time (s), the smallest gap (m), the
  actions with an intrusion, whether a person or something else (a wall, another robot) was
  touched. The environments put them in ``info``, with ``success`` (the goal reached).

Observations may hold the ``observed_people`` nearest people of the robot's copy
(:data:`~sim_server.learning.fleet.PERSON_VALUES` values each: present, position and velocity
in the robot's frame, scaled; missing ones are zeros).
"""

from __future__ import annotations

import math
from typing import Any, Protocol, Sequence

import numpy as np

from sim_server.core import World
from sim_server.core.physics.model import bounding_radius
from sim_server.learning.task import NavigationTask


class Fleet(Protocol):
    """What :class:`PeopleNearby` reads of the fleet it serves
    (:class:`~sim_server.learning.fleet.NavigationFleet` is one)."""

    world: World
    task: NavigationTask
    robots: Sequence[Any]
    count: int
    #: Each robot's copy, and where that copy lies (m).
    copies: np.ndarray
    offsets: np.ndarray

#: A gap (m) that stands for "nobody near" in the metrics and in observations of empty copies.
NOBODY = math.inf


class PeopleNearby:
    """The people of each copy of ``fleet``'s world, seen from its robots.

    Args:
        fleet: the fleet (its world, robots, copies and task).
        copies: copies of the world.
    """

    def __init__(self, fleet: Fleet, copies: int) -> None:
        self._fleet = fleet
        world = fleet.world
        #: Whether the world has crowds.
        self.present = bool(world.crowds)
        self._crowds = list(world.crowds)
        self._layer_names = {name for layer in world.layers for name in layer.names}
        self._robot_radii = np.array([bounding_radius(robot.first_body.physics_body) for robot in fleet.robots])
        count = fleet.count
        self.path_length = np.zeros(count)
        self.time = np.zeros(count)
        self.min_gap = np.full(count, NOBODY)
        self.intrusions = np.zeros(count, dtype=np.int64)
        self.touched_person = np.zeros(count, dtype=bool)
        self.touched_other = np.zeros(count, dtype=bool)
        self._last = np.zeros((count, 2))

    # ---------------------------------------------------------------- episodes
    def restart(self, copy: int, rng: np.random.Generator) -> None:
        """Copy ``copy``'s people start afresh, seeded from ``rng``."""
        for crowd in self._crowds:
            crowd.restart(copy, int(rng.integers(2**62)))

    def start_episode(self, index: int, start: tuple[float, float]) -> None:
        """Robot ``index`` starts an episode at ``start`` (m, the world's frame)."""
        self.path_length[index] = self.time[index] = 0.0
        self.min_gap[index] = NOBODY
        self.intrusions[index] = 0
        self.touched_person[index] = self.touched_other[index] = False
        self._last[index] = start

    def is_person(self, name: str) -> bool:
        """Whether an entity name of a contact is a pedestrian's (not a model's nor a layer's)."""
        return name not in self._fleet.world.models and name not in self._layer_names

    def around(self, index: int) -> np.ndarray:
        """(P, 2) positions (m, the world's frame) of the people in robot ``index``'s copy."""
        copy = int(self._fleet.copies[index])
        parts = [crowd.local_positions()[crowd.people.rows("copy") == copy] for crowd in self._crowds]
        return np.concatenate(parts) if parts else np.empty((0, 2))

    # ---------------------------------------------------------------- per action
    def _people(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every person: positions (m, its copy's frame), velocities (m/s), copies, radii (m)."""
        positions, velocities, copies, radii = [], [], [], []
        for crowd in self._crowds:
            positions.append(crowd.local_positions())
            velocities.append(crowd.people.rows("velocity"))
            copies.append(crowd.people.rows("copy"))
            radii.append(np.full(crowd.people.count, crowd.spec.radius))
        if not positions:
            return np.empty((0, 2)), np.empty((0, 2)), np.empty(0, dtype=np.int64), np.empty(0)
        return np.concatenate(positions), np.concatenate(velocities), np.concatenate(copies), np.concatenate(radii)

    def _gaps(self, local: np.ndarray, people: tuple) -> tuple[np.ndarray, np.ndarray]:
        """Per robot (at ``local``, its copy's frame), the people of its copy: (R, K) gaps (m)
        between the robot and each (NOBODY where a copy has fewer than K) and (R, K) their
        indices in ``people`` (K: the most people a copy has). Only a copy's own people are
        looked at, so the cost grows with the people per copy, not all of them."""
        positions, _, copies, radii = people
        order = np.argsort(copies, kind="stable")
        counts = np.bincount(copies, minlength=self._fleet.copies.max() + 1)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        robot_copies = self._fleet.copies
        width = max(int(counts.max()) if len(counts) else 0, 1)
        slots = np.arange(width)[None, :]
        present = slots < counts[robot_copies][:, None]
        chosen = order[np.minimum(starts[robot_copies][:, None] + slots, len(order) - 1)]
        dx = positions[chosen, 0] - local[:, None, 0]
        dy = positions[chosen, 1] - local[:, None, 1]
        gaps = np.hypot(dx, dy) - radii[chosen] - self._robot_radii[:, None]
        return np.where(present, gaps, NOBODY), chosen

    def after_action(self, poses: np.ndarray, collided: np.ndarray, touched_person: np.ndarray) -> np.ndarray:
        """Update the metrics after an action (robots at ``poses``, world frame); the rewards the
        people add (the discomfort penalty), per robot."""
        fleet = self._fleet
        task = fleet.task
        local = poses[:, :2] - fleet.offsets
        self.path_length += np.hypot(local[:, 0] - self._last[:, 0], local[:, 1] - self._last[:, 1])
        self._last = local.copy()
        self.time += task.control_period
        self.touched_person |= touched_person
        self.touched_other |= collided & ~touched_person
        if not self.present:
            return np.zeros(fleet.count)
        people = self._people()
        gap = self._gaps(local, people)[0].min(axis=1) if len(people[0]) else np.full(fleet.count, NOBODY)
        self.min_gap = np.minimum(self.min_gap, gap)
        inside = gap < task.discomfort_distance
        self.intrusions += inside
        return np.where(inside, (gap - task.discomfort_distance) * task.discomfort_penalty * task.control_period, 0.0)

    def observed(self, poses: np.ndarray, scale: float) -> np.ndarray:
        """(R, PERSON_VALUES * observed_people) the nearest people of each robot's copy, nearest
        first, in the robot's frame: present, position over ``scale`` (m), velocity over the
        task's max_linear, each in [-1, 1]; zeros where there are fewer people."""
        fleet = self._fleet
        wanted = fleet.task.observed_people
        out = np.zeros((fleet.count, wanted, 5))
        people = self._people()
        if len(people[0]):
            local = poses[:, :2] - fleet.offsets
            gaps, indices = self._gaps(local, people)
            nearest = np.argsort(gaps, axis=1, kind="stable")[:, :wanted]
            chosen = np.take_along_axis(gaps, nearest, axis=1)
            order = np.take_along_axis(indices, nearest, axis=1)
            present = np.isfinite(chosen)
            cos, sin = np.cos(poses[:, 2])[:, None], np.sin(poses[:, 2])[:, None]
            dx = people[0][order, 0] - local[:, None, 0]
            dy = people[0][order, 1] - local[:, None, 1]
            vx, vy = people[1][order, 0], people[1][order, 1]
            speed = fleet.task.max_linear
            features = np.stack([
                np.ones_like(dx), (cos * dx + sin * dy) / scale, (-sin * dx + cos * dy) / scale,
                (cos * vx + sin * vy) / speed, (-sin * vx + cos * vy) / speed,
            ], axis=2)
            count = order.shape[1]
            out[:, :count] = np.where(present[:, :, None], np.clip(features, -1.0, 1.0), 0.0)
        return out.reshape(fleet.count, -1)

    def metrics(self) -> dict[str, np.ndarray]:
        """The episode so far, per robot: ``path_length`` (m), ``time`` (s), and with people
        ``min_person_gap`` (m, inf: nobody came near), ``intrusions`` (actions with a person in
        personal space), ``collided_person`` and ``collided_other`` (touched a person; touched
        something else)."""
        found = {"path_length": self.path_length.copy(), "time": self.time.copy()}
        if self.present:
            found.update(
                min_person_gap=self.min_gap.copy(), intrusions=self.intrusions.copy(),
                collided_person=self.touched_person.copy(), collided_other=self.touched_other.copy(),
            )
        return found
