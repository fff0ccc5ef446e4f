"""The footprints of the robots people meet, and how far a person is from one.

People take a robot for what it is: a body of a size and shape, not a point. :class:`Footprints`
holds the fixtures of the moving bodies a crowd meets (those in its layers, sensors left out) as
circles and convex polygons in each body's own frame, as Box2D has them (a polygon with its skin,
Box2D's ``polygonRadius``). :func:`nearest_on_footprint` gives, for a point and one body placed
at its pose, the signed distance from the point to the footprint's outline (m; negative inside)
and the outline's nearest point; :func:`point_velocity` the velocity of a point of the body.

Units: metres, radians, seconds; poses and points in the world frame.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from Box2D import b2

from sim_server.core.compiled import jit

#: Most vertices of a Box2D polygon (b2_maxPolygonVertices).
MAX_VERTICES = 8


class Footprints:
    """The footprints of ``bodies`` (those fixtures in the collision categories ``bits``), in
    the bodies' frames.

    Attributes:
        circles: (K, 3) centre x, y and radius of each circle (m, its body's frame).
        circle_starts: (M + 1,) body ``b``'s circles are ``circles[circle_starts[b]:circle_starts[b + 1]]``.
        polygons: (L, MAX_VERTICES, 2) each polygon's vertices, counter-clockwise (m, its body's
            frame), padded with the last one.
        polygon_counts: (L,) vertices of each polygon.
        polygon_skins: (L,) each polygon's skin (m): Box2D's shapes touch within it.
        polygon_starts: (M + 1,) body ``b``'s polygons, as ``circle_starts``.
        centres: (M, 2) each body's centre of mass (m, its own frame).
    """

    def __init__(self, bodies: Sequence[b2.body], bits: int) -> None:
        circles: list[tuple[float, float, float]] = []
        polygons: list[np.ndarray] = []
        counts: list[int] = []
        skins: list[float] = []
        circle_starts, polygon_starts = [0], [0]
        centres = []
        for body in bodies:
            for fixture in body.fixtures:
                if fixture.sensor or not fixture.filterData.categoryBits & bits:
                    continue
                shape = fixture.shape
                if shape.type == shape.e_circle:
                    circles.append((shape.pos[0], shape.pos[1], shape.radius))
                else:
                    vertices = np.array(shape.vertices, dtype=np.float64)
                    padded = np.empty((MAX_VERTICES, 2))
                    padded[: len(vertices)] = vertices
                    padded[len(vertices):] = vertices[-1]
                    polygons.append(padded)
                    counts.append(len(vertices))
                    skins.append(shape.radius)
            circle_starts.append(len(circles))
            polygon_starts.append(len(polygons))
            centre = body.localCenter
            centres.append((centre[0], centre[1]))
        self.circles = np.array(circles, dtype=np.float64).reshape(-1, 3)
        self.circle_starts = np.array(circle_starts, dtype=np.int64)
        self.polygons = np.array(polygons, dtype=np.float64).reshape(-1, MAX_VERTICES, 2)
        self.polygon_counts = np.array(counts, dtype=np.int64)
        self.polygon_skins = np.array(skins, dtype=np.float64)
        self.polygon_starts = np.array(polygon_starts, dtype=np.int64)
        self.centres = np.array(centres, dtype=np.float64).reshape(-1, 2)

    @classmethod
    def empty(cls) -> "Footprints":
        """The footprints of no body."""
        return cls([], 0)

    def arrays(self) -> tuple:
        """What the compiled functions take, in order: circles, circle_starts, polygons,
        polygon_counts, polygon_skins, polygon_starts, centres."""
        return (self.circles, self.circle_starts, self.polygons, self.polygon_counts, self.polygon_skins,
                self.polygon_starts, self.centres)


@jit
def _to_body(px, py, x, y, angle):  # pragma: no cover - compiled
    """The world point (px, py) in the frame of a body at (x, y) turned by ``angle``."""
    c, s = math.cos(angle), math.sin(angle)
    dx, dy = px - x, py - y
    return c * dx + s * dy, -s * dx + c * dy


@jit
def nearest_on_footprint(px, py, body, x, y, angle, circles, circle_starts, polygons, polygon_counts,
                         polygon_skins, polygon_starts):  # pragma: no cover - compiled
    """The signed distance (m) from the point (px, py) to the outline of body ``body``'s
    footprint, the body at (x, y) turned by ``angle`` (negative inside; +inf for a body without
    shapes), and the outline's point nearest to it (world frame): the smallest over the body's
    shapes. Returns (distance, qx, qy)."""
    lx, ly = _to_body(px, py, x, y, angle)
    best, bx, by = math.inf, lx, ly
    for k in range(circle_starts[body], circle_starts[body + 1]):
        cx, cy, radius = circles[k, 0], circles[k, 1], circles[k, 2]
        dx, dy = lx - cx, ly - cy
        length = math.sqrt(dx * dx + dy * dy)
        distance = length - radius
        if distance < best:
            best = distance
            if length > 0.0:
                bx, by = cx + radius * dx / length, cy + radius * dy / length
            else:  # at the centre: any point of the circle
                bx, by = cx + radius, cy
    for k in range(polygon_starts[body], polygon_starts[body + 1]):
        count = polygon_counts[k]
        skin = polygon_skins[k]
        # outside: the nearest point of the edges; inside: the edge nearest to leave by
        outside_sq, ox, oy = math.inf, 0.0, 0.0
        deepest, ix, iy = -math.inf, 0.0, 0.0
        inside = True
        for e in range(count):
            ax, ay = polygons[k, e, 0], polygons[k, e, 1]
            nx_, ny_ = polygons[k, (e + 1) % count, 0], polygons[k, (e + 1) % count, 1]
            ex, ey = nx_ - ax, ny_ - ay
            length_sq = ex * ex + ey * ey
            t = 0.0
            if length_sq > 0.0:
                t = min(max(((lx - ax) * ex + (ly - ay) * ey) / length_sq, 0.0), 1.0)
            qx, qy = ax + t * ex, ay + t * ey
            gap_sq = (lx - qx) * (lx - qx) + (ly - qy) * (ly - qy)
            if gap_sq < outside_sq:
                outside_sq, ox, oy = gap_sq, qx, qy
            # counter-clockwise: the outward normal of edge e is (ey, -ex)
            edge_length = math.sqrt(length_sq)
            if edge_length > 0.0:
                side = ((lx - ax) * ey - (ly - ay) * ex) / edge_length
                if side > 0.0:
                    inside = False
                elif side > deepest:
                    deepest = side
                    ix, iy = lx - side * ey / edge_length, ly + side * ex / edge_length
        if inside and deepest > -math.inf:
            distance = deepest - skin
            if distance < best:
                # the edge point, moved out by the skin along the edge's normal
                nx_, ny_ = ix - lx, iy - ly
                norm = math.sqrt(nx_ * nx_ + ny_ * ny_)
                best = distance
                if norm > 0.0:
                    bx, by = ix + skin * nx_ / norm, iy + skin * ny_ / norm
                else:
                    bx, by = ix, iy
        elif not inside:
            gap = math.sqrt(outside_sq)
            distance = gap - skin
            if distance < best:
                best = distance
                if gap > 0.0:
                    bx, by = ox + skin * (lx - ox) / gap, oy + skin * (ly - oy) / gap
                else:
                    bx, by = ox, oy
    c, s = math.cos(angle), math.sin(angle)
    return best, x + c * bx - s * by, y + s * bx + c * by


@jit
def point_velocity(qx, qy, body, x, y, angle, vx, vy, w, centres):  # pragma: no cover - compiled
    """The velocity (m/s) of the point (qx, qy) of body ``body`` at (x, y) turned by ``angle``,
    whose centre of mass moves at (vx, vy) and which turns at ``w`` rad/s."""
    c, s = math.cos(angle), math.sin(angle)
    cx = x + c * centres[body, 0] - s * centres[body, 1]
    cy = y + s * centres[body, 0] + c * centres[body, 1]
    return vx - w * (qy - cy), vy + w * (qx - cx)
