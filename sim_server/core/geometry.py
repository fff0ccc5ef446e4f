"""Planar geometry: poses and rigid transforms (REP 103: metres, radians, counter-clockwise)."""

from __future__ import annotations

import math
from typing import Any
from dataclasses import dataclass


@dataclass(frozen=True)
class Pose2D:
    """A planar pose: position ``x``, ``y`` in metres and heading ``theta`` in radians."""

    x: float = 0.0
    y: float = 0.0
    theta: float = 0.0

    def compose(self, other: "Pose2D") -> "Pose2D":
        """Return ``self * other``: ``other`` expressed in this pose's frame, mapped to the parent."""
        cos_t, sin_t = math.cos(self.theta), math.sin(self.theta)
        return Pose2D(
            self.x + cos_t * other.x - sin_t * other.y,
            self.y + sin_t * other.x + cos_t * other.y,
            self.theta + other.theta,
        )

    def inverse(self) -> "Pose2D":
        """Return the pose that undoes this one (``p.compose(p.inverse())`` is the identity)."""
        cos_t, sin_t = math.cos(self.theta), math.sin(self.theta)
        return Pose2D(
            -cos_t * self.x - sin_t * self.y,
            sin_t * self.x - cos_t * self.y,
            -self.theta,
        )

    def transform_point(self, px: float, py: float) -> tuple[float, float]:
        """Map the point (``px``, ``py``) given in this pose's frame to the parent frame (metres)."""
        cos_t, sin_t = math.cos(self.theta), math.sin(self.theta)
        return self.x + cos_t * px - sin_t * py, self.y + sin_t * px + cos_t * py


def normalize_angle(angle: float) -> float:
    """Wrap ``angle`` (radians) into [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def to_body_frame(vx: Any, vy: Any, cos_t: Any, sin_t: Any) -> tuple[Any, Any]:
    """A world-frame vector (``vx``, ``vy``; a velocity in m/s, say) in the frame of a body whose
    heading has cosine ``cos_t`` and sine ``sin_t``; floats or NumPy arrays alike."""
    return cos_t * vx + sin_t * vy, -sin_t * vx + cos_t * vy


def offset_point_velocity(
    forward: float, lateral: float, turn_rate: float, cos_t: float, sin_t: float, offset_x: float, offset_y: float
) -> tuple[float, float]:
    """World velocity (m/s) of a body point at (``offset_x``, ``offset_y``) in the body frame
    (m) from a reference point that moves ``forward`` (m/s) along the body's x axis and
    ``lateral`` (m/s) along its y axis while the body turns at ``turn_rate`` (rad/s); the body's
    heading has cosine ``cos_t`` and sine ``sin_t``. Drives give it the centre of mass's offset:
    Box2D's linear velocity is that point's (v + w x r). Wheeled drives move with ``lateral``
    0 (the result is then bit for bit that of forward motion alone); omnidirectional ones
    slide. (Also compiled, unchanged, for :mod:`sim_server.core.physics.body_memory`.)"""
    return (
        forward * cos_t - lateral * sin_t - turn_rate * (sin_t * offset_x + cos_t * offset_y),
        forward * sin_t + lateral * cos_t + turn_rate * (cos_t * offset_x - sin_t * offset_y),
    )
