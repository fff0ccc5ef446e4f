"""Laser range sensing: the world as seen by ray casts, and a planar scanner on a body.

:class:`ScanScene` keeps what lasers see: the layers' wall segments (indexed once) and every
model's non-sensor footprints (gathered once per step however many lasers scan). A
:class:`LaserScanner` casts its beams in one compiled batch (:mod:`sim_server.core.raycast`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from Box2D import b2

from sim_server.core.geometry import Pose2D
from sim_server.core.raycast import MAX_VERTICES, MovingShapes, StaticScene, cast_rays

if TYPE_CHECKING:
    from sim_server.core.model import Model
    from sim_server.core.world import World


class _ModelShapes:
    """A model's non-sensor footprints in body frames, ready for batch transformation."""

    def __init__(self, model: "Model") -> None:
        polygons, polygon_counts, polygon_bits, polygon_body = [], [], [], []
        circles, circle_bits, circle_body = [], [], []
        self.bodies: list["b2.body"] = []
        for body_index, body in enumerate(model.bodies.values()):
            self.bodies.append(body.physics_body)
            for fixture in body.physics_body.fixtures:
                if fixture.sensor:
                    continue
                bits = fixture.filterData.categoryBits
                shape = fixture.shape
                if shape.type == shape.e_circle:
                    circles.append((shape.pos[0], shape.pos[1], shape.radius))
                    circle_bits.append(bits)
                    circle_body.append(body_index)
                elif shape.type == shape.e_polygon:
                    points = shape.vertices
                    # Padding repeats the first vertex, so bounds over all 8 rows stay exact.
                    vertices = np.array(list(points) + [points[0]] * (MAX_VERTICES - len(points)), dtype=np.float64)
                    polygons.append(vertices)
                    polygon_counts.append(len(points))
                    polygon_bits.append(bits)
                    polygon_body.append(body_index)
        self.fixed = all(body.type == b2.staticBody for body in self.bodies)
        self._placed: MovingShapes | None = None
        self.polygons = np.array(polygons, dtype=np.float64).reshape(-1, MAX_VERTICES, 2)
        self.polygon_counts = np.array(polygon_counts, dtype=np.int64)
        self.polygon_bits = np.array(polygon_bits, dtype=np.int64)
        self.polygon_body = np.array(polygon_body, dtype=np.int64)
        self.circles = np.array(circles, dtype=np.float64).reshape(-1, 3)
        self.circle_bits = np.array(circle_bits, dtype=np.int64)
        self.circle_body = np.array(circle_body, dtype=np.int64)

    def placed(self) -> MovingShapes:
        """The shapes in the world, computed once for a model that does not move."""
        if self._placed is None:
            self._placed = self.in_world()
        return self._placed

    def forget_placement(self) -> None:
        """The model was moved: compute its world shapes anew."""
        self._placed = None

    def in_world(self) -> MovingShapes:
        """The shapes at their bodies' current poses (world frame)."""
        transforms = np.array(
            [(b.position[0], b.position[1], math.cos(b.angle), math.sin(b.angle)) for b in self.bodies]
        ).reshape(-1, 4)
        t = transforms[self.polygon_body]
        local = self.polygons
        polygons = np.empty_like(local)
        polygons[:, :, 0] = t[:, None, 0] + t[:, None, 2] * local[:, :, 0] - t[:, None, 3] * local[:, :, 1]
        polygons[:, :, 1] = t[:, None, 1] + t[:, None, 3] * local[:, :, 0] + t[:, None, 2] * local[:, :, 1]
        t = transforms[self.circle_body]
        local = self.circles
        circles = np.empty_like(local)
        circles[:, 0] = t[:, 0] + t[:, 2] * local[:, 0] - t[:, 3] * local[:, 1]
        circles[:, 1] = t[:, 1] + t[:, 3] * local[:, 0] + t[:, 2] * local[:, 1]
        circles[:, 2] = local[:, 2]
        return MovingShapes(
            polygons, self.polygon_counts, self.polygon_bits, self.polygon_bits,
            circles, self.circle_bits, self.circle_bits,
        )


def _concatenate(parts: list[MovingShapes]) -> MovingShapes:
    if not parts:
        return MovingShapes.empty()
    if len(parts) == 1:
        return parts[0]
    return MovingShapes(*(np.concatenate([getattr(p, f) for p in parts]) for f in MovingShapes.__dataclass_fields__))


