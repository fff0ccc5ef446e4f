"""The publisher: every layer and model on the all-layers and all-models topics and on topics of
their own (listed in the package doc), kept up to date as the world changes.

Full state, not deltas. A transient-local topic of depth 1 keeps only its last message, and that
message is all a subscriber joining late receives; a reliable subscriber that falls behind may
also skip messages. So every message on ``~/debug/layers`` and ``~/debug/models`` is the complete
current state: an ADD for every marker of every entity, plus, for ``~/debug/models``, a DELETE
for each marker of the models removed (deleted, or streamed out by levels) within the last
:data:`TOMBSTONE_TIME` wall seconds. A subscriber that was there sees those markers go; one that
joins later never had them. Only the removed model's markers go (DELETE by namespace and id, not
a DELETEALL). The models' message is sent in the refresh rounds (``viz_pub_rate``) in which models
came or went, and, while somebody subscribes, in rounds in which a marker drawn in ``map`` moved
(for motion alone at most :data:`MAX_MARKERS_PER_SECOND` markers a second: a world of thousands
of markers gets fewer, larger steps instead of swamping RViz, which redraws every marker it gets).

Costs (2-core development machine, shared): a model's markers take about 25 us to make (its
per-model publisher about 1 ms more with a thousand models). With 1,000 robots whose bodies are
on TF a refresh round costs about 0.02 ms: nothing moves in ``map``, nothing is sent. With 1,000
moving robots without TF it costs 7-20 ms (reading 1,000 Box2D poses, rewriting 2,000 markers,
sending 0.5 MB), so rounds are skipped as needed to keep them under :data:`MAX_REFRESH_SHARE`
of the wall time. Nothing is re-posed while nobody subscribes. (Frame-locked markers ride along
in every message, as a full state must; a world mixing thousands of them with moving map-frame
ones is where the marker budget above slows the messages down.)

Models come and go often with level streaming, and creating a publisher costs about 0.2 ms: a
removed model of a level keeps its per-model publisher, with its DELETEALL latched, for
:data:`PARK_TIME` seconds (at most :data:`MAX_PARKED` of them), so that the model, coming back by
the same name, gets it again. A deleted model's publisher goes after :data:`RETIRE_TIME`
(unless a model of the same name takes it back before). The topic list is republished once per
round of changes, not once per model.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Callable, Iterable

from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from visualization_msgs.msg import MarkerArray

from sim_msgs.msg import DebugTopicList
from sim_server.core.physics.layer import Layer
from sim_server.core.physics.model import Model
from sim_server.core.world import World
from sim_server.ros.names import ALL_LAYERS_TOPIC, ALL_MODELS_TOPIC, TopicTokens
from sim_server.ros.parameter_spec import DEFAULT_MARKER_LINE_WIDTH
from sim_server.ros.subscriber_check import SubscriberCheck
from sim_server.ros.visualization.frame_lock import FrameLocks
from sim_server.ros.visualization.markers import ModelMarkers, delete_marker_bytes, layer_marker_bytes
from sim_server.ros.visualization.messages import delete_all_markers
from sim_server.ros.visualization.wire import MarkerBytes, wire

#: How long (s, wall time) a deleted model's publisher is kept, its DELETEALL latched, for a
#: model of the same name to reuse before the topic goes.
PARK_TIME = 60.0
#: Most publishers of deleted models kept at once (the oldest go first).
MAX_PARKED = 1000
#: Wall seconds the publisher of a deleted model (not one of a level) is kept to deliver its
#: DELETEALL before it is destroyed.
RETIRE_TIME = 2.0
#: Wall seconds the DELETEs of a removed model's markers stay in the all-models message.
TOMBSTONE_TIME = 10.0
#: Most such DELETEs kept (the oldest models' go first), so that a storm of spawns and deletes
#: does not swell every message.
MAX_TOMBSTONES = 5000
#: Largest share of wall time spent re-posing map-frame markers: when a refresh round takes
#: longer than this share of the time since the last one (a thousand moving robots without TF),
#: rounds are skipped until it does not.
MAX_REFRESH_SHARE = 0.1
#: Most markers per second the all-models topic carries for motion alone (models coming or going
#: are sent at once): with thousands of markers, a message only because map-frame markers moved
#: goes out less often than ``viz_pub_rate``, so that RViz, which redraws every marker of every
#: message, and the middleware keep up.
MAX_MARKERS_PER_SECOND = 30000

LATCHED_QOS = QoSProfile(
    depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
)

#: Wall seconds a per-model topic's subscriber count is trusted (a thousand of them are not asked
#: every refresh: a new subscriber has the latched markers at once and their motion within this).
MODEL_TOPIC_CHECK_PERIOD = 0.5


class _TimedCheck:
    """Whether a publisher has subscribers, asked again after :data:`MODEL_TOPIC_CHECK_PERIOD`."""

    __slots__ = ("_publisher", "_listened", "_next")

    def __init__(self, publisher: Publisher) -> None:
        self._publisher = publisher
        self._listened = False
        self._next = 0.0

    def __call__(self, now: float) -> bool:
        if now >= self._next:
            self._listened = self._publisher.get_subscription_count() > 0
            self._next = now + MODEL_TOPIC_CHECK_PERIOD
        return self._listened


class _ModelEntry:
    __slots__ = ("markers", "publisher", "listened", "claimed", "frames", "moved")

    def __init__(self, markers: ModelMarkers, publisher: Publisher, claimed: list[str], frames: set[str]) -> None:
        self.markers = markers
        self.publisher = publisher
        self.listened = _TimedCheck(publisher)
        #: Child frames its plugins are configured to send.
        self.claimed = claimed
        #: The frames its lock state depends on (index keys; none for a model that never locks).
        self.frames = frames
        #: Placed anew (move_model): its poses are read at the next refresh, awake or not.
        self.moved = False


class DebugVisualization:
    """Owns the debug marker publishers of a world (a :class:`WorldListener`).

    Args:
        node: the server node (topics are relative to its private namespace).
        world: the world to draw.
        clock_ns: returns the sim time (ns) used to stamp markers.
        line_width: width of every line marker (layer edges, footprint outlines, joints), m.
    """

    def __init__(
        self, node: Node, world: World, clock_ns: Callable[[], int], line_width: float = DEFAULT_MARKER_LINE_WIDTH
    ) -> None:
        self._node = node
        self._world = world
        self._clock_ns = clock_ns
        self.line_width = float(line_width)
        self._wire = wire()
        self._layer_tokens = TopicTokens("layer")
        self._model_tokens = TopicTokens("model")
        self._topics: dict[str, str] = {}  # key ("layer/<name>" / "model/<name>") -> topic
        #: The lock states of the models and the frames they depend on.
        self._locks = FrameLocks(node, world)
        self._layer_publishers: dict[int, Publisher] = {}
        self._layer_items: dict[int, MarkerBytes] = {}
        self._models: dict[str, _ModelEntry] = {}
        #: Models with markers in map that follow their bodies.
        self._moving: dict[str, _ModelEntry] = {}
        #: Removed models' DELETEs in the all-models message: name -> (wall time they go, {id: bytes}).
        self._tombstones: OrderedDict[str, tuple[float, dict[int, MarkerBytes]]] = OrderedDict()
        self._tombstone_count = 0
        self._models_changed = True
        self._models_parts: list | None = None
        #: Wall time (monotonic s) before which map-frame markers are not re-posed again.
        self._next_refresh = 0.0
        #: Markers moved since the all-models message was sent; when it may be sent for that.
        self._models_stale = False
        self._next_models_send = 0.0
        self._models_count = 0
        #: Publishers of deleted models by model name, oldest first, with the wall time they go.
        self._parked: OrderedDict[str, tuple[float, Publisher]] = OrderedDict()
        self._retiring: OrderedDict[str, tuple[float, Publisher]] = OrderedDict()
        self._topics_changed = False
        self._delete_all = serialize_message(delete_all_markers())
        self._delete_all_item = self._wire.marker(delete_all_markers().markers[0])
        self._topic_list_publisher = node.create_publisher(DebugTopicList, "~/debug/topics", LATCHED_QOS)
        self._layers_publisher = node.create_publisher(MarkerArray, ALL_LAYERS_TOPIC, LATCHED_QOS)
        self._models_publisher = node.create_publisher(MarkerArray, ALL_MODELS_TOPIC, LATCHED_QOS)
        self._models_listened = SubscriberCheck(self._models_publisher)
        stamp_ns = clock_ns()
        for layer in world.layers:
            publisher = self._create_publisher("layer", layer.name)
            self._layer_publishers[id(layer)] = publisher
            self._draw_layer(layer, stamp_ns)
        self._layers_publisher.publish(self._layers_message())
        for model in world.all_models():
            self.on_model_added(model)
        world.add_listener(self)
        self._publish_all_models()
        self._publish_topic_list()

    # ------------------------------------------------------------------ topics
    def _create_publisher(self, kind: str, name: str) -> Publisher:
        tokens = self._layer_tokens if kind == "layer" else self._model_tokens
        publisher = self._node.create_publisher(MarkerArray, f"~/debug/{kind}/{tokens.claim(name)}", LATCHED_QOS)
        self._topics[f"{kind}/{name}"] = publisher.topic_name
        return publisher

    def _destroy_model_publisher(self, name: str, publisher: Publisher) -> None:
        self._node.destroy_publisher(publisher)
        self._model_tokens.release(name)

    def _publish_topic_list(self) -> None:
        self._topic_list_publisher.publish(DebugTopicList(topics=sorted(self._topics.values())))

    @property
    def topics(self) -> list[str]:
        """The fully qualified per-entity debug topic names currently offered."""
        return sorted(self._topics.values())

    @property
    def all_topics(self) -> tuple[str, str]:
        """The fully qualified names of the all-layers and all-models topics."""
        return self._layers_publisher.topic_name, self._models_publisher.topic_name

    # ------------------------------------------------------------------ layers
    def _draw_layer(self, layer: Layer, stamp_ns: int) -> None:
        item = layer_marker_bytes(layer, stamp_ns, self.line_width)
        self._layer_items[id(layer)] = item
        items = [self._delete_all_item] + ([item] if len(layer.loaded_edges()) else [])
        self._layer_publishers[id(layer)].publish(self._wire.message(items))

    def _layers_message(self) -> bytes:
        return self._wire.message(self._layer_items[id(layer)] for layer in self._world.layers if id(layer) in self._layer_items)

    def on_layers_changed(self, layers: list[Layer]) -> None:
        """Redraw layers whose pieces (tiles, or the whole layer) were loaded or unloaded."""
        stamp_ns = self._clock_ns()
        drawn = False
        for layer in layers:
            if id(layer) in self._layer_publishers:
                self._draw_layer(layer, stamp_ns)
                drawn = True
        if drawn:
            self._layers_publisher.publish(self._layers_message())

    # ------------------------------------------------------------------ models
    def on_model_added(self, model: Model) -> None:
        """Draw the model on its topic (created, or its parked one taken back) and, at the next
        refresh, on the all-models topic."""
        self._locks.find_registry()
        claimed = self._locks.frames_claimed_by(model)
        locked, frames = self._locks.lock_state(model)
        parked = self._parked.pop(model.name, None) or self._retiring.pop(model.name, None)
        if parked is not None:
            publisher = parked[1]
            self._topics[f"model/{model.name}"] = publisher.topic_name
        else:
            publisher = self._create_publisher("model", model.name)
        markers = ModelMarkers(model, locked, self.line_width, self._clock_ns())
        entry = _ModelEntry(markers, publisher, claimed, frames)
        self._models[model.name] = entry
        if markers.moves:
            self._moving[model.name] = entry
        self._locks.index(model.name, frames)
        self._locks.frames_changed.update(frames)
        self._locks.frames_changed.update(claimed)  # models whose chains they are in are checked again
        self._unbury(model.name, len(markers.items))
        publisher.publish(markers.message())
        self._models_changed = True
        self._topics_changed = True

    def on_model_moved(self, model: Model) -> None:
        """``move_model`` or ``set_model_state`` placed the model anew: read its poses next round."""
        entry = self._moving.get(model.name)
        if entry is not None:
            entry.moved = True

    def on_model_removed(self, model: Model) -> None:
        """Erase the model's markers (its topic's DELETEALL; DELETEs of its namespace on the
        all-models topic) and park its publisher (see the module doc)."""
        entry = self._models.pop(model.name, None)
        if entry is None:
            return
        self._moving.pop(model.name, None)
        self._locks.unindex(model.name, entry.frames)
        self._locks.frames_changed.update(entry.frames)
        self._locks.frames_changed.update(entry.claimed)
        self._bury(model.name, range(len(entry.markers.items)))
        publisher = entry.publisher
        publisher.publish(self._delete_all)
        self._topics.pop(f"model/{model.name}", None)
        self._topics_changed = True
        self._models_changed = True
        if not self._world.levels.owns_model(model.name):
            # Deleted, not streamed out: its name may never return. The publisher stays only long
            # enough to deliver the DELETEALL.
            self._retiring[model.name] = (time.monotonic() + RETIRE_TIME, publisher)
            return
        self._parked[model.name] = (time.monotonic() + PARK_TIME, publisher)
        while len(self._parked) > MAX_PARKED:
            name, (_, oldest) = self._parked.popitem(last=False)
            self._destroy_model_publisher(name, oldest)

    def _bury(self, name: str, marker_ids: Iterable[int]) -> None:
        """Put DELETEs of the model's markers ``marker_ids`` into the all-models message."""
        _, dead = self._drop_tombstones(name)
        for marker_id in marker_ids:
            dead[marker_id] = delete_marker_bytes(name, marker_id)
        if dead:
            self._tombstones[name] = (time.monotonic() + TOMBSTONE_TIME, dead)
            self._tombstone_count += len(dead)
        while self._tombstone_count > MAX_TOMBSTONES:
            self._drop_tombstones(next(iter(self._tombstones)))

    def _drop_tombstones(self, name: str) -> tuple[float, dict[int, MarkerBytes]]:
        """Take the DELETEs of model ``name`` out of the all-models message."""
        entry = self._tombstones.pop(name, None)
        if entry is None:
            return 0.0, {}
        self._tombstone_count -= len(entry[1])
        self._models_parts = None
        return entry

    def _expire_tombstones(self, now: float) -> None:
        while self._tombstones and next(iter(self._tombstones.values()))[0] <= now:
            self._drop_tombstones(next(iter(self._tombstones)))

    def _unbury(self, name: str, count: int) -> None:
        """Take the DELETEs of ids below ``count`` of model ``name`` out: it draws them again."""
        expiry, dead = self._drop_tombstones(name)
        for marker_id in range(count):
            dead.pop(marker_id, None)
        if dead:
            self._tombstones[name] = (expiry, dead)
            self._tombstone_count += len(dead)

    def _check_locks(self) -> None:
        """Decide again the lock state of the models sharing frames with models that came or went,
        and redraw those whose state changed."""
        names = self._locks.take_changed()
        stamp_ns = self._clock_ns()
        for name in names:
            entry = self._models.get(name)
            if entry is None:
                continue
            model = entry.markers.model
            locked, frames = self._locks.lock_state(model)
            self._locks.unindex(name, entry.frames)
            entry.frames = frames
            self._locks.index(name, frames)
            if locked == entry.markers.locked:
                continue
            old_count = len(entry.markers.items)
            markers = ModelMarkers(model, locked, self.line_width, stamp_ns)
            gone = range(len(markers.items), old_count)
            if gone:
                self._bury(name, gone)
                entry.publisher.publish(self._wire.message(delete_marker_bytes(name, i) for i in gone))
            self._unbury(name, len(markers.items))
            entry.markers = markers
            if markers.moves:
                self._moving[name] = entry
            else:
                self._moving.pop(name, None)
            entry.publisher.publish(markers.message())
            self._models_changed = True

    # ------------------------------------------------------------------ periodic work
    def _models_message(self) -> bytes:
        if self._models_parts is None:
            self._expire_tombstones(time.monotonic())
            items: list[MarkerBytes] = []
            for entry in self._models.values():
                items.extend(entry.markers.items)
            for _, dead in self._tombstones.values():
                items.extend(dead.values())
            self._models_parts = self._wire.layout(items)
            self._models_count = len(items)
        return b"".join(self._models_parts)

    def _publish_all_models(self) -> None:
        if self._models_changed:
            self._models_parts = None
        self._models_changed = self._models_stale = False
        self._models_publisher.publish(self._models_message())

    def publish_models(self) -> None:
        """The refresh round: check lock states of models sharing frames with models that came
        or went, re-pose moved map-frame markers (of models somebody watches), publish what
        changed, republish a changed topic list and let parked publishers past their time go."""
        if self._locks.frames_changed:
            self._check_locks()
        stamp_ns = self._clock_ns()
        now = time.monotonic()
        moved = False
        if self._moving and now >= self._next_refresh:
            all_listened = self._models_listened()
            started = time.perf_counter()
            for entry in self._moving.values():
                if all_listened:
                    if entry.markers.refresh(stamp_ns, entry.moved):
                        moved = True
                        if entry.listened(now):
                            entry.publisher.publish(entry.markers.message())
                    entry.moved = False
                elif entry.listened(now):
                    if entry.markers.refresh(stamp_ns, entry.moved):
                        entry.publisher.publish(entry.markers.message())
                    entry.moved = False
            self._next_refresh = now + (time.perf_counter() - started) / MAX_REFRESH_SHARE
        self._models_stale |= moved
        if self._models_changed or (self._models_stale and now >= self._next_models_send):
            self._publish_all_models()
            self._next_models_send = now + self._models_count / MAX_MARKERS_PER_SECOND
        self._expire_tombstones(time.monotonic())
        if self._topics_changed:
            self._topics_changed = False
            self._publish_topic_list()
        now = time.monotonic()
        while self._parked and next(iter(self._parked.values()))[0] <= now:
            name, (_, publisher) = self._parked.popitem(last=False)
            self._destroy_model_publisher(name, publisher)
        while self._retiring and next(iter(self._retiring.values()))[0] <= now:
            name, (_, publisher) = self._retiring.popitem(last=False)
            self._destroy_model_publisher(name, publisher)

    def close(self) -> None:
        """Stop listening to the world and destroy every publisher."""
        self._world.remove_listener(self)
        for publisher in self._layer_publishers.values():
            self._node.destroy_publisher(publisher)
        for entry in self._models.values():
            self._node.destroy_publisher(entry.publisher)
        for _, publisher in list(self._parked.values()) + list(self._retiring.values()):
            self._node.destroy_publisher(publisher)
        for publisher in (self._topic_list_publisher, self._layers_publisher, self._models_publisher):
            self._node.destroy_publisher(publisher)
        self._retiring.clear()
        self._layer_publishers.clear()
        self._models.clear()
        self._moving.clear()
        self._parked.clear()
        self._tombstones.clear()
        self._tombstone_count = 0
