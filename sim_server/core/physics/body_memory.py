"""Poses and velocities of many Box2D bodies at once, read and written in the bodies' memory.

pybox2d reaches every field of a body through SWIG: reading a pose costs about 1.2 us and
setting the two velocities about 0.6 us per body, most of what a differential drive's step costs
with a thousand robots. A ``b2Body`` is a C++ object at a fixed address (``int(body.this)``) whose
first fields are its type, flags, transform, sweep and velocities (Box2D 2.3's layout); the
compiled functions here read and write those fields of a whole batch in one call, about a
hundredth of that.

They do exactly what the SWIG calls do: a position is ``m_xf.p`` (``GetPosition``), an angle
``m_sweep.a`` (``GetAngle``), and a velocity is stored as float32 after Box2D's rule of
``SetLinearVelocity`` / ``SetAngularVelocity`` (static bodies keep theirs; a nonzero velocity
wakes a sleeping body and zeroes its sleep time). :func:`memory_access_works` checks the layout
once per process against SWIG on probe bodies (values, flags and the wake rule); where anything
differs (another Box2D build) or numba's JIT is disabled, :class:`BodyBatch` makes the SWIG calls
instead, with the same results.

A :class:`BodyBatch` holds references to its bodies' Python objects, but Box2D frees a body on
``DestroyBody`` whatever Python holds: a batch must not be used after any of its bodies left the
world (the plugin manager hands batch hooks a new :class:`~sim_server.core.plugins.api.PluginBatch`,
with an empty cache, whenever a member leaves).
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from sim_server.core.geometry import offset_point_velocity
from sim_server.core.compiled import jit

# Box2D 2.3's b2Body, in bytes from the object's address (checked by memory_access_works).
TYPE_OFFSET = 0  # int32 b2BodyType
FLAGS_OFFSET = 4  # uint16
POSITION_OFFSET = 12  # m_xf.p: two float32
SINE_OFFSET = 20  # m_xf.q.s: float32
COSINE_OFFSET = 24  # m_xf.q.c: float32
CENTER_OFFSET = 44  # m_sweep.c, the centre of mass in the world: two float32
ANGLE_OFFSET = 56  # m_sweep.a: float32
LINEAR_VELOCITY_OFFSET = 64  # two float32
ANGULAR_VELOCITY_OFFSET = 72  # float32
SLEEP_TIME_OFFSET = 172  # float32
STATIC_BODY = 0
AWAKE_FLAG = 0x0002


# ------------------------------------------------------------------------ raw memory access
@intrinsic
def _load_float32(typingctx, address):
    """The float32 at ``address`` (an integer)."""

    def codegen(context, builder, signature, arguments):
        return builder.load(builder.inttoptr(arguments[0], ir.PointerType(ir.FloatType())))

    return types.float32(types.int64), codegen


@intrinsic
def _store_float32(typingctx, address, value):
    """Write ``value`` as a float32 at ``address``."""

    def codegen(context, builder, signature, arguments):
        builder.store(arguments[1], builder.inttoptr(arguments[0], ir.PointerType(ir.FloatType())))
        return context.get_dummy_value()

    return types.none(types.int64, types.float32), codegen


@intrinsic
def _load_int32(typingctx, address):
    """The int32 at ``address``."""

    def codegen(context, builder, signature, arguments):
        return builder.load(builder.inttoptr(arguments[0], ir.PointerType(ir.IntType(32))))

    return types.int32(types.int64), codegen


@intrinsic
def _load_uint16(typingctx, address):
    """The uint16 at ``address``."""

    def codegen(context, builder, signature, arguments):
        return builder.load(builder.inttoptr(arguments[0], ir.PointerType(ir.IntType(16))))

    return types.uint16(types.int64), codegen


@intrinsic
def _store_uint16(typingctx, address, value):
    """Write ``value`` as a uint16 at ``address``."""

    def codegen(context, builder, signature, arguments):
        builder.store(arguments[1], builder.inttoptr(arguments[0], ir.PointerType(ir.IntType(16))))
        return context.get_dummy_value()

    return types.none(types.int64, types.uint16), codegen


#: The same function, compiled for the kernels below.
_offset_point_velocity = jit(offset_point_velocity)


@jit
def _read_poses(addresses, out):
    """``out[i]`` = x, y (m) and angle (rad) of the body at ``addresses[i]``."""
    for i in range(addresses.shape[0]):
        address = addresses[i]
        out[i, 0] = _load_float32(address + POSITION_OFFSET)
        out[i, 1] = _load_float32(address + POSITION_OFFSET + 4)
        out[i, 2] = _load_float32(address + ANGLE_OFFSET)


@jit
def _read_velocities(addresses, out):
    """``out[i]`` = linear velocity x, y of the centre of mass (m/s) and angular velocity (rad/s)
    of the body at ``addresses[i]`` (``linearVelocity`` and ``angularVelocity``)."""
    for i in range(addresses.shape[0]):
        address = addresses[i]
        out[i, 0] = _load_float32(address + LINEAR_VELOCITY_OFFSET)
        out[i, 1] = _load_float32(address + LINEAR_VELOCITY_OFFSET + 4)
        out[i, 2] = _load_float32(address + ANGULAR_VELOCITY_OFFSET)


@jit
def _wake(address):
    """Box2D's ``SetAwake(true)``."""
    flags = _load_uint16(address + FLAGS_OFFSET)
    if (flags & AWAKE_FLAG) == 0:
        _store_uint16(address + FLAGS_OFFSET, np.uint16(flags | AWAKE_FLAG))
        _store_float32(address + SLEEP_TIME_OFFSET, np.float32(0.0))


