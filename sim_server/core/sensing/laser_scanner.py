"""Laser range sensing: the world as seen by ray casts, and planar scanners on bodies.

:class:`ScanScene` keeps what lasers see: the layers' wall segments and the footprints of
models that never move (indexed once), and the other models' non-sensor footprints (placed once
per step in one vectorised pass, however many lasers scan). :func:`scan_all` casts every beam of
any number of :class:`LaserScanner` in one compiled call (:mod:`sim_server.core.sensing.raycast`).

A scene follows a world through a :class:`~sim_server.core.physics.world_view.WorldView`, what
the world's parts may read of it; the laser plugin hands it the world it sees (a
:class:`~sim_server.core.plugins.api.PluginWorld` is one). :func:`prepare` compiles the ray
caster and the batch body access (or loads them from numba's cache): the laser plugin's class
calls it as the world loads, and creating a scene does, so no step compiles them.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Iterable

import numpy as np
from Box2D import b2

from sim_server.core.geometry import Pose2D
from sim_server.core.physics.body_memory import BodyBatch, memory_access_works
from sim_server.core.physics.model import fixture_def, footprint_bits
from sim_server.core.sensing.raycast import (
    MAX_VERTICES, MovingShapes, ScanBatch, StaticScene, bounding_radii, cast_scans, place_shapes, warm_up,
)

if TYPE_CHECKING:
    from sim_server.core.format.model_file import ModelSpec
    from sim_server.core.format.world_file import ModelEntry
    from sim_server.core.physics.collision_filter import CollisionFilterRegistry
    from sim_server.core.physics.model import Model
    from sim_server.core.physics.world_view import WorldView

#: The key under which a world keeps its scan scene
#: (:meth:`~sim_server.core.physics.world_view.WorldView.shared`).
SCENE_KEY = "sim_server.core.sensing.laser_scanner.ScanScene"


def prepare() -> None:
    """Compile the ray caster and the batch body access, or load them from numba's cache (once
    per process; a few tenths of a second from the cache), before any step needs them."""
    warm_up()
    memory_access_works()


#: Scanner line-ups whose beam layout a scene keeps.
LAYOUT_CACHE_SIZE = 8


def _padded(points: list) -> list:
    """A polygon's vertices padded to :data:`MAX_VERTICES` by repeating the first one, so bounds
    over all rows stay exact."""
    return list(points) + [points[0]] * (MAX_VERTICES - len(points))


class _ModelShapes:
    """A model's non-sensor footprints in body frames, ready for batch transformation.

    Args:
        model: the model.
        like: the shapes of another instance of the same model spec: their body-frame arrays are
            shared (all instances of a spec have the same footprints), only the bodies differ.
    """

    def __init__(self, model: "Model", like: "_ModelShapes | None" = None) -> None:
        if like is not None:
            self.bodies = [body.physics_body for body in model.bodies.values()]
            self.fixed = like.fixed
            for name in (
                "polygons", "polygon_counts", "polygon_bits", "polygon_body", "polygon_radii",
                "circles", "circle_bits", "circle_body",
            ):
                setattr(self, name, getattr(like, name))
            return
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
                    polygons.append(_padded(points))
                    polygon_counts.append(len(points))
                    polygon_bits.append(bits)
                    polygon_body.append(body_index)
        self.fixed = all(body.type == b2.staticBody for body in self.bodies)
        self.polygons = np.array(polygons, dtype=np.float64).reshape(-1, MAX_VERTICES, 2)
        self.polygon_counts = np.array(polygon_counts, dtype=np.int64)
        self.polygon_bits = np.array(polygon_bits, dtype=np.int64)
        self.polygon_body = np.array(polygon_body, dtype=np.int64)
        self.polygon_radii = bounding_radii(self.polygons)
        self.circles = np.array(circles, dtype=np.float64).reshape(-1, 3)
        self.circle_bits = np.array(circle_bits, dtype=np.int64)
        self.circle_body = np.array(circle_body, dtype=np.int64)


def _concatenate(parts: list[MovingShapes]) -> MovingShapes:
    parts = [part for part in parts if len(part.polygons) or len(part.circles)] or parts[:1]
    if len(parts) == 1:
        return parts[0]
    return MovingShapes(*(np.concatenate([getattr(p, f) for p in parts]) for f in MovingShapes.__dataclass_fields__))


class _LevelStatics:
    """The footprints of every static model that levels load and unload, placed once, exactly as
    Box2D places them (its float32 poses and vertices), so that a level change only shows or
    hides them in the lasers' static scene instead of rebuilding it.

    Args:
        models: the world file's models that levels load and unload, with their model files.
        collision_filter: the world's collision bits.
    """

    def __init__(self, models: "Iterable[tuple[ModelEntry, ModelSpec]]", collision_filter: "CollisionFilterRegistry") -> None:
        polygons, polygon_counts, polygon_bits, polygon_body, polygon_owner = [], [], [], [], []
        circles, circle_bits, circle_body, circle_owner = [], [], [], []
        poses: list[tuple[float, float, float]] = []
        #: Model name -> (spec, first body's float32 pose, polygon range, circle range, index).
        self.entries: dict[str, tuple[object, tuple[float, float, float], tuple[int, int], tuple[int, int], int]] = {}
        for entry, spec in models:
            if not spec.bodies or any(body.body_type != "static" for body in spec.bodies):
                continue
            first_polygon, first_circle = len(polygons), len(circles)
            index = len(self.entries)
            first_position = None
            for body in spec.bodies:
                pose = entry.pose.compose(body.pose)
                # Box2D keeps positions and angles in single precision.
                x, y, theta = (float(np.float32(v)) for v in (pose.x, pose.y, pose.theta))
                first_position = first_position or (x, y, theta)
                body_index = len(poses)
                poses.append((x, y, theta))
                for footprint in body.footprints:
                    if footprint.sensor:
                        continue
                    bits = footprint_bits(footprint, collision_filter)
                    shape = fixture_def(footprint, bits).shape  # Box2D's own vertices
                    if footprint.shape == "circle":
                        circles.append((shape.pos[0], shape.pos[1], shape.radius))
                        circle_bits.append(bits)
                        circle_body.append(body_index)
                        circle_owner.append(index)
                    else:
                        points = shape.vertices
                        polygons.append(_padded(points))
                        polygon_counts.append(len(points))
                        polygon_bits.append(bits)
                        polygon_body.append(body_index)
                        polygon_owner.append(index)
            self.entries[entry.name] = (
                spec, first_position, (first_polygon, len(polygons)), (first_circle, len(circles)), index
            )
        local_polygons = np.array(polygons, dtype=np.float64).reshape(-1, MAX_VERTICES, 2)
        local_circles = np.array(circles, dtype=np.float64).reshape(-1, 3)
        placed_polygons, placed_circles = place_shapes(
            np.array(poses, dtype=np.float64).reshape(-1, 3), local_polygons,
            np.array(polygon_body, dtype=np.int64), local_circles, np.array(circle_body, dtype=np.int64),
        )
        #: Each shape's collision bits while its model is loaded.
        self.polygon_bits = np.array(polygon_bits, dtype=np.int64)
        self.circle_bits = np.array(circle_bits, dtype=np.int64)
        #: The shapes as the static scene holds them: bits 0 (unseen) while not loaded.
        self.shapes = MovingShapes(
            placed_polygons, np.array(polygon_counts, dtype=np.int64), np.zeros_like(self.polygon_bits),
            self.polygon_bits.copy(), placed_circles, np.zeros_like(self.circle_bits), self.circle_bits.copy(),
        )
        self.polygon_owner = np.array(polygon_owner, dtype=np.int64)
        self.circle_owner = np.array(circle_owner, dtype=np.int64)
        #: Per model, whether it is loaded (its shapes seen).
        self.loaded = np.zeros(len(self.entries), dtype=bool)
        self._changed = False

    def owns(self, model: "Model") -> bool:
        """Whether ``model`` is a level's static model where its level put it."""
        entry = self.entries.get(model.name)
        if entry is None or model.spec is not entry[0]:
            return False
        body = model.first_body.physics_body
        return (*body.position, body.angle) == entry[1]

    @property
    def shown(self) -> set[str]:
        """The names of the models whose shapes are seen."""
        return {name for name, entry in self.entries.items() if self.loaded[entry[4]]}

    def show(self, name: str, shown: bool) -> None:
        """Make the model ``name``'s shapes seen, or not, from the next :meth:`apply` on."""
        self.loaded[self.entries[name][4]] = shown
        self._changed = True

    def apply(self, static_fixed: "MovingShapes | None") -> None:
        """Write which shapes are seen into these shapes and the static scene's copy of them
        (it starts with them); one pass over all, however many models came or went."""
        if not self._changed:
            return
        self._changed = False
        polygon_bits = np.where(self.loaded[self.polygon_owner], self.polygon_bits, 0)
        circle_bits = np.where(self.loaded[self.circle_owner], self.circle_bits, 0)
        for shapes in (self.shapes, static_fixed):
            if shapes is not None:
                shapes.polygon_bits[: len(polygon_bits)] = polygon_bits
                shapes.circle_bits[: len(circle_bits)] = circle_bits


