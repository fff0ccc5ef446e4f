"""The people around the learning robots: what they add to observations and rewards.

A world with crowds (:mod:`sim_server.core.crowd`) puts people in every copy of the fleet. For
each robot, only the people of its own copy count. Per action this computes, for all robots at
once as arrays:

* the **gap** to the nearest person: the distance between the robot's bounding circle and the
  person's body (m);
* **personal space**: a gap below the task's ``discomfort_distance`` is an intrusion, and gives
  ``(gap - discomfort_distance) * discomfort_penalty * control_period`` (CrowdNav's discomfort
  penalty: negative, deeper intrusions cost more), which the fleet adds to the reward of an
  action that does not end the episode; the intrusions are counted, and
  whether a person or something else (a wall, another robot) was touched;
* every person's state for the episode metrics (:class:`~sim_server.learning.metrics.PeopleNow`,
  :mod:`sim_server.learning.metrics`).

Observations may hold the ``observed_people`` nearest people of the robot's copy
(:data:`~sim_server.learning.fleet.PERSON_VALUES` values each: present, position and velocity
in the robot's frame, scaled; missing ones are zeros). With the task's ``people_range``,
``people_line_of_sight`` or ``people_noise`` only the people the robot can sense count, and
their positions may be noisy (:mod:`sim_server.learning.sight`).
"""

from __future__ import annotations

import math
from typing import Any, Protocol, Sequence

import numpy as np

from sim_server.core import World
from sim_server.core.crowd.people import IDLE
from sim_server.core.physics.model import bounding_radius
from sim_server.learning.metrics import PeopleNow
from sim_server.learning.sight import PeopleSight
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
    #: The world's walls in its own frame ((N, 4) segments, m).
    walls: np.ndarray

#: A gap (m) that stands for "nobody near" in the metrics and in observations of empty copies.
NOBODY = math.inf


