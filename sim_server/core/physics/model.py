"""Models: rigid bodies, their fixtures and joints, built in Box2D from a :class:`ModelSpec`."""

from __future__ import annotations

import functools
import math
from typing import Iterator

from Box2D import b2

from sim_server.core.errors import ConfigError, EntityError
from sim_server.core.format.model_file import BodySpec, FootprintSpec, JointSpec, ModelSpec
from sim_server.core.geometry import Pose2D
from sim_server.core.physics.collision_filter import CollisionFilterRegistry
from sim_server.core.physics.layer import BodyRef

_BODY_TYPES = {"static": b2.staticBody, "kinematic": b2.kinematicBody, "dynamic": b2.dynamicBody}
#: Distinct (footprint, collision bits) whose Box2D fixture definitions are kept for reuse.
FIXTURE_DEF_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=FIXTURE_DEF_CACHE_SIZE)
def fixture_def(footprint: FootprintSpec, category_bits: int) -> b2.fixtureDef:
    """The Box2D fixture definition of a footprint (Box2D copies it, so one serves every body:
    models loaded again and again by levels skip pybox2d's slow keyword construction)."""
    if footprint.shape == "circle":
        shape = b2.circleShape(pos=footprint.center, radius=footprint.radius)
    else:
        shape = b2.polygonShape(vertices=list(footprint.points))
    fixture = b2.fixtureDef(
        shape=shape,
        density=footprint.density,
        friction=footprint.friction,
        restitution=footprint.restitution,
        isSensor=footprint.sensor,
    )
    fixture.filter.categoryBits = category_bits
    fixture.filter.maskBits = category_bits
    fixture.filter.groupIndex = 0
    return fixture


def bounding_radius(body: b2.body, bits: int | None = None) -> float:
    """The radius (m) of the smallest circle about ``body``'s origin that holds its non-sensor
    fixtures (those in collision categories ``bits`` only, when given; 0 without any)."""
    radius = 0.0
    for fixture in body.fixtures:
        if fixture.sensor or (bits is not None and not fixture.filterData.categoryBits & bits):
            continue
        shape = fixture.shape
        if shape.type == shape.e_circle:
            radius = max(radius, math.hypot(*shape.pos) + shape.radius)
        else:
            radius = max(radius, max(math.hypot(*vertex) for vertex in shape.vertices))
    return radius


class ModelBody:
    """One body of a model: its spec and the Box2D body."""

    def __init__(self, model: "Model", spec: BodySpec, physics_body: b2.body) -> None:
        self.model = model
        self.spec = spec
        self.physics_body = physics_body

    @property
    def name(self) -> str:
        """The body's name within its model."""
        return self.spec.name

    @property
    def pose(self) -> Pose2D:
        """World pose of the body's origin (m, rad)."""
        position = self.physics_body.position
        return Pose2D(position.x, position.y, self.physics_body.angle)


class Joint:
    """A joint of a model: its spec and the Box2D joint."""

    def __init__(self, spec: JointSpec, physics_joint: b2.joint) -> None:
        self.spec = spec
        self.physics_joint = physics_joint

    @property
    def name(self) -> str:
        """The joint's name within its model."""
        return self.spec.name


def footprint_bits(footprint: FootprintSpec, registry: CollisionFilterRegistry) -> int:
    """Collision bits of a footprint; an unknown layer is a :class:`ConfigError`."""
    bits, unknown = registry.category_bits(footprint.layers)
    if unknown:
        listed = ",".join(unknown)
        raise ConfigError(f'{footprint.where}: key "layers" names {{{listed}}}, layer(s) that do not exist')
    return bits if footprint.collision else 0