class _MovingTable:
    """The footprints of some models in body frames, stacked, with one list of their bodies:
    placing all of them in the world is one compiled call.

    Args:
        models: the models' shapes.
    """

    def __init__(self, models: list[_ModelShapes]) -> None:
        self.bodies = BodyBatch(body for shapes in models for body in shapes.bodies)
        body_offsets = np.cumsum([0] + [len(shapes.bodies) for shapes in models[:-1]], dtype=np.int64)

        def stack(name: str, empty: np.ndarray) -> np.ndarray:
            return np.concatenate([getattr(m, name) for m in models] + [empty])

        def body_indices(name: str) -> np.ndarray:
            # Each model's body indices are its own; shift them by the bodies before it.
            local = stack(name, np.zeros(0, dtype=np.int64))
            counts = [len(getattr(m, name)) for m in models]
            return local + np.repeat(body_offsets, counts) if len(local) else local

        self.polygons = stack("polygons", np.zeros((0, MAX_VERTICES, 2)))
        self.polygon_counts = stack("polygon_counts", np.zeros(0, dtype=np.int64))
        self.polygon_bits = stack("polygon_bits", np.zeros(0, dtype=np.int64))
        self.polygon_radii = stack("polygon_radii", np.zeros(0))
        self.polygon_body = body_indices("polygon_body")
        self.circles = stack("circles", np.zeros((0, 3)))
        self.circle_bits = stack("circle_bits", np.zeros(0, dtype=np.int64))
        self.circle_body = body_indices("circle_body")

    def in_world(self) -> MovingShapes:
        """Every footprint at its body's current pose (world frame)."""
        if not self.bodies:
            return MovingShapes.empty()
        poses = self.bodies.poses()
        polygons, circles = place_shapes(poses, self.polygons, self.polygon_body, self.circles, self.circle_body)
        return MovingShapes(
            polygons, self.polygon_counts, self.polygon_bits, self.polygon_bits,
            circles, self.circle_bits, self.circle_bits, self.polygon_radii,
        )


