"""The state datapacks' conversions (no node)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim_server.ros.state_datapacks import yaw_of


def test_yaw_of_any_nonzero_quaternion_about_z() -> None:
    """Quaternions about z of any length and sign give their angle: a non-unit one, e.g.
    (0, 0, 1, 1), is a quarter turn (the formula for unit ones alone gave 116.6 degrees)."""
    assert yaw_of([0.0, 0.0, 1.0, 1.0]) == pytest.approx(math.pi / 2)
    assert yaw_of([0.0, 0.0, 1e300, 1e300]) == pytest.approx(math.pi / 2)  # no square overflows
    assert yaw_of([0.0, 0.0, 1e-300, 1e-300]) == pytest.approx(math.pi / 2)
    rng = np.random.default_rng(2)
    for angle, length in zip(rng.uniform(-math.pi, math.pi, 500), 10.0 ** rng.uniform(-20, 20, 500)):
        sign = rng.choice([-1.0, 1.0])  # q and -q are the same rotation
        q = [0.0, 0.0, sign * length * math.sin(angle / 2), sign * length * math.cos(angle / 2)]
        got = yaw_of(q)
        assert math.remainder(got - angle, 2 * math.pi) == pytest.approx(0.0, abs=1e-9), (q, got, angle)


def test_yaw_of_a_tilted_quaternion_is_its_heading() -> None:
    """For a rotation with roll and pitch, the yaw of its ZYX angles, whatever the length."""
    roll, pitch, yaw = 0.3, -0.2, 1.1
    cr, sr, cp, sp, cy, sy = (f(a / 2) for a in (roll, pitch, yaw) for f in (math.cos, math.sin))
    q = [sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy]
    assert yaw_of(q) == pytest.approx(yaw)
    assert yaw_of([3.0 * v for v in q]) == pytest.approx(yaw)
