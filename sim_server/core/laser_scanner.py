"""Laser range sensing: the world as seen by ray casts, and a planar scanner on a body.

:class:`ScanScene` keeps what lasers see: the layers' wall segments (indexed once) and every
model's non-sensor footprints (gathered once per step however many lasers scan). A
:class:`LaserScanner` casts its beams in one compiled batch (:mod:`sim_server.core.raycast`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from sim_server.core.geometry import Pose2D
from sim_server.core.raycast import MAX_VERTICES, MovingShapes, StaticScene, cast_rays

if TYPE_CHECKING:
    from Box2D import b2

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
                    vertices = np.zeros((MAX_VERTICES, 2))
                    points = shape.vertices
                    vertices[: len(points)] = points
                    polygons.append(vertices)
                    polygon_counts.append(len(points))
                    polygon_bits.append(bits)
                    polygon_body.append(body_index)
        self.polygons = np.array(polygons, dtype=np.float64).reshape(-1, MAX_VERTICES, 2)
        self.polygon_counts = np.array(polygon_counts, dtype=np.int64)
        self.polygon_bits = np.array(polygon_bits, dtype=np.int64)
        self.polygon_body = np.array(polygon_body, dtype=np.int64)
        self.circles = np.array(circles, dtype=np.float64).reshape(-1, 3)
        self.circle_bits = np.array(circle_bits, dtype=np.int64)
        self.circle_body = np.array(circle_body, dtype=np.int64)


class ScanScene:
    """What lasers see in a world, kept up to date as models come and go (a WorldListener).

    Args:
        world: the world to sense.
    """

    def __init__(self, world: "World") -> None:
        self._world = world
        self._static: StaticScene | None = None
        self._static_version = -1
        self._models: dict[int, _ModelShapes] = {}
        self._moving: MovingShapes | None = None
        self._moving_at = -1
        world.add_listener(self)

    # ------------------------------------------------------------------ WorldListener
    def on_model_added(self, model: "Model") -> None:
        """Forget the gathered shapes: a model came."""
        self._moving_at = -1

    def on_model_removed(self, model: "Model") -> None:
        """Forget the model's shapes."""
        self._models.pop(id(model), None)
        self._moving_at = -1

    # ------------------------------------------------------------------ scene parts
    @property
    def static(self) -> StaticScene:
        """The layers' wall segments in world coordinates (tags are their collision bits)."""
        version = self._world.static_geometry_version
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
            self._static = StaticScene(all_segments, all_bits, all_bits)
            self._static_version = version
        return self._static

    def moving(self, iteration: int) -> MovingShapes:
        """Every model's non-sensor footprints in world coordinates at step ``iteration``."""
        if self._moving is not None and self._moving_at == iteration:
            return self._moving
        polygons, counts, polygon_bits = [], [], []
        circles, circle_bits = [], []
        for model in self._world.models.values():
            shapes = self._models.get(id(model))
            if shapes is None:
                shapes = self._models[id(model)] = _ModelShapes(model)
            transforms = np.array(
                [(b.position[0], b.position[1], math.cos(b.angle), math.sin(b.angle)) for b in shapes.bodies]
            ).reshape(-1, 4)
            if len(shapes.polygons):
                t = transforms[shapes.polygon_body]
                local = shapes.polygons
                world = np.empty_like(local)
                world[:, :, 0] = t[:, None, 0] + t[:, None, 2] * local[:, :, 0] - t[:, None, 3] * local[:, :, 1]
                world[:, :, 1] = t[:, None, 1] + t[:, None, 3] * local[:, :, 0] + t[:, None, 2] * local[:, :, 1]
                polygons.append(world)
                counts.append(shapes.polygon_counts)
                polygon_bits.append(shapes.polygon_bits)
            if len(shapes.circles):
                t = transforms[shapes.circle_body]
                local = shapes.circles
                world_circles = np.empty_like(local)
                world_circles[:, 0] = t[:, 0] + t[:, 2] * local[:, 0] - t[:, 3] * local[:, 1]
                world_circles[:, 1] = t[:, 1] + t[:, 3] * local[:, 0] + t[:, 2] * local[:, 1]
                world_circles[:, 2] = local[:, 2]
                circles.append(world_circles)
                circle_bits.append(shapes.circle_bits)
        empty = MovingShapes.empty()
        poly_bits = np.concatenate(polygon_bits) if polygon_bits else empty.polygon_bits
        circ_bits = np.concatenate(circle_bits) if circle_bits else empty.circle_bits
        self._moving = MovingShapes(
            polygons=np.ascontiguousarray(np.concatenate(polygons)) if polygons else empty.polygons,
            polygon_counts=np.concatenate(counts) if counts else empty.polygon_counts,
            polygon_bits=poly_bits,
            polygon_tags=poly_bits,
            circles=np.ascontiguousarray(np.concatenate(circles)) if circles else empty.circles,
            circle_bits=circ_bits,
            circle_tags=circ_bits,
        )
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
            scene.static, scene.moving(iteration), self._ranges, self._bits,
        )
        hits = np.isfinite(ranges)
        if self.noise_std_dev > 0.0:
            ranges = ranges + np.where(hits, self.rng.normal(0.0, self.noise_std_dev, len(ranges)), 0.0)
        out = ranges.astype(np.float32)
        out[~hits] = np.nan
        return out, np.where(hits, bits, 0)
