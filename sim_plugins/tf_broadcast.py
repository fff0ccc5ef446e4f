"""Publishing TF the way tf2 does, without needing tf2_ros (not available from PyPI).

``/tf`` is reliable and volatile with a deep queue, ``/tf_static`` reliable and transient local
(latched): the QoS of tf2_ros's TransformBroadcaster and StaticTransformBroadcaster. One pair of
publishers serves every plugin of a node.
"""

from __future__ import annotations

import math
import weakref
from typing import Iterable

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from sim_server.core.geometry import Pose2D
from sim_server.ros.conversions import set_stamp, time_msg
from sim_server.ros.subscriber_check import SubscriberCheck

TF_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE)
TF_STATIC_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)


def update_transform(msg: TransformStamped, pose: Pose2D, stamp_ns: int) -> TransformStamped:
    """Re-use a TransformStamped for a new planar pose and stamp (no allocation)."""
    set_stamp(msg.header, stamp_ns)
    translation, rotation = msg.transform.translation, msg.transform.rotation
    translation.x, translation.y = pose.x, pose.y
    half = 0.5 * pose.theta
    rotation.z, rotation.w = math.sin(half), math.cos(half)
    return msg


def transform(parent: str, child: str, pose: Pose2D, stamp_ns: int) -> TransformStamped:
    """A TransformStamped placing ``child`` at the planar ``pose`` in ``parent``."""
    msg = TransformStamped()
    msg.header.frame_id = parent
    msg.header.stamp = time_msg(stamp_ns)
    msg.child_frame_id = child
    msg.transform.translation.x = pose.x
    msg.transform.translation.y = pose.y
    msg.transform.rotation.z = math.sin(0.5 * pose.theta)
    msg.transform.rotation.w = math.cos(0.5 * pose.theta)
    return msg


class TfBroadcaster:
    """Shared /tf and /tf_static publishers of one node (see :func:`broadcaster_for`)."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._tf = node.create_publisher(TFMessage, "/tf", TF_QOS)
        self._tf_listened = SubscriberCheck(self._tf)
        self._static = node.create_publisher(TFMessage, "/tf_static", TF_STATIC_QOS)
        self._static_transforms: dict[str, TransformStamped] = {}
        self._static_users: dict[str, int] = {}
        self._flush_timer = None

    @property
    def listened(self) -> bool:
        """Whether anybody subscribes to /tf (publishing to nobody is skipped)."""
        return self._tf_listened()

    def send(self, transforms: Iterable[TransformStamped]) -> None:
        """Publish changing transforms on /tf (nothing while nobody listens)."""
        if not self.listened:
            return
        message = TFMessage(transforms=list(transforms))
        if message.transforms:
            self._tf.publish(message)

    def send_static(self, transforms: Iterable[TransformStamped]) -> None:
        """Latch transforms that never change on /tf_static (all of them, as tf2 does)."""
        for item in transforms:
            self._static_transforms[item.child_frame_id] = item
            self._static_users[item.child_frame_id] = self._static_users.get(item.child_frame_id, 0) + 1
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        """Latch the static transforms once, at the next spin, however many changed before it
        (a world of a thousand lasers would otherwise publish a thousand growing lists)."""
        if self._flush_timer is None:
            self._flush_timer = self._node.create_timer(0.0, self._flush)

    def _flush(self) -> None:
        if self._flush_timer is not None:
            self._node.destroy_timer(self._flush_timer)
            self._flush_timer = None
        if self._node.context.ok():
            self._static.publish(TFMessage(transforms=list(self._static_transforms.values())))

    def remove_static(self, child_frames: Iterable[str]) -> None:
        """Forget static transforms (their model left) and re-latch the rest.

        A transform sent by several plugins (a shared odom frame, say) stays until all of them
        removed it.
        """
        changed = False
        for child in child_frames:
            users = self._static_users.get(child, 0) - 1
            if users > 0:
                self._static_users[child] = users
                continue
            self._static_users.pop(child, None)
            changed |= self._static_transforms.pop(child, None) is not None
        if changed and self._node.context.ok():  # nothing to tell once ROS is shut down
            self._schedule_flush()


_BROADCASTERS: "weakref.WeakKeyDictionary[Node, TfBroadcaster]" = weakref.WeakKeyDictionary()


def broadcaster_for(node: Node) -> TfBroadcaster:
    """The node's shared TF broadcaster (created on first use)."""
    broadcaster = _BROADCASTERS.get(node)
    if broadcaster is None:
        broadcaster = TfBroadcaster(node)
        _BROADCASTERS[node] = broadcaster
    return broadcaster
