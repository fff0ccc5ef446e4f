"""Planar regions: sections of 3D bounds by z = 0, and overlap tests checked against Box2D's
distance (GJK) on thousands of generated shapes."""

from __future__ import annotations

import math

import Box2D
import numpy as np
import pytest
from Box2D import b2

from sim_server.ros.standard_interface.regions import (
    ConvexPolygon, Disc, box_section, convex_hull, hull_section, overlaps, sphere_section,
)

#: Box2D computes in float32: cases nearer than this to touching are left out of the comparison.
FLOAT32_MARGIN = 1e-4


def test_convex_hull_is_counter_clockwise_without_inner_or_collinear_points() -> None:
    square = [(0, 0), (2, 0), (2, 2), (0, 2), (1, 1), (1, 0), (0, 1)]
    assert convex_hull(square).points == ((0, 0), (2, 0), (2, 2), (0, 2))
    assert convex_hull([(0, 0), (1, 1), (2, 2), (3, 3)]).points == ((0, 0), (3, 3))
    assert convex_hull([(1, 1), (1, 1)]).points == ((1, 1),)


def test_sections_by_the_plane() -> None:
    assert sphere_section((1.0, 2.0, 0.0), 3.0) == Disc(1.0, 2.0, 3.0)
    assert sphere_section((1.0, 2.0, 0.6), 1.0) == Disc(1.0, 2.0, pytest.approx(0.8))
    assert sphere_section((1.0, 2.0, 1.5), 1.0) is None
    assert sphere_section((0.0, 0.0, -1.0), 1.0) == Disc(0.0, 0.0, 0.0)  # touches at one point
    assert box_section((-1.0, -2.0, -0.5), (3.0, 4.0, 0.5)).points == ((-1.0, -2.0), (3.0, -2.0), (3.0, 4.0), (-1.0, 4.0))
    assert box_section((-1.0, -2.0, 0.1), (3.0, 4.0, 0.5)) is None
    # A tetrahedron standing on the plane on one corner, and one cut through its middle.
    assert hull_section([(0, 0, 0), (1, 0, 1), (0, 1, 1), (-1, -1, 1)]).points == ((0, 0),)
    cut = hull_section([(0.0, 0.0, -1.0), (2.0, 0.0, 1.0), (0.0, 2.0, 1.0), (-2.0, -2.0, 1.0)])
    assert set(cut.points) == {(1.0, 0.0), (0.0, 1.0), (-1.0, -1.0)}
    assert hull_section([(0, 0, 1), (1, 0, 1), (0, 1, 2)]) is None


def test_hull_section_is_the_plane_part_of_the_hull() -> None:
    """Points of the plane that are convex combinations of the 3D points lie in the section;
    the section's corners are in the hull (checked by sampling)."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        points = [tuple(p) for p in rng.uniform(-3, 3, size=(rng.integers(3, 9), 3))]
        section = hull_section(points)
        weights = rng.dirichlet(np.ones(len(points)), size=4000)
        combos = weights @ np.array(points)
        on_plane = combos[np.abs(combos[:, 2]) < 1e-3]
        if section is None:
            assert all(p[2] > 0 for p in points) or all(p[2] < 0 for p in points)
            continue
        for x, y, _ in on_plane:
            assert overlaps(Disc(x, y, 0.01), section)


def _b2_shape(region):
    if isinstance(region, Disc):
        return b2.circleShape(pos=(region.x, region.y), radius=region.radius), region.radius
    return b2.polygonShape(vertices=list(region.points)), 0.0


def _random_region(rng):
    if rng.random() < 0.4:
        return Disc(*rng.uniform(-3, 3, 2), rng.uniform(0.05, 2.0))
    centre = rng.uniform(-3, 3, 2)
    for _ in range(100):
        hull = convex_hull(tuple(map(float, centre + p)) for p in rng.uniform(-1.5, 1.5, size=(rng.integers(3, 9), 2)))
        if len(hull.points) >= 3 and len(hull.points) <= 8:
            return hull
    raise AssertionError("no polygon")


def test_overlaps_agrees_with_box2d_distance() -> None:
    rng = np.random.default_rng(11)
    identity = b2.transform()
    identity.position, identity.angle = (0.0, 0.0), 0.0  # b2.transform() starts uninitialised
    compared = met = 0
    for _ in range(3000):
        a, b = _random_region(rng), _random_region(rng)
        shape_a, radius_a = _b2_shape(a)
        shape_b, radius_b = _b2_shape(b)
        result = Box2D.b2Distance(shapeA=shape_a, shapeB=shape_b, transformA=identity, transformB=identity, useRadii=False)
        gap = result.distance - radius_a - radius_b
        if result.distance > 0.0 and abs(gap) < FLOAT32_MARGIN:
            continue  # too near touching for float32 to tell (GJK gives 0 only for shapes that meet)
        expected = gap <= 0.0
        assert overlaps(a, b) == expected, (a, b, gap)
        assert overlaps(b, a) == expected
        compared += 1
        met += expected
    assert compared > 2950 and 500 < met < compared - 500


def test_degenerate_regions() -> None:
    point = ConvexPolygon(((1.0, 1.0),))
    segment = ConvexPolygon(((0.0, 0.0), (2.0, 2.0)))
    square = convex_hull([(0, 0), (1, 0), (1, 1), (0, 1)])
    assert overlaps(point, segment) and overlaps(point, square) and overlaps(segment, square)
    assert not overlaps(ConvexPolygon(((1.0, 1.1),)), segment)
    assert overlaps(ConvexPolygon(((2.0, 2.0),)), ConvexPolygon(((2.0, 2.0),)))
    assert not overlaps(ConvexPolygon(((2.0, 2.0),)), ConvexPolygon(((2.0, 2.5),)))
    # Collinear segments: apart, then touching end to end.
    assert not overlaps(segment, ConvexPolygon(((2.5, 2.5), (3.0, 3.0))))
    assert overlaps(segment, ConvexPolygon(((2.0, 2.0), (3.0, 3.0))))
    # Crossing segments, and a segment through a square without a corner inside it.
    assert overlaps(segment, ConvexPolygon(((0.0, 2.0), (2.0, 0.0))))
    assert overlaps(ConvexPolygon(((-1.0, 0.5), (2.0, 0.5))), square)
    assert overlaps(Disc(0.5, 0.5, 0.0), square) and not overlaps(Disc(3.0, 3.0, 1.0), segment)
    assert overlaps(Disc(3.0, 3.0, math.sqrt(2.0)), segment)  # touches the end
    assert overlaps(Disc(1.0, 1.0, 0.0), point)
