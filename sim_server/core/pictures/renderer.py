"""Pictures of a world: its layers' walls, its models' footprints and its pedestrians, seen from
above, as an RGB array, with no display and no GPU.

A :class:`View` says what to show: a rectangle of the world (centre and size in metres, its axes
turned by ``yaw`` from the world's) on an image of so many pixels: image right is the view's +x,
image up its +y, so at yaw 0 east (+x) is right and north (+y) up (REP 103). The colours are the files' own, as RViz shows them: walls in their
layer's colour, bodies filled in their colour (its alpha blended) and outlined opaque, on RViz's
dark grey; pedestrians (which the files give no colour) as orange discs.

Everything is drawn by a compiled rasterizer (:mod:`sim_server.core.pictures.raster`), which visits
only the pixels of the picture, however large or small the shapes are. A :class:`Renderer` keeps
the walls of its last view and draws only the models again while neither the view nor the loaded
walls change (a fixed view, as in a recording). :func:`render` draws a world with the renderer
the world keeps for it.

The renderer knows no world's class: it takes a world (a
:class:`~sim_server.core.physics.world_view.WorldView`, as the core's parts see it, which the
plugins' world is too) and draws what it holds. No rclpy here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING, Iterable, NamedTuple

import numpy as np

from sim_server.core.pictures.raster import Shapes, draw_segments

if TYPE_CHECKING:
    from sim_server.core.physics.world_view import WorldView

class Overlay(NamedTuple):
    """What a picture may show over the walls, under the bodies (laser rays, trails:
    :mod:`sim_server.rendering.overlays` makes them): segments (N, 4: x0, y0, x1, y1 in m, world
    frame) and their colour (RGBA, 0 to 255)."""

    segments: np.ndarray
    rgba: tuple[int, int, int, int]


#: Where :func:`render` keeps a world's renderer
#: (:meth:`~sim_server.core.physics.world_view.WorldView.shared`).
RENDERER_KEY = "sim_server.core.pictures.renderer.Renderer"

#: The background: RViz's default.
BACKGROUND = (48, 48, 48)
#: Most pixels of an image side (an 8k x 8k picture is 192 MiB; drawing keeps about three).
MAX_PIXELS_SIDE = 8_192
#: The smallest side of a view (m): below, the world's coordinates have too few digits left.
MIN_VIEW_SIZE = 1e-6
#: The margin around everything that :meth:`View.fit` leaves (a share of the larger side).
FIT_MARGIN = 0.05


@dataclass(frozen=True)
class View:
    """What a picture shows.

    Attributes:
        x, y: centre of the view in the world (m).
        width, height: size of the view (m, at least :data:`MIN_VIEW_SIZE`).
        pixels_x, pixels_y: size of the image (1 to :data:`MAX_PIXELS_SIDE`).
        yaw: the angle (rad) of the view's axes from the world's: at yaw 0 north is up; to show a
            body's heading up, use the body's yaw minus pi/2.
    """

    x: float = 0.0
    y: float = 0.0
    width: float = 20.0
    height: float = 20.0
    pixels_x: int = 256
    pixels_y: int = 256
    yaw: float = 0.0

    def __post_init__(self) -> None:
        numbers = (self.x, self.y, self.width, self.height, self.yaw)
        if not all(isinstance(v, Real) and not isinstance(v, bool) for v in numbers):
            raise ValueError(f"a view's centre, size and yaw are numbers, got {self}")
        if not all(math.isfinite(v) for v in numbers) or min(self.width, self.height) < MIN_VIEW_SIZE:
            raise ValueError(f"a view needs a finite centre and yaw and sides of at least {MIN_VIEW_SIZE:g} m, got {self}")
        for side in (self.pixels_x, self.pixels_y):
            if not isinstance(side, Integral) or isinstance(side, bool) or not 1 <= side <= MAX_PIXELS_SIDE:
                raise ValueError(f"a view's image sides must be whole numbers from 1 to {MAX_PIXELS_SIDE}, got {side}")

    @classmethod
    def fit(cls, world: "WorldView", pixels: int = 512) -> "View":
        """A north-up view of everything loaded (walls and models), ``pixels`` on its longer side."""
        boxes = [_edges_box(layer.world_edges()) for layer in world.layers]
        boxes += [_box(_model_points(model)) for model in world.all_models()]
        boxes = [box for box in boxes if box is not None]
        if not boxes:
            return cls(pixels_x=pixels, pixels_y=pixels)
        low_x = min(b[0] for b in boxes)
        low_y = min(b[1] for b in boxes)
        high_x = max(b[2] for b in boxes)
        high_y = max(b[3] for b in boxes)
        margin = FIT_MARGIN * max(high_x - low_x, high_y - low_y, 1.0)
        width, height = high_x - low_x + 2 * margin, high_y - low_y + 2 * margin
        return cls.sized((low_x + high_x) / 2, (low_y + high_y) / 2, width, height, pixels)

    @classmethod
    def sized(cls, x: float, y: float, width: float, height: float, pixels: int, yaw: float = 0.0) -> "View":
        """A view of ``width`` x ``height`` m at (``x``, ``y``) with square pixels, ``pixels`` on
        its longer side."""
        scale = pixels / max(width, height)
        return cls(x, y, width, height, max(1, round(width * scale)), max(1, round(height * scale)), yaw)

    def to_pixels(self, points: np.ndarray) -> np.ndarray:
        """(N, 2) world points (m) as (N, 2) pixel coordinates (column, row; floats)."""
        a, b, c, d, e, f = self.affine()
        x, y = points[:, 0], points[:, 1]
        return np.column_stack((a * x + b * y + c, d * x + e * y + f))

    def affine(self) -> np.ndarray:
        """The map from the world (m) to pixels as six floats (a, b, c, d, e, f): column =
        a x + b y + c, row = d x + e y + f (the same as :meth:`to_pixels`)."""
        cos, sin = math.cos(self.yaw), math.sin(self.yaw)
        scale_x, scale_y = self.pixels_x / self.width, self.pixels_y / self.height
        a, b = scale_x * cos, scale_x * sin
        d, e = scale_y * sin, -scale_y * cos
        c = 0.5 * self.pixels_x - a * self.x - b * self.y
        f = 0.5 * self.pixels_y - d * self.x - e * self.y
        return np.array([a, b, c, d, e, f])


#: How pedestrians are drawn (RGBA, 0 to 255): orange discs, outlined darker.
PEDESTRIAN_FILL = (255, 140, 26, 220)
PEDESTRIAN_LINE = (160, 70, 0, 255)


class Renderer:
    """Draws ``world`` (see the module's docstring)."""

    def __init__(self, world: "WorldView") -> None:
        self.world = world
        self._walls_key: tuple | None = None
        self._walls: np.ndarray | None = None
        self._edges_key: tuple | None = None
        self._edges: dict[int, np.ndarray] = {}

    def render(self, view: View, overlays: Iterable[Overlay] = ()) -> np.ndarray:
        """The picture of the world now, as a (pixels_y, pixels_x, 3) uint8 array; ``overlays``
        (laser rays, trails: :mod:`sim_server.rendering.overlays`) go over the walls, under the
        bodies."""
        walls = self._wall_picture(view)
        overlays = list(overlays)
        if overlays:
            walls = walls.copy()
            affine = view.affine()
            for overlay in overlays:
                draw_segments(walls, overlay.segments, affine, overlay.rgba)
        picture = walls.copy() if not overlays else walls  # overlays drew on a copy already
        shapes = Shapes()
        for model in self.world.all_models():
            _add_model(shapes, model)
        circles, _ = self.world.crowd_circles()
        shapes.circles(circles, PEDESTRIAN_FILL, PEDESTRIAN_LINE)
        shapes.draw(picture, view.affine())
        return picture

    def _wall_picture(self, view: View) -> np.ndarray:
        key = (view, self.world.static_geometry_version, id(self.world))
        if key != self._walls_key or self._walls is None:
            canvas = _blank(view.pixels_y, view.pixels_x)
            affine = view.affine()
            for layer in self.world.layers:
                draw_segments(canvas, self._layer_edges(layer), affine, rgba(layer.spec.color))
            canvas.flags.writeable = False
            self._walls, self._walls_key = canvas, key
        return self._walls

    def _layer_edges(self, layer) -> np.ndarray:
        """The loaded walls of ``layer`` in the world frame, kept while they do not change."""
        key = (id(self.world), self.world.static_geometry_version)
        if self._edges_key != key:
            self._edges, self._edges_key = {}, key
        edges = self._edges.get(id(layer))
        if edges is None:
            edges = self._edges[id(layer)] = layer.world_edges()
        return edges


def render(world: "WorldView", view: View | None = None, pixels: int = 512) -> np.ndarray:
    """A picture of the world now: an (height, width, 3) uint8 RGB array of ``view``, or by
    default of everything loaded, ``pixels`` on the longer side, north up. The world keeps the
    renderer, so a fixed view redraws only the models."""
    renderer = world.shared(RENDERER_KEY, lambda: Renderer(world))
    return renderer.render(view if view is not None else View.fit(world, pixels))


def _blank(height: int, width: int) -> np.ndarray:
    """A new (height, width, 3) picture of :data:`BACKGROUND` (a copy of one made once per size)."""
    global _BLANK
    if _BLANK.shape[:2] != (height, width):
        _BLANK = np.empty((height, width, 3), dtype=np.uint8)
        _BLANK[:] = np.array(BACKGROUND, dtype=np.uint8)
    return _BLANK.copy()


_BLANK = np.empty((0, 0, 3), dtype=np.uint8)


def rgba(color: Iterable[float], alpha: float | None = None) -> tuple[int, int, int, int]:
    """A file's colour ([r, g, b, a], 0 to 1) as 0 to 255, its alpha replaced by ``alpha`` if given."""
    r, g, b, a = color
    return tuple(int(round(255 * min(1.0, max(0.0, c)))) for c in (r, g, b, a if alpha is None else alpha))  # type: ignore[return-value]


def _model_points(model) -> np.ndarray:
    points = []
    for _, outline in model.world_footprints():
        if isinstance(outline, tuple):
            x, y, radius = outline
            points += [(x - radius, y - radius), (x + radius, y + radius)]
        else:
            points += outline
    return np.array(points, dtype=float).reshape(-1, 2)


def _box(points: np.ndarray) -> tuple[float, float, float, float] | None:
    if len(points) == 0:
        return None
    return float(points[:, 0].min()), float(points[:, 1].min()), float(points[:, 0].max()), float(points[:, 1].max())


def _edges_box(edges: np.ndarray) -> tuple[float, float, float, float] | None:
    return _box(edges.reshape(-1, 2)) if len(edges) else None


def _add_model(shapes: Shapes, model) -> None:
    for body, outline in model.world_footprints():
        fill = rgba(body.spec.color)
        line = rgba(body.spec.color, alpha=1.0)
        if isinstance(outline, tuple):
            shapes.circle(*outline, fill, line)
        else:
            shapes.polygon(outline, fill, line)
