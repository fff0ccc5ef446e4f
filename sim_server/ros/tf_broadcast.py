"""Publishing TF the way tf2 does, without needing tf2_ros (not available from PyPI).

``/tf`` is reliable and volatile with a deep queue, ``/tf_static`` reliable and transient local
(latched): the QoS of tf2_ros's TransformBroadcaster and StaticTransformBroadcaster. One pair of
publishers serves every plugin of a node.

One parent per frame: tf2 keeps one parent per child frame, so a frame sent by two plugins with
different parents (a DiffDrive's ``odom -> base`` and a ModelTfPublisher's ``map -> base``, say)
makes it flip between them and flood ``TF_REPEATED_DATA`` warnings. Each plugin *claims* the
(child, parent) pairs it will send, once, when it sets up its messages
(:meth:`TfBroadcaster.claim`; :meth:`TfBroadcaster.send_static` claims what it latches), and
releases them when its model leaves (:meth:`TfBroadcaster.release`). A child claimed by two
plugins with different parents, or by two plugins that both send it on ``/tf``, is reported once
with a warning naming the frame, both parents and both plugins. Sending costs nothing more:
nothing is checked per transform.
"""

from __future__ import annotations

import logging
import math
import weakref
from typing import Iterable

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from sim_server.core.geometry import Pose2D
from sim_server.ros.conversions import set_stamp
from sim_server.ros.subscriber_check import SubscriberCheck

TF_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE)
TF_STATIC_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)

LOGGER = logging.getLogger("sim_server")


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
    msg.child_frame_id = child
    return update_transform(msg, pose, stamp_ns)


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
        #: child frame -> {owner: (parent frame, static)}: who said it sends the child, and how.
        self._claims: dict[str, dict[str, tuple[str, bool]]] = {}
        #: owner -> the child frames it claimed (to release them all when it leaves).
        self._owned: dict[str, set[str]] = {}
        #: Child frames already reported as conflicting (one warning each, not one per step).
        self._warned: set[str] = set()

    # ------------------------------------------------------------------ one parent per frame
    def claim(self, child: str, parent: str, owner: str, *, static: bool = False) -> None:
        """Declare that ``owner`` sends ``child`` with parent ``parent`` (on /tf_static when
        ``static``, else on /tf). Call it once, when the messages are made, not per send.

        ``owner`` names the sender in messages and is the key :meth:`release` takes; a plugin
        passes ``self.context.describe()`` (``plugin "drive" (type "DiffDrive") of model "bot"``).
        When another owner already claimed ``child`` with a different parent, or both send it
        on /tf, a warning names the frame, both parents and both owners, once per child frame.
        Two static claims with the same parent (several models sharing an identity ``map ->
        odom``) are no conflict. Claims stay until released, also of a plugin disabled at run
        time (its model still holds the frames).
        """
        claims = self._claims.get(child)
        if claims is None:
            self._claims[child] = {owner: (parent, static)}
        else:
            if child not in self._warned:
                for other, (other_parent, other_static) in claims.items():
                    if other != owner and (other_parent != parent or not (static and other_static)):
                        self._warned.add(child)
                        self._warn(child, other, other_parent, other_static, owner, parent, static)
                        break
            claims[owner] = (parent, static)
        owned = self._owned.get(owner)
        if owned is None:
            self._owned[owner] = {child}
        else:
            owned.add(child)

    def release(self, owner: str, children: Iterable[str] | None = None) -> None:
        """Forget the claims of ``owner`` (all of them, or those on ``children``): its model left.

        A frame whose claims are down to one may be reported again if a new conflict arises
        (a model spawned again under a name whose frames collide)."""
        owned = self._owned.get(owner)
        if not owned:
            self._owned.pop(owner, None)
            return
        for child in list(owned) if children is None else [c for c in children if c in owned]:
            owned.discard(child)
            claims = self._claims.get(child)
            if claims is None:
                continue
            claims.pop(owner, None)
            if not claims:
                del self._claims[child]
            if len(claims) <= 1:
                self._warned.discard(child)
        if not owned:
            del self._owned[owner]

    def claims_of(self, child: str) -> dict[str, tuple[str, bool]]:
        """``{owner: (parent, static)}`` of every live claim on ``child`` (a copy)."""
        return dict(self._claims.get(child, {}))

    def frames_of(self, owner: str) -> list[str]:
        """The child frames ``owner`` claims now."""
        return list(self._owned.get(owner, ()))

    @property
    def claimed_frames(self) -> list[str]:
        """Every child frame some owner claims now."""
        return list(self._claims)

    @staticmethod
    def _warn(child: str, first: str, first_parent: str, first_static: bool,
              second: str, second_parent: str, second_static: bool) -> None:
        def topic(static: bool) -> str:
            return "/tf_static" if static else "/tf"

        if first_parent != second_parent:
            LOGGER.warning(
                'TF frame "%s" has two parents: "%s" from %s (%s) and "%s" from %s (%s); tf2 keeps '
                "one parent per frame, so it would flip between them (TF_REPEATED_DATA). Give the "
                "frame one parent (a drive's odom -> body and a ModelTfPublisher's map -> body: "
                "publish_tf_world: false, as REP 105 has map -> odom -> body)",
                child, first_parent, first, topic(first_static), second_parent, second, topic(second_static),
            )
        else:
            LOGGER.warning(
                'TF frame "%s" (parent "%s") is sent by two plugins: %s (%s) and %s (%s); tf2 '
                "would take either's pose (TF_REPEATED_DATA). Let one plugin publish it (or give "
                "the models namespaces, so that their frames differ)",
                child, first_parent, first, topic(first_static), second, topic(second_static),
            )

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

    def send_static(self, transforms: Iterable[TransformStamped], owner: str) -> None:
        """Latch transforms that never change on /tf_static (all of them, as tf2 does), and
        :meth:`claim` them for ``owner`` (the sending plugin's ``context.describe()``)."""
        for item in transforms:
            self._static_transforms[item.child_frame_id] = item
            self._static_users[item.child_frame_id] = self._static_users.get(item.child_frame_id, 0) + 1
            self.claim(item.child_frame_id, item.header.frame_id, owner, static=True)
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

    def remove_static(self, child_frames: Iterable[str], owner: str) -> None:
        """Forget static transforms (their model left) and re-latch the rest; ``owner``'s claims
        on them go too (``owner`` as in :meth:`send_static`).

        A transform sent by several plugins (a shared odom frame, say) stays until all of them
        removed it.
        """
        child_frames = list(child_frames)
        self.release(owner, child_frames)
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


def existing_broadcaster(node: Node) -> TfBroadcaster | None:
    """The node's TF broadcaster if a plugin made one, else None (nothing is created)."""
    return _BROADCASTERS.get(node)


def broadcaster_for(node: Node) -> TfBroadcaster:
    """The node's shared TF broadcaster (created on first use)."""
    broadcaster = _BROADCASTERS.get(node)
    if broadcaster is None:
        broadcaster = TfBroadcaster(node)
        _BROADCASTERS[node] = broadcaster
    return broadcaster