class ScanScene:
    """What lasers see in a world, kept up to date as models come and go (a WorldListener).

    Models whose bodies are all static are placed once and indexed in the grid with the walls;
    the others are placed once per step however many lasers scan, and each scan tests only
    those within its range. With levels enabled, the static models of levels are all placed and
    indexed at the start (:class:`_LevelStatics`) and only shown or hidden as they come and go.

    Args:
        world: the world to sense.
    """

    def __init__(self, world: "WorldView") -> None:
        # The ray caster and the batch body access compile (or load numba's cache) now, while
        # the world loads or a model with a laser is spawned, not in the first step that scans.
        prepare()
        self._world = world
        self._static: StaticScene | None = None
        self._static_version: tuple[int, int] | None = None
        #: Per model, its shapes (None for a level's static model, seen through the level statics).
        self._models: dict[int, _ModelShapes | None] = {}
        self._movers: dict[int, _ModelShapes] = {}
        self._fixed: MovingShapes | None = None
        level_models = world.level_models()
        self._level_statics = _LevelStatics(level_models, world.collision_filter) if level_models else None
        self._table: _MovingTable | None = None
        self._moving: MovingShapes | None = None
        self._moving_at = -1
        self._layouts: "dict[tuple[int, ...], tuple[list[LaserScanner], tuple[ScanBatch, np.ndarray, BodyBatch]]]" = {}
        #: Per model spec, the shapes of its first instance (later instances share the arrays) and
        #: how many instances are in the world (the entry goes with the last one).
        self._by_spec: "dict[int, list]" = {}
        world.add_listener(self)

    # ------------------------------------------------------------------ WorldListener
    def on_model_added(self, model: "Model") -> None:
        """A model came: gather its shapes."""
        self._shapes(model)

    def on_model_removed(self, model: "Model") -> None:
        """Forget the model's shapes."""
        if self._seen_as_level_static(model):
            del self._models[id(model)]
            self._level_statics.show(model.name, False)
            return
        shapes = self._models.pop(id(model), None)
        if shapes is not None:
            self._release_template(model)
        if shapes is not None and shapes.fixed:
            self._fixed = None
        if self._movers.pop(id(model), None) is not None:
            self._table = None
        self._moving_at = -1
        self._layouts.clear()  # they may hold the model's lasers

    def on_model_moved(self, model: "Model") -> None:
        """A model was placed somewhere else: a cached static model must be re-gathered."""
        if self._seen_as_level_static(model):
            # A level's static model moved away from where its level put it: from now on it is
            # gathered from Box2D like any other.
            del self._models[id(model)]
            self._level_statics.show(model.name, False)
            self._shapes(model, as_level_static=False)
        shapes = self._models.get(id(model))
        if shapes is not None and shapes.fixed:
            self._fixed = None
        self._moving_at = -1

    def _seen_as_level_static(self, model: "Model") -> bool:
        return id(model) in self._models and self._models[id(model)] is None

    # ------------------------------------------------------------------ scene parts
    @property
    def static(self) -> StaticScene:
        """The layers' wall segments (tags are their collision bits) and the static models'
        footprints, in world coordinates."""
        fixed = self._fixed_part()
        version = (self._world.static_geometry_version, id(fixed))
        if self._static is None or self._static_version != version:
            if self._level_statics is not None:
                fixed = _concatenate([self._level_statics.shapes, fixed])  # level statics first
            segments, bits = [], []
            for layer in self._world.layers:
                edges = layer.world_edges()
                if not len(edges):
                    continue
                segments.append(edges)
                bits.append(np.full(len(edges), layer.category_bits, dtype=np.int64))
            all_segments = np.vstack(segments) if segments else np.zeros((0, 4))
            all_bits = np.concatenate(bits) if bits else np.zeros(0, dtype=np.int64)
            self._static = StaticScene(all_segments, all_bits, all_bits, fixed)
            self._static_version = version
        if self._level_statics is not None:
            fixed = self._static.fixed
            self._level_statics.apply(fixed if fixed is not self._level_statics.shapes else None)
        return self._static

    def _shapes(self, model: "Model", as_level_static: bool = True) -> None:
        """Gather a model's shapes (a level's static model only shows its precomputed ones)."""
        if id(model) in self._models:
            return
        if as_level_static and self._level_statics is not None and self._level_statics.owns(model):
            self._models[id(model)] = None  # seen through the level statics
            self._level_statics.show(model.name, True)
            return
        template = self._by_spec.get(id(model.spec))
        shapes = self._models[id(model)] = _ModelShapes(model, template[1] if template else None)
        if template is None:
            self._by_spec[id(model.spec)] = [model.spec, shapes, 1]  # holding the spec keeps its id unique
        else:
            template[2] += 1
        if shapes.fixed:
            self._fixed = None
        else:
            self._movers[id(model)] = shapes
            self._table = None
        self._moving_at = -1

    def _release_template(self, model: "Model") -> None:
        """One instance of the model's spec left: forget the spec's shapes with its last one."""
        template = self._by_spec.get(id(model.spec))
        if template is not None:
            template[2] -= 1
            if template[2] <= 0:
                del self._by_spec[id(model.spec)]

    def _gather_all(self) -> None:
        if len(self._models) != len(self._world.models):
            for model in self._world.models.values():
                self._shapes(model)

    def moving(self, iteration: int) -> MovingShapes:
        """The moving models' non-sensor footprints and the pedestrians' bodies in world
        coordinates at step ``iteration`` (static models' are part of :attr:`static`)."""
        if self._moving is None or self._moving_at != iteration:
            self._gather_all()
            if self._table is None:
                self._table = _MovingTable(list(self._movers.values()))
            moving = self._table.in_world()
            circles, bits = self._world.crowd_circles()
            if len(circles):  # the pedestrians, as circles after the models' ones
                moving = MovingShapes(
                    moving.polygons, moving.polygon_counts, moving.polygon_bits, moving.polygon_tags,
                    np.concatenate([moving.circles, circles]), np.concatenate([moving.circle_bits, bits]),
                    np.concatenate([moving.circle_tags, bits]), moving.polygon_radii,
                )
            self._moving = moving
            self._moving_at = iteration
        return self._moving

    def _fixed_part(self) -> MovingShapes:
        if self._fixed is None:
            self._gather_all()
            # Placed together, in one compiled call (levels change this set as they load).
            self._fixed = _MovingTable([s for s in self._models.values() if s is not None and s.fixed]).in_world()
        return self._fixed

    def layout(self, scanners: "list[LaserScanner]") -> tuple[ScanBatch, np.ndarray, BodyBatch]:
        """The beam layout of a line-up of scanners, their origins on their bodies (3 x S:
        x, y, theta) and their bodies, kept for the line-ups seen last (lasers due on the same
        steps come back together)."""
        key = tuple(map(id, scanners))
        cached = self._layouts.get(key)
        if cached is not None:
            return cached[1]
        batch = ScanBatch.of([(s.local_angles, s.max_range, s.layer_bits) for s in scanners])
        origins = np.array([(s.origin.x, s.origin.y, s.origin.theta) for s in scanners], dtype=np.float64).T.copy()
        bodies = BodyBatch(s.body for s in scanners)
        if len(self._layouts) >= LAYOUT_CACHE_SIZE:
            del self._layouts[next(iter(self._layouts))]
        self._layouts[key] = (list(scanners), (batch, origins, bodies))  # holding the scanners keeps their ids unique
        return batch, origins, bodies

    def close(self) -> None:
        """Stop following the world."""
        self._world.remove_listener(self)
        self._layouts.clear()


