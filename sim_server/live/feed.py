"""One stream of the live view: the channels of one Foxglove context (the server's, or an MCAP
file's) and what goes on them, built from the world (see :mod:`sim_server.live.scene`).

A :class:`Feed` sends an update (the scene, the transforms, the sensors' newest data: see
:mod:`sim_server.live.sensors`) when asked, and new scans and pictures as the sensors make them.
Nothing is built for a channel without sinks (no client subscribed, no file open).

Messages are the Foxglove SDK's well-known ones (protobuf), or, with ``ros2``, ROS 2 messages
where ROS has a type (CDR: ``/tf`` as tf2_msgs/TFMessage, scans as sensor_msgs/LaserScan,
pictures as sensor_msgs/Image and ``/clock`` as rosgraph_msgs/Clock;
:mod:`sim_server.core.format.ros2_cdr`), so that ROS tools read a recording; the scene has no ROS
type and stays ``foxglove.SceneUpdate``. Odometry is nav_msgs/Odometry either way.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import foxglove
from Box2D import b2
from foxglove.channels import FrameTransformsChannel, SceneUpdateChannel
from foxglove.messages import SceneEntityDeletion, SceneEntityDeletionType, SceneUpdate

from sim_server.core.format.entity_names import frame_id
from sim_server.live.discovery import world_plugins
from sim_server.core.format.ros2_cdr import clock_cdr, tf_message_cdr
from sim_server.live.scene import (
    WORLD_FRAME, PlanarTransform, crowd_entity, frame_transforms, layer_entity, model_entity, planar_transforms, stamp,
)
from sim_server.live.sensors import Sensors, Source, ros2_channel

if TYPE_CHECKING:
    from sim_server.core.world import World

SCENE_TOPIC = "/scene"
#: The still part of the scene: the walls and the models whose bodies are all static.
STATIC_SCENE_TOPIC = "/scene/static"
#: Topics remembered as newly subscribed between two updates (a flood of subscriptions is
#: bounded by the channels there are anyway).
MAX_FRESH_TOPICS = 4096
TF_TOPIC = "/tf"
CLOCK_TOPIC = "/clock"


def shared_frame_prefixes(models: list[Any]) -> dict[str, str]:
    """``{model: "<model>/"}`` for each model with a body frame another model has too (the ROS
    rule names frames by namespace, and models without one share them), else ``{}`` for it."""
    owners: dict[str, set[str]] = {}
    for model in models:
        for body in model.bodies:
            owners.setdefault(frame_id(model.namespace, body), set()).add(model.name)
    shared = {name for names in owners.values() if len(names) > 1 for name in names}
    return {name: f"{name}/" for name in sorted(shared)}


def _moves(model: Any) -> bool:
    """Whether any body of ``model`` is not static (its footprints are sent on every update)."""
    return any(body.physics_body.type != b2.staticBody for body in model.bodies.values())


class SceneListener(foxglove.ServerListener):
    """Hears of subscriptions: a new subscriber of the still scene gets it again, one of a
    sensor its newest data (even while the world is paused)."""

    def __init__(self) -> None:
        self.new_scene_subscriber = threading.Event()
        #: Set when anybody subscribed to anything since the last update.
        self.new_subscriber = threading.Event()
        self._lock = threading.Lock()
        self._topics: set[str] = set()

    def on_subscribe(self, client: Any, channel: Any) -> None:
        if channel.topic == STATIC_SCENE_TOPIC:
            self.new_scene_subscriber.set()
        with self._lock:
            if len(self._topics) < MAX_FRESH_TOPICS:
                self._topics.add(channel.topic)
        self.new_subscriber.set()

    def fresh_topics(self) -> set[str]:
        """The topics subscribed to since the last call."""
        with self._lock:
            topics, self._topics = self._topics, set()
        self.new_subscriber.clear()
        return topics


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
        self._static_scene = SceneUpdateChannel(STATIC_SCENE_TOPIC, context=context)
        self._tf: Any = ros2_channel(TF_TOPIC, "tf2_msgs/msg/TFMessage", context) if ros2 else FrameTransformsChannel(
            TF_TOPIC, context=context)
        self._clock = ros2_channel(CLOCK_TOPIC, "rosgraph_msgs/msg/Clock", context) if ros2 else None
        #: Each model's prefix of its frames: "<model>/" where models would share a frame name
        #: (models without a namespace: copies of a learning world, say), else "".
        self._prefixes: dict[str, str] = {}
        self._sensors = Sensors(context, ros2, self.frame)
        #: What the still scene was last sent of: the walls' version and the still models.
        self._static_sent: tuple[int, frozenset[str]] | None = None
        #: The sensors somebody listens to, as the last update found them.
        self.listened: list[Source] = []
        #: The models with a body that is not static (sent on every update), by name.
        self._moving: set[str] = set()
        #: Whether models came or left since the sensors and the moving models were found.
        self._dirty = True
        world.add_listener(self)
        self._following = True
        self._find()  # the sensors' channels are advertised from the start

    def on_model_added(self, model: Any) -> None:
        """A model came: its sensors and bodies are looked at on the next update."""
        self._dirty = True

    def on_model_removed(self, model: Any) -> None:
        """A model leaves: its sensors' channels close on the next update."""
        self._dirty = True

    def close(self) -> None:
        """Stop following the world."""
        if self._following:
            self._following = False
            try:
                self.world.remove_listener(self)
            except ValueError:  # a world closed already forgot its listeners
                pass

    def sensors(self) -> list[Source]:
        """The sensors fed, each with its channel."""
        return self._sensors.sources

    def has_sinks(self) -> bool:
        """Whether anybody listens to the scene (a client subscribed, a file open): the
        benchmark (``bench/live_view.py``) waits for its client with it."""
        return self._scene.has_sinks() or self._static_scene.has_sinks()

    def update(self) -> None:
        """Send the scene, the transforms, the clock and the listened sensors' newest data now
        (each only where somebody listens)."""
        world = self.world
        now = int(world.time.time_ns)
        self._send_scene(now)
        if self._tf.has_sinks():
            transforms = self.transforms()
            self._tf.log(tf_message_cdr(transforms, now) if self._ros2 else frame_transforms(transforms, now), log_time=now)
        if self._clock is not None and self._clock.has_sinks():
            self._clock.log(clock_cdr(now), log_time=now)
        self._find()
        fresh = self._listener.fresh_topics() if self._listener is not None else set()
        self.listened = [source for source in self._sensors.sources if source.channel.has_sinks()]
        for source in self.listened:
            if source.topic in fresh:
                source.sent_ns = -1  # a new subscriber gets the newest data, however old
            source.send_new()

    def transforms(self) -> list[PlanarTransform]:
        """The tree now: ``map`` to every body, the sensors' frames (frame names as the ROS
        node's)."""
        self._find()
        return planar_transforms(self.world.models.values(), self._sensors.transforms(), self._prefixes)

    def _send_scene(self, now: int) -> None:
        """Each scene topic's message holds the whole of its part (after deleting all it showed
        before), so that the newest message alone is the scene: a new subscriber, or a player
        seeking in a recording (which shows each topic's newest message), needs no other. The
        moving part goes with every update, the still part when it changes or is subscribed to."""
        world = self.world
        self._find()
        clear = [SceneEntityDeletion(timestamp=stamp(now), type=SceneEntityDeletionType.All)]
        if self._static_scene.has_sinks():
            still = frozenset(name for name in world.models if name not in self._moving)
            sent = (world.static_geometry_version, still)
            fresh = self._listener is not None and self._listener.new_scene_subscriber.is_set()
            if fresh or sent != self._static_sent:
                if self._listener is not None:
                    self._listener.new_scene_subscriber.clear()
                self._static_sent = sent
                entities = [layer_entity(layer, now) for layer in world.layers]
                entities += [model_entity(world.models[name], now) for name in sorted(still)]
                self._static_scene.log(SceneUpdate(deletions=clear, entities=entities), log_time=now)
        if self._scene.has_sinks():
            entities = [model_entity(model, now) for model in world.models.values() if model.name in self._moving]
            entities += [crowd_entity(crowd.name, crowd.circles(), now) for crowd in world.crowds]
            self._scene.log(SceneUpdate(deletions=clear, entities=entities), log_time=now)

    def frame(self, plugin: Any, frame: str) -> str:
        """The name the view gives ``frame`` of ``plugin``'s model (the ROS name, after the
        model's prefix; the world frame stays)."""
        if frame == WORLD_FRAME:
            return frame
        model = getattr(plugin, "model", None)
        return (self._prefixes.get(model.name, "") if model is not None else "") + frame

    def _find(self) -> None:
        """Find the sensors, the moving models and the frames' prefixes again, after models
        came or left (a change of prefixes makes the sensors' channels anew)."""
        if self._dirty:
            self._dirty = False
            models = list(self.world.models.values())
            self._moving = {model.name for model in models if _moves(model)}
            prefixes = shared_frame_prefixes(models)
            if prefixes != self._prefixes:
                self._prefixes = prefixes
                self._sensors.close()
            self._sensors.find(world_plugins(self.world))

    def send_new_scans(self) -> None:
        """The scans and pictures the listened sensors made since the last sent, once each."""
        for source in self.listened:
            if source.streamed:
                source.send_new()

    def restart(self) -> None:
        """The next update sends the still scene again (a new file of a recording begins)."""
        self._static_sent = None

    def use_world(self, world: "World") -> None:
        """Feed ``world`` from now on: listeners get its scene at once (replacing the old)."""
        self.listened = []
        self._sensors.close()
        self.close()
        self.world = world
        world.add_listener(self)
        self._following = True
        self._dirty = True
        self._static_sent = None
        self._send_scene(int(world.time.time_ns))  # both parts replaced by the new world's
