"""State datapacks: the pose and twist of models and bodies, the state of revolute joints; the
camera datapack's fields (the camera itself is :mod:`sim_plugins.camera`).

These are the fields of the Neurorobotics Platform's Gazebo datapacks, in the plane: positions
(m) and headings (rad) in the world frame, velocities (m/s, rad/s) in the world frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from Box2D import b2

from sim_server.core.errors import EntityError
from sim_server.core.format.entity_names import SCOPE
from sim_server.core.plugins.capabilities import ImageDatapack, ImageSource

if TYPE_CHECKING:
    from sim_server.core.physics.model import Model, ModelBody
    from sim_server.core.world import World



@dataclass(frozen=True)
class BodyState:
    """Pose (m, rad) and twist (m/s, rad/s), world frame, of a model or a body."""

    name: str
    x: float
    y: float
    theta: float
    vx: float
    vy: float
    wz: float


@dataclass(frozen=True)
class JointState:
    """A revolute joint: angle (rad), speed (rad/s) and the motor's torque (N m)."""

    name: str
    position: float
    velocity: float
    effort: float


def body_state(body: "ModelBody", name: str) -> BodyState:
    """The state of a body's origin under ``name``."""
    physics = body.physics_body
    position = physics.position
    velocity = physics.GetLinearVelocityFromLocalPoint((0.0, 0.0))
    return BodyState(
        name, position[0], position[1], physics.angle, velocity[0], velocity[1], physics.angularVelocity
    )


def model_state(model: "Model") -> BodyState:
    """The state of a model: that of its first body, named after the model."""
    return body_state(model.first_body, model.name)


def link_states(model: "Model") -> list[BodyState]:
    """The state of every body of a model, named ``model::body``."""
    return [body_state(body, f"{model.name}{SCOPE}{body.name}") for body in model.bodies.values()]


def joint_states(model: "Model", step_size: float) -> list[JointState]:
    """The state of every revolute joint of a model, named ``model::joint``."""
    states = []
    for joint in model.joints.values():
        physics = joint.physics_joint
        if not isinstance(physics, b2.revoluteJoint):
            continue
        effort = physics.GetMotorTorque(1.0 / step_size) if physics.motorEnabled else 0.0
        states.append(JointState(f"{model.name}{SCOPE}{joint.name}", physics.angle, physics.speed, effort))
    return states


def camera_datapack(world: "World", name: str) -> ImageDatapack:
    """The datapack of the camera ``model::camera`` (a plugin offering
    :class:`~sim_server.core.plugins.capabilities.ImageSource`, such as
    :class:`sim_plugins.camera.Camera`); :class:`EntityError` when there is no such camera."""
    model_name, scope, plugin_name = name.rpartition(SCOPE)
    if not scope:
        raise EntityError(f'a camera is named "model{SCOPE}camera", got "{name}"')
    model = world.model(model_name)
    try:
        plugin = world.plugins.find(model, plugin_name)
    except KeyError:
        raise EntityError(f'model "{model_name}" has no plugin named "{plugin_name}"') from None
    if not isinstance(plugin, ImageSource):
        raise EntityError(f'plugin "{name}" is a {type(plugin).__name__}, not a camera')
    return plugin.datapack()


def check_finite(*values: float) -> bool:
    """Whether every value is a finite number."""
    return all(math.isfinite(value) for value in values)
