"""Planar geometry: poses and rigid transforms (REP 103: metres, radians, counter-clockwise)."""

from __future__ import annotations

import math
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
