"""The Camera plugin in-process: what its pictures show (turning with the body or north-up), when
it takes them, its datapack, and configurations it refuses."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from sim_server.core import Pose2D, World, limits
from sim_server.core.errors import ConfigError
from sim_server.rendering import render
from sim_server.core.pictures.renderer import BACKGROUND
from sim_plugins.camera import Camera

GREEN = (0, 255, 0)
RED = (255, 0, 0)

#: A red robot of radius 0.3 m carrying the camera (8 x 8 m on 80 x 80 pixels: 0.1 m a pixel).
ROBOT = {
    "bodies": [{"name": "base", "color": [1, 0, 0, 1], "footprints": [{"type": "circle", "radius": 0.3, "density": 1}]}],
    "plugins": [{"type": "Camera", "name": "camera", "body": "base", "field": [8, 8], "pixels": [80, 80], "update_rate": 10}],
}


def make_world(folder: Path, settings: dict | None = None, pose: str = "[0, 0, 0]") -> World:
    """A green wall along y = 2 from x = -5 to 5 and the robot at ``pose``, its camera's
    configuration changed by ``settings``."""
    model = {**ROBOT, "plugins": [{**ROBOT["plugins"][0], **(settings or {})}]}
    (folder / "wall.dat").write_text("-5 2 5 2\n")
    (folder / "wall.yaml").write_text("type: line_segments\ndata: wall.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (folder / "robot.model.yaml").write_text(yaml.safe_dump(model))
    (folder / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - {name: walls, map: wall.yaml, color: [0, 1, 0, 1]}\n"
        f"models:\n  - {{name: bot, model: robot.model.yaml, pose: {pose}}}\n"
    )
    return World.from_file(folder / "world.yaml", step_size=0.1)


def camera_of(world: World) -> Camera:
    camera = world.plugins.find(world.model("bot"), "camera")
    assert isinstance(camera, Camera)
    return camera


def wall_pixels(image: np.ndarray) -> tuple[set[int], set[int]]:
    """The rows and the columns of the picture where the wall is."""
    rows, columns = np.nonzero((image == GREEN).all(axis=2))
    return set(rows.tolist()), set(columns.tolist())


@pytest.mark.parametrize(
    "yaw, rows, columns",
    [
        (0.0, None, {19, 20}),  # heading east: the wall, 2 m to the left, is a column left of centre
        (math.pi / 2, {19, 20}, None),  # heading north: the wall is ahead, a row above the centre
        (math.pi, None, {59, 60}),  # heading west: to the right
        (-math.pi / 2, {59, 60}, None),  # heading south: behind, below the centre
    ],
)
def test_the_picture_turns_with_the_body(tmp_path: Path, yaw: float, rows, columns) -> None:
    world = make_world(tmp_path, pose=f"[0, 0, {yaw}]")
    try:
        world.step()
        image = camera_of(world).last_image
        assert image.shape == (80, 80, 3) and image.dtype == np.uint8
        assert tuple(image[40, 40]) == RED  # the robot at the centre
        wall_rows, wall_columns = wall_pixels(image)
        if rows is not None:
            assert wall_rows <= rows and len(wall_columns) == 80  # across the whole picture
        else:
            assert wall_columns <= columns and len(wall_rows) == 80
    finally:
        world.close()


@pytest.mark.parametrize("yaw", [0.0, 1.0, math.pi, -2.0])
def test_a_north_up_picture_keeps_the_world_axes(tmp_path: Path, yaw: float) -> None:
    world = make_world(tmp_path, {"north_up": True, "origin": [1, 0, 0]}, pose=f"[0, 0, {yaw}]")
    try:
        world.step()
        image = camera_of(world).last_image
        # The centre is 1 m ahead of the robot: the robot is 10 pixels from it against its
        # heading, the wall (north, y = 2) 2 - sin(yaw) m above it.
        wall_row = 40 - 10 * (2 - math.sin(yaw))
        assert wall_pixels(image)[0] <= {math.floor(wall_row - 0.5), math.floor(wall_row)}
        column, row = 40 - 10 * math.cos(yaw), 40 + 10 * math.sin(yaw)
        assert tuple(image[int(round(row)), int(round(column))]) == RED
    finally:
        world.close()


def test_the_origin_moves_and_turns_the_view(tmp_path: Path) -> None:
    """The origin 2 m ahead and turned left by 90 degrees: the view is centred 2 m east of the
    robot, with the body's left (north) up."""
    world = make_world(tmp_path, {"origin": [2, 0, math.pi / 2]})
    try:
        world.step()
        image = camera_of(world).last_image
        wall_rows, wall_columns = wall_pixels(image)
        # View centre at (2, 0); up is north; the wall at y = 2 is 20 pixels above the centre and
        # ends at x = 5, column 70.
        assert wall_rows <= {19, 20} and wall_columns == set(range(71))
        assert tuple(image[40, 20]) == RED  # the robot 2 m west of the centre: left
    finally:
        world.close()


