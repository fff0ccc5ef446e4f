"""The base of the drives whose speeds a compiled kernel steps in batches: AckermannDrive and
OmniDrive.

Shared parameters (besides those of :mod:`sim_plugins.odometry` and
:mod:`sim_plugins.velocity_command`): ``body`` (required) and ``enable_odom_tf_pub`` (true: odom
-> body on /tf from the noisy odometry, with an identity ``map`` -> odom on /tf_static).

Each step, before physics, every drive of a class is stepped at once: the commands (read again
only after one changed) go through the subclass's kernel
(:mod:`sim_server.core.motion.drive_kernels`) into the speeds the bodies get in one compiled call
(:class:`~sim_plugins.common.DriveBatch`); odometry of the pose before the step and of the speeds
set is published at ``pub_rate``, or kept in a record and built only when read when nobody
listens. A drive alone runs the same code as a batch of one, so it moves the same either way.

A subclass sets :attr:`PlanarDrive.SLIDES`, reads its keys in :meth:`read_drive` (setting
:attr:`moving_point`), and gives :meth:`initial_state`, :meth:`command_row`, :meth:`constants`
and :meth:`step_kernel`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from sim_server.core.plugins.services import Model, to_body_frame
from sim_server.core.plugins import ModelPlugin, PluginBatch, TimeKeeper, YamlReader
from sim_plugins.common import BatchRecords, DriveBatch, DriveRecord, RecordSlot, body_of
from sim_plugins.odometry import OdometryOffer, OdometryPublisher, odometry_transform, prepare_drive
from sim_plugins.odometry_noise import OdometryNoiseBatch
from sim_plugins.velocity_command import VelocityCommand


class PlanarDrive(OdometryOffer, ModelPlugin):
    """A drive stepped by a compiled kernel, alone or in a batch of its class."""

    #: Whether the drive slides sideways (its command has ``lateral``: linear.y).
    SLIDES = False
    #: Values of the drive's state (speeds, steering) the kernel keeps.
    STATE_SIZE = 3

    @classmethod
    def prepare(cls) -> None:
        """The compiled batch access to Box2D's bodies and the kernels, ready before the first drive."""
        prepare_drive()

    def on_initialize(self, config: YamlReader) -> None:
        # What on_shutdown releases, so that it can after a failure anywhere below.
        self.command: VelocityCommand | None = None
        self.odometry: OdometryPublisher | None = None
        self.odom_tf = None
        body_name = config.get_name("body")
        # Checked before any topic is made: a model without the body leaves nothing behind.
        self.body = body_of(self.model, config, body_name).physics_body
        #: The point (m, body frame) that moves at the drive's forward (and sideways) speed.
        self.moving_point = (0.0, 0.0)
        self.read_drive(config)
        self.command = VelocityCommand(self.context, config, lateral=self.SLIDES)
        self.odometry = OdometryPublisher(self.context, config, body_name)
        self.odom_tf = odometry_transform(self.context, self.odometry, config)
        center_x, center_y = self.body.localCenter
        point_x, point_y = self.moving_point
        self.center_from_moving = (center_x - point_x, center_y - point_y)
        self.origin_from_moving = (-point_x, -point_y)
        #: Where the state lives: a row of the current batch's array (rebound when batches change).
        self._state = np.array([self.initial_state()], dtype=np.float64)
        self._row = 0
        self._alone = PluginBatch([self])

    # ------------------------------------------------------------ what a subclass gives
    def read_drive(self, config: YamlReader) -> None:
        """Read the drive's own keys (before any topic is made) and set :attr:`moving_point`."""
        raise NotImplementedError

    def initial_state(self) -> Sequence[float]:
        """The state at rest (:attr:`STATE_SIZE` values)."""
        return (0.0,) * self.STATE_SIZE

    def command_row(self) -> Sequence[float]:
        """The command as the kernel reads it (one row of the batch's commands)."""
        raise NotImplementedError

    @classmethod
    def constants(cls, plugins: Sequence["PlanarDrive"]) -> tuple[np.ndarray, ...]:
        """The kernel's per-drive constants (limits, geometry) of a batch, as arrays."""
        raise NotImplementedError

    @classmethod
    def step_kernel(cls, batch: "PlanarDriveBatch", dt: float) -> bool:
        """Step ``batch.state`` by ``dt`` s towards ``batch.commands``; fill ``batch.forward``,
        ``batch.lateral`` and ``batch.turn_rate``; whether anything changed (when nothing did,
        the kernel is not called again until a command changes)."""
        raise NotImplementedError

    # ------------------------------------------------------------ state and steps
    @property
    def state(self) -> np.ndarray:
        """The drive's state now (a copy; see the subclass for what each value is)."""
        return self._state[self._row].copy()

    def before_physics_step(self, time: TimeKeeper) -> None:
        """The drive alone: a batch of one (rebuilt when the state moved to a batch of the class)."""
        alone = self._alone.cache.get("drives")
        if alone is not None and alone.state is not self._state:
            self._alone.cache.clear()
        _step_batch(type(self), self._alone, time)

    @classmethod
    def before_physics_step_batch(cls, plugins: PluginBatch, time: TimeKeeper) -> None:
        """Every drive of the class at once: the kernel, the bodies in one compiled call, then
        odometry where due."""
        _step_batch(cls, plugins, time)

    def _report(self, time: TimeKeeper, record: DriveRecord, index: int, tf_wanted: bool) -> None:
        """Publish odometry (and TF when ``tf_wanted``) of drive ``index`` of ``record`` (its
        noise drawn already)."""
        truth, noisy = self.odometry.from_record(record, index)
        self.odometry.keep(truth, noisy, record.serial)
        self.odometry.publish(truth, noisy)
        if tf_wanted:
            self.odom_tf.send(noisy.pose, time.time_ns)

    def on_shutdown(self) -> None:
        if self.odom_tf is not None:
            self.odom_tf.close()
        if self.command is not None:
            self.command.close()
        if self.odometry is not None:
            self.odometry.close()


