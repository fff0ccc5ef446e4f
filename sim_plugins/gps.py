"""Gps: sensor_msgs/NavSatFix of a body's position, from the world's ENU frame to WGS-84.

Parameters: ``body`` (required), ``topic`` (``gps/fix``), ``frame`` (the plugin's name),
``broadcast_tf`` (true: body -> gps on /tf_static), ``update_rate`` (Hz, 10), ``ref_lat`` and
``ref_lon`` (degrees of the world origin, 0; the latitude within
:data:`~sim_server.core.limits.GPS_REFERENCE_LATITUDE`, off the poles), ``origin`` ([x, y, yaw]
of the antenna on the body).
World x points east and y north (REP 103/105). The fix is always valid (STATUS_FIX, GPS service)
and, as there is no noise model, its covariance is reported as zero and known.
"""

from __future__ import annotations

from sim_server.core.plugins import ModelPlugin, Pose2D, TimeKeeper, UpdateTimer, YamlReader, limits as bounds
from sim_server.core.plugins.services import EnuToWgs84
from sim_plugins.common import body_of, sensor_parent_frame

DEFAULT_GPS_RATE = 10.0
GPS_QUEUE_DEPTH = 10


class Gps(ModelPlugin):
    """Publishes NavSatFix at ``update_rate``."""

    def on_initialize(self, config: YamlReader) -> None:
        body_name = config.get_name("body")
        topic = config.get_topic("topic", "gps/fix")
        frame = config.get_frame("frame", self.context.name)
        broadcast_tf = config.get_bool("broadcast_tf", True)
        self.timer = UpdateTimer(config.get_rate("update_rate", DEFAULT_GPS_RATE))
        self.converter = EnuToWgs84(
            config.get_float("ref_lat", 0.0, within=bounds.GPS_REFERENCE_LATITUDE),
            config.get_float("ref_lon", 0.0, within=bounds.LONGITUDE),
        )
        self.origin = config.get_pose("origin", Pose2D())
        self.body = body_of(self.model, config, body_name)
        self.frame_id = self.context.frame(frame)
        body_frame_id = sensor_parent_frame(self.context, config, body_name, self.frame_id, broadcast_tf)
        #: The last fix (latitude, longitude) in degrees, for in-process use.
        self.last_fix: tuple[float, float] | None = None
        self._publisher = None
        node = self.context.ros_node
        if node is not None:
            from sensor_msgs.msg import NavSatFix, NavSatStatus

            from sim_server.ros.plugin_support import SubscriberCheck, broadcaster_for, time_msg, transform

            self._time_msg = time_msg
            self._publisher = node.create_publisher(NavSatFix, self.context.topic(topic), GPS_QUEUE_DEPTH)
            self._listened = SubscriberCheck(self._publisher)
            message = NavSatFix()
            message.header.frame_id = self.frame_id
            message.status.status = NavSatStatus.STATUS_FIX
            message.status.service = NavSatStatus.SERVICE_GPS
            message.position_covariance_type = NavSatFix.COVARIANCE_TYPE_KNOWN
            self._message = message
            self._tf = broadcaster_for(node) if broadcast_tf else None
            if self._tf is not None:
                self._tf.send_static(
                    [transform(body_frame_id, self.frame_id, self.origin, self.context.world.time.time_ns)],
                    owner=self.context.describe(),
                )

    def fix(self) -> tuple[float, float]:
        """(latitude, longitude) in degrees of the antenna now."""
        antenna = self.body.pose.compose(self.origin)
        return self.converter.convert(antenna.x, antenna.y)

    def before_physics_step(self, time: TimeKeeper) -> None:
        if not self.timer.check(time):
            return
        publisher = self._publisher
        if publisher is not None and not self._listened():
            return
        self.last_fix = self.fix()
        if publisher is not None:
            message = self._message
            message.header.stamp = self._time_msg(time.time_ns)
            message.latitude, message.longitude = self.last_fix
            message.altitude = 0.0
            publisher.publish(message)

    def on_shutdown(self) -> None:
        node = self.context.ros_node
        if node is not None and self._publisher is not None:
            node.destroy_publisher(self._publisher)
            self._publisher = None
            if self._tf is not None:
                self._tf.remove_static([self.frame_id], owner=self.context.describe())
