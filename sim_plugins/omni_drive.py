"""OmniDrive: a holonomic base (omnidirectional or mecanum wheels) with odometry and TF.

Parameters (besides those of :mod:`sim_plugins.planar_drive`, :mod:`sim_plugins.odometry` and
:mod:`sim_plugins.velocity_command`):

* ``linear_dynamics``, ``lateral_dynamics`` and ``angular_dynamics``
  ({acceleration_limit, deceleration_limit, velocity_limit}; 0 = none): the limits of the
  forward speed (m/s), the sideways speed (m/s) and the turn rate (rad/s), each on its own.
* ``max_wheel_speed`` (m/s at the wheel's rim, 0 = none), ``wheelbase`` and ``track_width``
  (m, 0): a mecanum base whose wheels sit at (+-wheelbase/2, +-track_width/2) turns its
  fastest wheel at ``abs(vx) + abs(vy) + (wheelbase + track_width) / 2 abs(wz)``; a command asking more
  is scaled down as a whole (its direction kept), and so is the velocity while it changes.

cmd_vel's ``linear.x`` (forward), ``linear.y`` (to the left, m/s) and ``angular.z`` (rad/s)
move the body's origin; the base slides without slipping further. :attr:`OmniDrive.state` is
(forward m/s, sideways m/s, turn rate rad/s).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from sim_server.core.plugins import YamlReader, limits as bounds
from sim_server.core.plugins.services import drive_kernels
from sim_plugins.common import read_dynamics
from sim_plugins.planar_drive import PlanarDrive, PlanarDriveBatch


class OmniDrive(PlanarDrive):
    """Drives a body that moves in any direction while it turns."""

    SLIDES = True

    def read_drive(self, config: YamlReader) -> None:
        self.axis_limits = tuple(
            read_dynamics(config, key) for key in ("linear_dynamics", "lateral_dynamics", "angular_dynamics")
        )
        self.max_wheel_speed = config.get_float("max_wheel_speed", 0.0, within=bounds.DYNAMICS_LIMIT)
        wheelbase = config.get_float("wheelbase", 0.0, within=bounds.DISTANCE)
        track_width = config.get_float("track_width", 0.0, within=bounds.DISTANCE)
        #: lx + ly of the mecanum wheels (m): half the wheelbase plus half the track.
        self.half_extents_sum = 0.5 * (wheelbase + track_width)

    def command_row(self) -> Sequence[float]:
        command = self.command
        return command.linear, command.lateral, command.angular

    @classmethod
    def constants(cls, plugins: Sequence["OmniDrive"]) -> tuple[np.ndarray, ...]:
        count = len(plugins)
        return (
            np.array([[limits.as_row() for limits in plugin.axis_limits] for plugin in plugins], dtype=np.float64).reshape(
                count, 3, 3
            ),
            np.array([(plugin.half_extents_sum, plugin.max_wheel_speed) for plugin in plugins], dtype=np.float64).reshape(
                count, 2
            ),
        )

    @classmethod
    def step_kernel(cls, batch: PlanarDriveBatch, dt: float) -> bool:
        limits, wheels = batch.constants
        return drive_kernels.step_omni(
            batch.commands, limits, wheels, batch.state, dt, batch.forward, batch.lateral, batch.turn_rate
        )
