"""Levels and performers: static entities that exist only while a performer is near them.

A *level* is an axis-aligned box of the world, inflated on every side by a *buffer*, and the
entities (models and layers) named by its refs. A *performer* is a model with a box (centred on
its first body, not rotating). A level is loaded while some performer's box touches its buffer
zone and unloaded once none does; an entity stays loaded while any of its levels is. Entities of
no level, performers and models spawned at run time are global: always loaded. The tiles of a
streamed layer are levels of their own, one tile each.

The check runs before every physics step, so a performer moving at any speed is handled in the
step it crosses a boundary (Gazebo Sim's levels, in 2D). A full check is a vectorised
box-against-box test over all levels; it also gives each performer the distance it can move
(in any direction, along x or y) without touching or leaving any level's zone, so most steps
only compare that distance with how far the performer has moved since.

Levels act on the world that composes them through :class:`LevelHost`, the little of it they
need (its layers and models, adding and deleting models, destroying bodies); they never name
the world's class.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Mapping, Protocol, Sequence

import numpy as np
from Box2D import b2

from sim_server.core import limits
from sim_server.core.errors import EntityError, RequestError
from sim_server.core.format.model_file import ModelSpec
from sim_server.core.format.world_file import WorldSpec
from sim_server.core.geometry import Pose2D
from sim_server.core.physics.layer import Layer, LayerPiece
from sim_server.core.physics.model import Model

LOGGER = logging.getLogger("sim_server")

#: Box of a performer made at run time with a zero size (m).
DEFAULT_PERFORMER_SIZE = (2.0, 2.0)


class LevelHost(Protocol):
    """What levels need of the world that composes them (:class:`sim_server.core.world.World`
    fulfils it)."""

    @property
    def layers(self) -> Sequence[Layer]:
        """The world's layers, with every piece (loaded or not)."""

    @property
    def models(self) -> Mapping[str, Model]:
        """The models in the world by name."""

    def file_model(self, path: Path) -> ModelSpec:
        """The model file ``path`` that the world file names, as loaded."""

    def add_model(
        self, spec: ModelSpec, name: str, namespace: str = "", pose: Pose2D = Pose2D(), from_world_file: bool = False
    ) -> Model:
        """Build a model of ``spec`` called ``name`` at ``pose``."""

    def delete_model(self, name: str) -> None:
        """Remove the model called ``name``."""

    def removing_bodies(self, bodies: Iterable[b2.body]) -> ContextManager[None]:
        """A block inside which ``bodies`` may be destroyed (their contacts end first)."""

    def layers_changed(self, layers: list[Layer]) -> None:
        """Layer pieces were loaded or unloaded: caches of static geometry must rebuild."""


@dataclass
class Level:
    """A level: its buffer zone (x_min, y_min, x_max, y_max, m), models and layer pieces."""

    name: str
    zone: tuple[float, float, float, float]
    models: tuple[str, ...]
    pieces: tuple[tuple[Layer, LayerPiece], ...]
    loaded: bool = False


@dataclass
class Performer:
    """A performer: its name, its model and its box size (m)."""

    name: str
    model: str
    size_x: float
    size_y: float


#: Called after the loaded levels changed, with the names of those loaded and those unloaded.
LevelListener = Callable[[list[str], list[str]], None]


class LevelStreaming(Protocol):
    """What the layers above the core use of level streaming (``world.levels``): which levels are
    loaded, performers, which models levels own, and news of changes."""

    @property
    def loaded_levels(self) -> list[str]:
        """Names of the loaded levels, in file order (tiles last)."""

    def add_performer(self, model_name: str, size_x: float = 0.0, size_y: float = 0.0) -> "Performer":
        """Make an existing model a performer (sizes in m)."""

    def owns_model(self, name: str) -> bool:
        """Whether the file's model ``name`` exists only while one of its levels is loaded."""

    def add_listener(self, listener: LevelListener) -> None:
        """Call ``listener`` after every change of the loaded levels."""

    def remove_listener(self, listener: LevelListener) -> None:
        """Stop calling ``listener``."""


