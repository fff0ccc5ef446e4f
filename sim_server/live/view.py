"""A live view of a world over the Foxglove WebSocket protocol (foxglove-sdk), and MCAP logs of
the same channels.

``LiveView(world)`` serves the world to Foxglove (or Lichtblick): "Open connection", Foxglove
WebSocket, ``ws://localhost:8765``. It is bound to localhost unless a host is given, and sends,
from the step loop, ``rate`` times a second of sim time (but to clients never more often than
``rate`` times a second of wall time: a run faster than real time shows its newest state, as a
screen can, and the step loop does not pay for updates nobody could see):

* ``/scene`` (``foxglove.SceneUpdate``): the walls (on start, to each new subscriber and when
  levels change them), the models and the pedestrians (see :mod:`sim_server.live.scene`);
* ``/tf`` (``foxglove.FrameTransforms``): ``map`` to every body;
* one ``foxglove.LaserScan`` channel per laser, on the laser's topic: every scan the laser makes
  (with its own noise; sent on the step it is made; to clients at most
  :data:`MAX_LIVE_SCANS_PER_SECOND` a wall second, the newest), in its body's frame, stamped when
  it was made;
* sim time, through the protocol's time capability.

Clients may also act on the simulation (unless ``control=False``): the services ``/spawn_model``,
``/delete_model``, ``/move_model``, ``/pause``, ``/resume``, ``/step_world`` and
``/reset_world`` (JSON, as the ROS node's: :mod:`sim_server.live.services`), and velocity
commands published on a drive's topic (Foxglove's Teleop panel: :mod:`sim_server.live.teleop`).
They are carried out by the thread that steps the world, in :meth:`LiveView.serve`, which
:meth:`LiveView.run` and the ROS node call between steps; a loop of one's own calls it too.

Nothing is built for a channel nobody listens to (no client subscribed and no MCAP file open);
the SDK drops messages for a client that falls behind rather than holding the step loop.
``record=path`` also writes every channel to an MCAP file, which the Foxglove app replays: there
every update and every scan is kept, in sim time, however fast the run.
Units: metres, radians; times are sim time.
"""

from __future__ import annotations

import logging
from pathlib import Path
from time import monotonic as wall_clock
from time import sleep as wall_sleep
from typing import TYPE_CHECKING, Any, Callable

import foxglove
from foxglove.websocket import StatusLevel

from sim_server.core import limits
from sim_server.core.control import SimulationControl, WorldSimulation
from sim_server.live.feed import Feed, SceneListener
from sim_server.live.files import DEFAULT_FILE_BYTES, DEFAULT_FILES_KEPT, McapFiles, RecordWriteError, check_bounds
from sim_server.live.requests import Requests
from sim_server.live.services import JSON, services
from sim_server.live.teleop import Teleop

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
NANOSECONDS = 1_000_000_000
#: Most scans of one laser sent to clients a second of wall time: a run much faster than real
#: time (a 40 Hz laser at 100x makes 4,000 scans a wall second) shows its newest scans, as a
#: screen can, without spending the step loop's time on them. A recording keeps every scan.
MAX_LIVE_SCANS_PER_SECOND = 50.0
#: How a recording encodes its messages (see :class:`LiveView`).
RECORD_ENCODINGS = ("foxglove", "ros2")
#: Wall seconds between two updates of clients while the world is paused (besides those after a
#: request or a new subscription).
PAUSED_REFRESH = 1.0
#: Wall seconds :meth:`LiveView.run` waits between two servings while the world is paused.
PAUSED_TICK = 0.02

_logger = logging.getLogger(__name__)


class _Listener(SceneListener):
    """The server's listener: subscriptions (for the scene) and clients' channels (for
    :class:`~sim_server.live.teleop.Teleop`)."""

    def __init__(self) -> None:
        super().__init__()
        self.teleop: Teleop | None = None

    def on_client_advertise(self, client: Any, channel: Any) -> None:
        if self.teleop is not None:
            self.teleop.advertised(client.id, channel.id, channel.topic, channel.encoding)

    def on_client_unadvertise(self, client: Any, client_channel_id: int) -> None:
        if self.teleop is not None:
            self.teleop.unadvertised(client.id, client_channel_id)

    def on_message_data(self, client: Any, client_channel_id: int, data: bytes) -> None:
        if self.teleop is not None:
            self.teleop.message(client.id, client_channel_id, data)


