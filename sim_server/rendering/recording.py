"""Recording a run headless: step a world and write its pictures to a GIF, an MP4 (H.264) or a
PNG, with no display and no GPU.

:func:`record` steps the world and renders a frame every ``speed / fps`` seconds of sim time
(the first at the start), so the video plays ``speed`` times faster than the simulation ran;
frames fall on whole steps without drifting (frame k after ``round(k * period / step)`` steps).
The writers are chosen by the file's extension (:func:`writer_for`): ``.gif`` (Pillow; at most
:data:`MAX_GIF_FRAMES` frames, as a GIF is assembled in memory), ``.mp4`` (PyAV's FFmpeg with
libx264, streamed to the file, sides made even as H.264 needs) and ``.png`` (the last frame, the
only one drawn). A recording stopped by ``stop`` keeps what it has; one that fails leaves no file.

No rclpy here: this drives the in-process world (:mod:`sim_server.core`).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

import numpy as np
from PIL import Image

from sim_server.core.format.bounded_read import shown_path
from sim_server.core.format.file_targets import partial_path, target_problem
from sim_server.rendering.overlays import Trails, laser_rays
from sim_server.core.pictures.renderer import Renderer, View

if TYPE_CHECKING:
    from sim_server.core.world import World

#: Most frames of a GIF (it is assembled in memory: about 0.1 MB a frame at 512 x 224).
MAX_GIF_FRAMES = 3_000
#: Most pixels of all a GIF's frames together (a byte each in memory): 1 GiB.
MAX_GIF_PIXELS = 1 << 30
#: Most frames of any recording (an MP4 at 10 frames a second: almost three hours).
MAX_FRAMES = 100_000
#: The extensions :func:`writer_for` knows.
FORMATS = (".gif", ".mp4", ".png")
#: Frames a second a video may have (a GIF's delay is whole hundredths of a second, at most
#: 655.35 s; an MP4's frame rate a fraction of denominator at most 1001).
FPS_RANGE = (0.01, 120.0)
#: Sim seconds per video second.
SPEED_RANGE = (1e-6, 1e6)


class RecordingError(Exception):
    """A recording that cannot be made as asked (the message says why)."""


class FrameWriter(Protocol):
    """Takes the frames of a recording and writes the file.

    Attributes:
        size: (width, height) of the frames as written, (0, 0) before the first.
        keeps_every_frame: False when only the last frame is written (then only it is drawn).
    """

    size: tuple[int, int]
    keeps_every_frame: bool

    def add(self, frame: np.ndarray) -> None: ...

    def close(self) -> None: ...


class GifWriter:
    """An animated GIF that loops, each frame shown 1 / ``fps`` s (Pillow, 256 colours a frame;
    equal frames in a row are stored as one shown longer)."""

    keeps_every_frame = True

    def __init__(self, path: Path, fps: float) -> None:
        self.path, self.fps = path, fps
        self.size = (0, 0)
        self._frames: list[Image.Image] = []

    def add(self, frame: np.ndarray) -> None:
        self.size = (frame.shape[1], frame.shape[0])
        if len(self._frames) >= MAX_GIF_FRAMES:
            raise RecordingError(
                f"a GIF holds at most {MAX_GIF_FRAMES} frames; record an .mp4, fewer seconds or fewer frames a second"
            )
        self._frames.append(Image.fromarray(frame).quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE))

    def close(self) -> None:
        if not self._frames:
            return
        first, *rest = self._frames
        milliseconds = max(20, int(round(1000.0 / self.fps)))  # browsers show faster GIFs at 10 fps
        first.save(self.path, save_all=True, append_images=rest, duration=milliseconds, loop=0, optimize=False)


class Mp4Writer:
    """An H.264 MP4 at ``fps`` frames a second (PyAV, streamed to the file)."""

    def __init__(self, path: Path, fps: float) -> None:
        import av  # only for videos: a large library

        self.path = path
        self.size = (0, 0)
        self._av = av
        self._container = av.open(str(path), mode="w")
        self._stream = self._container.add_stream("libx264", rate=_frame_rate(fps))
        self._stream.pix_fmt = "yuv420p"
        self._stream.options = {"crf": "20"}
        self._sized = False

    keeps_every_frame = True

    def add(self, frame: np.ndarray) -> None:
        height, width = frame.shape[:2]
        if not self._sized:
            if width < 2 or height < 2:
                raise RecordingError(f"an MP4's sides must be 2 pixels or more, got {width} x {height}")
            self._stream.width, self._stream.height = width - width % 2, height - height % 2
            self.size = (self._stream.width, self._stream.height)
            self._sized = True
        frame = frame[: self._stream.height, : self._stream.width]
        picture = self._av.VideoFrame.from_ndarray(np.ascontiguousarray(frame), format="rgb24")
        for packet in self._stream.encode(picture):
            self._container.mux(packet)

    def close(self) -> None:
        if self._sized:
            for packet in self._stream.encode():
                self._container.mux(packet)
        self._container.close()


class PngWriter:
    """A PNG of the last frame."""

    keeps_every_frame = False

    def __init__(self, path: Path, fps: float) -> None:
        self.path = path
        self.size = (0, 0)
        self._last: np.ndarray | None = None

    def add(self, frame: np.ndarray) -> None:
        self.size = (frame.shape[1], frame.shape[0])
        self._last = frame

    def close(self) -> None:
        if self._last is not None:
            Image.fromarray(self._last).save(self.path)


WRITERS: dict[str, type] = {".gif": GifWriter, ".mp4": Mp4Writer, ".png": PngWriter}


def writer_for(path: Path, fps: float) -> FrameWriter:
    """The writer of ``path``'s format (by its extension, see :data:`FORMATS`). It writes to a
    hidden file beside ``path`` (:func:`~sim_server.core.format.file_targets.partial_path`), which :func:`record` puts in place when
    the recording is done: a run that fails leaves whatever was at ``path`` as it was."""
    writer = WRITERS.get(path.suffix.lower())
    if writer is None:
        raise RecordingError(f'"{path}": the file must end in {", ".join(FORMATS)}, got "{path.suffix}"')
    problem = target_problem(path)
    if problem is not None:
        raise RecordingError(f'"{shown_path(path)}": {problem}')
    partial = partial_path(path)
    try:
        partial.touch()
        return writer(partial, fps)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise RecordingError(f'"{path}" cannot be written: {error.strerror or error}') from None
    except Exception as error:  # PyAV's errors: one line
        partial.unlink(missing_ok=True)
        raise RecordingError(f'"{path}" cannot be written: {error}') from None


def _frame_rate(fps: float):
    from fractions import Fraction

    return Fraction(fps).limit_denominator(1001)


@dataclass(frozen=True)
class Recording:
    """What :func:`record` made.

    Attributes:
        path: the file written.
        frames: frames rendered.
        width, height: pixels of a frame.
        sim_seconds: sim time covered (s).
        wall_seconds: how long the recording took (s).
        interrupted: stopped early by ``stop`` (the file holds what was recorded so far).
    """

    path: Path
    frames: int
    width: int
    height: int
    sim_seconds: float
    wall_seconds: float
    interrupted: bool


def record(
    world: "World",
    path: Path,
    seconds: float,
    *,
    fps: float = 10.0,
    speed: float = 1.0,
    view: Callable[["World"], View] | None = None,
    lasers: bool = False,
    trails: bool = False,
    before_step: Callable[["World"], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> Recording:
    """Step ``world`` for ``seconds`` of sim time and write its pictures to ``path``.

    Args:
        world: the world, at the start of the run.
        path: the file (``.gif``, ``.mp4`` or ``.png``: :func:`writer_for`).
        seconds: sim time to record (s, >= 0; 0: one frame of the world as it is).
        fps: frames a second of the video (:data:`FPS_RANGE`).
        speed: sim seconds per second of video (:data:`SPEED_RANGE`).
        view: the view of each frame (default: everything loaded at the start, 512 pixels).
        lasers: draw the rays of the lasers' last scans.
        trails: draw the path each model has taken.
        before_step: called before every step (to drive robots).
        stop: asked before every step and frame after the first frame; True ends the recording
            early, keeping what it has.

    Raises:
        RecordingError: a setting or the file cannot be used. Whatever ``before_step``, ``view``
            or the file raises also ends the recording; then no file is left.
    """
    if not (math.isfinite(seconds) and seconds >= 0.0):
        raise RecordingError(f"the seconds to record must be a finite number >= 0, got {seconds}")
    if not (math.isfinite(fps) and FPS_RANGE[0] <= fps <= FPS_RANGE[1]):
        raise RecordingError(f"frames a second must be from {FPS_RANGE[0]:g} to {FPS_RANGE[1]:g}, got {fps}")
    if not (math.isfinite(speed) and SPEED_RANGE[0] <= speed <= SPEED_RANGE[1]):
        raise RecordingError(f"the speed must be from {SPEED_RANGE[0]:g} to {SPEED_RANGE[1]:g}, got {speed}")
    period = speed / fps  # sim seconds between frames
    count = seconds / period
    if count >= MAX_FRAMES:
        raise RecordingError(f"{seconds:g} s at {fps:g} frames a second and speed {speed:g} is {count:.0f} frames; at most {MAX_FRAMES}")
    frames = int(math.floor(count + 1e-9)) + 1
    if path.suffix.lower() == ".gif" and frames > MAX_GIF_FRAMES:
        raise RecordingError(
            f"{frames} frames are more than a GIF holds ({MAX_GIF_FRAMES}); record an .mp4, or lower --seconds or --fps"
        )
    fixed = View.fit(world) if view is None else None
    view_of = view or (lambda _: fixed)
    first = view_of(world)
    if path.suffix.lower() == ".gif" and frames * first.pixels_x * first.pixels_y > MAX_GIF_PIXELS:
        raise RecordingError(
            f"{frames} frames of {first.pixels_x} x {first.pixels_y} pixels are more than a GIF is allowed to hold "
            f"in memory ({MAX_GIF_PIXELS >> 20} Mi pixels); record an .mp4, fewer frames or fewer pixels"
        )
    renderer = Renderer(world)
    trail = Trails() if trails else None
    writer = writer_for(path, fps)
    start, steps_done, done = time.perf_counter(), 0, 0
    interrupted = False
    try:
        for index in range(frames):
            target = int(round(index * period / world.time.step_size))
            while steps_done < target and not (index and stop()):
                if before_step is not None:
                    before_step(world)
                world.step()
                steps_done += 1
            if index and stop():  # the first frame is always made
                interrupted = True
                break
            if trail is not None:
                trail.record(world)
            done += 1
            if writer.keeps_every_frame or index == frames - 1:
                writer.add(_frame(renderer, view_of(world), world, lasers, trail))
        if not writer.keeps_every_frame and done < frames:  # stopped early: the frame of now
            writer.add(_frame(renderer, view_of(world), world, lasers, trail))
        writer.close()
        os.replace(writer.path, path)
    except BaseException:
        _discard(writer)
        raise
    width, height = writer.size
    return Recording(path, done, width, height, steps_done * world.time.step_size, time.perf_counter() - start, interrupted)


def _frame(renderer: Renderer, view: View, world: "World", lasers: bool, trail: Trails | None) -> np.ndarray:
    overlays = ([laser_rays(world)] if lasers else []) + (trail.overlays() if trail is not None else [])
    return renderer.render(view, overlays)


def _discard(writer: FrameWriter) -> None:
    """A recording that failed leaves no file (a half-written one would pass for the run)."""
    try:
        writer.close()
    except Exception:  # noqa: BLE001 - already failing: the first error is the one to report
        pass
    writer.path.unlink(missing_ok=True)
