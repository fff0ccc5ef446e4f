"""Bumper: sim_msgs/Collisions listing the model's current contacts, with forces and normals.

Parameters: ``topic`` (``collisions``), ``world_frame_id`` (``map``, not namespaced; a leading
``/`` is dropped), ``publish_all_collisions`` (true: publish every step while in contact, else at
the rate), ``update_rate`` (Hz, .inf), ``exclude`` (bodies whose contacts are ignored, []).

Each contact gives ``entity_a``/``body_a`` (this model and its body), ``entity_b``/``body_b``
(the other model or layer), and per contact point the force magnitude (N: the impulses of the
step divided by the step size, normal and tangential combined), the world position and the
normal pointing from this model to the other. Sensor fixtures report contacts without points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sim_server.core.plugins import ModelPlugin, TimeKeeper, UpdateTimer, YamlReader
from sim_plugins.common import body_of


@dataclass
class ContactState:
    """One tracked contact and the impulses it received this step."""

    body_a: str
    entity_b: str
    body_b: str
    normal_sign: float
    solves: int = 0
    normal_impulses: list[float] = field(default_factory=lambda: [0.0, 0.0])
    tangent_impulses: list[float] = field(default_factory=lambda: [0.0, 0.0])
    points: list[tuple[float, float]] = field(default_factory=list)
    normal: tuple[float, float] = (0.0, 0.0)


def _names(fixture) -> tuple[str, str]:
    """(entity name, body name) of a fixture's body."""
    data = fixture.body.userData
    entity = getattr(data, "entity", None)
    entity_name = getattr(entity, "name", "")
    return str(entity_name), str(getattr(data, "body_name", ""))


class Bumper(ModelPlugin):
    """Tracks the model's contacts and publishes them."""

    def on_initialize(self, config: YamlReader) -> None:
        self.world_frame_id = self.context.world_frame(config.get_frame("world_frame_id", "map"))
        topic = config.get_topic("topic", "collisions")
        self.publish_all = config.get_bool("publish_all_collisions", True)
        self.timer = UpdateTimer(config.get_rate("update_rate", math.inf))
        self.excluded = {body_of(self.model, config, name, "exclude").name for name in config.get_name_list("exclude", [])}
        self.contacts: dict[int, ContactState] = {}
        #: The last published collisions, as ContactState copies (for in-process use).
        self.last_collisions: list[ContactState] = []
        self._publisher = None
        if self.context.ros_node is not None:
            from sim_msgs.msg import Collision, Collisions, Vector2

            from sim_server.ros.plugin_support import time_msg

            self._types = (Collision, Collisions, Vector2)
            self._time_msg = time_msg
            self._publisher = self.context.ros_node.create_publisher(Collisions, self.context.topic(topic), 10)

    def begin_contact(self, contact) -> None:
        fixtures = self.split_contact(contact)
        key = hash(contact)
        if fixtures is None or key in self.contacts:
            return
        own, other = fixtures
        _, own_body = _names(own)
        if own_body in self.excluded:
            return
        entity_b, body_b = _names(other)
        sign = 1.0 if own == contact.fixtureA else -1.0
        self.contacts[key] = ContactState(own_body, entity_b, body_b, sign)

    def end_contact(self, contact) -> None:
        self.contacts.pop(hash(contact), None)

    def before_physics_step(self, time: TimeKeeper) -> None:
        for state in self.contacts.values():
            state.solves = 0
            state.normal_impulses = [0.0, 0.0]
            state.tangent_impulses = [0.0, 0.0]

    def post_solve(self, contact, impulse) -> None:
        state = self.contacts.get(hash(contact))
        if state is None:
            return
        state.solves += 1
        for index, value in enumerate(impulse.normalImpulses[:2]):
            state.normal_impulses[index] += value
        for index, value in enumerate(impulse.tangentImpulses[:2]):
            state.tangent_impulses[index] += value
        manifold = contact.worldManifold
        count = contact.manifold.pointCount
        state.points = [(float(p[0]), float(p[1])) for p in manifold.points[:count]]
        normal = manifold.normal
        state.normal = (state.normal_sign * float(normal[0]), state.normal_sign * float(normal[1]))

    def forces(self, state: ContactState, step_size: float) -> list[float]:
        """Force magnitudes (N) at each contact point of the step (none without solves)."""
        if state.solves == 0:
            return []
        return [
            math.hypot(state.normal_impulses[i] / state.solves / step_size, state.tangent_impulses[i] / state.solves / step_size)
            for i in range(len(state.points))
        ]

    def after_physics_step(self, time: TimeKeeper) -> None:
        if not ((self.publish_all and self.contacts) or self.timer.check(time)):
            return
        states = list(self.contacts.values())
        self.last_collisions = states
        if self._publisher is None:
            return
        collision_type, collisions_type, vector_type = self._types
        message = collisions_type()
        message.header.frame_id = self.world_frame_id
        message.header.stamp = self._time_msg(time.time_ns)
        for state in states:
            item = collision_type(entity_a=self.model.name, body_a=state.body_a, entity_b=state.entity_b, body_b=state.body_b)
            forces = self.forces(state, time.step_size)
            if forces:
                item.magnitude_forces = forces
                item.contact_positions = [vector_type(x=x, y=y) for x, y in state.points]
                item.contact_normals = [vector_type(x=state.normal[0], y=state.normal[1]) for _ in state.points]
            message.collisions.append(item)
        self._publisher.publish(message)

    def on_shutdown(self) -> None:
        if self._publisher is not None:
            self.context.ros_node.destroy_publisher(self._publisher)
            self._publisher = None