def _step_batch(drive_class: type[PlanarDrive], plugins: PluginBatch, time: TimeKeeper) -> None:
    """Step ``plugins`` (drives of ``drive_class``) as one batch, kept in their cache."""
    drives = plugins.cache.get("drives")
    if drives is None:
        drives = plugins.cache["drives"] = PlanarDriveBatch(drive_class, plugins)
    drives.step(time)


class PlanarDriveBatch(DriveBatch):
    """The drives of one :class:`PlanarDrive` class stepped together; their states move into
    this batch's :attr:`state` (and back into the next batch's when the members change)."""

    def __init__(self, drive_class: type[PlanarDrive], plugins: Sequence[PlanarDrive]) -> None:
        super().__init__(
            plugins, [plugin.center_from_moving for plugin in plugins], [plugin.origin_from_moving for plugin in plugins]
        )
        self.drive_class = drive_class
        self.state = np.array([plugin.state for plugin in self.plugins], dtype=np.float64).reshape(
            len(self.plugins), drive_class.STATE_SIZE
        )
        for row, plugin in enumerate(self.plugins):
            plugin._state, plugin._row = self.state, row
        self.constants = drive_class.constants(self.plugins)
        #: The noisy odometries' errors, in arrays (None when no drive's odometry is noisy), the
        #: rows of each odometry group's noisy drives by the numbers they draw, the frame of
        #: their twists and their models' placements by hand.
        self.noise: OdometryNoiseBatch | None = None
        self.noisy_rows: list[dict[int, np.ndarray]] = []
        if any(plugin.odometry.noisy for plugin in self.plugins):
            self.noise = OdometryNoiseBatch([plugin.odometry.noise for plugin in self.plugins])
            for group in self._odometry_groups:
                by_count: dict[int, list[int]] = {}
                for index, plugin in group:
                    if plugin.odometry.noisy:
                        by_count.setdefault(plugin.odometry.noise.draws, []).append(index)
                self.noisy_rows.append({count: np.array(rows, dtype=np.int64) for count, rows in by_count.items()})
        self.local_twist = np.array([plugin.odometry.twist_in_local_frame for plugin in self.plugins], dtype=bool)
        self.placements = np.zeros(len(self.plugins), dtype=np.int64)
        self.placements_read = -1
        #: Per odometry group, its newest record, which its drives' odometry reads when asked.
        self.records = BatchRecords(len(self._odometry_groups))
        for number, group in enumerate(self._odometry_groups):
            for index, plugin in group:
                plugin.odometry.attach(RecordSlot(self.records, number, index))
        self.commands = np.zeros((len(self.plugins), len(self.plugins[0].command_row()) if self.plugins else 0))
        #: :attr:`VelocityCommand.changes` when the commands were last read (-1: never).
        self.commands_read = -1
        #: Whether the last kernel step changed nothing: the next gives the same until a command changes.
        self.settled = False
        #: A TF broadcaster of the drives (None without ROS or when none sends TF).
        self.tf = next((plugin.odom_tf for plugin in self.plugins if plugin.odom_tf is not None), None)
        self.topics_listened: Any = None
        topics = [topic for plugin in self.plugins for topic in plugin.odometry.publishers]
        if topics:
            from sim_server.ros.plugin_support import SubscriberCheck

            self.topics_listened = SubscriberCheck(*topics)

    def step(self, time: TimeKeeper) -> None:
        if self.commands_read != VelocityCommand.changes:
            self.commands_read = VelocityCommand.changes
            for row, plugin in enumerate(self.plugins):
                self.commands[row] = plugin.command_row()
            self.settled = False
        if not self.settled:
            self.settled = not self.drive_class.step_kernel(self, time.step_size)
        self.drive()
        due_groups = self.odometry_groups_due(time)
        if not due_groups:
            return
        record = self.record(time.time_ns)
        if self.noise is not None:
            self._draw_noise(record, due_groups)
        self.records.keep(record, due_groups)  # what each drive's odometry reads when asked
        tf_listened = self.tf is not None and self.tf.listened  # asked once for all
        if tf_listened or (self.topics_listened is not None and self.topics_listened()):
            for number in due_groups:
                for i, plugin in self._odometry_groups[number]:
                    plugin._report(time, record, i, tf_listened and plugin.odom_tf is not None)

    def _draw_noise(self, record: DriveRecord, due_groups: list[int]) -> None:
        """Every noisy odometry due: its errors drawn now (whoever reads), into ``record.noisy``."""
        by_count: dict[int, list[np.ndarray]] = {}
        for number in due_groups:
            for count, rows in self.noisy_rows[number].items():
                by_count.setdefault(count, []).append(rows)
        if not by_count:
            return
        if self.placements_read != Model.placements_everywhere:  # somebody placed a model by hand
            self.placements_read = Model.placements_everywhere
            self.placements[:] = [plugin.model.placements for plugin in self.plugins]
        record.noisy = np.zeros((len(self.plugins), 6))
        for count, parts in by_count.items():
            rows = parts[0] if len(parts) == 1 else np.concatenate(parts)
            velocities = record.world_velocities(rows)
            theta = record.poses[rows, 2]
            local = self.local_twist[rows]
            body_vx, body_vy = to_body_frame(velocities[:, 0], velocities[:, 1], np.cos(theta), np.sin(theta))
            vx = np.where(local, body_vx, velocities[:, 0])
            vy = np.where(local, body_vy, velocities[:, 1])
            truth = np.column_stack([record.poses[rows], vx, vy, record.turn_rate[rows]])
            record.noisy[rows] = self.noise.apply(rows, count, truth, self.placements[rows])[0]
