"""The social navigation metrics of every robot of a running world among its people (what the
server's ``~/social_metrics`` publishes), measured by
:class:`~sim_server.core.crowd.social_metrics.SocialMetrics`.

A robot is a model with a dynamic body; it is measured at its first dynamic body (Flatland's
base: the first body of the model file), a disc of that body's bounding radius. Every
:data:`METRICS_PERIOD` s of sim time (a whole number of physics steps, at least one) each robot's
position, velocity, heading and what it touches (people, or anything else) are taken with every
person of every crowd. The episodes have no goal and no end: ``finished``, ``success`` and the
metrics of a goal (``path_efficiency``, ``path_irregularity``, ``time_to_goal``) stay 0 or NaN,
and every robot's episode starts again whenever a model comes, leaves or is put elsewhere, and
when the world's time goes back (a reset).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Protocol, Sequence

import numpy as np
from Box2D import b2

from sim_server.core.crowd.people import WALKING_STATE, Pedestrian
from sim_server.core.crowd.social_metrics import SocialMetrics
from sim_server.core.physics.model import bounding_radius

if TYPE_CHECKING:
    from sim_server.core.crowd.crowd import Crowd
    from sim_server.core.physics.model import Model
    from sim_server.core.timing.timekeeper import TimeKeeper

#: Time (s of sim time) between two measurements: finite differences (acceleration, jerk) are
#: taken over it (CrowdNav decides every 0.25 s; 0.1 s keeps a 1 m/s robot within 10 cm).
METRICS_PERIOD = 0.1
#: Bits ids of people carry their person's number in; the crowd's index is above them.
PERSON_BITS = 40


class MetricsHost(Protocol):
    """What the metrics need of the world."""

    @property
    def models(self) -> Mapping[str, "Model"]:
        """The models; robots among them."""

    @property
    def crowds(self) -> Sequence["Crowd"]:
        """The crowds of people."""


class WorldSocialMetrics:
    """Every robot's metrics in ``host``, measured after physics steps (:meth:`after_step`).

    Args:
        host: the world.
        step_size: its physics step (s).
        period: time between measurements (s), rounded to whole steps.
    """

    def __init__(self, host: MetricsHost, step_size: float, period: float = METRICS_PERIOD) -> None:
        self.host = host
        self.every = max(1, int(round(period / step_size)))
        self.interval = self.every * step_size
        self.names: list[str] = []
        self._bodies: list[b2.body] = []
        self._radii = np.zeros(0)
        self._metrics: SocialMetrics | None = None
        self._signature: tuple = ()
        self._last_time = -1.0

    def _robot_signature(self) -> tuple:
        """What changes when a model comes, leaves or is put elsewhere."""
        return tuple((name, id(model), model.placements) for name, model in self.host.models.items())

    def _restart(self) -> None:
        """Gather the robots and start every episode afresh where they are now."""
        self.names, self._bodies = [], []
        for name, model in self.host.models.items():
            body = next((b.physics_body for b in model.bodies.values() if b.physics_body.type == b2.dynamicBody), None)
            if body is not None:
                self.names.append(name)
                self._bodies.append(body)
        self._radii = np.array([bounding_radius(body) for body in self._bodies], dtype=np.float64)
        self._metrics = SocialMetrics(len(self._bodies), self.interval) if self._bodies else None
        if self._metrics is not None:
            positions, velocities, headings = self._robots()
            self._metrics.reset(np.arange(len(self._bodies)), positions, velocities, headings)

    def _robots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        positions = np.array([tuple(body.position) for body in self._bodies], dtype=np.float64).reshape(-1, 2)
        velocities = np.array([tuple(body.linearVelocity) for body in self._bodies], dtype=np.float64).reshape(-1, 2)
        headings = np.array([body.angle for body in self._bodies], dtype=np.float64)
        return positions, velocities, headings

    def _touching(self) -> tuple[np.ndarray, np.ndarray]:
        """Whether each robot touches a person, and anything else, now (sensors left out)."""
        person = np.zeros(len(self._bodies), dtype=bool)
        other = np.zeros(len(self._bodies), dtype=bool)
        for index, body in enumerate(self._bodies):
            for edge in body.contacts:
                contact = edge.contact
                if not contact.touching or contact.fixtureA.sensor or contact.fixtureB.sensor:
                    continue
                ref = edge.other.userData
                if isinstance(getattr(ref, "entity", None), Pedestrian):
                    person[index] = True
                else:
                    other[index] = True
        return person, other

    def after_step(self, time: "TimeKeeper") -> bool:
        """After a physics step: measure where a period ended (True), restarting the episodes
        first where the robots changed or time went back."""
        signature = self._robot_signature()
        went_back = time.sim_time < self._last_time
        self._last_time = time.sim_time
        if signature != self._signature or went_back:
            self._signature = signature
            self._restart()
            return False
        if self._metrics is None or time.iterations % self.every:
            return False
        positions, velocities, headings = self._robots()
        people = [crowd.snapshot() for crowd in self.host.crowds]
        numbers = [crowd.people.rows("number") for crowd in self.host.crowds]
        count = sum(len(state.names) for state in people)
        person, other = self._touching()
        self._metrics.update(
            positions, velocities, self._radii, positions,
            np.concatenate([state.positions for state in people]) if count else np.zeros((0, 2)),
            np.concatenate([state.velocities for state in people]) if count else np.zeros((0, 2)),
            np.concatenate([np.full(len(state.names), state.radius) for state in people]) if count else np.zeros(0),
            np.zeros(count, dtype=np.int64), person, other, robot_headings=headings,
            people_ids=np.concatenate([(index << PERSON_BITS) + number.astype(np.int64) for index, number in enumerate(numbers)])
            if count else np.zeros(0, dtype=np.int64),
            people_walking=np.concatenate([state.states == WALKING_STATE for state in people]) if count else np.zeros(0, dtype=bool),
        )
        return True

    def results(self) -> dict[str, dict[str, float]]:
        """Each robot's metrics so far, by model name (none before the first measurement)."""
        if self._metrics is None:
            return {}
        return {name: self._metrics.results(index) for index, name in enumerate(self.names)}