class _Culled:
    """Shapes with their bounding circles, for picking those within reach of a laser."""

    def __init__(self, shapes: MovingShapes) -> None:
        self.shapes = shapes
        polygons = shapes.polygons
        self.polygon_centres = polygons[:, 0, :]
        self.polygon_radii = np.sqrt(((polygons - polygons[:, :1, :]) ** 2).sum(axis=2).max(axis=1)) if len(polygons) else np.zeros(0)

    def near(self, x: float, y: float, reach: float) -> MovingShapes:
        """The shapes that may lie within ``reach`` (m) of (x, y)."""
        shapes = self.shapes
        keep_polygons = np.hypot(self.polygon_centres[:, 0] - x, self.polygon_centres[:, 1] - y) - self.polygon_radii <= reach
        circles = shapes.circles
        keep_circles = np.hypot(circles[:, 0] - x, circles[:, 1] - y) - circles[:, 2] <= reach
        if keep_polygons.all() and keep_circles.all():
            return shapes
        return MovingShapes(
            np.ascontiguousarray(shapes.polygons[keep_polygons]), shapes.polygon_counts[keep_polygons],
            shapes.polygon_bits[keep_polygons], shapes.polygon_tags[keep_polygons],
            np.ascontiguousarray(circles[keep_circles]), shapes.circle_bits[keep_circles], shapes.circle_tags[keep_circles],
        )


class ScanScene:
    """What lasers see in a world, kept up to date as models come and go (a WorldListener).

    Models whose bodies are all static are transformed once and indexed in the grid with the
    walls; the others are gathered once per step however many lasers scan, and each scan keeps
    only those within its range.

    Args:
        world: the world to sense.
    """

    def __init__(self, world: "World") -> None:
        self._world = world
        self._static: StaticScene | None = None
        self._static_version: tuple[int, int] | None = None
        self._models: dict[int, _ModelShapes] = {}
        self._movers: dict[int, _ModelShapes] = {}
        self._fixed: _Culled | None = None
        self._moving: _Culled | None = None
        self._moving_at = -1
        world.add_listener(self)

    # ------------------------------------------------------------------ WorldListener
    def on_model_added(self, model: "Model") -> None:
        """A model came: gather its shapes."""
        self._shapes(model)
        self._moving_at = -1

    def on_model_removed(self, model: "Model") -> None:
        """Forget the model's shapes."""
        shapes = self._models.pop(id(model), None)
        if shapes is not None and shapes.fixed:
            self._fixed = None
        self._movers.pop(id(model), None)
        self._moving_at = -1

    def on_model_moved(self, model: "Model") -> None:
        """A model was placed somewhere else: a cached static model must be re-gathered."""
        shapes = self._models.get(id(model))
        if shapes is not None and shapes.fixed:
            shapes.forget_placement()
            self._fixed = None
        self._moving_at = -1

    # ------------------------------------------------------------------ scene parts
    @property
    def static(self) -> StaticScene:
        """The layers' wall segments in world coordinates (tags are their collision bits)."""
        fixed = self._fixed_part()
        version = (self._world.static_geometry_version, id(fixed))
        if self._static is None or self._static_version != version:
            segments, bits = [], []
            for layer in self._world.layers:
                edges = layer.loaded_edges()
                if not len(edges):
                    continue
                origin = layer.origin
                cos_t, sin_t = math.cos(origin.theta), math.sin(origin.theta)
                world_edges = np.empty_like(edges)
                world_edges[:, 0] = origin.x + cos_t * edges[:, 0] - sin_t * edges[:, 1]
                world_edges[:, 1] = origin.y + sin_t * edges[:, 0] + cos_t * edges[:, 1]
                world_edges[:, 2] = origin.x + cos_t * edges[:, 2] - sin_t * edges[:, 3]
                world_edges[:, 3] = origin.y + sin_t * edges[:, 2] + cos_t * edges[:, 3]
                segments.append(world_edges)
                bits.append(np.full(len(edges), layer.category_bits, dtype=np.int64))
            all_segments = np.vstack(segments) if segments else np.zeros((0, 4))
            all_bits = np.concatenate(bits) if bits else np.zeros(0, dtype=np.int64)
            self._static = StaticScene(all_segments, all_bits, all_bits, fixed.shapes)
            self._static_version = version
        return self._static

    def _shapes(self, model: "Model") -> _ModelShapes:
        shapes = self._models.get(id(model))
        if shapes is None:
            shapes = self._models[id(model)] = _ModelShapes(model)
            if shapes.fixed:
                self._fixed = None
            else:
                self._movers[id(model)] = shapes
        return shapes

    def moving(self, iteration: int) -> MovingShapes:
        """The moving models' non-sensor footprints in world coordinates at step ``iteration``
        (static models' are part of :attr:`static`)."""
        return self._moving_part(iteration).shapes

    def near(self, x: float, y: float, reach: float, iteration: int) -> MovingShapes:
        """The moving models' footprints that may lie within ``reach`` (m) of (x, y) at step
        ``iteration``."""
        return self._moving_part(iteration).near(x, y, reach)

    def _fixed_part(self) -> _Culled:
        if self._fixed is None:
            for model in self._world.models.values():
                self._shapes(model)
            parts = [shapes.placed() for shapes in self._models.values() if shapes.fixed]
            self._fixed = _Culled(_concatenate(parts))
        return self._fixed

    def _moving_part(self, iteration: int) -> _Culled:
        if self._moving is None or self._moving_at != iteration:
            if len(self._models) != len(self._world.models):
                for model in self._world.models.values():
                    self._shapes(model)
            self._moving = _Culled(_concatenate([shapes.in_world() for shapes in self._movers.values()]))
            self._moving_at = iteration
        return self._moving

    def close(self) -> None:
        """Stop following the world."""
        self._world.remove_listener(self)


