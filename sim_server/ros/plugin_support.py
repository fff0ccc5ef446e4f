"""The ROS face of the plugin API: what a plugin that publishes on ROS imports, in one place (the
core face is :mod:`sim_server.core.plugins`). Import it only where ``context.ros_node`` is not None
(inside ``_setup_ros``, say): a plugin must also run without ROS.

Publishing:
    :class:`SubscriberCheck` (whether a publisher has subscribers, asked of the middleware at a
    bounded rate: publish only then), :func:`set_stamp` and :func:`time_msg` (sim time, ns, as a
    header's stamp), :func:`set_pose_msg` (a planar pose into ``geometry_msgs/Pose``).
TF:
    :func:`broadcaster_for` (the node's one broadcaster: ``send``, ``send_static`` with an owner,
    ``claim`` and ``release`` a frame), :func:`transform` and :func:`update_transform` (a planar
    pose as ``geometry_msgs/TransformStamped``).
Fast writers (no message object per message, straight to the publisher's ``publish_raw``):
    :class:`LaserScanCdr`, :func:`stamp_cdr`, :func:`clock_cdr`, :func:`odometry_cdr`,
    :func:`image_cdr` (:mod:`sim_server.core.format.ros2_cdr`, ROS-free).

Units: sim time in integer nanoseconds, metres, radians.
"""

from sim_server.core.format.ros2_cdr import LaserScanCdr, clock_cdr, image_cdr, odometry_cdr, stamp_cdr
from sim_server.ros.conversions import set_pose_msg, set_stamp, time_msg
from sim_server.ros.subscriber_check import SubscriberCheck
from sim_server.ros.tf_broadcast import broadcaster_for, transform, update_transform

__all__ = [
    "LaserScanCdr",
    "SubscriberCheck",
    "broadcaster_for",
    "clock_cdr",
    "image_cdr",
    "odometry_cdr",
    "set_pose_msg",
    "set_stamp",
    "stamp_cdr",
    "time_msg",
    "transform",
    "update_transform",
]
