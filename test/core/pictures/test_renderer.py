"""Pictures of worlds: walls and bodies where the world has them, in their colours, in every
view (moved, turned, fitted), and views that cannot be drawn refused."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import Pose2D, World
from sim_server.rendering import Renderer, View, render
from sim_server.core.pictures.renderer import BACKGROUND, MAX_PIXELS_SIDE
from test.conftest import REPO_ROOT

RED_DISC = "bodies:\n  - name: base\n    color: [1, 0, 0, 1]\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
BLUE_BOX = (
    "bodies:\n  - name: base\n    type: static\n    color: [0, 0, 1, 1]\n    footprints:\n"
    "      - {type: polygon, points: [[-1, -0.25], [1, -0.25], [1, 0.25], [-1, 0.25]], density: 0}\n"
)


@pytest.fixture
def world(tmp_path: Path) -> World:
    """One wall along y = 2 from x = -5 to 5 (a line-segment layer, pure green), a red disc of
    radius 0.5 at (3, -1) and a blue 2 x 0.5 m box at (-3, -1)."""
    (tmp_path / "wall.dat").write_text("-5 2 5 2\n")
    (tmp_path / "wall.yaml").write_text("type: line_segments\ndata: wall.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "disc.model.yaml").write_text(RED_DISC)
    (tmp_path / "box.model.yaml").write_text(BLUE_BOX)
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - {name: walls, map: wall.yaml, color: [0, 1, 0, 1]}\n"
        "models:\n  - {name: disc, model: disc.model.yaml, pose: [3, -1, 0]}\n"
        "  - {name: box, model: box.model.yaml, pose: [-3, -1, 0]}\n"
    )
    w = World.from_file(tmp_path / "world.yaml")
    yield w
    w.close()


#: 20 m on 200 pixels: 0.1 m a pixel, the world's origin at pixel (100, 100).
VIEW = View(0.0, 0.0, 20.0, 20.0, 200, 200)


def pixel(image: np.ndarray, view: View, x: float, y: float) -> tuple[int, int, int]:
    (column, row), = view.to_pixels(np.array([[x, y]]))
    return tuple(int(v) for v in image[int(row), int(column)])


def test_walls_and_bodies_where_they_are_in_their_colours(world: World) -> None:
    image = render(world, VIEW)
    assert image.shape == (200, 200, 3) and image.dtype == np.uint8
    assert pixel(image, VIEW, 0.0, 2.0) == (0, 255, 0)  # the wall
    assert pixel(image, VIEW, -4.9, 2.0) == (0, 255, 0)
    assert pixel(image, VIEW, 0.0, 2.5) == BACKGROUND and pixel(image, VIEW, 6.0, 2.0) == BACKGROUND
    assert pixel(image, VIEW, 3.0, -1.0) == (255, 0, 0)  # the disc's centre
    assert pixel(image, VIEW, 3.0, -1.8) == BACKGROUND  # beyond its radius
    assert pixel(image, VIEW, -3.8, -1.0) == (0, 0, 255)  # the box, 2 m along x
    assert pixel(image, VIEW, -3.0, -1.5) == BACKGROUND  # and 0.5 m along y
    # Every wall pixel is on the wall's row: nothing else is green.
    rows = np.nonzero((image == (0, 255, 0)).all(axis=2))[0]
    assert set(rows) == {int(VIEW.to_pixels(np.array([[0.0, 2.0]]))[0, 1])}


def test_a_moved_body_is_drawn_where_it_went(world: World) -> None:
    world.move_model("disc", Pose2D(-2.0, -6.0, 0.0))
    image = render(world, VIEW)
    assert pixel(image, VIEW, -2.0, -6.0) == (255, 0, 0) and pixel(image, VIEW, 3.0, -1.0) == BACKGROUND
    world.step(10)
    assert pixel(render(world, VIEW), VIEW, -2.0, -6.0) == (255, 0, 0)


@pytest.mark.parametrize("yaw", [math.pi / 2, -math.pi / 2, math.pi, 0.7])
def test_a_turned_view_turns_the_picture(world: World, yaw: float) -> None:
    """The view's x axis at ``yaw``: a point along it is right of the centre, one along its y
    axis above; the disc and the wall follow."""
    view = View(3.0, -1.0, 20.0, 20.0, 200, 200, yaw)
    image = Renderer(world).render(view)
    assert pixel(image, view, 3.0, -1.0) == (255, 0, 0)
    (column, row), = view.to_pixels(np.array([[3.0 + 2 * math.cos(yaw), -1.0 + 2 * math.sin(yaw)]]))
    assert (column, row) == pytest.approx((120.0, 100.0))
    (column, row), = view.to_pixels(np.array([[3.0 - 2 * math.sin(yaw), -1.0 + 2 * math.cos(yaw)]]))
    assert (column, row) == pytest.approx((100.0, 80.0))
    assert pixel(image, view, 0.0, 2.0) == (0, 255, 0)


def test_alpha_is_blended_and_outlines_are_opaque(tmp_path: Path) -> None:
    (tmp_path / "ghost.model.yaml").write_text(RED_DISC.replace("[1, 0, 0, 1]", "[1, 0, 0, 0.5]"))
    (tmp_path / "world.yaml").write_text("properties: {}\nlayers: []\nmodels:\n  - {name: g, model: ghost.model.yaml}\n")
    world = World.from_file(tmp_path / "world.yaml")
    try:
        image = render(world, VIEW)
        r, g, b = pixel(image, VIEW, 0.0, 0.0)
        assert abs(r - (255 + BACKGROUND[0]) / 2) <= 1 and abs(g - BACKGROUND[1] / 2) <= 1
        edge = [tuple(v) for v in image[100, 100:110]]
        assert (255, 0, 0) in edge  # the outline at 0.5 m
    finally:
        world.close()


def test_a_fitted_view_shows_everything() -> None:
    world = World.from_file(REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml")
    try:
        view = View.fit(world, 400)
        assert max(view.pixels_x, view.pixels_y) == 400
        image = render(world, view)
        assert image.shape == (view.pixels_y, view.pixels_x, 3)
        for model in world.all_models():
            (column, row), = view.to_pixels(np.array([[model.pose.x, model.pose.y]]))
            assert 0 <= column < view.pixels_x and 0 <= row < view.pixels_y
        assert (image != BACKGROUND).any(axis=2).sum() > 1000  # the office's walls
        assert np.array_equal(render(world, view), image)  # nothing moved, the same picture
    finally:
        world.close()


@pytest.mark.parametrize(
    "fields",
    [
        {"x": math.nan}, {"yaw": math.inf}, {"width": 0.0}, {"height": -1.0},
        {"pixels_x": 0}, {"pixels_y": MAX_PIXELS_SIDE + 1}, {"pixels_x": 2.5}, {"pixels_x": True},
        {"x": "1"}, {"yaw": None}, {"width": True}, {"width": 1e-9}, {"height": 5e-324},
    ],
)
def test_views_that_cannot_be_drawn_are_refused(fields: dict) -> None:
    with pytest.raises(ValueError, match="view"):
        View(**fields)