def scene_of(world: "World") -> ScanScene:
    """The world's shared scan scene (created on first use)."""
    scene = getattr(world, "_scan_scene", None)
    if scene is None:
        scene = ScanScene(world)
        world._scan_scene = scene  # noqa: SLF001 - one shared cache per world
    return scene


def beam_count(angle_min: float, angle_max: float, increment: float) -> int:
    """Number of beams, ``round((max - min) / increment) + 1`` (halves away from zero)."""
    ratio = (angle_max - angle_min) / increment
    return int(math.floor(abs(ratio) + 0.5)) * (1 if ratio >= 0 else -1) + 1


class LaserScanner:
    """A planar laser on a body.

    Args:
        body: the Box2D body carrying it.
        origin: its pose in the body frame (m, rad).
        angle_min, angle_max, increment: beam angles in the laser frame (rad); a negative
            increment scans clockwise.
        max_range: range (m).
        layer_bits: collision bits of the layers it sees.
        upside_down: mounted upside down: every beam angle is negated.
        noise_std_dev: standard deviation (m) of Gaussian noise added to hits.
        rng: the random generator of the noise.
    """

    def __init__(
        self,
        body: "b2.body",
        origin: Pose2D,
        angle_min: float,
        angle_max: float,
        increment: float,
        max_range: float,
        layer_bits: int,
        upside_down: bool = False,
        noise_std_dev: float = 0.0,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.body = body
        self.origin = origin
        self.max_range = max_range
        self.layer_bits = layer_bits
        self.noise_std_dev = noise_std_dev
        self.rng = rng or np.random.default_rng()
        count = beam_count(angle_min, angle_max, increment)
        local = angle_min + increment * np.arange(count, dtype=np.float64)
        self.local_angles = -local if upside_down else local
        self._angles = np.empty(count)
        self._ranges = np.empty(count)
        self._bits = np.empty(count, dtype=np.int64)

    @property
    def beam_count(self) -> int:
        """Beams per scan."""
        return len(self.local_angles)

    def pose(self) -> Pose2D:
        """The laser's pose in the world."""
        position = self.body.position
        return Pose2D(position[0], position[1], self.body.angle).compose(self.origin)

    def scan(self, scene: ScanScene, iteration: int) -> tuple[np.ndarray, np.ndarray]:
        """Cast every beam now.

        Returns:
            ranges: float32 metres per beam, NaN where nothing is hit within range.
            hit_bits: collision bits of the shape each beam hit (0 for none).
        """
        pose = self.pose()
        np.add(self.local_angles, pose.theta, out=self._angles)
        ranges, bits = cast_rays(
            pose.x, pose.y, self._angles, self.max_range, self.layer_bits,
            scene.static, scene.near(pose.x, pose.y, self.max_range, iteration), self._ranges, self._bits,
        )
        hits = np.isfinite(ranges)
        if self.noise_std_dev > 0.0:
            ranges = ranges + np.where(hits, self.rng.normal(0.0, self.noise_std_dev, len(ranges)), 0.0)
        out = ranges.astype(np.float32)
        out[~hits] = np.nan
        return out, np.where(hits, bits, 0)
