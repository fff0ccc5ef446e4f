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

Nothing is built for a channel nobody listens to (no client subscribed and no MCAP file open);
the SDK drops messages for a client that falls behind rather than holding the step loop.
``record=path`` also writes every channel to an MCAP file, which the Foxglove app replays: there
every update and every scan is kept, in sim time, however fast the run.
Units: metres, radians; times are sim time.
"""

from __future__ import annotations

from pathlib import Path
from time import monotonic as wall_clock
from typing import TYPE_CHECKING, Any

import foxglove

from sim_server.core import limits
from sim_server.live.feed import Feed, SceneListener
from sim_server.live.files import DEFAULT_FILE_BYTES, DEFAULT_FILES_KEPT, McapFiles, check_bounds

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


class LiveView:
    """Serves ``world`` live to Foxglove clients and, with ``record``, logs it to MCAP.

    Args:
        world: the world (its step loop sends; :meth:`publish` sends at once).
        host: the address to listen on (``127.0.0.1`` by default: this machine only).
        port: the TCP port (0: any free one, see :attr:`port`); None: no server, only ``record``.
        rate: updates (scene, transforms) a second of sim time (Hz); clients get at most as many
            a second of wall time.
        record: an MCAP file to write the same channels to (replaced if it exists): ``rate``
            updates a second of sim time and every scan, however fast the run.
        record_max_bytes: a recording's file holds about this many bytes; then the next begins
            (``run.1.mcap``, ``run.2.mcap``, ...: :mod:`sim_server.live.files`).
        record_keep: the newest files of a recording kept (older ones are deleted).

    Raises:
        ValueError: a port, rate, host or file that cannot be used (the message names it).
    """

    def __init__(self, world: "World", host: str = "127.0.0.1", port: int | None = DEFAULT_PORT,
                 rate: float = DEFAULT_RATE, record: str | Path | None = None,
                 record_max_bytes: int = DEFAULT_FILE_BYTES, record_keep: int = DEFAULT_FILES_KEPT) -> None:
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
        #: Updates sent so far (to clients or the file).
        self.updates = 0
        self.server = None
        self._files: McapFiles | None = None
        self._live: Feed | None = None
        self._log: Feed | None = None
        self._closed = True
        try:
            if record is not None:
                if Path(record).suffix.lower() != ".mcap":
                    raise ValueError(f'record must name a file ending in .mcap, got "{record}"')
                check_bounds(record_max_bytes, record_keep)
                context = foxglove.Context()
                self._files = McapFiles(Path(record), context, record_max_bytes, record_keep, self._restart_log)
                self._log = Feed(world, context)
            if port is not None:
                context = foxglove.Context()
                listener = SceneListener()
                self._live = Feed(world, context, listener)
                try:
                    self.server = foxglove.start_server(
                        name="sim_server", host=host, port=port, capabilities=[foxglove.Capability.Time],
                        server_listener=listener, context=context, message_backlog_size=CLIENT_BACKLOG,
                    )
                except Exception as exc:  # the SDK's error for a port in use or a bad address
                    raise ValueError(f"cannot serve on {host}:{port}: {exc}") from None
        except BaseException:
            self.close()
            raise
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

    @property
    def record_files(self) -> list[tuple[int, Path]]:
        """The files of the recording kept so far, oldest first, with their numbers (0: the
        file named by ``record``; k: ``<stem>.<k>.mcap``); empty without a recording."""
        return [] if self._files is None else list(zip(self._files.numbers, self._files.files))

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
            return
        if log is not None and log.listened:
            log.send_new_scans()  # every scan, as the laser makes it
        if live is not None and live.listened and wall_clock() >= self._next_scan_wall:
            self._next_scan_wall = wall_clock() + self._scan_wall_period
            live.send_new_scans()

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
        """Lasers scan for the view while a feed listens to them (on ROS, lasers otherwise scan
        only for subscribers)."""
        listened = {key for feed in self._feeds for key, _, _ in feed.listened}
        for feed in self._feeds:
            for key, plugin, _ in feed.lasers():
                plugin.view_listening = key in listened

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

    def _stop_wanting_scans(self) -> None:
        for feed in self._feeds:
            for _, plugin, _ in feed.lasers():
                plugin.view_listening = False

    # ------------------------------------------------------------------ the end
    def close(self) -> None:
        """Stop serving, finish the MCAP file (it stays readable) and leave the step loop."""
        if not self._closed:
            self._closed = True
            self._stop_wanting_scans()
            if self._after_step in self.world.after_step_hooks:
                self.world.after_step_hooks.remove(self._after_step)
        for feed in self._feeds:
            feed.close()
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self._files is not None:
            self._files.close()

    def __enter__(self) -> "LiveView":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
