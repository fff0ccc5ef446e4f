"""One stream of the live view: the channels of one Foxglove context (the server's, or an MCAP
file's) and what goes on them, built from the world (see :mod:`sim_server.live.scene`).

A :class:`Feed` sends an update (the scene, the transforms, each listened laser's newest scan)
when asked, and new scans as the lasers make them. Nothing is built for a channel without sinks
(no client subscribed, no file open).

Messages are the Foxglove SDK's well-known ones (protobuf), or, with ``ros2``, ROS 2 messages
where ROS has a type (CDR: ``/tf`` as tf2_msgs/TFMessage, the scans as sensor_msgs/LaserScan and
``/clock`` as rosgraph_msgs/Clock; :mod:`sim_server.live.ros2_messages`), so that ROS tools read
a recording; the scene has no ROS type and stays ``foxglove.SceneUpdate``.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import foxglove
from Box2D import b2
from foxglove.channels import FrameTransformsChannel, LaserScanChannel, SceneUpdateChannel
from foxglove.messages import SceneEntityDeletion, SceneEntityDeletionType, SceneUpdate

from sim_server.live.ros2_messages import (
    MESSAGE_ENCODING, SCHEMA_ENCODING, SCHEMAS, LaserScanCdr, clock_cdr, stamp_cdr, tf_message_cdr,
)
from sim_server.live.scene import (
    CROWD_PREFIX, MODEL_PREFIX, crowd_entity, deletions, frame_transforms, laser_scan, layer_entity, model_entity,
    PlanarTransform, planar_transforms, stamp,
)

if TYPE_CHECKING:
    from sim_server.core.world import World

SCENE_TOPIC = "/scene"
TF_TOPIC = "/tf"
CLOCK_TOPIC = "/clock"


def ros2_channel(topic: str, type_name: str, context: foxglove.Context) -> foxglove.Channel:
    """A channel of the ROS 2 message ``type_name`` (CDR, its ``ros2msg`` schema)."""
    schema = foxglove.Schema(name=type_name, encoding=SCHEMA_ENCODING, data=SCHEMAS[type_name].encode())
    return foxglove.Channel(topic, schema=schema, message_encoding=MESSAGE_ENCODING, context=context)


def _moves(model: Any) -> bool:
    """Whether any body of ``model`` is not static (its footprints are sent on every update)."""
    return any(body.physics_body.type != b2.staticBody for body in model.bodies.values())


class SceneListener(foxglove.ServerListener):
    """Hears of subscriptions: a new subscriber of the scene gets the walls again."""

    def __init__(self) -> None:
        self.new_scene_subscriber = threading.Event()

    def on_subscribe(self, client: Any, channel: Any) -> None:
        if channel.topic == SCENE_TOPIC:
            self.new_scene_subscriber.set()


class Feed:
    """The channels of ``context`` fed from ``world``; ``listener`` (a server's) tells of new
    scene subscribers; ``ros2``: ROS 2 messages where ROS has a type."""

    def __init__(self, world: "World", context: foxglove.Context, listener: SceneListener | None = None,
                 ros2: bool = False) -> None:
        self.world = world
        self._context = context
        self._listener = listener
        self._ros2 = ros2
        self._scene = SceneUpdateChannel(SCENE_TOPIC, context=context)
        self._tf: Any = ros2_channel(TF_TOPIC, "tf2_msgs/msg/TFMessage", context) if ros2 else FrameTransformsChannel(
            TF_TOPIC, context=context)
        self._clock = ros2_channel(CLOCK_TOPIC, "rosgraph_msgs/msg/Clock", context) if ros2 else None
        #: Each laser's plugin and channel (and its serializer, with ``ros2``), by the plugin's id.
        self._scans: dict[int, tuple[Any, Any, LaserScanCdr | None]] = {}
        self._shown: set[str] = set()
        self._walls_version: int | None = None
        #: The sim time (ns) of each laser's last scan sent, by the plugin's id.
        self._sent: dict[int, int] = {}
        #: The lasers somebody listens to, as the last update found them (id, plugin, channel,
        #: serializer with ``ros2``).
        self.listened: list[tuple[int, Any, Any, LaserScanCdr | None]] = []
        #: The models with a body that is not static (sent on every update), by name.
        self._moving: set[str] = set()
        #: Whether models came or left since the lasers and the moving models were found.
        self._dirty = True
        world.add_listener(self)
        self._following = True
        self._lasers()  # their channels are advertised from the start

    def on_model_added(self, model: Any) -> None:
        """A model came: its lasers and bodies are looked at on the next update."""
        self._dirty = True

    def on_model_removed(self, model: Any) -> None:
        """A model leaves: its lasers' channels close on the next update."""
        self._dirty = True

    def close(self) -> None:
        """Stop following the world."""
        if self._following:
            self._following = False
            try:
                self.world.remove_listener(self)
            except ValueError:  # a world closed already forgot its listeners
                pass

    def lasers(self) -> list[tuple[int, Any, Any]]:
        """The lasers fed (the plugin's id, the plugin, its channel)."""
        return [(key, plugin, channel) for key, (plugin, channel, _) in self._scans.items()]

    def has_sinks(self) -> bool:
        """Whether anybody listens to the scene (a client subscribed, a file open)."""
        return self._scene.has_sinks()

    def update(self) -> None:
        """Send the scene, the transforms and the listened lasers' new scans now (each only where
        somebody listens)."""
        world = self.world
        now = int(world.time.time_ns)
        if self._scene.has_sinks():
            self._send_scene(now)
        if self._tf.has_sinks():
            transforms = self.transforms()
            self._tf.log(tf_message_cdr(transforms, now) if self._ros2 else frame_transforms(transforms, now), log_time=now)
        if self._clock is not None and self._clock.has_sinks():
            self._clock.log(clock_cdr(now), log_time=now)
        self._send_scans()

    def transforms(self) -> list[PlanarTransform]:
        """The tree now: ``map`` to every body, each laser's body to its frame (frame names as
        the ROS node's)."""
        lasers = [(p.body_frame_id, p.frame_id, p.origin.x, p.origin.y, p.origin.theta, bool(p.upside_down))
                  for p, _, _ in self._lasers().values()]
        return planar_transforms(self.world.models.values(), lasers)

    def _send_scene(self, now: int) -> None:
        world = self.world
        entities = []
        fresh = self._listener is not None and self._listener.new_scene_subscriber.is_set()
        if fresh or self._walls_version != world.static_geometry_version:
            if self._listener is not None:
                self._listener.new_scene_subscriber.clear()
            entities.extend(layer_entity(layer, now) for layer in world.layers)
            self._walls_version = world.static_geometry_version
            fresh = True
        shown = set()
        for model in world.models.values():
            shown.add(MODEL_PREFIX + model.name)
            if fresh or MODEL_PREFIX + model.name not in self._shown or model.name in self._moving:
                entities.append(model_entity(model, now))
        for crowd in world.crowds:
            shown.add(CROWD_PREFIX + crowd.name)
            entities.append(crowd_entity(crowd.name, crowd.circles(), now))
        gone = self._shown - shown
        self._shown = shown
        if gone:
            self._scene.log(deletions(sorted(gone), now), log_time=now)
        if entities:
            self._scene.log(SceneUpdate(entities=entities), log_time=now)

    def _lasers(self) -> dict[int, tuple[Any, Any, LaserScanCdr | None]]:
        """Every laser of the world with its channel (made on first sight, closed when it
        leaves); looked for again only after models came or left."""
        if not self._dirty:
            return self._scans
        self._dirty = False
        self._moving = {model.name for model in self.world.models.values() if _moves(model)}
        present = {}
        for model in self.world.models.values():
            for plugin in self.world.plugins.plugins_of(model):
                if hasattr(plugin, "scanner") and hasattr(plugin, "topic_name"):
                    present[id(plugin)] = plugin
        for key in list(self._scans):
            if key not in present:
                self._scans.pop(key)[1].close()
                self._sent.pop(key, None)
        for key, plugin in present.items():
            if key not in self._scans:
                topic = "/" + plugin.topic_name.lstrip("/")
                if self._ros2:
                    cdr = LaserScanCdr(plugin.frame_id, plugin.angle_min, plugin.angle_max, plugin.angle_increment, 0.0,
                                       plugin.range)
                    self._scans[key] = (plugin, ros2_channel(topic, "sensor_msgs/msg/LaserScan", self._context), cdr)
                else:
                    self._scans[key] = (plugin, LaserScanChannel(topic, context=self._context), None)
        return self._scans

    def _send_scans(self) -> None:
        """Find which lasers somebody listens to (:attr:`listened`), and send their new scans."""
        self.listened = [(key, *entry) for key, entry in self._lasers().items() if entry[1].has_sinks()]
        self.send_new_scans()

    def send_new_scans(self) -> None:
        """The scans the listened lasers made since each one's last scan sent, once each."""
        for key, plugin, channel, cdr in self.listened:
            made = plugin.last_scan_ns
            if made <= self._sent.get(key, -1) or plugin.last_ranges is None:
                continue
            self._sent[key] = made
            if cdr is not None:
                intensities = plugin.last_intensities
                channel.log(cdr.serialize(stamp_cdr(made), plugin.last_ranges.astype("<f4").tobytes(),
                                          None if intensities is None else intensities.astype("<f4").tobytes()), log_time=made)
            else:
                channel.log(laser_scan(plugin.last_ranges, plugin.scanner.local_angles, plugin.frame_id, made), log_time=made)

    def restart(self) -> None:
        """The next update sends the whole scene again (a new file of a recording begins)."""
        self._shown = set()
        self._walls_version = None

    def use_world(self, world: "World") -> None:
        """Feed ``world`` from now on: listeners are told to delete everything they were shown,
        the new walls follow."""
        self.listened = []
        for _, channel, _ in self._scans.values():
            channel.close()
        self._scans.clear()
        self._sent.clear()
        self._shown = set()
        self._walls_version = None
        self.close()
        self.world = world
        world.add_listener(self)
        self._following = True
        self._dirty = True
        if self._scene.has_sinks():
            now = int(world.time.time_ns)
            everything = SceneEntityDeletion(timestamp=stamp(now), type=SceneEntityDeletionType.All)
            self._scene.log(SceneUpdate(deletions=[everything]), log_time=now)
        self._lasers()
