"""Checks that keep invalid shapes away from Box2D, which aborts the process on some of them.

Box2D polygons must be convex, have 3 to 8 vertices that are not (nearly) coincident and
enclose a positive area. :func:`normalize_polygon` checks all of it and returns the vertices in
counter-clockwise order. :func:`check_rotational_inertia` keeps a body's rotational inertia
computable in Box2D's float32 (Box2D asserts it stays positive, an abort in some builds).
"""

from __future__ import annotations

import math
from typing import Sequence

#: b2_maxPolygonVertices in Box2D 2.3.
MAX_POLYGON_VERTICES = 8
#: Box2D welds polygon vertices closer than half of b2_linearSlop (0.005 m).
VERTEX_WELD_DISTANCE = 0.5 * 0.005
#: Smallest polygon area (m^2) accepted; Box2D asserts an area above its epsilon.
MIN_POLYGON_AREA = 1e-6
_ANGLE_TOLERANCE = 1e-6
#: Box2D moves a body's inertia from its origin to its centre of mass in float32; the inertia
#: about the centre must be at least this fraction of the one about the origin to survive it.
MIN_CENTRAL_INERTIA_SHARE = 1e-4


class ShapeError(ValueError):
    """A shape Box2D cannot take; the message says why."""


def polygon_signed_area(points: Sequence[tuple[float, float]]) -> float:
    """Signed area (m^2) of a polygon: positive when counter-clockwise."""
    total = 0.0
    for index, (x1, y1) in enumerate(points):
        x2, y2 = points[(index + 1) % len(points)]
        total += x1 * y2 - x2 * y1
    return 0.5 * total


def normalize_polygon(points: Sequence[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """Validate a polygon for Box2D and return its vertices counter-clockwise.

    Raises:
        ShapeError: fewer than 3 or more than 8 vertices, vertices closer than Box2D's weld
            distance, zero area, self-intersection or a concave corner.
    """
    count = len(points)
    if not 3 <= count <= MAX_POLYGON_VERTICES:
        raise ShapeError(f"must have 3 to {MAX_POLYGON_VERTICES} points, got {count}")
    for i in range(count):
        for j in range(i + 1, count):
            if math.dist(points[i], points[j]) < VERTEX_WELD_DISTANCE:
                raise ShapeError(
                    f"points {i} and {j} are closer than {VERTEX_WELD_DISTANCE} m (degenerate polygon)"
                )
    area = polygon_signed_area(points)
    if abs(area) < MIN_POLYGON_AREA:
        raise ShapeError(f"encloses no area ({abs(area):.3g} m^2; degenerate polygon)")
    ordered = list(points) if area > 0 else list(reversed(points))
    turning = 0.0
    for index in range(count):
        ax, ay = ordered[index - 1]
        bx, by = ordered[index]
        cx, cy = ordered[(index + 1) % count]
        ux, uy, vx, vy = bx - ax, by - ay, cx - bx, cy - by
        cross = ux * vy - uy * vx
        if cross < -_ANGLE_TOLERANCE * math.hypot(ux, uy) * math.hypot(vx, vy):
            raise ShapeError(f"is not convex (concave at point {_original_index(index, count, area)})")
        turning += math.atan2(cross, ux * vx + uy * vy)
    if abs(turning - 2.0 * math.pi) > 1e-3:
        raise ShapeError("is not convex (its edges cross each other)")
    return tuple((float(x), float(y)) for x, y in ordered)


def polygon_mass(points: Sequence[tuple[float, float]]) -> tuple[float, tuple[float, float], float]:
    """Area (m^2), centroid (m) and polar second moment of area about the origin (m^4) of a
    simple polygon."""
    area = cx = cy = inertia = 0.0
    for index, (x1, y1) in enumerate(points):
        x2, y2 = points[(index + 1) % len(points)]
        cross = x1 * y2 - x2 * y1
        area += 0.5 * cross
        cx += (x1 + x2) * cross / 6.0
        cy += (y1 + y2) * cross / 6.0
        inertia += cross * (x1 * x1 + x1 * x2 + x2 * x2 + y1 * y1 + y1 * y2 + y2 * y2) / 12.0
    return area, (cx / area, cy / area), inertia


def check_rotational_inertia(parts: Sequence[tuple[float, tuple[float, float], float]]) -> None:
    """Check that a body keeps a positive rotational inertia in Box2D.

    Args:
        parts: per fixture, its mass (kg), centroid in the body frame (m) and rotational
            inertia about the body's origin (kg m^2).

    Raises:
        ShapeError: the fixtures are so small for their distance from the body's origin that
            float32 loses their inertia about the centre of mass.
    """
    mass = sum(part[0] for part in parts)
    inertia = sum(part[2] for part in parts)
    if mass <= 0.0 or inertia <= 0.0:
        return
    cx = sum(part[0] * part[1][0] for part in parts) / mass
    cy = sum(part[0] * part[1][1] for part in parts) / mass
    central = inertia - mass * (cx * cx + cy * cy)
    if central < MIN_CENTRAL_INERTIA_SHARE * inertia:
        raise ShapeError(
            f"footprints are too small for their distance ({math.hypot(cx, cy):.3g} m) from the body's origin: "
            "Box2D's float32 would lose the body's rotational inertia; move the body's pose to its footprints"
        )


def _original_index(index: int, count: int, area: float) -> int:
    return index if area > 0 else count - 1 - index
