"""Velocity, acceleration and deceleration limits of drive plugins, as the reference applies them."""

from __future__ import annotations

from dataclasses import dataclass


def saturate(value: float, low: float, high: float) -> float:
    """Clamp ``value`` to [low, high]; bounds with low > high leave it unchanged."""
    if low > high:
        return value
    return min(max(value, low), high)


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
        """The velocity after ``dt`` seconds of moving from ``velocity`` towards ``target``."""
        accel, decel = self.acceleration_limit, self.deceleration_limit
        if self.velocity_limit != 0.0:
            target = saturate(target, -self.velocity_limit, self.velocity_limit)
        if target == 0.0:
            bound = decel
        elif velocity == 0.0:
            bound = accel
        elif velocity * target < 0.0:
            if decel != 0.0:
                first = saturate((target - velocity) / dt, -decel, decel)
                if (velocity + first * dt) * velocity > 0.0 and accel != 0.0:
                    bound = decel
                elif accel == 0.0:
                    bound = 0.0
                else:
                    braking_time = abs(velocity) / decel
                    bound = decel * braking_time / dt + accel * (1.0 - braking_time / dt)
            else:
                velocity = 0.0
                bound = accel
        elif abs(velocity) < abs(target):
            bound = accel
        else:
            bound = decel
        change = (target - velocity) / dt
        if bound != 0.0:
            change = saturate(change, -bound, bound)
        return velocity + change * dt
