"""Recording runs: frames at the right sim times, the three file formats, the overlays (laser
rays, trails), stopping early, and settings that cannot be used refused."""

from __future__ import annotations

import math
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from sim_server.core import Pose2D, World
from sim_server.rendering import Renderer, View, render
from sim_server.rendering.overlays import RAY_COLOR, Trails, laser_rays
from sim_server.rendering.recording import MAX_GIF_FRAMES, RecordingError, record

#: A red robot with a DiffDrive and a laser seeing 8 beams to 10 m, in a 10 x 10 m green box.
ROBOT = """
bodies:
  - name: base
    color: [1, 0, 0, 1]
    footprints: [{type: circle, radius: 0.3, density: 1}]
plugins:
  - {type: DiffDrive, name: drive, body: base}
  - {type: Laser, name: laser, body: base, range: 10, angle: {min: 0, max: 5.5, increment: 0.785398}}
"""


@pytest.fixture
def world(tmp_path: Path) -> World:
    (tmp_path / "box.dat").write_text("-5 -5 5 -5\n5 -5 5 5\n5 5 -5 5\n-5 5 -5 -5\n")
    (tmp_path / "box.yaml").write_text("type: line_segments\ndata: box.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "robot.model.yaml").write_text(ROBOT)
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - {name: walls, map: box.yaml, color: [0, 1, 0, 1]}\n"
        "models:\n  - {name: bot, model: robot.model.yaml, pose: [0, 0, 0]}\n"
    )
    w = World.from_file(tmp_path / "world.yaml", step_size=0.01)
    yield w
    w.close()


VIEW = View(0.0, 0.0, 12.0, 12.0, 120, 120)


def gif_milliseconds(gif: Image.Image) -> int:
    """How long a GIF plays once (Pillow merges equal frames in a row into one shown longer)."""
    total = 0
    for index in range(gif.n_frames):
        gif.seek(index)
        total += gif.info["duration"]
    return total


def drive(world: World, linear: float, angular: float) -> None:
    command = world.plugins.find(world.model("bot"), "drive").command
    command.linear, command.angular = linear, angular


@pytest.mark.parametrize("seconds, fps, speed, frames, steps", [
    (1.0, 10.0, 1.0, 11, 100), (1.0, 10.0, 2.0, 6, 100), (0.0, 10.0, 1.0, 1, 0), (0.95, 10.0, 1.0, 10, 90), (0.5, 3.0, 1.0, 2, 33),
])
def test_frames_fall_on_the_sim_times_asked(world: World, tmp_path: Path, seconds, fps, speed, frames, steps) -> None:
    times: list[int] = []
    result = record(world, tmp_path / "run.png", seconds, fps=fps, speed=speed, view=lambda _: VIEW,
                    before_step=lambda w: times.append(w.time.iterations))
    assert result.frames == frames and len(times) == steps == world.time.iterations
    assert result.sim_seconds == pytest.approx(steps * 0.01)
    assert not result.interrupted and (result.width, result.height) == (120, 120)


def test_a_gif_holds_every_frame_looping_at_the_frame_rate(world: World, tmp_path: Path) -> None:
    drive(world, 1.0, 0.0)
    result = record(world, tmp_path / "run.gif", 2.0, fps=5.0, view=lambda _: VIEW)
    with Image.open(result.path) as gif:
        assert gif.n_frames == 11 and gif.size == (120, 120)
        assert gif.info["duration"] == 200 and gif.info["loop"] == 0
        centres = []
        for index in (0, 10):
            gif.seek(index)
            picture = np.asarray(gif.convert("RGB"))
            centres.append(np.argwhere((picture == (255, 0, 0)).all(axis=2)).mean(axis=0))
    # The robot drove 2 m east: 20 pixels to the right.
    assert centres[1][1] - centres[0][1] == pytest.approx(20.0, abs=1.5)
    assert centres[1][0] == pytest.approx(centres[0][0], abs=0.5)


def test_an_mp4_is_h264_with_even_sides(world: World, tmp_path: Path) -> None:
    odd = View(0.0, 0.0, 12.1, 6.1, 121, 61)
    result = record(world, tmp_path / "run.mp4", 1.0, fps=20.0, view=lambda _: odd)
    assert result.frames == 21
    with av.open(str(result.path)) as video:
        stream = video.streams.video[0]
        assert stream.codec_context.name == "h264" and (stream.width, stream.height) == (120, 60)
        assert stream.average_rate == 20
        decoded = [frame.to_ndarray(format="rgb24") for frame in video.decode(video=0)]
    assert len(decoded) == 21
    # Lossy, but the robot is red at the centre and the background dark.
    assert decoded[0][30, 60, 0] > 180 and decoded[0][30, 60, 1] < 90
    assert abs(int(decoded[0][5, 5, 0]) - 48) < 12


def test_a_png_is_the_last_frame(world: World, tmp_path: Path) -> None:
    drive(world, 0.5, 1.0)
    result = record(world, tmp_path / "end.png", 1.5, view=lambda _: VIEW)
    assert result.frames == 16
    with Image.open(result.path) as png:
        assert np.array_equal(np.asarray(png.convert("RGB")), render(world, VIEW))


def test_a_png_draws_only_its_frame(world: World, tmp_path: Path, monkeypatch) -> None:
    from sim_server.core.pictures.renderer import Renderer

    drawn = []
    original = Renderer.render
    monkeypatch.setattr(Renderer, "render", lambda self, view, overlays=(): drawn.append(1) or original(self, view, overlays))
    result = record(world, tmp_path / "end.png", 2.0, view=lambda _: VIEW, trails=True)
    assert result.frames == 21 and len(drawn) == 1
    start = world.time.iterations
    result = record(world, tmp_path / "early.png", 2.0, view=lambda _: VIEW, stop=lambda: world.time.iterations - start >= 45)
    assert result.interrupted and result.frames == 5 and len(drawn) == 2  # stopped: the frame of then
    assert world.time.iterations - start == 45  # stopped between two frames, at once


