"""Rendering scenarios of ``make bench``: milliseconds per picture of the office world.

* ``fixed view``: all of the office on 256 x 256 pixels, the view unchanged (only the bodies are
  drawn again: the walls of the last view are kept), as in a recording.
* ``turning view``: the same, turned a little every frame, so the walls are drawn again.
* ``camera``: what a ``Camera`` plugin costs: 10 x 10 m around the cleaner on 256 x 256 pixels,
  turning with it as it drives (the issue tracker's target: well under 1 ms).
* ``recording``: frames a second of ``sim_server.rendering.recording.record`` writing a GIF of
  the office at 512 pixels, stepping included.
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path

from bench.targets import CAMERA
from sim_server.core import World
from sim_server.rendering import Renderer, View
from sim_server.rendering.recording import record

OFFICE_WORLD = Path(__file__).resolve().parent.parent / "config" / "worlds" / "demo" / "world.yaml"
PIXELS = 256
CAMERA_FIELD = 10.0


def _ms_per_frame(view_of, renderer: Renderer, seconds: float, between=None) -> float:
    """Milliseconds per ``renderer.render(view_of(i))``, over ``seconds``; ``between()`` (a step,
    say) runs before each frame and is not counted."""
    renderer.render(view_of(0))  # compiled code and caches warm
    frames, spent, start = 0, 0.0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        frames += 1
        if between is not None:
            between()
        view = view_of(frames)
        began = time.perf_counter()
        renderer.render(view)
        spent += time.perf_counter() - began
    return 1e3 * spent / frames


def run(seconds: float) -> dict[str, dict[str, float]]:
    """The figures of each scenario (``ms_per_frame``; the recording also ``frames_per_s``)."""
    world = World.from_file(OFFICE_WORLD, step_size=0.005)
    try:
        whole = View.fit(world, PIXELS)
        square = View(whole.x, whole.y, whole.width, whole.width, PIXELS, PIXELS)
        renderer = Renderer(world)
        fixed = _ms_per_frame(lambda _: square, renderer, seconds / 3)
        turning = _ms_per_frame(
            lambda i: View(square.x, square.y, square.width, square.height, PIXELS, PIXELS, 0.01 * i), renderer, seconds / 3
        )

        def around_the_cleaner(i: int) -> View:
            pose = world.model("cleaner1").pose
            return View(pose.x, pose.y, CAMERA_FIELD, CAMERA_FIELD, PIXELS, PIXELS, pose.theta - 0.5 * math.pi + 0.01 * i)

        camera = _ms_per_frame(around_the_cleaner, renderer, seconds / 3, between=world.step)
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            made = record(world, Path(folder) / "office.gif", 10.0, lasers=True, trails=True)
            recording_s = time.perf_counter() - start
    finally:
        world.close()
    return {
        "fixed view, 256 px": {"ms_per_frame": fixed},
        "turning view, 256 px": {"ms_per_frame": turning},
        CAMERA: {"ms_per_frame": camera},
        "recording, 512 px GIF": {"ms_per_frame": 1e3 * recording_s / made.frames, "frames_per_s": made.frames / recording_s},
    }
