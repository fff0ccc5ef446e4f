"""A run written to an MCAP file: the live view's channels (``/scene``, ``/tf``, the lasers'
scans), which the Foxglove app and Lichtblick replay with the same 3D panel.

:func:`record_mcap` writes to a hidden file beside the target and puts it in place when done
(whatever was at the target stays if the run fails); a run stopped early (Ctrl-C) is closed
properly, so the file holds what was recorded and reads like any other. A write that fails (a
full disk, a file size limit) ends the run at once with
:class:`~sim_server.live.files.RecordWriteError`, naming the file and the operating system's
reason; nothing of the run is left.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from sim_server.core.format.bounded_read import shown_path
from sim_server.live.files import DEFAULT_FILE_BYTES, DEFAULT_FILES_KEPT
from sim_server.live.view import LiveView

if TYPE_CHECKING:
    from sim_server.core.world import World

#: The file extension of MCAP logs.
MCAP_SUFFIX = ".mcap"
#: Most sim seconds one recording may cover (a day).
MAX_SECONDS = 86_400.0


class LogError(Exception):
    """A recording that cannot be made as asked (one line, naming the setting or the file)."""


@dataclass(frozen=True)
class McapRecording:
    """What :func:`record_mcap` made: the file, the updates written (scene, transforms and new
    scans, ``rate`` a second of sim time), the sim and wall seconds it took, and whether a stop
    request ended it early; with a size limit, every file kept (oldest first)."""

    path: Path
    updates: int
    sim_seconds: float
    wall_seconds: float
    interrupted: bool
    files: list[Path]


def record_mcap(
    world: "World", path: Path, seconds: float, *, rate: float = 20.0,
    before_step: Callable[["World"], None] | None = None, stop: Callable[[], bool] = lambda: False,
    max_bytes: int = DEFAULT_FILE_BYTES, keep: int = DEFAULT_FILES_KEPT, encoding: str = "foxglove",
) -> McapRecording:
    """Step ``world`` for ``seconds`` of sim time, writing its live view's channels at ``rate``
    Hz (sim time) to the MCAP file ``path``; a file that holds ``max_bytes`` is followed by
    ``<stem>.1.mcap``, ... and the ``keep`` newest stay (:mod:`sim_server.live.files`);
    ``encoding="ros2"`` writes ROS 2 messages where ROS has a type (``/tf``, ``/clock``, the scans).
    Every file is put in place when the run ends well (also when ``stop`` ends it early).

    Raises:
        LogError: the seconds, rate or file cannot be used (nothing is written then).
        sim_server.live.files.RecordWriteError: a write failed (the step it failed in is the
            last; no file of the run is left, the names keep what they had).
    """
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and 0.0 <= seconds <= MAX_SECONDS):
        raise LogError(f"the seconds to record must be from 0 to {MAX_SECONDS:g}, got {seconds}")
    path = Path(path)
    if path.suffix.lower() != MCAP_SUFFIX:
        raise LogError(f'"{shown_path(path)}": an MCAP log must end in {MCAP_SUFFIX}, got "{shown_path(path.suffix)}"')
    started = time.perf_counter()
    steps = int(round(seconds / world.time.step_size))
    start_ns = world.time.time_ns
    interrupted = False
    try:  # it checks the rate, the bounds and the file before it writes anything
        view = LiveView(world, port=None, rate=rate, record=path, record_max_bytes=max_bytes, record_keep=keep,
                        record_encoding=encoding, record_at_close=True, on_record_error=lambda error: None)
    except ValueError as error:
        raise LogError(str(error)) from None
    with view:
        try:
            for _ in range(steps):
                if view.record_error is not None:
                    break
                if stop():
                    interrupted = True
                    break
                if before_step is not None:
                    before_step(world)
                world.step()
        except BaseException:
            view.discard_recording()  # a run that failed leaves what was there
            raise
    if view.record_error is not None:  # in the run, or writing the files' ends
        raise view.record_error
    written = [file for _, file in view.record_files]
    sim_seconds = (world.time.time_ns - start_ns) / 1e9
    return McapRecording(written[0], view.updates, sim_seconds, time.perf_counter() - started, interrupted, written)
