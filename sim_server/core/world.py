"""The world: a Box2D world with layers and models, stepped at a fixed step size.

This is the in-process API of the simulator; the ROS node is a thin layer over it::

    from sim_server.core import World, Pose2D
    world = World.from_file("config/worlds/demo/world.yaml", step_size=0.005)
    world.spawn_model("robot.model.yaml", "bot", pose=Pose2D(1.0, 2.0, 0.0))
    for _ in range(200):
        world.step()
    print(world.time.sim_time, world.models["bot"].pose)
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
from dataclasses import replace
from pathlib import Path
from time import time as wall_clock
from typing import Any, Callable, Iterable, Iterator, TypeVar

from Box2D import b2

import numpy as np

from sim_server.core import limits
from sim_server.core.crowd.crowds import Crowds
from sim_server.core.errors import ConfigError, EntityError, RequestError
from sim_server.core.format.bounded_read import shown_path
from sim_server.core.format.entity_names import model_name_problem, namespace_problem
from sim_server.core.format.map_file import MapData, load_map_file
from sim_server.core.format.model_file import ModelSpec, load_model_file
from sim_server.core.format.world_file import ModelEntry, WorldSpec, load_world_file
from sim_server.core.format.yaml_parsing import expand_home
from sim_server.core.format.yaml_preprocessor import YamlPreprocessor
from sim_server.core.geometry import Pose2D
from sim_server.core.levels import LevelManager
from sim_server.core.physics.collision_filter import CollisionFilterRegistry
from sim_server.core.physics.contacts import Contact, overlapping_footprints, touching
from sim_server.core.physics.layer import Layer
from sim_server.core.physics.model import Model
from sim_server.core.physics.replicas import Replicas
from sim_server.core.physics.replicas import extent as replica_extent
from sim_server.core.physics.world_view import WorldListener
from sim_server.core.plugins.api import MODEL_PLUGIN_GROUP, WORLD_PLUGIN_GROUP, UpdateInfo
from sim_server.core.plugins.manager import PluginManager
from sim_server.core.timing.timekeeper import TimeKeeper

LOGGER = logging.getLogger("sim_server")

#: Default physics step (s), as the reference server's.
DEFAULT_STEP_SIZE = 0.005

StepHook = Callable[[TimeKeeper], None]

_Shared = TypeVar("_Shared")


class World:
    """A simulated world: the composition root of the core.

    It composes the physics (layers, models, replicas), the plugins and the levels. They name
    small protocols of it, never this class: sensors and pictures a
    :class:`~sim_server.core.physics.world_view.WorldView`, plugins a
    :class:`~sim_server.core.plugins.api.PluginWorld` (the view and more), levels a
    :class:`~sim_server.core.levels.LevelHost`.

    Args:
        spec: the validated world file.
        step_size: physics step in seconds.
        preprocessor: expands ``$eval``/``$include`` in files read later (spawned models).
        ros_node: the ROS node plugins publish through (None without ROS).
        seed: seeds every noise source of the plugins (None: nondeterministic).
        replicas: copies of the world side by side (see :mod:`sim_server.core.physics.replicas`).
    """

    def __init__(
        self,
        spec: WorldSpec,
        step_size: float = DEFAULT_STEP_SIZE,
        preprocessor: YamlPreprocessor | None = None,
        ros_node: Any = None,
        seed: int | None = None,
        replicas: Replicas = Replicas(),
    ) -> None:
        self.spec = spec
        self.replicas = replicas
        #: Where each copy's frame lies in the physics world (one identity pose without replicas).
        self.replica_offsets: tuple[Pose2D, ...] = (Pose2D(),)
        self.preprocessor = preprocessor or YamlPreprocessor()
        self.ros_node = ros_node
        #: Seed of every noise source (None: nondeterministic); set before models are added.
        self.seed: int | None = limits.checked_seed(seed)
        self.time = TimeKeeper(step_size)
        self.physics = b2.world(gravity=(0.0, 0.0), doSleep=True)
        self.collision_filter = CollisionFilterRegistry()
        self.layers: list[Layer] = []
        #: Grows whenever the static geometry (layers) changes, so caches of it know to rebuild.
        self.static_geometry_version = 0
        self.models: dict[str, Model] = {}
        self._listeners: list[WorldListener] = []
        self._file_models: dict[Path, ModelSpec] = {}
        #: The plugins: the world loads and runs them; the layers above read them as
        #: :class:`~sim_server.core.plugins.api.ModelPlugins` (``plugins_of``, ``find``).
        self.plugins = PluginManager(self, self.physics, ros_node)
        #: Objects that plugins and other users share per world (see :meth:`shared`).
        self._shared: dict[str, Any] = {}
        #: The crowds of people (each copy of each crowd of the world file): find, add and remove
        #: people there.
        self.crowds = Crowds()
        self.before_step_hooks: list[StepHook] = [self.plugins.before_physics_step]
        self.after_step_hooks: list[StepHook] = [self.plugins.after_physics_step]

    # ---------------------------------------------------------------------------- loading
    @classmethod
    def from_file(
        cls,
        world_path: str | Path,
        step_size: float = DEFAULT_STEP_SIZE,
        preprocessor: YamlPreprocessor | None = None,
        ros_node: Any = None,
        seed: int | None = None,
        enable_levels: bool = False,
        replicas: Replicas = Replicas(),
    ) -> "World":
        """Load the world file at ``world_path`` with its layers and models.

        Args:
            world_path: the world YAML file.
            step_size: physics step in seconds.
            preprocessor: the YAML preprocessor (its ``param()`` lookup); a default one reads
                the environment only.
            ros_node: the ROS node plugins publish through (None without ROS).
            seed: seeds every noise source of the plugins (None: nondeterministic).
            enable_levels: stream the world file's levels (and streamed layers' tiles) as
                performers move; otherwise every entity is loaded.
            replicas: load that many copies of the layers and models, side by side (see
                :mod:`sim_server.core.physics.replicas`; not with streamed levels).

        Raises:
            ConfigError: any file is missing or invalid; the message names file, entry and key.
        """
        preprocessor = preprocessor or YamlPreprocessor()
        spec = load_world_file(Path(world_path), preprocessor)
        return cls.from_spec(spec, step_size, preprocessor, ros_node, seed, enable_levels, replicas)

    @classmethod
    def from_spec(
        cls,
        spec: WorldSpec,
        step_size: float = DEFAULT_STEP_SIZE,
        preprocessor: YamlPreprocessor | None = None,
        ros_node: Any = None,
        seed: int | None = None,
        enable_levels: bool = False,
        replicas: Replicas = Replicas(),
    ) -> "World":
        """Load a validated world file's layers and models (as :meth:`from_file`)."""
        preprocessor = preprocessor or YamlPreprocessor()
        if not isinstance(replicas, Replicas):
            raise ValueError(f"replicas must be a sim_server.core.physics.replicas.Replicas, got {type(replicas).__name__}")
        if replicas.count > 1 and enable_levels and (spec.levels or any(layer.streaming for layer in spec.layers)):
            raise ConfigError(f"{spec.path}: a world with streamed levels or layers cannot be replicated")
        world = cls(spec, step_size, preprocessor, ros_node, seed, replicas)
        try:
            world._load_layers(enable_levels)
            for entry in spec.models:
                try:
                    if entry.model_path not in world._file_models:
                        world._file_models[entry.model_path] = load_model_file(entry.model_path, world.preprocessor)
                except ConfigError as exc:
                    raise ConfigError(f"{spec.path}: {entry.location}: {exc}") from None
            # The world's description stays as it is until close(): keep the cyclic garbage
            # collector from walking it on every full collection (with 10,000 models in levels, a
            # pause of about 50 ms every few seconds of streaming). close() hands it back. Garbage
            # is collected first, or a world closed before (cycles only a full collection frees)
            # would be frozen too, and with one world loaded after another never go.
            gc.collect()
            gc.freeze()
            world._prepare_plugins()
            world._populate()
            world._load_crowds()
        except BaseException:
            world.close()  # nothing of it stays: models, plugins (their topics), layers
            raise
        return world

    def _prepare_plugins(self) -> None:
        """Let the plugin classes the world file names make ready what their steps need (a
        laser's compiled ray caster, say) now: models that levels bring in arrive inside a step."""
        for entry in self.spec.models:
            specs = self._file_models[entry.model_path].plugins
            try:
                self.plugins.prepare(((plugin, entry.name) for plugin in specs), MODEL_PLUGIN_GROUP)
            except ConfigError as exc:
                raise ConfigError(f"{self.spec.path}: {entry.location}: {exc}") from None
        self.plugins.prepare(((plugin, "") for plugin in self.spec.plugins), WORLD_PLUGIN_GROUP)

    def _populate(self) -> None:
        """Add the world file's models and world plugins (as loaded, or after a reset), then the
        levels the performers start in."""
        replicas = self.replicas
        for index, offset in enumerate(self.replica_offsets):
            for entry in self.spec.models:
                if self.levels.owns_model(entry.name):
                    continue
                pose = offset.compose(entry.pose) if index else entry.pose
                try:
                    self.add_model(
                        self._file_models[entry.model_path],
                        replicas.name(entry.name, index),
                        replicas.name(entry.namespace, index),
                        pose,
                        from_world_file=True,
                    )
                except (ConfigError, EntityError) as exc:
                    raise ConfigError(f"{self.spec.path}: {entry.location}: {exc}") from None
        self.plugins.load_world_plugins(self.spec.plugins)
        self.levels.update()

    def _load_crowds(self) -> None:
        """Make the world file's crowds walk: one :class:`Crowd` per crowd of the file, holding
        the people of every copy (each copy seeded from the crowd's seed, else the world's, with
        the crowd's and copy's index), among the walls of its layers."""
        if not self.spec.crowds:
            return
        from sim_server.core.crowd.crowd import Crowd  # the crowd models, only for a world with people

        per_copy = len(self.spec.layers)
        offsets = [(offset.x, offset.y) for offset in self.replica_offsets]
        people = sum(spec.initial_count for spec in self.spec.crowds) * len(offsets)
        if people > limits.MAX_PEDESTRIANS:
            raise ConfigError(
                f"{self.spec.path}: {len(offsets)} copies of the world's crowds hold {people} pedestrians, more "
                f"than the limit of {limits.MAX_PEDESTRIANS}: fewer copies or people"
            )
        for number, spec in enumerate(self.spec.crowds):
            layers = [layer for layer in self.layers[:per_copy] if not spec.layers or set(layer.names) & set(spec.layers)]
            seeds: list[Any] = []
            for index in range(len(offsets)):
                if spec.seed is not None:
                    seeds.append([spec.seed, index])
                elif self.seed is not None:
                    seeds.append([self.seed, number, index])
                else:
                    seeds.append(None)
            names = [self.replicas.name(spec.name, index) for index in range(len(offsets))]
            try:
                crowd = Crowd(spec, self, layers, self.time.step_size, names, offsets, seeds)
            except ConfigError as exc:
                raise ConfigError(f"{self.spec.path}: {exc}") from None
            self.crowds.add(crowd)
            self.add_listener(crowd)
        self.before_step_hooks.insert(1, self._step_crowds)

    def _step_crowds(self, time: TimeKeeper) -> None:
        self.crowds.before_step(time.iterations, time.sim_time)

    def has_entity(self, name: str) -> bool:
        """Whether a model or a pedestrian is called ``name``."""
        return name in self.models or self.crowds.has(name)

    def pedestrian_count(self) -> int:
        """People in the world now, every crowd's (what a crowd asks its host)."""
        return self.crowds.count

    def spawn_pedestrian(self, crowd: str, position: tuple[float, float], goals=(), speed: float | None = None,
                         name: str = "") -> str:
        """Add a person to crowd ``crowd`` (:meth:`Crowds.spawn
        <sim_server.core.crowd.crowds.Crowds.spawn>`, its name free among models too)."""
        return self.crowds.spawn(crowd, position, goals, speed, name, taken=self.models.__contains__)

    def delete_entity(self, name: str) -> str:
        """Remove the model or the pedestrian called ``name``; returns which it was
        (``"model"`` or ``"pedestrian"``; EntityError when there is neither)."""
        if name not in self.models and self.crowds.has(name):
            self.crowds.remove(name)
            return "pedestrian"
        self.delete_model(name)
        return "model"

    def crowd_circles(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pedestrian's body: (N, 3) centre x, y and radius (m, world frame) and (N,) int64
        collision bits (:meth:`Crowds.circles <sim_server.core.crowd.crowds.Crowds.circles>`)."""
        return self.crowds.circles()

    def file_model(self, path: Path) -> ModelSpec:
        """The model file ``path`` named by the world file, as loaded."""
        return self._file_models[path]

    def level_models(self) -> list[tuple[ModelEntry, ModelSpec]]:
        """The world file's models that levels load and unload, with their model files (empty
        when levels are off)."""
        return [
            (entry, self._file_models[entry.model_path])
            for entry in self.spec.models
            if self.levels.owns_model(entry.name)
        ]

    def shared(self, key: str, make: Callable[[], _Shared]) -> _Shared:
        """The object kept under ``key`` for this world, made by ``make()`` on first use (the
        lasers' scene, a renderer); dropped by :meth:`close`."""
        try:
            return self._shared[key]
        except KeyError:
            made = self._shared[key] = make()
            return made

    @contextlib.contextmanager
    def removing_bodies(self, bodies: Iterable[b2.body]) -> Iterator[None]:
        """A block inside which ``bodies`` may be destroyed: their touching contacts end first
        (the plugins hear of it), and Box2D's own calls during destruction are held back."""
        with self.plugins.removing(bodies):
            yield

    def layers_changed(self, layers: list[Layer]) -> None:
        """Layer pieces were loaded or unloaded: caches of static geometry must rebuild."""
        self.static_geometry_version += 1
        for listener in list(self._listeners):
            notify = getattr(listener, "on_layers_changed", None)
            if notify is not None:
                notify(layers)

    def reset(self) -> None:
        """Return to the state as loaded: time 0, the file's models at their poses, plugins
        initialised afresh, spawned models gone. The process and the layers stay."""
        for name in list(self.models):
            self.delete_model(name)
        self.plugins.close()
        self.time.reset()
        self.levels.reset()
        self._populate()
        self.crowds.reset()

    def delete_spawned_models(self) -> None:
        """Delete every model and pedestrian that spawn requests added (those of the world file
        stay, and the people of its crowds' spawners)."""
        for name in [name for name, model in self.models.items() if not model.from_world_file]:
            self.delete_model(name)
        self.crowds.remove_added()

    def restore_models(self) -> None:
        """Put every model back at the pose it entered the world at (the world file's, or the
        spawn request's), at rest; plugins keep their state, as after :meth:`set_model_state`.
        Pedestrians go back where they entered, at rest, keeping their goals."""
        for model in list(self.models.values()):
            model.restore()
            self._notify_moved(model)
        self.crowds.restore()

    def _load_layers(self, enable_levels: bool) -> None:
        for layer_spec in self.spec.layers:
            for name in layer_spec.names:
                self.collision_filter.register_layer(name)
        maps: list[MapData | None] = []
        for layer_spec in self.spec.layers:
            bits, _ = self.collision_filter.category_bits(layer_spec.names)
            try:
                if layer_spec.segments is not None:  # a crowd's scenario walls (pedsim_walls)
                    segments = np.array(layer_spec.segments, dtype=np.float64).reshape(-1, 4)
                    map_data = MapData(segments, Pose2D(), self.spec.path)
                else:
                    map_data = (
                        load_map_file(layer_spec.map_path, layer_spec.name, self.preprocessor)
                        if layer_spec.map_path
                        else None
                    )
                layer = Layer(self.physics, layer_spec, map_data, bits, load=False)
            except ConfigError as exc:
                raise ConfigError(f"{self.spec.path}: {layer_spec.location}: {exc}") from None
            self.layers.append(layer)
            maps.append(map_data)
        if self.replicas.count > 1:
            self._replicate_layers(maps)
        #: Level streaming: the layers above read it as
        #: :class:`~sim_server.core.levels.LevelStreaming` (loaded levels, performers, news of changes).
        self.levels = LevelManager(self, self.spec, enable_levels)
        self.before_step_hooks.insert(0, self.levels.update)
        for layer in self.layers:
            for piece in layer.pieces:
                if not self.levels.owns_piece(piece):
                    layer.load(piece)
        self.static_geometry_version += 1

    def _replicate_layers(self, maps: list[MapData | None]) -> None:
        """Lay out the copies (around the layers' walls and the models' start poses) and add
        copies 1, 2, ... of every layer, each map placed at its copy's offset."""
        originals = list(self.layers)
        boxes = [piece.box for layer in originals for piece in layer.pieces if len(piece.edges)]
        starts = [(entry.pose.x, entry.pose.y) for entry in self.spec.models]
        extent = replica_extent(boxes, starts)
        offsets = self.replicas.offsets(extent)
        far_x, far_y = max(offset.x for offset in offsets) + extent[2], max(offset.y for offset in offsets) + extent[3]
        if not (limits.COORDINATE.contains(far_x) and limits.COORDINATE.contains(far_y)):
            raise ConfigError(
                f"{self.spec.path}: {self.replicas.count} copies of a world {extent[2] - extent[0]:g} x "
                f"{extent[3] - extent[1]:g} m large, {self.replicas.margin:g} m apart, reach ({far_x:g}, {far_y:g}) m, "
                f"beyond the world's +-{limits.COORDINATE.high:g} m: fewer copies or a smaller margin"
            )
        self.replica_offsets = offsets
        for offset in self.replica_offsets[1:]:
            for layer, map_data in zip(originals, maps):
                placed = replace(map_data, origin=offset.compose(map_data.origin)) if map_data is not None else None
                self.layers.append(Layer(self.physics, layer.spec, placed, layer.category_bits, load=False))

    # ---------------------------------------------------------------------------- listeners
    def add_listener(self, listener: WorldListener) -> None:
        """Tell ``listener`` of every model added or removed from now on."""
        self._listeners.append(listener)

    def remove_listener(self, listener: WorldListener) -> None:
        """Stop telling ``listener``."""
        self._listeners.remove(listener)

    # ---------------------------------------------------------------------------- models
    def add_model(
        self, spec: ModelSpec, name: str, namespace: str = "", pose: Pose2D = Pose2D(), from_world_file: bool = False
    ) -> Model:
        """Build a model from an already validated spec; ``from_world_file`` marks one of the
        world file's models (see :meth:`delete_spawned_models`).

        Raises:
            EntityError: a model called ``name`` exists already, or the name is empty.
            ConfigError: the spec names layers this world does not have.
            RequestError: a spawned model would overlap too many footprints (see
                :meth:`_check_crowding`; the world file's models are not checked).
        """
        self._check_new_model(name, namespace, pose)
        model = Model.build(self.physics, self.collision_filter, name, namespace, spec, pose)
        model.from_world_file = from_world_file
        try:
            if not from_world_file:
                self._check_crowding(model)
            self.plugins.load_model_plugins(model)
        except BaseException:
            with self.plugins.removing(body.physics_body for body in model.bodies.values()):
                model.destroy()
            raise
        self.models[name] = model
        try:
            for listener in list(self._listeners):
                listener.on_model_added(model)
            self.plugins.notify_model_added(model)
        except BaseException:
            self.delete_model(name)  # nothing stays half-created
            raise
        return model

    def _check_new_model(self, name: str, namespace: str, pose: Pose2D) -> None:
        """Raise unless a model ``name`` in ``namespace`` may be added at ``pose``."""
        problem = model_name_problem(name)
        if problem is not None:
            raise RequestError(problem)
        problem = namespace_problem(namespace)
        if problem is not None:
            raise RequestError(problem)
        if name in self.models:
            raise EntityError(f'model with name "{name}" already exists')
        if self.crowds.has(name):
            raise EntityError(f'a pedestrian named "{name}" exists already')
        check_pose(pose)

    def spawn_model(
        self, model_path: str | Path, name: str, namespace: str = "", pose: Pose2D = Pose2D()
    ) -> Model:
        """Read the model file at ``model_path`` and add it as ``name`` at ``pose``.

        A relative path resolves against the world file's folder (the reference's rule).
        """
        path = self.model_path(model_path)
        relative = not expand_home(model_path).is_absolute()
        self._check_new_model(name, namespace, pose)
        if relative and not os.path.exists(path):  # False also for paths the OS refuses (too long)
            raise ConfigError(
                f'model file "{shown_path(path)}" does not exist (a relative path resolves against the '
                "world file's folder)"
            )
        return self.add_model(load_model_file(path, self.preprocessor), name, namespace, pose)

    def model_path(self, model_path: str | Path) -> Path:
        """The model file a spawn request names: ``~`` expanded, a relative path against the
        world file's folder (the reference's rule); RequestError for a NUL character."""
        if "\0" in str(model_path):
            raise RequestError("model path must not contain a NUL character")
        path = expand_home(model_path)
        return path if path.is_absolute() else self.spec.path.parent / path

    def model(self, name: str) -> Model:
        """The model called ``name`` (:class:`EntityError` when there is none)."""
        try:
            return self.models[name]
        except KeyError:
            shown = name if len(name) <= limits.MAX_NAME_LENGTH else name[: limits.MAX_NAME_LENGTH - 3] + "..."
            raise EntityError(f'model with name "{shown}" does not exist') from None

    def delete_model(self, name: str) -> None:
        """Remove the model called ``name`` with all its bodies and joints."""
        model = self.model(name)
        self.plugins.notify_model_removed(model)
        for listener in list(self._listeners):
            listener.on_model_removed(model)
        self.plugins.unload_model_plugins(model)
        del self.models[name]
        self.levels.forget_model(name)
        with self.plugins.removing(body.physics_body for body in model.bodies.values()):
            model.destroy()

    def move_model(self, name: str, pose: Pose2D) -> None:
        """Put the model's first body at ``pose``, carrying the others rigidly (RequestError,
        and the model stays, where it would overlap too many footprints)."""
        model = self.model(name)
        check_pose(pose)
        self._place(model, lambda: model.set_pose(pose))
        self._notify_moved(model)

    def _place(self, model: Model, place: Callable[[], None]) -> None:
        """Run ``place``, which moves ``model``; where the model then overlaps too many
        footprints, put it back as it was (poses, velocities) and raise RequestError."""
        bodies = [body.physics_body for body in model.bodies.values()]
        saved = [
            (tuple(b.position), b.angle, tuple(b.linearVelocity), b.angularVelocity, b.awake) for b in bodies
        ]
        place()
        try:
            self._check_crowding(model)
        except RequestError:
            model.placed()
            for body, (position, angle, linear, angular, awake) in zip(bodies, saved):
                body.transform = (position, angle)
                body.linearVelocity = linear
                body.angularVelocity = angular
                body.awake = awake
            raise

    def _check_crowding(self, model: Model) -> None:
        """RequestError when the footprints of ``model``, where it is, overlap (bounding boxes)
        more than :data:`~limits.MAX_OVERLAPPING_FOOTPRINTS` of other models' in pairs that make
        contacts (not static with static); layers do not count."""
        count = overlapping_footprints(self.physics, model)
        if count > limits.MAX_OVERLAPPING_FOOTPRINTS:
            x, y = model.first_body.physics_body.position
            raise RequestError(
                f'model "{model.name}" would overlap other models\' footprints in {count} pairs at '
                f"({x:g}, {y:g}), more than the limit of {limits.MAX_OVERLAPPING_FOOTPRINTS} (a pile of bodies "
                "slows every step): choose a freer place"
            )

    def _notify_moved(self, model: Model) -> None:
        for listener in list(self._listeners):
            moved = getattr(listener, "on_model_moved", None)
            if moved is not None:
                moved(model)

    def set_model_state(self, name: str, pose: Pose2D, vx: float, vy: float, wz: float) -> None:
        """Set a model's pose (as :meth:`move_model`) and twist (m/s, rad/s, world frame) at once."""
        model = self.model(name)
        check_pose(pose)
        if not (limits.SPEED.contains(vx) and limits.SPEED.contains(vy) and limits.ANGULAR_SPEED.contains(wz)):
            raise RequestError(
                f"twist ({vx:g}, {vy:g}, {wz:g}) must be finite, linear within +-{limits.SPEED.high:g} m/s and "
                f"angular within +-{limits.ANGULAR_SPEED.high:g} rad/s"
            )

        def place() -> None:
            model.set_pose(pose)
            model.set_twist(vx, vy, wz)

        self._place(model, place)
        self._notify_moved(model)

    def set_joint_motor(self, model_name: str, joint_name: str, enable: bool, speed: float, max_torque: float) -> None:
        """Switch a revolute joint's motor on (target ``speed`` rad/s, at most ``max_torque`` N m) or off."""
        model = self.model(model_name)
        joint = model.joints.get(joint_name)
        if joint is None:
            raise EntityError(f'model "{model_name}" has no joint named "{joint_name}"')
        if joint.spec.joint_type != "revolute":
            raise RequestError(f'joint "{joint_name}" of model "{model_name}" is a {joint.spec.joint_type} joint, not revolute')
        if not (limits.ANGULAR_SPEED.contains(speed) and limits.TORQUE.contains(max_torque)):
            raise RequestError(
                f"speed must be within +-{limits.ANGULAR_SPEED.high:g} rad/s and max_torque within "
                f"[0, {limits.TORQUE.high:g}] N m, got {speed:g}, {max_torque:g}"
            )
        physics = joint.physics_joint
        physics.motorEnabled = enable
        physics.motorSpeed = speed
        physics.maxMotorTorque = max_torque
        physics.bodyA.awake = physics.bodyB.awake = True

    def contacts(self) -> list[Contact]:
        """Every pair of fixtures touching now, with their world contact points (m)."""
        return touching(self.physics)

    def layer(self, name: str) -> Layer:
        """The layer one of whose names is ``name``."""
        for layer in self.layers:
            if name in layer.names:
                return layer
        raise EntityError(f'layer with name "{name}" does not exist')

    # ---------------------------------------------------------------------------- stepping
    def step(self, count: int = 1) -> None:
        """Advance the world ``count`` physics steps of ``time.step_size`` seconds.

        Each step runs the before-step hooks, the Box2D step, advances sim time and runs the
        after-step hooks. Paused or not, a call steps: pausing is the caller's decision.
        """
        time = self.time
        physics_step = self.physics.Step
        dt = time.step_size
        velocity_iterations = self.spec.velocity_iterations
        position_iterations = self.spec.position_iterations
        plugins = self.plugins
        for _ in range(count):
            info = None
            if plugins.has_update_hooks:
                info = UpdateInfo(time.time_ns + time.step_ns, dt, time.iterations + 1, wall_clock(), False)
                plugins.pre_update(info)
            for hook in self.before_step_hooks:
                hook(time)
            physics_step(dt, velocity_iterations, position_iterations)
            time.advance()
            for hook in self.after_step_hooks:
                hook(time)
            if info is not None:
                plugins.post_update(info)

    def idle(self) -> None:
        """A tick without a step (while paused): world plugins' phase hooks run with step size 0."""
        if self.plugins.has_update_hooks:
            info = UpdateInfo(self.time.time_ns, 0.0, self.time.iterations, wall_clock(), True)
            self.plugins.pre_update(info)
            self.plugins.post_update(info)

    def all_models(self) -> Iterable[Model]:
        """The models in the order they were added."""
        return self.models.values()

    def render(self, *args: Any, **kwargs: Any) -> None:
        """Gone: the core draws nothing. Use ``sim_server.rendering.render(world, view, pixels)``."""
        raise AttributeError(
            "World.render moved out of the core: use sim_server.rendering.render(world, view=None, pixels=512)"
        )

    def close(self) -> None:
        """Remove every person, model (telling the listeners) and layer."""
        for crowd in self.crowds.close():
            self.remove_listener(crowd)
        for name in list(self.models):
            self.delete_model(name)
        self.plugins.close()
        with self.plugins.removing(body for layer in self.layers for body in layer.loaded_bodies()):
            for layer in self.layers:
                layer.destroy()
        self.layers.clear()
        self._shared.clear()
        gc.unfreeze()


def check_pose(pose: Pose2D) -> None:
    """RequestError unless ``pose`` is finite and within the coordinate and angle limits."""
    if not (limits.COORDINATE.contains(pose.x) and limits.COORDINATE.contains(pose.y) and limits.ANGLE.contains(pose.theta)):
        raise RequestError(
            f"pose ({pose.x:g}, {pose.y:g}, {pose.theta:g}) must have x and y within +-{limits.COORDINATE.high:g} m "
            f"and theta within +-{limits.ANGLE.high:g} rad, all finite"
        )