class LiveView:
    """Serves ``world`` live to Foxglove clients and, with ``record``, logs it to MCAP.

    Args:
        world: the world (its step loop sends; :meth:`publish` sends at once).
        host: the address to listen on (``127.0.0.1`` by default: this machine only).
        port: the TCP port (0: any free one, see :attr:`port`); None: no server, only ``record``.
        rate: updates (scene, transforms) a second of sim time (Hz); clients get at most as many
            a second of wall time.
        record: an MCAP file to write the same channels to: the world as it is when the view
            is made, then ``rate`` updates a second of sim time and every scan, however fast
            the run. It is written beside its name and put
            there (replacing what was) once complete: when the next file begins or the view
            closes (:mod:`sim_server.live.files`).
        record_max_bytes: a recording's file holds about this many bytes; then the next begins
            (``run.1.mcap``, ``run.2.mcap``, ...: :mod:`sim_server.live.files`).
        record_keep: the newest files of a recording kept (older ones are deleted).
        record_encoding: ``"foxglove"`` (the channels as clients get them) or ``"ros2"``: ROS 2
            messages where ROS has a type (``/tf``, ``/clock``, the scans; the scene stays
            ``foxglove.SceneUpdate``), which ROS tools read (:mod:`sim_server.live.feed`).
        record_at_close: every file of the recording waits beside its name until the view
            closes, then all are put in place (a run recorded as a whole:
            :func:`~sim_server.live.log.record_mcap`).
        on_record_error: called once when a write of the recording fails, with the error
            naming the file and the operating system's reason (a full disk, say): the recording
            stops there (its hidden file is deleted, the name keeps what it had) and the view
            goes on without it. None (the default): the error is logged, one line through the
            ``sim_server`` logger (the ROS node's log, on ROS). :attr:`record_error` keeps it.
        control: what clients may do: True (the default) the services and driving for ``world``
            stepped in-process (:class:`~sim_server.core.control.WorldSimulation`), a
            :class:`~sim_server.core.control.SimulationControl` of one's own (the ROS node's),
            or False: clients only watch.

    Raises:
        ValueError: a port, rate, host or file that cannot be used (the message names it).
    """

    def __init__(self, world: "World", host: str = "127.0.0.1", port: int | None = DEFAULT_PORT,
                 rate: float = DEFAULT_RATE, record: str | Path | None = None,
                 record_max_bytes: int = DEFAULT_FILE_BYTES, record_keep: int = DEFAULT_FILES_KEPT,
                 control: "bool | SimulationControl" = True, record_encoding: str = "foxglove", *,
                 record_at_close: bool = False,
                 on_record_error: Callable[[RecordWriteError], None] | None = None) -> None:
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not limits.PORT.contains(port)):
            raise ValueError(f"port must be an integer 0 to 65535 (0: any free port), got {port!r:.40}")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not limits.RATE.contains(rate) or rate <= 0:
            raise ValueError(f"rate must be above 0 and at most {limits.RATE.high:g} Hz, got {rate!r:.40}")
        if not isinstance(host, str) or not host or len(host) > 255:
            raise ValueError(f"host must be an address or host name, got {host!r:.60}")
        if port is None and record is None:
            raise ValueError("a live view needs a port to serve on, a file to record to, or both")
        self.world = world
        self.period_ns = max(int(round(NANOSECONDS / rate)), 1)
        self._wall_period = 1.0 / rate
        self._scan_wall_period = 1.0 / MAX_LIVE_SCANS_PER_SECOND
        self._next_ns = 0  # the next update of the recording and of clients (sim time)
        self._next_wall = 0.0  # clients' next update, at the soonest (wall time)
        self._next_scan_wall = 0.0  # clients' next new scans, at the soonest (wall time)
        self._next_paused_update = 0.0  # clients' next update while the world is paused (wall time)
        self._listener: _Listener | None = None
        #: Updates sent so far (to clients or the file).
        self.updates = 0
        self.server = None
        self._files: McapFiles | None = None
        self._on_record_error = on_record_error
        self._record_error_told = False
        self._live: Feed | None = None
        self._log: Feed | None = None
        self._closed = True
        self._requests = Requests()
        self._teleop: Teleop | None = None
        self.control: SimulationControl | None = (
            WorldSimulation(world) if control is True else None if control is False else control
        )
        try:
            if record is not None:
                if Path(record).suffix.lower() != ".mcap":
                    raise ValueError(f'record must name a file ending in .mcap, got "{record}"')
                check_bounds(record_max_bytes, record_keep)
                if record_encoding not in RECORD_ENCODINGS:
                    raise ValueError(f"record_encoding must be one of {', '.join(RECORD_ENCODINGS)}, got {record_encoding!r:.40}")
                context = foxglove.Context()
                self._files = McapFiles(Path(record), context, record_max_bytes, record_keep, self._restart_log,
                                        at_close=record_at_close)
                self._log = Feed(world, context, ros2=record_encoding == "ros2")
            if port is not None:
                context = foxglove.Context()
                listener = self._listener = _Listener()
                self._live = Feed(world, context, listener)
                capabilities = [foxglove.Capability.Time]
                acting = {}
                if self.control is not None:
                    listener.teleop = self._teleop = Teleop(world, self._tell_clients)
                    capabilities += [foxglove.Capability.Services, foxglove.Capability.ClientPublish]
                    acting = {"supported_encodings": [JSON], "services": services(self._requests, lambda: self.control)}
                try:
                    self.server = foxglove.start_server(
                        name="sim_server", host=host, port=port, capabilities=capabilities,
                        server_listener=listener, context=context, message_backlog_size=CLIENT_BACKLOG, **acting,
                    )
                except Exception as exc:  # the SDK's error for a port in use or a bad address
                    raise ValueError(f"cannot serve on {host}:{port}: {exc}") from None
            world.after_step_hooks.append(self._after_step)
            self._closed = False
            if self._log is not None:  # a recording begins with the world as it is (whole, however soon it ends)
                self._after_step(world.time)  # (its next update is due now: _next_ns is 0)
        except BaseException:  # a stop signal too: nothing is left half made, the name keeps what it had
            if self._files is not None:
                self._files.discard()
            self.close()
            raise

    @property
    def port(self) -> int | None:
        """The port clients connect to (None without a server)."""
        return None if self.server is None else self.server.port

    @property
    def url(self) -> str | None:
        """``ws://host:port`` to open in Foxglove (None without a server)."""
        return None if self.server is None else f"ws://localhost:{self.server.port}"

    @property
    def record_files(self) -> list[tuple[int, Path]]:
        """The files of the recording kept so far, oldest first, with their numbers (0: the
        file named by ``record``; k: ``<stem>.<k>.mcap``); empty without a recording."""
        return [] if self._files is None else list(zip(self._files.numbers, self._files.files))

    @property
    def record_error(self) -> RecordWriteError | None:
        """Why the recording stopped early (a write failed: the file and the operating system's
        reason), or None."""
        return None if self._files is None else self._files.error

    def _tell_clients(self, text: str) -> None:
        server = self.server
        if server is not None:
            server.publish_status(text, StatusLevel.Warning)

    # ------------------------------------------------------------------ clients' requests
    def serve(self) -> None:
        """Carry out what clients asked for (services, velocity commands) and, while the world
        is paused, keep clients up to date (a model moved, a new subscriber): call it between
        steps, on the thread that steps the world."""
        requests = self._requests
        served = requests.pending
        if served:
            requests.serve()
        if self._teleop is not None:
            self._teleop.apply()
        control = self.control
        if isinstance(control, WorldSimulation) and control.steps.stepping:
            control.steps.run()
        live = self._live
        if live is not None and self.world.time.paused:
            # Time stands still: clients are updated when something may have changed (a request,
            # a new subscriber), and once in a while (a model moved by other means).
            now = wall_clock()
            if served or self._listener.new_subscriber.is_set() or now >= self._next_paused_update:
                self._next_paused_update = now + PAUSED_REFRESH
                self._update_live()

    def run(self, seconds: float | None = None, speed: float = 1.0, stop: "Callable[[], bool] | None" = None) -> None:
        """Step the world at ``speed`` times real time (0: as fast as it can) for ``seconds``
        of sim time (None: until ``stop()`` is true, or Ctrl-C), serving clients between steps;
        while the world is paused (the ``/pause`` service, or ``world.time.paused``) it only
        serves them (and steps ``/step_world`` asks for).

        Raises:
            ValueError: ``seconds`` or ``speed`` that cannot be used.
        """
        if seconds is not None and not limits.DURATION.contains(seconds):
            raise ValueError(f"seconds must be {limits.DURATION.describe()} or None, got {seconds!r:.40}")
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not limits.DYNAMICS_LIMIT.contains(speed):
            raise ValueError(f"speed must be {limits.DYNAMICS_LIMIT.describe()} (0: as fast as it can), got {speed!r:.40}")
        time = self.world.time
        end_ns = None if seconds is None else time.time_ns + int(round(seconds * NANOSECONDS))
        anchor_wall, anchor_ns = wall_clock(), time.time_ns
        was_paused = time.paused
        while not (stop is not None and stop()) and (end_ns is None or time.time_ns < end_ns) and not self._closed:
            self.serve()
            time = self.world.time  # a world replaced by use_world
            if time.paused:
                was_paused = True
                wall_sleep(PAUSED_TICK)
                continue
            if was_paused:
                was_paused = False
                anchor_wall, anchor_ns = wall_clock(), time.time_ns
            if speed > 0:
                due = anchor_wall + (time.time_ns - anchor_ns) / NANOSECONDS / speed
                ahead = due - wall_clock()
                if ahead > 0:
                    wall_sleep(min(ahead, PAUSED_TICK))
                    continue
            self.world.step()

    def _restart_log(self) -> None:
        if self._log is not None:
            self._log.restart()

    @property
    def _feeds(self) -> list[Feed]:
        return [feed for feed in (self._live, self._log) if feed is not None]

    def _after_step(self, time: "TimeKeeper") -> None:
        live, log = self._live, self._log
        if time.time_ns >= self._next_ns:
            self._next_ns = time.time_ns + self.period_ns
            if log is not None:
                log.update()
                self.updates += 1
                self._files.check()
            if live is not None and wall_clock() >= self._next_wall:
                self._update_live()
            self._want_scans()
        else:
            if log is not None and log.listened:
                log.send_new_scans()  # every scan, as the laser makes it
            if live is not None and live.listened and wall_clock() >= self._next_scan_wall:
                self._next_scan_wall = wall_clock() + self._scan_wall_period
                live.send_new_scans()
        if log is not None and self._files.failed:
            self._recording_failed()

    # ------------------------------------------------------------------ a recording that fails
    def _recording_failed(self) -> None:
        """A write failed: stop the recording (no message is built for it from now on) and say
        why, once."""
        assert self._files is not None
        self._files.check()  # deletes its hidden file; the error says why
        self._end_recording()
        self._tell_record_error()

    def _end_recording(self) -> None:
        if self._log is not None:
            self._stop_wanting_scans()
            self._log.close()
            self._log = None
            self._want_scans()

    def _tell_record_error(self) -> None:
        error = self.record_error
        if error is None or self._record_error_told:
            return
        self._record_error_told = True
        if self._on_record_error is not None:
            self._on_record_error(error)
        else:
            _logger.error("live view: the recording stopped: %s", error)

    def discard_recording(self) -> None:
        """Stop the recording and delete what is not in place yet (the file being written; with
        ``record_at_close`` every file): their names keep what they had. For a run that fails
        (:func:`~sim_server.live.log.record_mcap`)."""
        if self._files is not None:
            self._files.discard()
        self._end_recording()

    def _update_live(self) -> None:
        assert self._live is not None and self.server is not None
        now = wall_clock()
        self._next_wall = now + self._wall_period
        self._next_scan_wall = now + self._scan_wall_period
        self.server.broadcast_time(int(self.world.time.time_ns))
        self._live.update()
        if self._log is None:
            self.updates += 1

    def _want_scans(self) -> None:
        """Lasers scan and cameras take pictures for the view while a feed listens to them (on
        ROS they otherwise do only for subscribers)."""
        listened = {id(source.plugin) for feed in self._feeds for source in feed.listened}
        for feed in self._feeds:
            for source in feed.sensors():
                if source.demand_driven:
                    source.plugin.demanded = id(source.plugin) in listened

    def publish(self) -> None:
        """Send sim time, the scene, the transforms and the new scans now (each only where
        somebody listens)."""
        if self._log is not None:
            self._log.update()
        if self._live is not None:
            self._update_live()
        elif self._log is not None:
            self.updates += 1
        self._want_scans()
        if self._log is not None and self._files.failed:
            self._recording_failed()

    def use_world(self, world: "World") -> None:
        """Show ``world`` from now on instead (a server that loaded another world): clients
        are told to delete everything they were shown, the new walls follow."""
        if self._after_step in self.world.after_step_hooks:
            self.world.after_step_hooks.remove(self._after_step)
        self._stop_wanting_scans()
        self.world = world
        for feed in self._feeds:
            feed.use_world(world)
        self._next_ns = 0
        self._next_wall = 0.0
        world.after_step_hooks.append(self._after_step)
        if isinstance(self.control, WorldSimulation):
            self.control.use_world(world)
        if self._teleop is not None:
            self._teleop.use_world(world)
        if self._log is not None and self._files.failed:
            self._recording_failed()

    def _stop_wanting_scans(self) -> None:
        for feed in self._feeds:
            for source in feed.sensors():
                if source.demand_driven:
                    source.plugin.demanded = False

    # ------------------------------------------------------------------ the end
    def close(self) -> None:
        """Stop serving, finish the MCAP file (it stays readable; put in place) and leave the
        step loop. A write of the file's end that fails is told as any other
        (``on_record_error``)."""
        if not self._closed:
            self._closed = True
            self._stop_wanting_scans()
            if self._after_step in self.world.after_step_hooks:
                self.world.after_step_hooks.remove(self._after_step)
        self._requests.close()
        if isinstance(self.control, WorldSimulation):
            self.control.steps.abort("the live view closed")  # their callers stop waiting
        if self._teleop is not None:
            self._teleop.close()
        for feed in self._feeds:
            feed.close()
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self._files is not None:
            self._files.close()
            self._tell_record_error()

    def __enter__(self) -> "LiveView":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
