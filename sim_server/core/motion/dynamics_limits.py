"""Velocity, acceleration and deceleration limits of drive plugins, as the reference applies them."""

from __future__ import annotations

from dataclasses import dataclass

from sim_server.core.motion.drive_kernels import limited_velocity


@dataclass(frozen=True)
class DynamicsLimits:
    """Limits of one velocity (m/s or rad/s); 0 means unlimited.

    Attributes:
        acceleration_limit: largest rate of change (per s) while speeding up away from zero.
        deceleration_limit: largest rate of change (per s) while slowing towards zero.
        velocity_limit: largest magnitude.
    """

    acceleration_limit: float = 0.0
    deceleration_limit: float = 0.0
    velocity_limit: float = 0.0

    @property
    def unlimited(self) -> bool:
        """No limit at all: :meth:`limit` gives the target."""
        return self.acceleration_limit == self.deceleration_limit == self.velocity_limit == 0.0

    def limit(self, velocity: float, target: float, dt: float) -> float:
        """The velocity after ``dt`` seconds of moving from ``velocity`` towards ``target``
        (:func:`~sim_server.core.motion.drive_kernels.limited_velocity`)."""
        return limited_velocity(float(velocity), float(target), float(dt), self.acceleration_limit, self.deceleration_limit, self.velocity_limit)

    def as_row(self) -> tuple[float, float, float]:
        """(acceleration, deceleration, velocity) limits: a row of a batch's limits array."""
        return self.acceleration_limit, self.deceleration_limit, self.velocity_limit
