"""Batch ray casting, exact against Box2D: all beams of a scan in one compiled call.

The static scene (wall segments of the layers, and the footprints of models that never move) is
indexed in a uniform grid; a ray walks the grid cell by cell (Amanatides-Woo) and stops as soon
as its closest hit lies within the cells walked. Moving shapes (footprints of the other models:
convex polygons and circles) are few and tested directly. Hit rules follow Box2D's ray casts,
so ranges agree with ``b2World.RayCast``:

* segments are two-sided; a ray parallel to a segment does not hit it;
* a polygon or circle is hit only when the ray enters it from outside (a sensor inside a
  robot's own footprint does not see that footprint);
* a shape is seen only when its collision bits share a bit with the ray's mask.

Every hit reports the *tag* of the shape hit, a bit set (collision bits, say), so callers can
tell what was hit (e.g. for intensities); coincident nearest hits report the union of their tags.

This module holds the Python side: scenes (:class:`StaticScene`, :class:`MovingShapes`), beam
layouts (:class:`ScanBatch`), the casts (:func:`cast_scans`, :func:`cast_rays`) and the warm-up.
The grid walk and every other compiled function are the kernels of
:mod:`sim_server.core.sensing.ray_kernels`; numba's shared set-up (``jit``, its options and its
cache) is :mod:`sim_server.core.compiled`.

Compiling takes some 15 to 45 s, so it never happens in a step: :func:`warm_up` compiles every
specialisation the simulator uses before the first one (a world's first laser calls it as the
world loads; the server at start-up), and numba keeps the result in its on-disk cache (in
``__pycache__`` next to ``ray_kernels.py``, or ``NUMBA_CACHE_DIR``), which ``make setup`` fills
(``python -m sim_server.warm_up``): later processes load it in a few tenths of a second. Editing
``ray_kernels.py`` (or upgrading numba) invalidates the cache; editing this module does not. The
functions below hand the kernels arrays of exactly the types compiled (float64 or int64,
C-contiguous, writeable; others are converted by :func:`sim_server.core.compiled.typed`), since
any other type would compile anew.

Units: metres for positions, ranges and cell sizes; radians for angles.
"""

from __future__ import annotations

import logging
import math
from contextlib import nullcontext
from dataclasses import dataclass
from time import perf_counter
from typing import Callable

import numpy as np
from numba import get_num_threads

from sim_server.core import compiled
from sim_server.core.compiled import ThreadChoice, jit, parallel_turn, typed  # noqa: F401 - jit: re-exported for older callers
from sim_server.core.sensing.ray_kernels import (
    GENERAL,
    HORIZONTAL,
    VERTICAL,
    _build_box_grid,
    _build_grid,
    _cast_scans,
    _cast_scans_parallel,
    _clearance,
    _place_shapes,
)

LOGGER = logging.getLogger("sim_server")

#: No hit: the range written for a beam that hits nothing.
NO_HIT = math.inf
#: Tag of a beam that hits nothing.
NO_TAG = -1
#: Grid cells (m) are chosen so that a cell holds a segment or so, within these bounds.
MIN_CELL_SIZE = 0.05
MAX_CELL_SIZE = 8.0
#: A cell's side is this times the side of the square each segment would have to itself. Rays
#: leap over empty space (see :func:`.ray_kernels._clearance`), so small cells pay: measured best
#: on the office map between 0.3 and 0.5.
CELL_SCALE = 0.4
#: Most cells in the grid (memory: about 40 bytes per cell); larger scenes get larger cells.
MAX_GRID_CELLS = 16_000_000
#: Box2D polygons have at most 8 vertices.
MAX_VERTICES = 8
#: Batches of at least this many beams in all are cast on several threads, cut into runs of
#: consecutive beams (of one scan or several). Not fewer: one 1081-beam laser among 200 people,
#: 0.27 ms serially, took 0.20 ms on two threads of a quiet 2-core host, but 1.6 ms (median of
#: 200 pairs) while another process kept the second core busy: a thread that waits for a core
#: holds up the whole cast (2026-11-28).
PARALLEL_MIN_BEAMS = 8192
#: Runs of beams per thread in a parallel cast (beams differ in cost: more runs than threads
#: even the load out) ...
PARALLEL_CHUNKS_PER_THREAD = 4
#: ... of at least this many beams each (each run finds the moving shapes near its scans again).
PARALLEL_MIN_CHUNK_BEAMS = 512
#: Whether large batches are cast on the threads or on one: whichever was faster lately (a
#: parallel cast waits for its slowest thread, and a thread waits for a core while another
#: process keeps it busy).
CAST_THREADS = ThreadChoice()


