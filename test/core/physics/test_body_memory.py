"""Batch body access in memory: every read and write is what SWIG's gives, bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from Box2D import b2

from sim_server.core.geometry import offset_point_velocity
from sim_server.core.physics import body_memory
from sim_server.core.physics.body_memory import BodyBatch

BODY_TYPES = (b2.dynamicBody, b2.kinematicBody, b2.staticBody)


def crowd(seed: int, count: int = 60) -> tuple[b2.world, list]:
    """A world of bodies of every type at generated poses, some touching, some asleep."""
    rng = np.random.default_rng(seed)
    world = b2.world(gravity=(0, 0))
    bodies = []
    for index in range(count):
        body = world.CreateBody(
            type=BODY_TYPES[index % 3] if index % 5 else b2.dynamicBody,
            position=tuple(rng.uniform(-3.0, 3.0, 2)),
            angle=float(rng.uniform(-10.0, 10.0)),
        )
        if index % 2:
            body.CreateCircleFixture(radius=float(rng.uniform(0.1, 0.4)), density=1.0, pos=tuple(rng.uniform(-0.2, 0.2, 2)))
        else:
            half_width, half_height = rng.uniform(0.1, 0.3, 2)
            shape = b2.polygonShape()
            shape.SetAsBox(float(half_width), float(half_height), b2.vec2(*rng.uniform(-0.2, 0.2, 2)), 0.3)
            body.CreateFixture(shape=shape, density=2.0)
        if index % 7 == 0 and body.type != b2.staticBody:
            body.awake = False
        bodies.append(body)
    return world, bodies


def state(world: b2.world) -> list[tuple]:
    return [
        (body.position.x, body.position.y, body.angle, body.linearVelocity.x, body.linearVelocity.y, body.angularVelocity, body.awake)
        for body in world.bodies
    ]


def test_this_build_is_reached_in_memory() -> None:
    assert body_memory.memory_access_works()
    assert BodyBatch([]).in_memory


@pytest.mark.parametrize("seed", range(5))
def test_poses_are_swigs(seed: int) -> None:
    world, bodies = crowd(seed)
    for _ in range(3):
        expected = [(body.position.x, body.position.y, body.angle) for body in bodies]
        assert BodyBatch(bodies).poses().tolist() == [list(row) for row in expected]
        world.Step(0.05, 8, 3)


@pytest.mark.parametrize("seed", range(5))
def test_velocities_are_swigs(seed: int) -> None:
    world, bodies = crowd(seed)
    rng = np.random.default_rng(200 + seed)
    for body in bodies:
        body.linearVelocity = tuple(rng.uniform(-2.0, 2.0, 2))
        body.angularVelocity = float(rng.uniform(-3.0, 3.0))
    for _ in range(3):
        expected = [(body.linearVelocity.x, body.linearVelocity.y, body.angularVelocity) for body in bodies]
        assert BodyBatch(bodies).velocities().tolist() == [list(row) for row in expected]
        world.Step(0.05, 8, 3)


@pytest.mark.parametrize("seed", range(5))
def test_set_velocities_is_swigs_and_so_are_the_steps_after(seed: int) -> None:
    """Two identical worlds, one set in memory and one through SWIG, with velocities of every
    kind (zero, tiny, large, negative; some bodies asleep, some static), then stepped: every
    pose, velocity and awake flag stays the same."""
    rng = np.random.default_rng(100 + seed)
    (world_a, bodies_a), (world_b, bodies_b) = crowd(seed), crowd(seed)
    batch = BodyBatch(bodies_a)
    for _ in range(20):
        velocities = rng.normal(0.0, 2.0, (len(bodies_a), 3))
        velocities[rng.random(len(bodies_a)) < 0.3] = 0.0
        velocities[rng.random(len(bodies_a)) < 0.1, 2] = 1e-30  # float32 rounds it to zero
        batch.set_velocities(velocities)
        for body, (vx, vy, w) in zip(bodies_b, velocities.tolist()):
            body.linearVelocity = (vx, vy)
            body.angularVelocity = w
        assert state(world_a) == state(world_b)
        world_a.Step(0.02, 8, 3)
        world_b.Step(0.02, 8, 3)
        assert state(world_a) == state(world_b)


@pytest.mark.parametrize("seed", range(4))
def test_drive_planar_matches_the_swig_calls(seed: int) -> None:
    """The compiled drive and its SWIG fallback give identical worlds, step after step."""
    rng = np.random.default_rng(200 + seed)
    (world_a, bodies_a), (world_b, bodies_b) = crowd(seed), crowd(seed)
    fast, slow = BodyBatch(bodies_a), BodyBatch(bodies_b)
    slow.in_memory = False
    centers = np.array([tuple(body.localCenter) for body in bodies_a])
    poses_a, poses_b = np.zeros((len(bodies_a), 3)), np.zeros((len(bodies_a), 3))
    velocities_a, velocities_b = np.zeros((len(bodies_a), 3)), np.zeros((len(bodies_a), 3))
    for _ in range(30):
        forward = rng.uniform(-1.0, 1.0, len(bodies_a))
        turn_rate = rng.uniform(-2.0, 2.0, len(bodies_a))
        lateral = rng.uniform(-0.5, 0.5, len(bodies_a))
        forward[::4] = 0.0
        lateral[::2] = 0.0
        fast.drive_planar(forward, lateral, turn_rate, centers, poses_a, velocities_a)
        slow.drive_planar(forward, lateral, turn_rate, centers, poses_b, velocities_b)
        assert poses_a.tolist() == poses_b.tolist()
        assert velocities_a.tolist() == velocities_b.tolist()  # the origins' velocities before
        assert state(world_a) == state(world_b)
        world_a.Step(0.02, 8, 3)
        world_b.Step(0.02, 8, 3)


def test_drive_is_the_offset_point_velocity() -> None:
    world, bodies = crowd(9, count=10)
    bodies = [body for body in bodies if body.type == b2.dynamicBody]
    centers = np.array([tuple(body.localCenter) for body in bodies])
    forward, turn_rate = np.linspace(-1.0, 1.0, len(bodies)), np.linspace(2.0, -2.0, len(bodies))
    lateral = np.linspace(0.5, -0.3, len(bodies))
    poses, velocities = np.zeros((len(bodies), 3)), np.zeros((len(bodies), 3))
    BodyBatch(bodies).drive_planar(forward, lateral, turn_rate, centers, poses, velocities)
    for body, pose, v, u, w, center in zip(bodies, poses, forward, lateral, turn_rate, centers):
        theta = pose[2]
        vx, vy = offset_point_velocity(v, u, w, math.cos(theta), math.sin(theta), *center)
        assert (body.linearVelocity.x, body.linearVelocity.y) == (float(np.float32(vx)), float(np.float32(vy)))
        assert body.angularVelocity == float(np.float32(w))


def test_swig_fallback_when_memory_access_is_off() -> None:
    world, bodies = crowd(3, count=12)
    try:
        body_memory.use_memory_access(False)
        batch = BodyBatch(bodies)
        assert not batch.in_memory
        velocities = np.tile([0.5, -0.25, 0.125], (len(bodies), 1))
        batch.set_velocities(velocities)
        moving = [body for body in bodies if body.type != b2.staticBody]
        assert all((b.linearVelocity.x, b.linearVelocity.y, b.angularVelocity) == (0.5, -0.25, 0.125) for b in moving)
        assert batch.poses().tolist() == [[b.position.x, b.position.y, b.angle] for b in bodies]
    finally:
        body_memory.use_memory_access(None)
    assert body_memory.memory_access_works()