@jit
def _set_velocity(address, vx, vy, w):
    """Box2D's ``SetLinearVelocity((vx, vy))`` then ``SetAngularVelocity(w)`` (float32)."""
    if _load_int32(address + TYPE_OFFSET) == STATIC_BODY:
        return
    linear_x, linear_y, angular = np.float32(vx), np.float32(vy), np.float32(w)
    if linear_x * linear_x + linear_y * linear_y > np.float32(0.0):
        _wake(address)
    _store_float32(address + LINEAR_VELOCITY_OFFSET, linear_x)
    _store_float32(address + LINEAR_VELOCITY_OFFSET + 4, linear_y)
    if angular * angular > np.float32(0.0):
        _wake(address)
    _store_float32(address + ANGULAR_VELOCITY_OFFSET, angular)


@jit
def _set_velocities(addresses, velocities):
    """Set each body's linear velocity to ``velocities[i, :2]`` (m/s) and its angular
    velocity to ``velocities[i, 2]`` (rad/s)."""
    for i in range(addresses.shape[0]):
        _set_velocity(addresses[i], velocities[i, 0], velocities[i, 1], velocities[i, 2])


@jit
def _drive_planar(addresses, forward, lateral, turn_rate, local_centers, poses, velocities):
    """Read each body's pose into ``poses`` (x, y, angle) and the velocity of its origin into
    ``velocities`` (vx, vy, angular: Box2D's ``GetLinearVelocityFromLocalPoint((0, 0))`` in
    float32 and ``angularVelocity``), then give the body the velocity of moving ``forward[i]``
    (m/s) along its x axis and ``lateral[i]`` (m/s) along its y axis while turning at
    ``turn_rate[i]`` (rad/s); Box2D's linear velocity is
    that of the centre of mass at ``local_centers[i]`` (m, body frame) from the moving point:
    v + w x r, as :func:`~sim_server.core.geometry.offset_point_velocity` computes it."""
    for i in range(addresses.shape[0]):
        address = addresses[i]
        x32 = _load_float32(address + POSITION_OFFSET)
        y32 = _load_float32(address + POSITION_OFFSET + 4)
        theta = np.float64(_load_float32(address + ANGLE_OFFSET))
        x, y = np.float64(x32), np.float64(y32)
        poses[i, 0], poses[i, 1], poses[i, 2] = x, y, theta
        # Box2D's v + b2Cross(w, GetWorldPoint((0, 0)) - c), every operation in float32.
        w32 = _load_float32(address + ANGULAR_VELOCITY_OFFSET)
        zero = np.float32(0.0)
        world_x = (_load_float32(address + COSINE_OFFSET) * zero - _load_float32(address + SINE_OFFSET) * zero) + x32
        world_y = (_load_float32(address + SINE_OFFSET) * zero + _load_float32(address + COSINE_OFFSET) * zero) + y32
        arm_x = world_x - _load_float32(address + CENTER_OFFSET)
        arm_y = world_y - _load_float32(address + CENTER_OFFSET + 4)
        velocities[i, 0] = np.float64(_load_float32(address + LINEAR_VELOCITY_OFFSET) + (-w32 * arm_y))
        velocities[i, 1] = np.float64(_load_float32(address + LINEAR_VELOCITY_OFFSET + 4) + w32 * arm_x)
        velocities[i, 2] = np.float64(w32)
        vx, vy = _offset_point_velocity(
            forward[i], lateral[i], turn_rate[i], math.cos(theta), math.sin(theta), local_centers[i, 0], local_centers[i, 1]
        )
        _set_velocity(address, vx, vy, turn_rate[i])