def test_a_failed_recording_leaves_no_file(world: World, tmp_path: Path) -> None:
    def fail(w: World) -> None:
        if w.time.sim_time > 0.5:
            raise RuntimeError("the driver gave up")

    out = tmp_path / "out"
    out.mkdir()
    for name in ("run.gif", "run.mp4", "run.png"):
        with pytest.raises(RuntimeError, match="gave up"):
            record(world, out / name, 1.0, view=lambda _: VIEW, before_step=fail)
    assert not list(out.iterdir())  # neither the files nor their partial copies


def test_a_followed_view_moves_with_the_robot(world: World, tmp_path: Path) -> None:
    drive(world, 1.0, 0.0)
    follow = lambda w: View(w.model("bot").pose.x, w.model("bot").pose.y, 4.0, 4.0, 40, 40)  # noqa: E731
    result = record(world, tmp_path / "run.gif", 2.0, fps=2.0, view=follow)
    with Image.open(result.path) as gif:  # equal frames in a row are one frame shown longer
        assert gif_milliseconds(gif) == 500 * result.frames
        for index in range(gif.n_frames):
            gif.seek(index)
            assert tuple(np.asarray(gif.convert("RGB"))[20, 20]) == (255, 0, 0)


def test_laser_rays_end_where_the_laser_hit(world: World) -> None:
    world.step()
    laser = world.plugins.find(world.model("bot"), "laser")
    overlay = laser_rays(world)
    assert overlay.rgba == RAY_COLOR and len(overlay.segments) == 8
    ends = overlay.segments[:, 2:]
    assert np.allclose(overlay.segments[:, :2], 0.0, atol=1e-6)
    assert np.allclose(np.hypot(ends[:, 0], ends[:, 1]), laser.last_ranges, atol=1e-4)
    assert np.allclose(np.max(np.abs(ends), axis=1), 5.0, atol=1e-4)  # every ray ends on the box
    picture = render(world, VIEW)
    with_rays = Renderer(world).render(VIEW, [overlay])
    changed = (picture != with_rays).any(axis=2)
    assert changed[60, 80] and not changed[5, 60]  # along the first ray (east), not far off it


def test_trails_follow_each_model_in_its_colour(world: World) -> None:
    trails = Trails()
    drive(world, 1.0, 0.0)
    for _ in range(5):
        trails.record(world)
        world.step(10)
    (overlay,) = trails.overlays()
    assert overlay.rgba == (255, 0, 0, 255) and len(overlay.segments) == 4
    assert overlay.segments[:, 0] == pytest.approx([0.0, 0.1, 0.2, 0.3], abs=0.02)
    world.delete_model("bot")
    trails.record(world)
    assert len(trails.overlays()) == 1  # the trail stays after the model left


def test_stopping_early_keeps_what_was_recorded(world: World, tmp_path: Path) -> None:
    result = record(world, tmp_path / "run.gif", 5.0, view=lambda _: VIEW, stop=lambda: world.time.iterations >= 35)
    assert result.interrupted and result.frames == 4 and world.time.iterations == 35  # frames at 0, 0.1, 0.2, 0.3 s
    with Image.open(result.path) as gif:
        assert gif_milliseconds(gif) == 400


@pytest.mark.parametrize("settings, fault", [
    ({"seconds": -1.0}, "seconds"), ({"seconds": math.nan}, "seconds"), ({"seconds": math.inf}, "seconds"),
    ({"fps": 0.0}, "frames a second"), ({"fps": 121.0}, "frames a second"), ({"fps": math.nan}, "frames a second"),
    ({"speed": 0.0}, "speed"), ({"speed": -2.0}, "speed"), ({"speed": math.inf}, "speed"),
    ({"name": "run.avi"}, "must end in"), ({"name": "run"}, "must end in"), ({"name": "no/such/folder/run.gif"}, "does not exist"),
    ({"seconds": MAX_GIF_FRAMES / 10.0 + 1.0}, "more than a GIF holds"),
    ({"seconds": 1e6, "name": "run.mp4"}, "at most"), ({"seconds": 1e308, "name": "run.mp4"}, "at most"),
    ({"fps": 0.001}, "frames a second"), ({"fps": 5e-324}, "frames a second"), ({"speed": 1e-320}, "speed"),
    ({"seconds": 100.0, "view": View(0.0, 0.0, 10.0, 10.0, 4096, 4096)}, "more than a GIF is allowed to hold"),
])
def test_settings_that_cannot_be_used_are_refused_before_anything_runs(world: World, tmp_path: Path, settings: dict, fault: str) -> None:
    settings = dict(settings)
    (tmp_path / "out").mkdir()
    path = tmp_path / "out" / settings.pop("name", "run.gif")
    view = settings.pop("view", VIEW)
    with pytest.raises(RecordingError, match=fault):
        record(world, path, settings.pop("seconds", 1.0), view=lambda _: view, **settings)
    assert world.time.iterations == 0 and not list((tmp_path / "out").iterdir())


def test_the_default_view_shows_everything(world: World, tmp_path: Path) -> None:
    result = record(world, tmp_path / "all.png", 0.0)
    assert max(result.width, result.height) == 512
    world.set_model_state("bot", Pose2D(4.0, 4.0, 0.0), 0.0, 0.0, 0.0)
    assert np.array_equal(np.asarray(Image.open(result.path).convert("RGB"))[0, 0], [48, 48, 48])
