"""Marker messages as rclpy objects: the fixed frame, markers to add and delete, a DELETEALL.

The serialized markers (:mod:`.wire`) are made from these, and the wire format's self-check
compares its bytes with rclpy's serialization of them; so they come first and import nothing
of the package.
"""

from __future__ import annotations

import math

from visualization_msgs.msg import Marker, MarkerArray

#: The fixed frame: frame of the layers and of every marker not locked to a body frame.
VIZ_FRAME = "map"

Color = tuple[float, float, float, float]


def set_pose(marker: Marker, x: float, y: float, theta: float) -> None:
    pose = marker.pose
    pose.position.x, pose.position.y, pose.position.z = x, y, 0.0
    pose.orientation.x = pose.orientation.y = 0.0
    pose.orientation.z, pose.orientation.w = math.sin(0.5 * theta), math.cos(0.5 * theta)


def new_marker(namespace: str, marker_id: int, marker_type: int, rgba: Color, frame: str = VIZ_FRAME) -> Marker:
    """A marker to add, with an identity pose."""
    marker = Marker()
    marker.header.frame_id = frame
    marker.ns = namespace
    marker.id = marker_id
    marker.type = marker_type
    marker.action = Marker.ADD
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = (float(v) for v in rgba)
    marker.pose.orientation.w = 1.0
    return marker


def delete_marker(namespace: str, marker_id: int) -> Marker:
    marker = Marker()
    marker.header.frame_id = VIZ_FRAME
    marker.ns = namespace
    marker.id = marker_id
    marker.action = Marker.DELETE
    return marker


def delete_all_markers() -> MarkerArray:
    """A MarkerArray that removes every marker of its topic in RViz."""
    marker = Marker()
    marker.header.frame_id = VIZ_FRAME
    marker.action = Marker.DELETEALL
    return MarkerArray(markers=[marker])