# ------------------------------------------------------------------------ layout check
_works: bool | None = None


def _velocity(body) -> tuple[float, float, float]:
    return body.linearVelocity.x, body.linearVelocity.y, body.angularVelocity


def _velocity_of(velocity: tuple[float, float, float]) -> tuple[float, float, float]:
    """``velocity`` as Box2D stores it (float32)."""
    return tuple(float(np.float32(v)) for v in velocity)


def _probe() -> bool:
    """Whether reading and writing through the layout above agrees with SWIG on probe bodies."""
    import Box2D as b2

    world = b2.b2World(gravity=(0, 0))
    try:
        body = world.CreateDynamicBody(position=(1.25, -2.5), angle=0.75)
        body.CreateCircleFixture(radius=0.5, density=1.0)
        body.linearVelocity = (0.5, -0.25)
        body.angularVelocity = 0.125
        still = world.CreateStaticBody(position=(3.0, 4.0), angle=-1.5)
        addresses = np.array([int(body.this), int(still.this)], dtype=np.int64)
        poses = np.zeros((2, 3))
        _read_poses(addresses, poses)
        expected = [(b.position.x, b.position.y, b.angle) for b in (body, still)]
        if poses.tolist() != [list(row) for row in expected]:
            return False
        # The wake rule: a sleeping body woken by a nonzero velocity, not by a zero one; the
        # fields around the sleep time stay as they were.
        neighbours = (0.625, 0.375, 0.25)
        body.gravityScale, body.linearDamping, body.angularDamping = neighbours
        body.awake = False
        body_twin = world.CreateDynamicBody(position=(5.0, 5.0))
        body_twin.CreateCircleFixture(radius=0.5, density=1.0)
        body_twin.awake = False
        _set_velocities(addresses[:1], np.zeros((1, 3)))
        body_twin.linearVelocity, body_twin.angularVelocity = (0.0, 0.0), 0.0
        if body.awake or body_twin.awake:
            return False
        velocity = (1.0 / 3.0, -2.0 / 7.0, 0.1)
        _set_velocities(addresses, np.array([velocity, velocity]))
        body_twin.linearVelocity, body_twin.angularVelocity = velocity[:2], velocity[2]
        if not (body.awake and body_twin.awake and _velocity(body) == _velocity(body_twin) == _velocity_of(velocity)):
            return False
        read = np.zeros((2, 3))
        _read_velocities(addresses, read)
        if read.tolist() != [list(_velocity(body)), list(_velocity(still))]:
            return False
        if _velocity(still) != (0.0, 0.0, 0.0):
            return False
        if (body.gravityScale, body.linearDamping, body.angularDamping) != neighbours:
            return False
        # The drive: the same velocities as SWIG's, for a centre of mass off the origin.
        forward, lateral, turn_rate = np.array([0.7]), np.array([0.2]), np.array([-0.3])
        center = np.array([[0.1, -0.05]])
        before = body.GetLinearVelocityFromLocalPoint((0.0, 0.0))
        before = [before.x, before.y, body.angularVelocity]
        velocities = np.zeros((1, 3))
        _drive_planar(addresses[:1], forward, lateral, turn_rate, center, poses[:1], velocities)
        theta = body.angle
        body_twin.linearVelocity = offset_point_velocity(0.7, 0.2, -0.3, math.cos(theta), math.sin(theta), 0.1, -0.05)
        body_twin.angularVelocity = -0.3
        return (
            _velocity(body) == _velocity(body_twin)
            and poses[0].tolist() == list(expected[0])
            and velocities[0].tolist() == before
        )
    finally:
        for each in list(world.bodies):
            world.DestroyBody(each)


