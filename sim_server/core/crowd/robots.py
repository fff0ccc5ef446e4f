"""The robots a crowd meets: the moving bodies of the world's models in the crowd's layers,
gathered once per change of the models, read each update as arrays.

People avoid robots (the models' forces) and never push them (:mod:`.yielding`); both read the
robots through :class:`RobotState`: where each body is, how it moves, its footprint
(:class:`~sim_server.core.crowd.robot_footprints.Footprints`) and its copy of the world.

Units: metres, radians, seconds; world frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

import numpy as np
from Box2D import b2

from sim_server.core.crowd.neighbors import nearest_centres
from sim_server.core.crowd.robot_footprints import Footprints
from sim_server.core.physics.body_memory import BodyBatch
from sim_server.core.physics.model import bounding_radius

if TYPE_CHECKING:
    from sim_server.core.physics.model import Model


@dataclass(frozen=True)
class RobotState:
    """The robots now.

    Attributes:
        positions: (M, 2) each body's origin (m).
        angles: (M,) each body's heading (rad).
        velocities: (M, 3) each body's centre of mass's velocity (m/s) and its turn rate (rad/s).
        radii: (M,) the distance (m) from each origin to the farthest point of its footprint.
        copies: (M,) the copy of the world each is in (replicas; 0 without).
        dynamic: (M,) whether each is a dynamic body (one a person could push).
        footprints: the bodies' footprints, in the same order.
    """

    positions: np.ndarray
    angles: np.ndarray
    velocities: np.ndarray
    radii: np.ndarray
    copies: np.ndarray
    dynamic: np.ndarray
    footprints: Footprints

    @property
    def count(self) -> int:
        """Robots (bodies) there are."""
        return len(self.radii)

    def reach(self) -> float:
        """The largest distance (m) from a robot's origin to its footprint's edge (0 without robots)."""
        return float(self.radii.max()) if len(self.radii) else 0.0

    def hidden(self) -> "RobotState":
        """No robot at all: what people see of robots they ignore (``robot_visible: false``)."""
        return RobotState(np.zeros((0, 2)), np.zeros(0), np.zeros((0, 3)), np.zeros(0), np.zeros(0, dtype=np.int64),
                          np.zeros(0, dtype=bool), Footprints.empty())


class Robots:
    """The moving bodies of the models in collision categories ``bits`` (see the module's
    docstring), gathered when first read after :meth:`forget`."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self._batch: BodyBatch | None = None
        self._radii = np.zeros(0)
        self._dynamic = np.zeros(0, dtype=bool)
        self._footprints = Footprints.empty()

    def forget(self) -> None:
        """Models came, left or changed: gather the bodies again before the next read."""
        self._batch = None

    @property
    def gathered(self) -> bool:
        """Whether the bodies are gathered (no model came or left since the last read)."""
        return self._batch is not None

    @property
    def dynamic(self) -> np.ndarray:
        """(M,) whether each gathered body is dynamic (the rows of :meth:`velocities`)."""
        return self._dynamic

    def _gather(self, models: Mapping[str, "Model"]) -> None:
        bodies, radii = [], []
        for model in models.values():
            for body in model.bodies.values():
                physics_body = body.physics_body
                if physics_body.type == b2.staticBody:
                    continue
                radius = bounding_radius(physics_body, self.bits)
                if radius > 0.0:
                    bodies.append(physics_body)
                    radii.append(radius)
        self._batch = BodyBatch(bodies)
        self._radii = np.array(radii, dtype=np.float64)
        self._dynamic = np.array([body.type == b2.dynamicBody for body in bodies], dtype=bool)
        self._footprints = Footprints(bodies, self.bits)

    def velocities(self) -> np.ndarray | None:
        """(M, 3) each body's velocity (m/s) and turn rate (rad/s) now, as :meth:`state` gives
        them; None when the bodies are not gathered."""
        return None if self._batch is None else self._batch.velocities()

    def state(self, models: Mapping[str, "Model"], centres: np.ndarray) -> RobotState:
        """The robots now; each in the copy of the world whose middle (``centres``, (C, 2) m)
        is nearest."""
        if self._batch is None:
            self._gather(models)
        assert self._batch is not None
        count = len(self._radii)
        if not count:
            return RobotState(np.zeros((0, 2)), np.zeros(0), np.zeros((0, 3)), self._radii,
                              np.zeros(0, dtype=np.int64), self._dynamic, self._footprints)
        poses = self._batch.poses()
        positions = np.ascontiguousarray(poses[:, :2])
        if len(centres) == 1:
            copies = np.zeros(count, dtype=np.int64)
        else:
            copies = np.empty(count, dtype=np.int64)
            nearest_centres(positions, centres, copies)
        return RobotState(positions, np.ascontiguousarray(poses[:, 2]), self._batch.velocities(), self._radii, copies,
                          self._dynamic, self._footprints)
