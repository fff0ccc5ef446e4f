"""A robot's footprint as people measure it: the signed distance to its outline and the outline's
nearest point, checked against shapely's geometry; the velocity of a point of a turning body."""

from __future__ import annotations

import math

import numpy as np
import pytest
from Box2D import b2
from shapely.geometry import Point, Polygon
from shapely.ops import unary_union

from sim_server.core.crowd.robot_footprints import Footprints, nearest_on_footprint, point_velocity

BOX = [(-0.6, -0.3), (0.4, -0.3), (0.5, 0.0), (0.4, 0.3), (-0.6, 0.3)]


def body_with(world: b2.world, *, circles=(), polygons=(), sensor=False, bits=0x0001) -> b2.body:
    body = world.CreateDynamicBody(position=(0, 0))
    for x, y, radius in circles:
        fixture = body.CreateFixture(b2.fixtureDef(shape=b2.circleShape(pos=(x, y), radius=radius), density=1))
        fixture.filterData.categoryBits = bits
    for points in polygons:
        fixture = body.CreateFixture(b2.fixtureDef(shape=b2.polygonShape(vertices=points), density=1, isSensor=sensor))
        fixture.filterData.categoryBits = bits
    return body


def oracle(footprint, pose: tuple[float, float, float], point: tuple[float, float]) -> float:
    """Shapely's signed distance from ``point`` to ``footprint`` (a shape in the body's frame,
    polygons grown by their skin) placed at ``pose``."""
    from shapely import affinity

    shape = affinity.rotate(footprint, pose[2], origin=(0, 0), use_radians=True)
    shape = affinity.translate(shape, pose[0], pose[1])
    outline = shape.boundary
    distance = outline.distance(Point(point))
    return -distance if shape.contains(Point(point)) else distance


@pytest.mark.parametrize("pose", [(0.0, 0.0, 0.0), (3.0, -2.0, 0.7), (-1.5, 4.0, -2.9)])
def test_distances_and_nearest_points_match_shapely(pose: tuple[float, float, float]) -> None:
    world = b2.world()
    body = body_with(world, circles=[(0.7, 0.2, 0.25)], polygons=[BOX])
    footprints = Footprints([body], 0xFFFF)
    skin = float(footprints.polygon_skins[0])
    assert skin == pytest.approx(b2.polygonRadius)
    shapes = [Polygon(BOX).buffer(skin, quad_segs=256), Point(0.7, 0.2).buffer(0.25, quad_segs=256)]
    union = unary_union(shapes)
    rng = np.random.default_rng(4)
    x, y, angle = pose
    for local in rng.uniform(-1.5, 1.5, (400, 2)):
        c, s = math.cos(angle), math.sin(angle)
        point = (x + c * local[0] - s * local[1], y + s * local[0] + c * local[1])
        distance, qx, qy = nearest_on_footprint(point[0], point[1], 0, x, y, angle, *footprints.arrays()[:6])
        # the smallest of the shapes' signed distances; outside them all, the union's distance
        expected = min(oracle(shape, pose, point) for shape in shapes)
        assert distance == pytest.approx(expected, abs=2e-4), (local, distance, expected)
        if expected > 0.0:
            assert distance == pytest.approx(oracle(union, pose, point), abs=2e-4)
        # the nearest point lies on the outline, |point - q| away
        assert math.dist(point, (qx, qy)) == pytest.approx(abs(distance), abs=2e-4)


def test_sensors_and_other_layers_are_not_footprints() -> None:
    world = b2.world()
    body = body_with(world, polygons=[BOX], sensor=True)
    other = body_with(world, circles=[(0, 0, 0.5)], bits=0x0004)
    footprints = Footprints([body, other], 0x0003)
    assert len(footprints.polygons) == 0 and len(footprints.circles) == 0
    distance, _, _ = nearest_on_footprint(1.0, 0.0, 1, 0.0, 0.0, 0.0, *footprints.arrays()[:6])
    assert distance == math.inf


def test_a_point_of_a_turning_body_moves_round_its_centre_of_mass() -> None:
    world = b2.world()
    body = body_with(world, circles=[(1.0, 0.0, 0.2)])  # centre of mass at (1, 0) in the body's frame
    footprints = Footprints([body], 0xFFFF)
    assert footprints.centres[0] == pytest.approx((1.0, 0.0))
    # the body at (2, 0) turned by 90 degrees: its centre of mass is at (2, 1); turning at 2 rad/s
    vx, vy = point_velocity(2.0, 2.0, 0, 2.0, 0.0, math.pi / 2, 0.5, 0.0, 2.0, footprints.centres)
    assert (vx, vy) == pytest.approx((0.5 - 2.0 * 1.0, 0.0))