def scene_of(world: "WorldView") -> ScanScene:
    """The world's shared scan scene (created on first use)."""
    return world.shared(SCENE_KEY, lambda: ScanScene(world))


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
        dropout_rate: probability (0 to 1) that a beam returns nothing (NaN, as a miss).
        max_range_rate: probability (0 to 1) that a beam reads ``max_range`` exactly (a
            spurious maximum, as real lidars give), hit or not; with ``dropout_rate`` at most 1.
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
        *,
        dropout_rate: float = 0.0,
        max_range_rate: float = 0.0,
    ) -> None:
        if not (0.0 <= dropout_rate <= 1.0 and 0.0 <= max_range_rate <= 1.0 and dropout_rate + max_range_rate <= 1.0):
            raise ValueError(
                f"dropout_rate ({dropout_rate!r}) and max_range_rate ({max_range_rate!r}) must be probabilities "
                "from 0 to 1 whose sum is at most 1"
            )
        self.body = body
        self.origin = origin
        self.max_range = max_range
        self.layer_bits = layer_bits
        self.noise_std_dev = noise_std_dev
        self.dropout_rate = dropout_rate
        self.max_range_rate = max_range_rate
        self.rng = rng or np.random.default_rng()
        count = beam_count(angle_min, angle_max, increment)
        local = angle_min + increment * np.arange(count, dtype=np.float64)
        self.local_angles = -local if upside_down else local

    @property
    def beam_count(self) -> int:
        """Beams per scan."""
        return len(self.local_angles)

    def beams(self, index: np.ndarray) -> "LaserScanner":
        """A scanner casting only the beams ``index`` (integer positions in this scan) of this
        one: the same body, origin, range, layers, noise, dropout and maximum-range rates and
        generator (its draws are taken from the shared generator, for the beams it casts). Each
        beam's range is what this scanner's beam gives, so a caller that uses a few beams of a
        scan casts only those."""
        part = copy.copy(self)
        part.local_angles = self.local_angles[np.asarray(index, dtype=np.int64)]
        return part

    def pose(self) -> Pose2D:
        """The laser's pose in the world."""
        position = self.body.position
        return Pose2D(position.x, position.y, self.body.angle).compose(self.origin)

    def scan(self, scene: ScanScene, iteration: int) -> tuple[np.ndarray, np.ndarray]:
        """Cast every beam now (see :func:`scan_all`, which does many scanners at once).

        Returns:
            ranges: float32 metres per beam, NaN where nothing is hit within range.
            hit_bits: collision bits of the shape each beam hit (0 for none).
        """
        return scan_all([self], scene, iteration)[0]