def test_pictures_follow_the_body_at_the_update_rate(tmp_path: Path) -> None:
    world = make_world(tmp_path, {"update_rate": 5})
    try:
        camera = camera_of(world)
        taken = [camera.last_time_ns]  # None: no picture before the first step
        for _ in range(10):
            world.step()
            if camera.last_time_ns not in taken:
                taken.append(camera.last_time_ns)
        assert taken == [None, 200_000_000, 400_000_000, 600_000_000, 800_000_000, 1_000_000_000]  # 5 Hz
        world.set_model_state("bot", Pose2D(0.0, 1.0, math.pi / 2), 0.0, 0.0, 0.0)
        world.step()
        world.step()
        image = camera.last_image
        assert wall_pixels(image)[0] <= {29, 30}  # the wall is 1 m ahead now
    finally:
        world.close()


def test_the_datapack(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    try:
        camera = camera_of(world)
        world.step()
        pack = camera.datapack()
        assert (pack.name, pack.width, pack.height, pack.depth) == ("bot::camera", 80, 80, 3)
        assert pack.time_ns == camera.last_time_ns == world.time.time_ns
        assert len(pack.data) == 80 * 80 * 3
        assert np.array_equal(np.frombuffer(pack.data, np.uint8).reshape(80, 80, 3), camera.last_image)
        assert pack.data[3 * (40 * 80 + 40):][:3] == bytes(RED)  # row 40, column 40
    finally:
        world.close()


def test_the_datapack_is_the_picture_now(tmp_path: Path) -> None:
    """Not the last picture taken at the rate: a world changed between steps (a model moved
    while paused) or a camera whose pictures nobody wanted gives the picture of now."""
    world = make_world(tmp_path)
    try:
        camera = camera_of(world)
        assert camera.datapack().time_ns == 0 and camera.last_image is None  # before any step
        world.step()
        world.set_model_state("bot", Pose2D(0.0, 0.0, math.pi / 2), 0.0, 0.0, 0.0)  # no step since
        assert wall_pixels(camera.last_image)[1] <= {19, 20}  # the last picture: heading east
        pack = camera.datapack()
        assert pack.time_ns == world.time.time_ns == camera.last_time_ns
        image = np.frombuffer(pack.data, np.uint8).reshape(80, 80, 3)
        assert wall_pixels(image)[0] <= {19, 20}  # now: heading north, the wall ahead
    finally:
        world.close()


def test_the_picture_is_the_renderer_s(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    try:
        world.step()
        camera = camera_of(world)
        assert np.array_equal(camera.last_image, render(world, camera.view()))
        assert tuple(camera.last_image[0, 0]) == BACKGROUND
    finally:
        world.close()


BAD = {
    "topic": ["", "/a//b", "1abc", "bad topic!!", "a/", "~", "x" * 300],
    "frame": ["", "a b", "tab\there", "f" * 300],
    "pixels": [0, [0, 10], [10, -1], [10, int(limits.CAMERA_PIXELS.high) + 1], [1.5, 10], [True, 10], ["a", 1], [10], [1, 2, 3], "80x80"],
    "field": [[0, 1], [1, -1], [1e-9, 1], [1, 5e-324], [1, math.nan], [1, math.inf], [1, 1e9], [1], "big", [[1], 2]],
    "update_rate": [-1, math.nan, "fast"],
    "north_up": ["yes", 1],
    "origin": [[0, 0], [0, 0, math.nan]],
    "body": ["nobody"],
}


@pytest.mark.parametrize("key, value", [(k, v) for k, values in BAD.items() for v in values])
def test_bad_configuration_is_refused_naming_the_key(tmp_path: Path, key: str, value) -> None:
    with pytest.raises(ConfigError) as error:
        make_world(tmp_path, {key: value})
    message = str(error.value)
    assert key in message and "camera" in message and "\n" not in message and len(message) < 600


@pytest.mark.parametrize("topic", ["image", "/top/image", "~/image", "cam_1/image_raw"])
def test_topics_as_ros_names_them(tmp_path: Path, topic: str) -> None:
    make_world(tmp_path, {"topic": topic}).close()


def test_a_north_up_camera_refuses_a_turned_origin(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="north-up.*yaw must be 0"):
        make_world(tmp_path, {"north_up": True, "origin": [0, 0, 0.5]})