class PeopleNearby:
    """The people of each copy of ``fleet``'s world, seen from its robots.

    Args:
        fleet: the fleet (its world, robots, copies, walls and task).
        copies: copies of the world.
    """

    def __init__(self, fleet: Fleet, copies: int) -> None:
        self._fleet = fleet
        world = fleet.world
        task = fleet.task
        #: Whether the world has crowds.
        self.present = bool(world.crowds)
        self._crowds = list(world.crowds)
        self._layer_names = {name for layer in world.layers for name in layer.names}
        #: Each robot's bounding radius (m).
        self.robot_radii = np.array([bounding_radius(robot.first_body.physics_body) for robot in fleet.robots])
        count = fleet.count
        self.intrusions = np.zeros(count, dtype=np.int64)
        self.touched_person = np.zeros(count, dtype=bool)
        self.touched_other = np.zeros(count, dtype=bool)
        self._sight = (PeopleSight(fleet.walls, count, task.people_range, task.people_line_of_sight, task.people_noise)
                       if task.senses_people else None)

    # ---------------------------------------------------------------- episodes
    def restart(self, copy: int, rng: np.random.Generator) -> None:
        """Copy ``copy``'s people start afresh, seeded from ``rng``."""
        for crowd in self._crowds:
            crowd.restart(copy, int(rng.integers(2**62)))

    def start_episode(self, index: int, rng: np.random.Generator) -> None:
        """Robot ``index`` starts an episode (``rng`` its episode's generator)."""
        self.intrusions[index] = 0
        self.touched_person[index] = self.touched_other[index] = False
        if self._sight is not None:
            self._sight.start_episode(index, rng)

    def is_person(self, name: str) -> bool:
        """Whether an entity name of a contact is a pedestrian's (not a model's nor a layer's)."""
        return name not in self._fleet.world.models and name not in self._layer_names

    def around(self, index: int) -> np.ndarray:
        """(P, 2) positions (m, the world's frame) of the people in robot ``index``'s copy."""
        copy = int(self._fleet.copies[index])
        parts = [crowd.local_positions()[crowd.people.rows("copy") == copy] for crowd in self._crowds]
        return np.concatenate(parts) if parts else np.empty((0, 2))

    # ---------------------------------------------------------------- per action
    def _people(self) -> PeopleNow:
        """Every person now (positions in its copy's frame)."""
        if not self._crowds:
            empty = np.empty(0, dtype=np.int64)
            return PeopleNow(np.empty((0, 2)), np.empty((0, 2)), empty, np.empty(0), empty, np.empty(0, dtype=bool))
        parts = []
        for index, crowd in enumerate(self._crowds):
            people = crowd.people
            local = crowd.local_positions()
            away = np.hypot(*(people.rows("goal") - local).T) > crowd.spec.parameters.stop_distance
            walking = (people.rows("mode") != IDLE) & (people.rows("wait_until") < 0.0) & away
            parts.append((local, people.rows("velocity"), people.rows("copy"), np.full(people.count, crowd.spec.radius),
                          people.rows("number") * len(self._crowds) + index, walking))
        return PeopleNow(*(np.concatenate(column) for column in zip(*parts)))

    def now(self) -> PeopleNow | None:
        """Every person now, for the episode metrics (None without crowds)."""
        return self._people() if self.present else None

    def _gaps(self, local: np.ndarray, people: PeopleNow) -> tuple[np.ndarray, np.ndarray]:
        """Per robot (at ``local``, its copy's frame), the people of its copy: (R, K) gaps (m)
        between the robot and each (NOBODY where a copy has fewer than K) and (R, K) their
        indices in ``people`` (K: the most people a copy has). Only a copy's own people are
        looked at, so the cost grows with the people per copy, not all of them."""
        positions, _, copies, radii = people[:4]
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
        gaps = np.hypot(dx, dy) - radii[chosen] - self.robot_radii[:, None]
        return np.where(present, gaps, NOBODY), chosen

    def after_action(self, poses: np.ndarray, collided: np.ndarray,
                     touched_person: np.ndarray) -> tuple[np.ndarray, PeopleNow | None]:
        """Count the intrusions and touches of an action (robots at ``poses``, world frame);
        the rewards the people add (the discomfort penalty), per robot, and every person now
        (None without crowds)."""
        fleet = self._fleet
        task = fleet.task
        self.touched_person |= touched_person
        self.touched_other |= collided & ~touched_person
        if self._sight is not None:
            self._sight.after_action()
        if not self.present:
            return np.zeros(fleet.count), None
        people = self._people()
        local = poses[:, :2] - fleet.offsets
        gap = self._gaps(local, people)[0].min(axis=1) if len(people.positions) else np.full(fleet.count, NOBODY)
        inside = gap < task.discomfort_distance
        self.intrusions += inside
        return np.where(inside, (gap - task.discomfort_distance) * task.discomfort_penalty * task.control_period, 0.0), people

    def observed(self, poses: np.ndarray, scale: float) -> np.ndarray:
        """(R, PERSON_VALUES * observed_people) the nearest people each robot senses in its
        copy, nearest first, in the robot's frame: present, position over ``scale`` (m, with
        the task's noise), velocity over the task's max_linear, each in [-1, 1]; zeros where
        there are fewer."""
        fleet = self._fleet
        wanted = fleet.task.observed_people
        out = np.zeros((fleet.count, wanted, 5))
        people = self._people()
        if len(people.positions):
            local = poses[:, :2] - fleet.offsets
            gaps, indices = self._gaps(local, people)
            if self._sight is not None:
                seen = self._sight.visible(local, people.positions, indices, np.isfinite(gaps))
                gaps = np.where(seen, gaps, NOBODY)
            nearest = np.argsort(gaps, axis=1, kind="stable")[:, :wanted]
            chosen = np.take_along_axis(gaps, nearest, axis=1)
            order = np.take_along_axis(indices, nearest, axis=1)
            present = np.isfinite(chosen)
            cos, sin = np.cos(poses[:, 2])[:, None], np.sin(poses[:, 2])[:, None]
            dx = people.positions[order, 0] - local[:, None, 0]
            dy = people.positions[order, 1] - local[:, None, 1]
            if self._sight is not None and self._sight.noise > 0.0:
                noise = self._sight.position_noise(order.shape[1])
                dx, dy = dx + noise[:, :, 0], dy + noise[:, :, 1]
            vx, vy = people.velocities[order, 0], people.velocities[order, 1]
            speed = fleet.task.max_linear
            features = np.stack([
                np.ones_like(dx), (cos * dx + sin * dy) / scale, (-sin * dx + cos * dy) / scale,
                (cos * vx + sin * vy) / speed, (-sin * vx + cos * vy) / speed,
            ], axis=2)
            count = order.shape[1]
            out[:, :count] = np.where(present[:, :, None], np.clip(features, -1.0, 1.0), 0.0)
        return out.reshape(fleet.count, -1)

    def legacy(self) -> dict[str, np.ndarray]:
        """The metrics counted here (:data:`~sim_server.learning.metrics.LEGACY_KEYS`), per
        robot: ``intrusions``, ``collided_person``, ``collided_other``."""
        return {"intrusions": self.intrusions.copy(), "collided_person": self.touched_person.copy(),
                "collided_other": self.touched_other.copy()}