def scan_all(scanners: list[LaserScanner], scene: ScanScene, iteration: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Cast every beam of every scanner now, in one compiled call.

    Args:
        scanners: lasers of the world ``scene`` follows.
        scene: the world as lasers see it.
        iteration: the world's step count (moving footprints are placed once per step).

    Returns:
        per scanner, ``(ranges, hit_bits)``: float32 metres per beam with NaN where nothing is
        hit within range (noise added to hits), and the collision bits of the shape each beam hit
        (0 for none). Beams a scanner's ``dropout_rate`` drops are NaN and those its
        ``max_range_rate`` spoils read ``max_range``, both with bits 0. The arrays are fresh, so
        callers may keep them.

    Each scanner's random draws come from its own generator, in the same order however many
    scanners cast together: the Gaussian noise of every beam, then one uniform number per beam
    for the dropouts and maximum ranges (each only when its scanner has them), for every beam
    whatever it hits, so a seeded scanner's numbers do not depend on the scene or the batch.
    """
    if not scanners:
        return []
    out, bits, bounds = _cast_all(scanners, scene, iteration)
    count = len(scanners)
    if (np.diff(bounds) == bounds[1]).all():  # scanners of one size (fleets): rows, split in C
        return list(zip(out.reshape(count, -1), bits.reshape(count, -1)))
    return [(out[bounds[i]:bounds[i + 1]], bits[bounds[i]:bounds[i + 1]]) for i in range(count)]


def scan_block(scanners: list[LaserScanner], scene: ScanScene, iteration: int) -> np.ndarray:
    """:func:`scan_all` of scanners with one beam count, as one (N, beams) float32 array of
    ranges (row ``i``: scanner ``i``'s, as :func:`scan_all` gives them): for many small
    scanners (rangers), without a pair of arrays per scanner."""
    out, _, bounds = _cast_all(scanners, scene, iteration)
    if not (np.diff(bounds) == bounds[1]).all():
        raise ValueError("scan_block takes scanners of one beam count")
    return out.reshape(len(scanners), -1)


def _cast_all(scanners: list[LaserScanner], scene: ScanScene, iteration: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every beam of ``scanners`` (not empty) cast: ranges (float32, NaN misses, noise and
    faults applied) and hit bits of all beams in a row, and where each scanner's begin (its
    index) and the last ends."""
    batch, origins, laser_bodies = scene.layout(scanners)
    bodies = laser_bodies.poses().T
    # Each laser's pose: its body's pose composed with its origin (as Pose2D.compose).
    cos_t, sin_t = np.cos(bodies[2]), np.sin(bodies[2])
    x = bodies[0] + cos_t * origins[0] - sin_t * origins[1]
    y = bodies[1] + sin_t * origins[0] + cos_t * origins[1]
    ranges, bits = cast_scans(batch, x, y, bodies[2] + origins[2], scene.static, scene.moving(iteration))
    misses = ~np.isfinite(ranges)
    bounds = batch.beam_starts.tolist()
    spoiled: list[tuple[int, int, np.ndarray, LaserScanner]] = []
    for index, scanner in enumerate(scanners):
        first, last = bounds[index], bounds[index + 1]
        if scanner.noise_std_dev > 0.0:
            # Drawn for every beam (the same numbers whatever is hit); misses stay infinite.
            ranges[first:last] += scanner.rng.normal(0.0, scanner.noise_std_dev, last - first)
        if scanner.dropout_rate > 0.0 or scanner.max_range_rate > 0.0:
            spoiled.append((first, last, scanner.rng.random(last - first), scanner))
    out = ranges.astype(np.float32)
    out[misses] = np.nan
    bits[misses] = 0
    for first, last, draws, scanner in spoiled:
        _spoil(out[first:last], bits[first:last], draws, scanner)
    return out, bits, batch.beam_starts


def _spoil(ranges: np.ndarray, bits: np.ndarray, draws: np.ndarray, scanner: LaserScanner) -> None:
    """Drop and max out beams of one scan in place: a beam whose uniform draw (in [0, 1)) is
    below the scanner's ``dropout_rate`` reads NaN, one within the next ``max_range_rate`` reads
    its ``max_range`` (m); both lose their hit bits."""
    dropped = draws < scanner.dropout_rate
    maxed = ~dropped & (draws < scanner.dropout_rate + scanner.max_range_rate)
    ranges[dropped] = np.nan
    ranges[maxed] = np.float32(scanner.max_range)
    bits[dropped | maxed] = 0