def memory_access_works() -> bool:
    """Whether this process reads and writes bodies in their memory (checked once, which also
    compiles the functions or loads them from numba's cache): False under ``NUMBA_DISABLE_JIT``
    or when the probe finds another layout."""
    global _works
    if _works is None:
        _works = hasattr(_read_poses, "signatures") and _probe()
    return _works


def use_memory_access(enabled: bool | None) -> None:
    """Force the SWIG calls (False), allow memory access where it works (None: the default);
    for tests and measurements."""
    global _works
    _works = False if enabled is False else None


# ------------------------------------------------------------------------ batches
class BodyBatch:
    """Box2D bodies whose poses are read and velocities set together.

    Args:
        bodies: the bodies (``Box2D.b2Body``), all alive in one world while the batch is used.
    """

    def __init__(self, bodies: Iterable) -> None:
        self.bodies = list(bodies)
        self.in_memory = memory_access_works()
        self.addresses = np.array([int(body.this) for body in self.bodies], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.bodies)

    def poses(self, out: np.ndarray | None = None) -> np.ndarray:
        """(N, 3) float64: each body's x, y (m) and angle (rad)."""
        if out is None:
            out = np.empty((len(self.bodies), 3))
        if self.in_memory:
            _read_poses(self.addresses, out)
        else:
            for row, body in zip(out, self.bodies):
                position = body.position
                row[0], row[1], row[2] = position.x, position.y, body.angle
        return out

    def velocities(self, out: np.ndarray | None = None) -> np.ndarray:
        """(N, 3) float64: each body's linear velocity x, y (m/s, of its centre of mass, as
        ``body.linearVelocity``) and angular velocity (rad/s)."""
        if out is None:
            out = np.empty((len(self.bodies), 3))
        if self.in_memory:
            _read_velocities(self.addresses, out)
        else:
            for row, body in zip(out, self.bodies):
                row[0], row[1], row[2] = _velocity(body)
        return out

    def set_velocities(self, velocities: np.ndarray) -> None:
        """Set each body's linear (``velocities[i, :2]``, m/s) and angular (``velocities[i, 2]``,
        rad/s) velocity, as ``body.linearVelocity`` and ``body.angularVelocity`` do."""
        if self.in_memory:
            _set_velocities(self.addresses, np.ascontiguousarray(velocities, dtype=np.float64))
            return
        for body, (vx, vy, w) in zip(self.bodies, velocities.tolist()):
            body.linearVelocity = (vx, vy)
            body.angularVelocity = w

    def drive_planar(
        self, forward: np.ndarray, lateral: np.ndarray, turn_rate: np.ndarray, local_centers: np.ndarray,
        poses: np.ndarray, velocities: np.ndarray,
    ) -> None:
        """Read the poses into ``poses`` (N, 3: x, y in m, angle in rad) and the velocities of
        the bodies' origins into ``velocities`` (N, 3: m/s, m/s, rad/s), then move each body
        ``forward[i]`` (m/s) along its x axis and ``lateral[i]`` (m/s) along its y axis while it
        turns at ``turn_rate[i]`` (rad/s), the centre of mass being at ``local_centers[i]`` (m,
        body frame) from the point moving so."""
        if self.in_memory:
            _drive_planar(self.addresses, forward, lateral, turn_rate, local_centers, poses, velocities)
            return
        for i, body in enumerate(self.bodies):
            position = body.position
            x, y, theta = position.x, position.y, body.angle
            poses[i, 0], poses[i, 1], poses[i, 2] = x, y, theta
            velocity = body.GetLinearVelocityFromLocalPoint((0.0, 0.0))
            velocities[i, 0], velocities[i, 1], velocities[i, 2] = velocity.x, velocity.y, body.angularVelocity
            w = float(turn_rate[i])
            body.linearVelocity = offset_point_velocity(
                float(forward[i]), float(lateral[i]), w, math.cos(theta), math.sin(theta), *local_centers[i].tolist()
            )
            body.angularVelocity = w
