"""Planar regions and whether they overlap: the geometry of the standard's bounds filter.

The world is the plane z = 0 (REP 103). A filter's bounds are three-dimensional (a sphere, an
axis-aligned box or a convex hull, in metres, in the world frame); what they select is their
section by that plane: a disc, a rectangle or a convex polygon, or nothing when they do not reach
it. An entity's footprints are discs and convex polygons too, so every test here is between two
closed convex sets: they overlap when they share a point, touching included.

Pure Python (no Box2D, no ROS), exact up to floating-point rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence, Union

Point = tuple[float, float]
Point3 = tuple[float, float, float]


@dataclass(frozen=True)
class Disc:
    """A closed disc: centre (m) and radius (m, >= 0; 0 is a point)."""

    x: float
    y: float
    radius: float


@dataclass(frozen=True)
class ConvexPolygon:
    """A closed convex polygon: its corners (m) counter-clockwise, no three on a line. One
    corner is a point, two are a segment."""

    points: tuple[Point, ...]


Region = Union[Disc, ConvexPolygon]


def convex_hull(points: Iterable[Point]) -> ConvexPolygon:
    """The convex hull of ``points`` (at least one), counter-clockwise without collinear
    corners (Andrew's monotone chain)."""
    unique = sorted(set(points))
    if len(unique) <= 2:
        return ConvexPolygon(tuple(unique))

    def half(ordered: list[Point]) -> list[Point]:
        chain: list[Point] = []
        for point in ordered:
            while len(chain) >= 2 and _cross(chain[-2], chain[-1], point) <= 0.0:
                chain.pop()
            chain.append(point)
        return chain

    lower, upper = half(unique), half(unique[::-1])
    hull = lower[:-1] + upper[:-1]
    if len(hull) < 2:  # all on one line: the chain kept only the two ends
        hull = [unique[0], unique[-1]]
    return ConvexPolygon(tuple(hull))


def sphere_section(center: Point3, radius: float) -> Disc | None:
    """The section of a ball by the plane z = 0 (None when it misses the plane)."""
    x, y, z = center
    if abs(z) > radius:
        return None
    return Disc(x, y, math.sqrt(max(0.0, radius * radius - z * z)))


def box_section(low: Point3, high: Point3) -> ConvexPolygon | None:
    """The section of the axis-aligned box between corners ``low`` and ``high`` by the plane
    z = 0 (None when it misses the plane)."""
    if not low[2] <= 0.0 <= high[2]:
        return None
    corners = [(low[0], low[1]), (high[0], low[1]), (high[0], high[1]), (low[0], high[1])]
    return convex_hull(corners)


def hull_section(points: Sequence[Point3]) -> ConvexPolygon | None:
    """The section of the convex hull of ``points`` by the plane z = 0 (None when it misses the
    plane): the hull of the points on the plane and of the crossings of the segments between a
    point below and a point above it."""
    on_plane = [(x, y) for x, y, z in points if z == 0.0]
    below = [p for p in points if p[2] < 0.0]
    above = [p for p in points if p[2] > 0.0]
    for bx, by, bz in below:
        for ax, ay, az in above:
            t = bz / (bz - az)  # in (0, 1): where the segment crosses z = 0
            on_plane.append((bx + t * (ax - bx), by + t * (ay - by)))
    if not on_plane:
        return None
    return convex_hull(on_plane)


def overlaps(first: Region, second: Region) -> bool:
    """Whether two regions share a point."""
    if isinstance(first, Disc):
        if isinstance(second, Disc):
            reach = first.radius + second.radius
            return (first.x - second.x) ** 2 + (first.y - second.y) ** 2 <= reach * reach
        return _disc_meets_polygon(first, second)
    if isinstance(second, Disc):
        return _disc_meets_polygon(second, first)
    return _polygons_meet(first, second)


def _cross(o: Point, a: Point, b: Point) -> float:
    """The z of (a - o) x (b - o): > 0 when o, a, b turn counter-clockwise."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _disc_meets_polygon(disc: Disc, polygon: ConvexPolygon) -> bool:
    points = polygon.points
    centre = (disc.x, disc.y)
    if len(points) >= 3 and all(_cross(points[i - 1], points[i], centre) >= 0.0 for i in range(len(points))):
        return True  # the centre is inside
    if len(points) == 1:
        return math.hypot(points[0][0] - disc.x, points[0][1] - disc.y) <= disc.radius
    return any(
        _segment_distance(centre, points[i - 1], points[i]) <= disc.radius for i in range(len(points))
    )


def _segment_distance(point: Point, start: Point, end: Point) -> float:
    """The distance (m) from ``point`` to the segment from ``start`` to ``end``."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    length_squared = dx * dx + dy * dy
    t = 0.0
    if length_squared > 0.0:
        t = min(1.0, max(0.0, ((point[0] - start[0]) * dx + (point[1] - start[1]) * dy) / length_squared))
    return math.hypot(point[0] - (start[0] + t * dx), point[1] - (start[1] + t * dy))


def _axes(points: tuple[Point, ...]) -> list[Point]:
    """The directions a separating line may be normal to: each edge's normal and, for a
    segment, its own direction too."""
    if len(points) == 1:
        return []
    axes = []
    for i in range(len(points)):
        (x0, y0), (x1, y1) = points[i - 1], points[i]
        axes.append((y0 - y1, x1 - x0))
    if len(points) == 2:
        axes.append((points[1][0] - points[0][0], points[1][1] - points[0][1]))
    return axes


def _polygons_meet(first: ConvexPolygon, second: ConvexPolygon) -> bool:
    """The separating axis test; two single points meet only when equal."""
    if len(first.points) == 1 and len(second.points) == 1:
        return first.points[0] == second.points[0]
    for ax, ay in _axes(first.points) + _axes(second.points):
        a = [x * ax + y * ay for x, y in first.points]
        b = [x * ax + y * ay for x, y in second.points]
        if max(a) < min(b) or max(b) < min(a):
            return False
    return True