@dataclass
class LevelManager:
    """Loads and unloads the entities of levels as performers move.

    Args:
        world: the world (its layers must exist, unloaded where levels own them).
        spec: the world file.
        enabled: stream levels; when False every entity is loaded and stays.
    """

    world: LevelHost
    spec: WorldSpec
    enabled: bool
    levels: list[Level] = field(init=False)
    performers: dict[str, Performer] = field(init=False)
    _listeners: list[LevelListener] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        layers = {name: layer for layer in self.world.layers for name in layer.names}
        self.levels = []
        for level in self.spec.levels:
            half_x, half_y = 0.5 * level.size_x + level.buffer, 0.5 * level.size_y + level.buffer
            models = tuple(ref for ref in level.refs if ref not in layers)
            pieces = tuple((layers[ref], piece) for ref in level.refs if ref in layers for piece in layers[ref].pieces)
            zone = (level.x - half_x, level.y - half_y, level.x + half_x, level.y + half_y)
            self.levels.append(Level(level.name, zone, models, pieces))
        for layer in self.world.layers:
            if layer.streamed:
                buffer = layer.spec.streaming.buffer
                for piece in layer.pieces:
                    x_min, y_min, x_max, y_max = piece.box
                    zone = (x_min - buffer, y_min - buffer, x_max + buffer, y_max + buffer)
                    self.levels.append(Level(piece.name, zone, (), ((layer, piece),)))
        self._zones = np.array([level.zone for level in self.levels], dtype=np.float64).reshape(-1, 4)
        self._level_models = {name for level in self.levels for name in level.models}
        self._level_pieces = {id(piece) for level in self.levels for _, piece in level.pieces}
        self._active = np.zeros(len(self.levels), dtype=bool)
        #: Per performer (by model name), its body and the box (x_min, y_min, x_max, y_max, m)
        #: it may move in before the next full check is needed; empty: check fully.
        self._safe_boxes: dict[str, tuple[Any, float, float, float, float]] = {}
        self._entries = {entry.name: entry for entry in self.spec.models}
        self._reset_performers()

    def _reset_performers(self) -> None:
        self.performers = {p.ref: Performer(p.name, p.ref, p.size_x, p.size_y) for p in self.spec.performers}
        self._safe_boxes = {}

    # ------------------------------------------------------------------ listeners
    def add_listener(self, listener: LevelListener) -> None:
        """Call ``listener(loaded, unloaded)`` (level names) after every change of the loaded levels."""
        self._listeners.append(listener)

    def remove_listener(self, listener: LevelListener) -> None:
        """Stop calling ``listener`` (nothing happens when it was not added)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    # ------------------------------------------------------------------ ownership
    def owns_model(self, name: str) -> bool:
        """Whether the file's model ``name`` exists only while one of its levels is loaded."""
        return self.enabled and name not in self.performers and name in self._level_models

    def owns_piece(self, piece: LayerPiece) -> bool:
        """Whether a layer piece exists only while one of its levels is loaded."""
        return self.enabled and id(piece) in self._level_pieces

    @property
    def loaded_levels(self) -> list[str]:
        """Names of the loaded levels, in file order (tiles last)."""
        return [level.name for level in self.levels if level.loaded]

    # ------------------------------------------------------------------ performers
    def add_performer(self, model_name: str, size_x: float = 0.0, size_y: float = 0.0) -> Performer:
        """Make an existing model a performer (a 2 x 2 m box when the size is zero)."""
        if not model_name:
            raise RequestError("performer needs the name of a model")
        if model_name not in self.world.models:
            raise EntityError(f'model with name "{model_name}" does not exist')
        if model_name in self.performers:
            raise EntityError(f'model "{model_name}" is already a performer')
        if not (limits.DISTANCE.contains(size_x) and limits.DISTANCE.contains(size_y)):
            raise RequestError(
                f"performer size must be finite, >= 0 and <= {limits.DISTANCE.high:g} m, got ({size_x:g}, {size_y:g})"
            )
        if size_x == 0.0 and size_y == 0.0:
            size_x, size_y = DEFAULT_PERFORMER_SIZE
        performer = Performer(model_name, model_name, size_x, size_y)
        self.performers[model_name] = performer
        self._safe_boxes = {}  # a new performer: check fully at the next step
        return performer

    def resize_performer(self, model_name: str, size_x: float, size_y: float) -> None:
        """Change a performer's box (m)."""
        performer = self.performers[model_name]
        performer.size_x, performer.size_y = size_x, size_y
        self._safe_boxes = {}

    # ------------------------------------------------------------------ streaming
    def forget_model(self, name: str) -> None:
        """The model ``name`` leaves the world: a performer's body must not be read any more."""
        if name in self._safe_boxes:
            self._safe_boxes = {}

    def update(self, _time: object = None) -> None:
        """Load the levels performers touch and unload the others (a before-step hook)."""
        if not self.enabled or not self.levels:
            return
        boxes = self._safe_boxes
        if boxes:
            for body, low_x, low_y, high_x, high_y in boxes.values():
                position = body.position  # (.x and .y: unpacking a b2Vec2 iterates in Python)
                if not (low_x < position.x < high_x and low_y < position.y < high_y):
                    break
            else:
                return  # no performer can have touched or left a zone since the last full check
        if not self.performers and not self._active.any():
            return  # nobody to load levels for, and none loaded
        zones = self._zones
        active = np.zeros(len(self.levels), dtype=bool)
        boxes = {}
        for name, performer in self.performers.items():
            model = self.world.models.get(performer.model)
            if model is None:
                continue
            body = model.first_body.physics_body
            x, y = body.position
            half_x, half_y = 0.5 * performer.size_x, 0.5 * performer.size_y
            # Overlap of the performer's box with each zone along x and y (negative: a gap).
            overlap_x = np.minimum(x + half_x - zones[:, 0], zones[:, 2] - (x - half_x))
            overlap_y = np.minimum(y + half_y - zones[:, 1], zones[:, 3] - (y - half_y))
            touching = (overlap_x >= 0.0) & (overlap_y >= 0.0)
            active |= touching
            # Moving less than this along x and y keeps every zone touched or untouched.
            margin = np.where(touching, np.minimum(overlap_x, overlap_y), np.maximum(-overlap_x, -overlap_y))
            reach = float(margin.min())
            boxes[name] = (body, x - reach, y - reach, x + reach, y + reach)
        # While a performer's model is missing, check fully every step until it is back.
        self._safe_boxes = boxes if len(boxes) == len(self.performers) else {}
        if not np.array_equal(active, self._active):
            self._apply(active)

    def _apply(self, active: np.ndarray) -> None:
        needed_models = {m for level, on in zip(self.levels, active) if on for m in level.models}
        needed_pieces = {id(p) for level, on in zip(self.levels, active) if on for _, p in level.pieces}
        unloaded = [level for level, on in zip(self.levels, active) if level.loaded and not on]
        loaded = [level for level, on in zip(self.levels, active) if on and not level.loaded]
        changed_layers: dict[int, Layer] = {}
        for level in unloaded:
            level.loaded = False
            for name in level.models:
                if name not in needed_models and name in self.world.models:
                    self.world.delete_model(name)
            for layer, piece in level.pieces:
                if id(piece) not in needed_pieces and piece.loaded:
                    with self.world.removing_bodies([piece.body]):
                        layer.unload(piece)
                    changed_layers[id(layer)] = layer
        for level in loaded:
            level.loaded = True
            for layer, piece in level.pieces:
                if not piece.loaded:
                    layer.load(piece)
                    changed_layers[id(layer)] = layer
            for name in level.models:
                if name not in self.world.models:
                    entry = self._entries[name]
                    self.world.add_model(
                        self.world.file_model(entry.model_path), entry.name, entry.namespace, entry.pose,
                        from_world_file=True,
                    )
        self._active = active.copy()
        if changed_layers:
            self.world.layers_changed(list(changed_layers.values()))
        for level in unloaded:
            LOGGER.info('unloaded level "%s"', level.name)
        for level in loaded:
            LOGGER.info('loaded level "%s"', level.name)
        for listener in list(self._listeners):
            listener([level.name for level in loaded], [level.name for level in unloaded])

    def reset(self) -> None:
        """Forget every loaded level and run-time performer (the world reloads them)."""
        self._reset_performers()
        self._safe_boxes = {}
        changed: dict[int, Layer] = {}
        for level in self.levels:
            level.loaded = False
            for layer, piece in level.pieces:
                if piece.loaded and self.owns_piece(piece):
                    with self.world.removing_bodies([piece.body]):
                        layer.unload(piece)
                    changed[id(layer)] = layer
        self._active[:] = False
        if changed:
            self.world.layers_changed(list(changed.values()))
