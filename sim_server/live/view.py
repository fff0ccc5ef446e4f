"""A live view of a world over the Foxglove WebSocket protocol (foxglove-sdk), and MCAP logs of
the same channels.

``LiveView(world)`` serves the world to Foxglove (or Lichtblick): "Open connection", Foxglove
WebSocket, ``ws://localhost:8765``. It is bound to localhost unless a host is given, and sends,
from the step loop, at ``rate`` Hz of sim time:

* ``/scene`` (``foxglove.SceneUpdate``): the walls (on start, to each new subscriber and when
  levels change them), the models and the pedestrians (see :mod:`sim_server.live.scene`);
* ``/tf`` (``foxglove.FrameTransforms``): ``map`` to every body;
* one ``foxglove.LaserScan`` channel per laser, on the laser's topic: its latest scan when it
  made one since the last update (with its own noise), in its body's frame, stamped when it was
  made;
* sim time, through the protocol's time capability.

Nothing is built for a channel nobody listens to (no client subscribed and no MCAP file open);
the SDK drops messages for a client that falls behind rather than holding the step loop.
``record=path`` also writes every channel to an MCAP file, which the Foxglove app replays.
Units: metres, radians; times are sim time.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import foxglove
from Box2D import b2
from foxglove.channels import FrameTransformsChannel, LaserScanChannel, SceneUpdateChannel
from foxglove.messages import SceneEntityDeletion, SceneEntityDeletionType, SceneUpdate

from sim_server.core import limits
from sim_server.live.scene import (
    CROWD_PREFIX, MODEL_PREFIX, body_frame, body_transforms, crowd_entity, deletions, laser_scan, layer_entity,
    model_entity, stamp,
)

if TYPE_CHECKING:
    from sim_server.core.timing.timekeeper import TimeKeeper
    from sim_server.core.world import World

#: The port Foxglove's "Open connection" proposes.
DEFAULT_PORT = 8765
#: Scene updates, transforms and scans a second of sim time, by default.
DEFAULT_RATE = 20.0
#: Messages kept per client before the oldest is dropped (a slow client loses messages; the step
#: loop never waits for it).
CLIENT_BACKLOG = 256
SCENE_TOPIC = "/scene"
TF_TOPIC = "/tf"
NANOSECONDS = 1_000_000_000


def _moves(model: Any) -> bool:
    """Whether any body of ``model`` is not static (its footprints are sent on every update)."""
    return any(body.physics_body.type != b2.staticBody for body in model.bodies.values())


class _Listener(foxglove.ServerListener):
    """Hears of subscriptions: a new subscriber of the scene gets the walls again."""

    def __init__(self) -> None:
        self.new_scene_subscriber = threading.Event()

    def on_subscribe(self, client: Any, channel: Any) -> None:
        if channel.topic == SCENE_TOPIC:
            self.new_scene_subscriber.set()


class LiveView:
    """Serves ``world`` live to Foxglove clients and, with ``record``, logs it to MCAP.

    Args:
        world: the world (its step loop sends; :meth:`publish` sends at once).
        host: the address to listen on (``127.0.0.1`` by default: this machine only).
        port: the TCP port (0: any free one, see :attr:`port`); None: no server, only ``record``.
        rate: scene, transform and scan messages a second of sim time (Hz).
        record: an MCAP file to write the same channels to (replaced if it exists).

    Raises:
        ValueError: a port, rate or host that cannot be used (the message names it).
    """

    def __init__(self, world: "World", host: str = "127.0.0.1", port: int | None = DEFAULT_PORT,
                 rate: float = DEFAULT_RATE, record: str | Path | None = None) -> None:
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535):
            raise ValueError(f"port must be an integer 0 to 65535 (0: any free port), got {port!r:.40}")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not limits.RATE.contains(rate) or rate <= 0:
            raise ValueError(f"rate must be above 0 and at most {limits.RATE.high:g} Hz, got {rate!r:.40}")
        if not isinstance(host, str) or not host or len(host) > 255:
            raise ValueError(f"host must be an address or host name, got {host!r:.60}")
        if port is None and record is None:
            raise ValueError("a live view needs a port to serve on, a file to record to, or both")
        self.world = world
        self.period_ns = max(int(round(NANOSECONDS / rate)), 1)
        self._context = foxglove.Context()
        self._listener = _Listener()
        self._scene = SceneUpdateChannel(SCENE_TOPIC, context=self._context)
        self._tf = FrameTransformsChannel(TF_TOPIC, context=self._context)
        self._scans: dict[int, tuple[Any, LaserScanChannel]] = {}
        self._shown: set[str] = set()
        self._walls_version: int | None = None
        self._next_ns = 0
        #: The sim time (ns) of each laser's last scan sent, by the plugin's id.
        self._sent: dict[int, int] = {}
        #: Updates sent so far (:meth:`publish` calls).
        self.updates = 0
        self.server = None
        self._writer = None
        try:
            if record is not None:
                if Path(record).suffix.lower() != ".mcap":
                    raise ValueError(f'record must name a file ending in .mcap, got "{record}"')
                try:
                    self._writer = foxglove.open_mcap(Path(record), allow_overwrite=True, context=self._context)
                except Exception as exc:  # the SDK's error for a file it cannot create
                    raise ValueError(f'cannot record to "{record}": {exc}') from None
            if port is not None:
                try:
                    self.server = foxglove.start_server(
                        name="sim_server", host=host, port=port, capabilities=[foxglove.Capability.Time],
                        server_listener=self._listener, context=self._context, message_backlog_size=CLIENT_BACKLOG,
                    )
                except Exception as exc:  # the SDK's error for a port in use or a bad address
                    raise ValueError(f"cannot serve on {host}:{port}: {exc}") from None
        except BaseException:
            self.close()
            raise
        self._lasers()  # their channels are advertised from the start
        world.after_step_hooks.append(self._after_step)
        self._closed = False

    @property
    def port(self) -> int | None:
        """The port clients connect to (None without a server)."""
        return None if self.server is None else self.server.port

    @property
    def url(self) -> str | None:
        """``ws://host:port`` to open in Foxglove (None without a server)."""
        return None if self.server is None else f"ws://localhost:{self.server.port}"

    def _after_step(self, time: "TimeKeeper") -> None:
        if time.time_ns >= self._next_ns:
            self.publish()
            self._next_ns = time.time_ns + self.period_ns

    # ------------------------------------------------------------------ sending
    def publish(self) -> None:
        """Send sim time, the scene, the transforms and the scans now (each only where somebody
        listens)."""
        world = self.world
        now = int(world.time.time_ns)
        self.updates += 1
        if self.server is not None:
            self.server.broadcast_time(now)
        if self._scene.has_sinks():
            self._send_scene(now)
        if self._tf.has_sinks():
            self._tf.log(body_transforms(world.models.values(), now), log_time=now)
        self._send_scans(now)

    def _send_scene(self, now: int) -> None:
        world = self.world
        entities = []
        fresh = self._listener.new_scene_subscriber.is_set()
        if fresh or self._walls_version != world.static_geometry_version:
            self._listener.new_scene_subscriber.clear()
            entities.extend(layer_entity(layer, now) for layer in world.layers)
            self._walls_version = world.static_geometry_version
            fresh = True
        shown = set()
        for model in world.models.values():
            shown.add(MODEL_PREFIX + model.name)
            if fresh or MODEL_PREFIX + model.name not in self._shown or _moves(model):
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

    def _lasers(self) -> dict[int, tuple[Any, LaserScanChannel]]:
        """Every laser of the world with its channel (made on first sight, closed when it leaves)."""
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
                self._scans[key] = (plugin, LaserScanChannel(topic, context=self._context))
        return self._scans

    def _send_scans(self, now: int) -> None:
        """Each laser's latest scan, where it made one since the last update (the lasers' own)."""
        for key, (plugin, channel) in self._lasers().items():
            listening = channel.has_sinks()
            plugin.view_listening = listening  # the laser scans for the view (on ROS, lasers scan for subscribers)
            made = getattr(plugin, "last_scan_ns", -1)
            if made <= self._sent.get(key, -1) or plugin.last_ranges is None or not listening:
                continue
            self._sent[key] = made
            scanner = plugin.scanner
            origin = (scanner.origin.x, scanner.origin.y, scanner.origin.theta)
            channel.log(laser_scan(plugin.last_ranges, scanner.local_angles, body_frame(scanner.body), origin, made),
                        log_time=made)

    def use_world(self, world: "World") -> None:
        """Show ``world`` from now on instead (a server that loaded another world): clients
        are told to delete everything they were shown, the new walls follow."""
        if self._after_step in self.world.after_step_hooks:
            self.world.after_step_hooks.remove(self._after_step)
        for _, channel in self._scans.values():
            channel.close()
        self._scans.clear()
        self._sent.clear()
        self._shown = set()
        self._walls_version = None
        self._next_ns = 0
        self.world = world
        if self._scene.has_sinks():
            now = int(world.time.time_ns)
            self._scene.log(SceneUpdate(deletions=[SceneEntityDeletion(timestamp=stamp(now), type=SceneEntityDeletionType.All)]),
                            log_time=now)
        self._lasers()
        world.after_step_hooks.append(self._after_step)

    # ------------------------------------------------------------------ the end
    def close(self) -> None:
        """Stop serving, finish the MCAP file (it stays readable) and leave the step loop."""
        if getattr(self, "_closed", True) is False:
            self._closed = True
            for plugin, _ in self._scans.values():
                plugin.view_listening = False
            if self._after_step in self.world.after_step_hooks:
                self.world.after_step_hooks.remove(self._after_step)
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> "LiveView":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