def _axis_aligned(segments: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each segment's kind (:data:`GENERAL`, :data:`HORIZONTAL`, :data:`VERTICAL`) and, for the
    axis-aligned ones, (fixed coordinate, lowest, highest coordinate along the segment)."""
    x1, y1, x2, y2 = segments.T
    horizontal = (y1 == y2) & (x1 != x2)
    vertical = (x1 == x2) & (y1 != y2)
    kinds = np.full(len(segments), GENERAL, dtype=np.int8)
    kinds[horizontal] = HORIZONTAL
    kinds[vertical] = VERTICAL
    axis = np.zeros((len(segments), 3))
    axis[horizontal] = np.column_stack([y1, np.minimum(x1, x2), np.maximum(x1, x2)])[horizontal]
    axis[vertical] = np.column_stack([x1, np.minimum(y1, y2), np.maximum(y1, y2)])[vertical]
    return kinds, axis


@dataclass
class StaticScene:
    """Wall segments and fixed shapes (world frame) with their collision bits and tags, in a grid.

    Args:
        segments: (N, 4) ``x1, y1, x2, y2`` in metres.
        bits: (N,) collision category bits of each segment.
        tags: (N,) a number reported for beams that hit the segment (e.g. its layer index).
        fixed: footprints that never move (static models), indexed with the segments.
    """

    segments: np.ndarray
    bits: np.ndarray
    tags: np.ndarray
    fixed: "MovingShapes | None" = None

    def __post_init__(self) -> None:
        self.segments = typed(np.reshape(self.segments, (-1, 4)), np.float64)
        self.segment_kinds, self.segment_axis = _axis_aligned(self.segments)
        self.bits = typed(self.bits, np.int64)
        self.tags = typed(self.tags, np.int64)
        fixed = self.fixed if self.fixed is not None else MovingShapes.empty()
        self.fixed = fixed
        polygon_boxes = np.column_stack(
            [fixed.polygons[:, :, 0].min(axis=1), fixed.polygons[:, :, 1].min(axis=1),
             fixed.polygons[:, :, 0].max(axis=1), fixed.polygons[:, :, 1].max(axis=1)]
        ).reshape(-1, 4)
        circles = fixed.circles
        circle_boxes = np.column_stack(
            [circles[:, 0] - circles[:, 2], circles[:, 1] - circles[:, 2], circles[:, 0] + circles[:, 2], circles[:, 1] + circles[:, 2]]
        ).reshape(-1, 4)
        corners = [self.segments[:, :2], self.segments[:, 2:], polygon_boxes[:, :2], polygon_boxes[:, 2:],
                   circle_boxes[:, :2], circle_boxes[:, 2:]]
        points = np.vstack(corners)
        count = len(self.segments) + len(polygon_boxes) + len(circle_boxes)
        if count:
            low = points.min(axis=0)
            high = points.max(axis=0)
        else:
            low = np.zeros(2)
            high = np.ones(2)
        extent = np.maximum(high - low, 1e-6)
        cell = float(
            np.clip(CELL_SCALE * math.sqrt(extent[0] * extent[1] / max(count, 1)), MIN_CELL_SIZE, MAX_CELL_SIZE)
        )
        cell = max(cell, math.sqrt(extent[0] * extent[1] / MAX_GRID_CELLS))
        self.cell = cell
        self.x0 = float(low[0]) - cell
        self.y0 = float(low[1]) - cell
        self.nx = int(math.ceil(extent[0] / cell)) + 2
        self.ny = int(math.ceil(extent[1] / cell)) + 2
        self.starts, self.items = _build_grid(self.segments, self.x0, self.y0, self.cell, self.nx, self.ny)
        self.polygon_starts, self.polygon_items = _build_box_grid(
            typed(polygon_boxes, np.float64), self.x0, self.y0, self.cell, self.nx, self.ny
        )
        self.circle_starts, self.circle_items = _build_box_grid(
            typed(circle_boxes, np.float64), self.x0, self.y0, self.cell, self.nx, self.ny
        )
        self.walk_grid = count > 0
        # The walk reads each cell's segments in a row: their data is copied in cell order.
        self.item_segments = np.ascontiguousarray(self.segments[self.items])
        self.item_kinds = np.ascontiguousarray(self.segment_kinds[self.items])
        self.item_axis = np.ascontiguousarray(self.segment_axis[self.items])
        self.item_bits = np.ascontiguousarray(self.bits[self.items])
        self.item_tags = np.ascontiguousarray(self.tags[self.items])
        #: Every segment's bits together (-1 when one has none, which forces the per-segment test).
        self.all_segment_bits = -1 if (self.bits == 0).any() else int(np.bitwise_or.reduce(self.bits, initial=0))
        self.clearance = _clearance(self.starts, self.polygon_starts, self.circle_starts, self.nx, self.ny)

    def walls(self) -> tuple:
        """The segments as the compiled cast takes them, one tuple: the segments in cell order
        (x1, y1, x2, y2 in m), their kinds, axis data, bits and tags; the grid's x0, y0, cell (m),
        nx, ny and starts; whether there is anything to walk the grid for; each cell's clearance
        (empty rings round it) and every segment's bits together."""
        return (self.item_segments, self.item_kinds, self.item_axis, self.item_bits, self.item_tags,
                float(self.x0), float(self.y0), float(self.cell), int(self.nx), int(self.ny), self.starts,
                bool(self.walk_grid), self.clearance, int(self.all_segment_bits))

    def fixed_shapes(self) -> tuple:
        """The fixed footprints as the compiled cast takes them, one tuple: polygons (P, 8, 2; m),
        vertex counts, bits, tags and the polygons by cell (starts, items); circles (C, 3: x, y,
        radius in m), bits, tags and the circles by cell (starts, items)."""
        fixed = self.fixed
        return (fixed.polygons, fixed.polygon_counts, fixed.polygon_bits, fixed.polygon_tags,
                self.polygon_starts, self.polygon_items,
                fixed.circles, fixed.circle_bits, fixed.circle_tags, self.circle_starts, self.circle_items)


@dataclass
class MovingShapes:
    """Shapes in the world frame that are tested directly, not through the grid: convex polygons
    and circles.

    Attributes:
        polygons: (P, 8, 2) vertices, counter-clockwise, padded.
        polygon_counts: (P,) vertex counts.
        polygon_bits, polygon_tags: (P,) collision bits and tags.
        circles: (C, 3) centre x, y and radius.
        circle_bits, circle_tags: (C,) collision bits and tags.
        polygon_radii: (P,) distance from each polygon's first vertex to its farthest (a bounding
            circle about the first vertex; rigid motion keeps it), computed when not given.
    """

    polygons: np.ndarray
    polygon_counts: np.ndarray
    polygon_bits: np.ndarray
    polygon_tags: np.ndarray
    circles: np.ndarray
    circle_bits: np.ndarray
    circle_tags: np.ndarray
    polygon_radii: np.ndarray | None = None

    def __post_init__(self) -> None:
        # Arrays already of the compiled functions' types (all the simulator's are) are kept as
        # they are: the level statics update their bits in place.
        self.polygons = typed(self.polygons, np.float64)
        self.polygon_counts = typed(self.polygon_counts, np.int64)
        self.polygon_bits = typed(self.polygon_bits, np.int64)
        self.polygon_tags = typed(self.polygon_tags, np.int64)
        self.circles = typed(self.circles, np.float64)
        self.circle_bits = typed(self.circle_bits, np.int64)
        self.circle_tags = typed(self.circle_tags, np.int64)
        if self.polygon_radii is None:
            self.polygon_radii = bounding_radii(self.polygons)
        self.polygon_radii = typed(self.polygon_radii, np.float64)

    def arrays(self) -> tuple:
        """The shapes as the compiled cast takes them, one tuple: polygons, polygon_counts,
        polygon_bits, polygon_tags, polygon_radii, circles, circle_bits, circle_tags."""
        return (self.polygons, self.polygon_counts, self.polygon_bits, self.polygon_tags, self.polygon_radii,
                self.circles, self.circle_bits, self.circle_tags)

    @classmethod
    def empty(cls) -> "MovingShapes":
        """No shapes."""
        return cls(
            np.zeros((0, MAX_VERTICES, 2)),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros((0, 3)),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
        )


def place_shapes(
    poses: np.ndarray, polygons: np.ndarray, polygon_body: np.ndarray, circles: np.ndarray, circle_body: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Shapes given in body frames, placed at their bodies' poses (``poses``: (K, 3) x, y, yaw;
    ``polygons`` (P, 8, 2) and ``circles`` (C, 3) on bodies ``polygon_body`` and ``circle_body``).

    Returns the world-frame polygons (P, 8, 2) and circles (C, 3).
    """
    return _place_shapes(
        typed(poses, np.float64), typed(polygons, np.float64), typed(polygon_body, np.int64),
        typed(circles, np.float64), typed(circle_body, np.int64),
    )


def bounding_radii(polygons: np.ndarray) -> np.ndarray:
    """(P,) distance (m) from each padded polygon's first vertex to its farthest vertex."""
    if not len(polygons):
        return np.zeros(0)
    return np.sqrt(((polygons - polygons[:, :1, :]) ** 2).sum(axis=2).max(axis=1))


@dataclass
class ScanBatch:
    """Several scans cast in one call: scan ``i`` casts beams ``beam_starts[i]:beam_starts[i+1]``.

    Attributes:
        beam_starts: (S + 1,) first beam of each scan, then the total.
        local_angles: (B,) beam angles (rad) relative to their scan's heading.
        max_ranges: (S,) range of each scan (m).
        masks: (S,) collision bits each scan sees.
    """

    beam_starts: np.ndarray
    local_angles: np.ndarray
    max_ranges: np.ndarray
    masks: np.ndarray

    def __post_init__(self) -> None:
        self.beam_starts = typed(self.beam_starts, np.int64)
        self.local_angles = typed(self.local_angles, np.float64)
        self.max_ranges = typed(self.max_ranges, np.float64)
        self.masks = typed(self.masks, np.int64)
        self.local_cos = np.cos(self.local_angles)
        self.local_sin = np.sin(self.local_angles)

    @classmethod
    def of(cls, scans: "list[tuple[np.ndarray, float, int]]") -> "ScanBatch":
        """From ``(local angles, max range, mask)`` per scan."""
        counts = [len(angles) for angles, _, _ in scans]
        return cls(
            np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            np.ascontiguousarray(np.concatenate([angles for angles, _, _ in scans]), dtype=np.float64)
            if scans else np.zeros(0),
            np.array([max_range for _, max_range, _ in scans], dtype=np.float64),
            np.array([mask for _, _, mask in scans], dtype=np.int64),
        )

    @property
    def beam_count(self) -> int:
        """Beams of all scans together."""
        return int(self.beam_starts[-1])


def cast_scans(
    batch: ScanBatch,
    origins_x: np.ndarray,
    origins_y: np.ndarray,
    headings: np.ndarray,
    scene: StaticScene,
    shapes: MovingShapes | None = None,
    out_ranges: np.ndarray | None = None,
    out_tags: np.ndarray | None = None,
    parallel: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cast every beam of a batch of scans from their origins (m) and headings (rad) in one call.

    Each scan sees the static scene and those of ``shapes`` within its range. A batch of
    :data:`PARALLEL_MIN_BEAMS` beams or more is shared out among numba's threads when there are
    several, no other parallel loop runs (:func:`~sim_server.core.compiled.parallel_turn`) and
    the threads were faster lately (:data:`CAST_THREADS`); ``parallel`` False forbids it, True
    asks for it at any size and thread count. The ranges are the same either way.

    Returns:
        ranges: (B,) distance to the closest hit, ``inf`` for no hit within range.
        tags: (B,) tag of the shape hit, :data:`NO_TAG` for none.
    """
    shapes = shapes or MovingShapes.empty()
    n = batch.beam_count
    ranges = np.empty(n, dtype=np.float64) if out_ranges is None else typed(out_ranges, np.float64)
    tags = np.empty(n, dtype=np.int64) if out_tags is None else typed(out_tags, np.int64)
    if parallel is None and n >= PARALLEL_MIN_BEAMS and get_num_threads() > 1:
        turn = CAST_THREADS.turn(n)  # the threads if they were faster lately
    else:
        turn = parallel_turn(True) if parallel else nullcontext(False)
    with turn as parallel:
        chunks = max(min(n // PARALLEL_MIN_CHUNK_BEAMS, PARALLEL_CHUNKS_PER_THREAD * get_num_threads()), 1) if parallel else 0
        _cast(chunks, batch, origins_x, origins_y, headings, scene, shapes, ranges, tags)
    if out_ranges is not None and ranges is not out_ranges:
        out_ranges[...] = ranges  # a buffer of another type: filled all the same
        ranges = out_ranges
    if out_tags is not None and tags is not out_tags:
        out_tags[...] = tags
        tags = out_tags
    return ranges, tags


def _cast(chunks: int, batch: ScanBatch, origins_x: np.ndarray, origins_y: np.ndarray, headings: np.ndarray,
          scene: StaticScene, shapes: MovingShapes, ranges: np.ndarray, tags: np.ndarray) -> None:
    """The compiled cast of :func:`cast_scans` into ``ranges`` and ``tags``: on threads in
    ``chunks`` runs of beams, serially when ``chunks`` is 0."""
    # Every argument of the types warm_up() compiled (scalars too: a NumPy float32 would not be).
    scans = (typed(origins_x, np.float64), typed(origins_y, np.float64), typed(headings, np.float64),
             batch.beam_starts, batch.local_cos, batch.local_sin, batch.local_angles, batch.max_ranges, batch.masks)
    if chunks:
        _cast_scans_parallel(scans, scene.walls(), scene.fixed_shapes(), shapes.arrays(), (ranges, tags), chunks)
    else:
        _cast_scans(scans, scene.walls(), scene.fixed_shapes(), shapes.arrays(), (ranges, tags))


def cast_rays(
    origin_x: float,
    origin_y: float,
    angles: np.ndarray,
    max_range: float,
    mask: int,
    scene: StaticScene,
    shapes: MovingShapes | None = None,
    out_ranges: np.ndarray | None = None,
    out_tags: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cast one ray per world-frame angle (rad) from the origin (m), up to ``max_range`` (m).

    Returns:
        ranges: distance to the closest hit, ``inf`` for no hit within ``max_range``.
        tags: tag of the shape hit, :data:`NO_TAG` for none.
    """
    batch = ScanBatch(
        np.array([0, len(angles)], dtype=np.int64),
        np.ascontiguousarray(angles, dtype=np.float64),
        np.array([max_range], dtype=np.float64),
        np.array([mask], dtype=np.int64),
    )
    origin = np.array([origin_x, origin_y, 0.0], dtype=np.float64)
    return cast_scans(batch, origin[0:1], origin[1:2], origin[2:3], scene, shapes, out_ranges, out_tags)


# ---------------------------------------------------------------------------------- warm-up
#: A warm-up slower than this (s) is logged: it compiled (or loaded its cache from a slow disk).
SLOW_WARM_UP = 1.0
#: The kernels (:mod:`.ray_kernels`) the simulator calls from Python; the others are compiled
#: into them.
ENTRY_POINTS = (_place_shapes, _build_grid, _build_box_grid, _clearance, _cast_scans, _cast_scans_parallel)
#: How often a warm-up step is tried when writing the cache fails (the code compiled is kept in
#: memory, so the next try goes on from there).
WARM_UP_TRIES = 4

_warm = False


def _cache_counts() -> tuple[int, int]:
    """(Specialisations loaded from numba's cache, compiled) so far, over :data:`ENTRY_POINTS`."""
    hits = misses = 0
    for function in ENTRY_POINTS:
        stats = getattr(function, "stats", None)  # plain functions under NUMBA_DISABLE_JIT
        if stats is not None:
            hits += sum(stats.cache_hits.values())
            misses += sum(stats.cache_misses.values())
    return hits, misses


def _warm_up_steps() -> list[Callable[[], object]]:
    """Calls of every entry point on a tiny scene, with arguments of exactly the types the
    simulator passes (built the way :mod:`sim_server.core.sensing.laser_scanner` builds them): the
    small functions first, so a cold compile is announced before the long one."""
    square = [(-0.2, -0.2), (0.2, -0.2), (0.2, 0.2), (-0.2, 0.2)]
    body_polygons = np.array([square + [square[0]] * (MAX_VERTICES - 4)], dtype=np.float64).reshape(-1, MAX_VERTICES, 2)
    body_circles = np.array([(0.3, 0.0, 0.1)], dtype=np.float64).reshape(-1, 3)
    one_body = np.zeros(1, dtype=np.int64)
    counts = np.array([4], dtype=np.int64)
    bits = np.ones(1, dtype=np.int64)
    state: dict[str, object] = {}

    def place() -> None:
        poses = np.array([(1.0, 1.0, 0.5)], dtype=np.float64)
        state["placed"] = place_shapes(poses, body_polygons, one_body, body_circles, one_body)

    def index() -> None:
        polygons, circles = state["placed"]
        fixed = MovingShapes(polygons, counts, bits, bits, circles, bits, bits)
        walls = np.array([(-2.0, -2.0, 2.0, -2.0), (2.0, -2.0, 2.0, 2.0), (2.0, 2.0, -2.0, -1.0)])
        state["scene"] = StaticScene(walls, np.array([1, 1, 2]), np.array([1, 1, 2]), fixed)

    def cast() -> None:
        polygons, circles = place_shapes(
            np.array([(-1.0, 0.0, 0.0)], dtype=np.float64), body_polygons, one_body, body_circles, one_body
        )
        moving = MovingShapes(polygons, counts, bits, bits, circles, bits, bits)
        angles = -1.0 + 0.25 * np.arange(9, dtype=np.float64)
        batch = ScanBatch.of([(angles, 5.0, 1), (angles, 3.0, 3)])
        origins = np.array([(0.0, 0.0, 0.0), (0.5, -0.5, 1.0)], dtype=np.float64).T.copy()
        cast_scans(batch, origins[0], origins[1], origins[2], state["scene"], moving, parallel=False)
        cast_scans(batch, origins[0], origins[1], origins[2], state["scene"], moving, parallel=True)

    return [place, index, cast]


def _notice(message: str) -> None:
    """Log ``message`` on the ``sim_server`` logger at INFO where INFO is shown (the server routes
    it to its ROS logger), else as a warning: a pause of half a minute must not go unexplained."""
    LOGGER.log(logging.INFO if LOGGER.isEnabledFor(logging.INFO) else logging.WARNING, message)


def warm_up(log: Callable[[str], None] | None = None) -> float:
    """Compile every specialisation of the ray caster the simulator uses, or load it from
    numba's on-disk cache, by casting on a tiny scene: afterwards no scan compiles.

    The first run after an install or an update of the kernels (``ray_kernels.py``) compiles
    (some 15 to 45 s) and writes the cache (``__pycache__`` next to ``ray_kernels.py``, or
    ``NUMBA_CACHE_DIR``); later runs load it (a few tenths of a second). Only the first call in a
    process does anything.

    Args:
        log: where to say so when it takes more than :data:`SLOW_WARM_UP` seconds (default: the
            ``sim_server`` logger, see :func:`_notice`).

    Returns:
        The seconds it took.
    """
    global _warm
    start = perf_counter()
    if _warm:
        return perf_counter() - start
    log = log or _notice
    announced = False
    write_failed = False
    steps = _warm_up_steps()
    for number, step in enumerate(steps):
        for attempt in range(WARM_UP_TRIES):
            try:
                step()
                break
            except OSError as error:  # writing the cache failed (disk full, say)
                if attempt == WARM_UP_TRIES - 1:
                    raise
                if not write_failed:
                    LOGGER.warning(f"could not write numba's cache of the ray caster ({error}); going on without")
                    write_failed = True
        elapsed = perf_counter() - start
        if not announced and elapsed > SLOW_WARM_UP and number < len(steps) - 1 and _cache_counts()[1]:
            log(
                "compiling the ray caster (first run after install; cached afterwards)"
                if compiled.CACHED else
                "compiling the ray caster (numba has no writable cache directory, so every run compiles; "
                "set NUMBA_CACHE_DIR to a writable one)"
            )
            announced = True
    _warm = True
    elapsed = perf_counter() - start
    if elapsed > SLOW_WARM_UP:
        hits, misses = _cache_counts()
        if misses:
            cached = " and cached it on disk" if compiled.CACHED and not write_failed else ""
            log(f"compiled the ray caster in {elapsed:.1f} s{cached}")
        else:
            log(f"loaded the compiled ray caster from numba's cache in {elapsed:.1f} s")
    return elapsed