class Model:
    """A model instance in the world.

    Built with :meth:`build`, which validates everything that depends on the world (layers)
    before it creates anything in Box2D, so a failure leaves nothing behind.
    """

    #: Placements of any model in the process (see :attr:`placements`): a batch of plugins asks
    #: its models again only when this changed.
    placements_everywhere = 0

    def __init__(self, name: str, namespace: str, spec: ModelSpec, physics: b2.world) -> None:
        self.name = name
        self.namespace = namespace
        self.spec = spec
        self.bodies: dict[str, ModelBody] = {}
        self.joints: dict[str, Joint] = {}
        self._physics = physics
        #: The pose (m, rad) the model's frame was built at: where :meth:`restore` puts it back.
        self.initial_pose = Pose2D()
        #: Whether the world file brought it (at load, after a reset or through a level), rather
        #: than a spawn request.
        self.from_world_file = False
        #: How many times the model was put somewhere by hand (:meth:`set_pose`, :meth:`restore`,
        #: a move taken back): a jump no motion made, which odometry must not integrate.
        self.placements = 0

    @classmethod
    def build(
        cls,
        physics: b2.world,
        registry: CollisionFilterRegistry,
        name: str,
        namespace: str,
        spec: ModelSpec,
        pose: Pose2D,
    ) -> "Model":
        """Create the model ``name`` from ``spec`` with its frame at ``pose`` in the world."""
        bits = {
            (body.name, index): footprint_bits(footprint, registry)
            for body in spec.bodies
            for index, footprint in enumerate(body.footprints)
        }
        model = cls(name, namespace, spec, physics)
        model.initial_pose = pose
        try:
            for body_spec in spec.bodies:
                body_bits = [bits[(body_spec.name, i)] for i in range(len(body_spec.footprints))]
                model._create_body(body_spec, pose, body_bits)
            for joint_spec in spec.joints:
                model._create_joint(joint_spec)
        except Exception:
            model.destroy()
            raise
        return model

    def _create_body(self, spec: BodySpec, model_pose: Pose2D, bits: list[int]) -> None:
        pose = model_pose.compose(spec.pose)
        definition = b2.bodyDef()
        definition.type = _BODY_TYPES[spec.body_type]
        definition.position = (pose.x, pose.y)
        definition.angle = pose.theta
        definition.linearDamping = spec.linear_damping
        definition.angularDamping = spec.angular_damping
        body = self._physics.CreateBody(definition)
        body.userData = BodyRef(self, spec.name)
        for footprint, category_bits in zip(spec.footprints, bits):
            body.CreateFixture(fixture_def(footprint, category_bits))
        self.bodies[spec.name] = ModelBody(self, spec, body)

    def _create_joint(self, spec: JointSpec) -> None:
        body_a = self.bodies[spec.body_a].physics_body
        body_b = self.bodies[spec.body_b].physics_body
        if spec.joint_type == "revolute":
            lower, upper = spec.limits if spec.limits is not None else (0.0, 0.0)
            joint = self._physics.CreateRevoluteJoint(
                bodyA=body_a,
                bodyB=body_b,
                localAnchorA=spec.anchor_a,
                localAnchorB=spec.anchor_b,
                collideConnected=spec.collide_connected,
                enableLimit=spec.limits is not None,
                lowerAngle=lower,
                upperAngle=upper,
            )
        else:
            joint = self._physics.CreateWeldJoint(
                bodyA=body_a,
                bodyB=body_b,
                localAnchorA=spec.anchor_a,
                localAnchorB=spec.anchor_b,
                referenceAngle=spec.angle,
                frequencyHz=spec.frequency,
                dampingRatio=spec.damping,
                collideConnected=spec.collide_connected,
            )
        joint.userData = self
        self.joints[spec.name] = Joint(spec, joint)

    @property
    def first_body(self) -> ModelBody:
        """The model's first body, whose pose is the model's pose."""
        if not self.bodies:
            raise EntityError(f'model "{self.name}" has been removed from the world')
        return next(iter(self.bodies.values()))

    @property
    def pose(self) -> Pose2D:
        """World pose of the model: the pose of its first body (m, rad)."""
        return self.first_body.pose

    def set_pose(self, pose: Pose2D) -> None:
        """Put the first body at ``pose`` and carry every other body rigidly along.

        Velocities are rotated with the bodies, so a moving model keeps moving in its own frame.
        """
        self.placed()
        delta = pose.compose(self.pose.inverse())
        cos_d, sin_d = math.cos(delta.theta), math.sin(delta.theta)
        for body in self.bodies.values():
            physics_body = body.physics_body
            new_pose = delta.compose(body.pose)
            vx, vy = physics_body.linearVelocity
            physics_body.transform = ((new_pose.x, new_pose.y), new_pose.theta)
            physics_body.linearVelocity = (cos_d * vx - sin_d * vy, sin_d * vx + cos_d * vy)
            physics_body.awake = True

    def placed(self) -> None:
        """Count a placement by hand (:attr:`placements`)."""
        self.placements += 1
        Model.placements_everywhere += 1

    def set_twist(self, vx: float, vy: float, wz: float) -> None:
        """Move the whole model rigidly: its first body's origin at (vx, vy) m/s turning at wz rad/s.

        Every body gets the velocity its points have in that rigid motion.
        """
        origin = self.first_body.physics_body.position
        for body in self.bodies.values():
            physics_body = body.physics_body
            center = physics_body.worldCenter
            rx, ry = center[0] - origin[0], center[1] - origin[1]
            physics_body.linearVelocity = (vx - wz * ry, vy + wz * rx)
            physics_body.angularVelocity = wz
            physics_body.awake = True

    def world_footprints(self) -> Iterator[tuple[ModelBody, tuple[float, float, float] | list[tuple[float, float]]]]:
        """Every footprint of the model where it is now, with its body: a circle as its centre
        and radius, ``(x, y, r)``, a polygon as its corners ``[(x, y), ...]`` (m, world frame)."""
        for body in self.bodies.values():
            physics = body.physics_body
            for fixture in physics.fixtures:
                shape = fixture.shape
                if isinstance(shape, b2.circleShape):
                    x, y = physics.GetWorldPoint(shape.pos)
                    yield body, (float(x), float(y), float(shape.radius))
                else:
                    yield body, [(float(x), float(y)) for x, y in (physics.GetWorldPoint(v) for v in shape.vertices)]

    def restore(self) -> None:
        """Put every body back where :meth:`build` made it (relative to :attr:`initial_pose`),
        at rest."""
        self.placed()
        for body in self.bodies.values():
            pose = self.initial_pose.compose(body.spec.pose)
            physics_body = body.physics_body
            physics_body.transform = ((pose.x, pose.y), pose.theta)
            physics_body.linearVelocity = (0.0, 0.0)
            physics_body.angularVelocity = 0.0
            physics_body.awake = True

    def destroy(self) -> None:
        """Remove the model's joints and bodies from the physics world."""
        for joint in self.joints.values():
            self._physics.DestroyJoint(joint.physics_joint)
        for body in self.bodies.values():
            self._physics.DestroyBody(body.physics_body)
        self.joints.clear()
        self.bodies.clear()
