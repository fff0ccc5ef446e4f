"""World files: physics properties, layers, models, world plugins and crowds.

:func:`load_world_file` validates the world file itself; the map and model files it names are
read when the world is built (:mod:`sim_server.core.world`). Relative paths resolve against the
world file's folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.crowd_file import CrowdSpec, parse_crowds
from sim_server.core.format.entity_names import model_name_problem, namespace_problem
from sim_server.core.format.model_file import Color, PluginSpec, parse_plugin
from sim_server.core.format.yaml_preprocessor import YamlPreprocessor
from sim_server.core.format.yaml_reader import YamlReader, load_yaml_file, resolve_path
from sim_server.core.geometry import Pose2D
from sim_server.core.limits import MAX_LAYERS

DEFAULT_VELOCITY_ITERATIONS = 10
DEFAULT_POSITION_ITERATIONS = 10
DEFAULT_LAYER_COLOR: Color = (1.0, 1.0, 1.0, 1.0)


@dataclass(frozen=True)
class StreamingSpec:
    """How a layer's walls are cut into square tiles that stream in and out like levels.

    Attributes:
        tile_size: side of a tile (m), in the layer's frame.
        buffer: distance (m) around a tile within which a performer loads it.
    """

    tile_size: float
    buffer: float


@dataclass(frozen=True)
class LayerSpec:
    """A layer entry: one or more names sharing one static body, and an optional map file.

    Attributes:
        segments: walls given in place of a map (x1, y1, x2, y2 in m, world frame: a pedsim
            scenario's, ``pedsim_walls``), or None.
    """

    names: tuple[str, ...]
    map_path: Path | None
    color: Color
    location: str
    streaming: StreamingSpec | None = None
    segments: tuple[tuple[float, float, float, float], ...] | None = None

    @property
    def name(self) -> str:
        """The layer's main (first) name."""
        return self.names[0]


@dataclass(frozen=True)
class ModelEntry:
    """A model placed in the world: a model file at a pose, with a ROS namespace."""

    name: str
    model_path: Path
    namespace: str
    pose: Pose2D
    location: str


@dataclass(frozen=True)
class LevelSpec:
    """A level: an axis-aligned box of the world, a buffer around it and the entities it holds.

    Attributes:
        name: unique level name.
        x, y: centre of the box (m).
        size_x, size_y: size of the box (m).
        buffer: inflation of the box on every side (m, >= 0).
        refs: names of the models and layers that belong to the level.
    """

    name: str
    x: float
    y: float
    size_x: float
    size_y: float
    buffer: float
    refs: tuple[str, ...]
    location: str


@dataclass(frozen=True)
class PerformerSpec:
    """A performer: a model whose box (size_x by size_y m, centred on its first body) loads levels."""

    name: str
    ref: str
    size_x: float
    size_y: float
    location: str


@dataclass(frozen=True)
class NamedPoseSpec:
    """A named pose: a place worth naming (to spawn at, to park, a goal), in the world frame.

    Attributes:
        name: unique name.
        pose: x, y (m) and yaw (rad).
        description: for people.
        tags: what it is for (``spawn``, ``parking``, a kind of robot ...).
        radius: the free space around it (m), or None when not given.
    """

    name: str
    pose: Pose2D
    description: str
    tags: tuple[str, ...]
    radius: float | None
    location: str


@dataclass(frozen=True)
class WorldSpec:
    """A validated world file."""

    path: Path
    velocity_iterations: int
    position_iterations: int
    layers: tuple[LayerSpec, ...]
    models: tuple[ModelEntry, ...]
    plugins: tuple[PluginSpec, ...]
    levels: tuple[LevelSpec, ...] = ()
    performers: tuple[PerformerSpec, ...] = ()
    named_poses: tuple[NamedPoseSpec, ...] = ()
    description: str = ""
    tags: tuple[str, ...] = ()
    crowds: tuple[CrowdSpec, ...] = ()


def load_world_file(path: Path, preprocessor: YamlPreprocessor | None = None) -> WorldSpec:
    """Read, preprocess and validate the world file at ``path`` (its maps and models are read later)."""
    path = Path(path)
    return parse_world(YamlReader(load_yaml_file(path, "world file", preprocessor), path), path)


def load_world_text(text: str, source: Path, preprocessor: YamlPreprocessor | None = None) -> WorldSpec:
    """Preprocess and validate a world file's ``text`` as if read from ``source`` (it names the
    text in errors; maps, models and includes resolve against its folder)."""
    data = (preprocessor or YamlPreprocessor()).load_text(text, source, "world")
    return parse_world(YamlReader(data, source), source)


def parse_world(reader: YamlReader, path: Path) -> WorldSpec:
    """Validate the top-level mapping of a world file read from ``path``."""
    properties = reader.get_map("properties")
    velocity_iterations = properties.get_int(
        "velocity_iterations", DEFAULT_VELOCITY_ITERATIONS, within=limits.SOLVER_ITERATIONS
    )
    position_iterations = properties.get_int(
        "position_iterations", DEFAULT_POSITION_ITERATIONS, within=limits.SOLVER_ITERATIONS
    )
    properties.ensure_all_keys_used()

    layers = _parse_layers(reader, path)
    models = tuple(_parse_model_entry(entry, path) for entry in reader.get_map_list("models", []))
    seen: set[str] = set()
    for model in models:
        if model.name in seen:
            raise ConfigError(f'{path}: {model.location}: a model named "{model.name}" already exists')
        seen.add(model.name)
    plugins = tuple(parse_plugin(entry, path) for entry in reader.get_map_list("plugins", []))
    plugin_names: set[str] = set()
    for plugin in plugins:
        if plugin.name in plugin_names:
            raise ConfigError(f'{path}: {plugin.location}: a world plugin named "{plugin.name}" already exists')
        plugin_names.add(plugin.name)
    levels = _parse_levels(reader, layers, models)
    performers = _parse_performers(reader, models)
    named_poses = _parse_named_poses(reader)
    description = _description(reader)
    tags = tuple(dict.fromkeys(reader.get_name_list("tags", [])))
    crowds = parse_crowds(reader, {name for layer in layers for name in layer.names})
    layers, named_poses = _crowd_layers_and_poses(reader, layers, named_poses, crowds)
    reader.ensure_all_keys_used()
    return WorldSpec(
        path=path,
        velocity_iterations=velocity_iterations,
        position_iterations=position_iterations,
        layers=layers,
        models=models,
        plugins=plugins,
        levels=levels,
        performers=performers,
        named_poses=named_poses,
        description=description,
        tags=tags,
        crowds=crowds,
    )


def _crowd_layers_and_poses(
    reader: YamlReader, layers: tuple[LayerSpec, ...], poses: tuple[NamedPoseSpec, ...], crowds: tuple[CrowdSpec, ...]
) -> tuple[tuple[LayerSpec, ...], tuple[NamedPoseSpec, ...]]:
    """The layers of the crowds' scenario walls (``pedsim_walls``) after the file's, and the named
    poses of their robot agents (``pedsim_robot``) after the file's."""
    for crowd in crowds:
        if crowd.walls_layer is not None:
            if sum(len(layer.names) for layer in layers) >= MAX_LAYERS:
                raise reader.error(
                    f'adds layer "{crowd.walls_layer}" (pedsim_walls) to {MAX_LAYERS} layers, the most a world has',
                    "pedestrians",
                )
            layers += (LayerSpec(names=(crowd.walls_layer,), map_path=None, color=DEFAULT_LAYER_COLOR,
                                 location=crowd.location, segments=crowd.walls),)
        for name, x, y in crowd.robot_poses:
            if any(pose.name == name for pose in poses):
                raise ConfigError(f'{reader.file}: {crowd.location}: key "pedsim_robot" names pose "{name}", which exists already')
            poses += (NamedPoseSpec(name, Pose2D(x, y, 0.0), "where the pedsim scenario's robot agent starts",
                                    ("spawn", "pedsim_robot"), None, crowd.location),)
    return layers, poses


def _unique_name(entry: YamlReader, seen: set[str], what: str) -> str:
    name = entry.get_name("name")
    if not name:
        raise entry.error("must not be empty", "name")
    entry.rename(f'{entry.location} ("{name}")')
    if name in seen:
        raise entry.error(f'a {what} named "{name}" already exists', "name")
    seen.add(name)
    return name


def _size(entry: YamlReader) -> tuple[float, float]:
    size_x, size_y = entry.get_floats("size", 2, within=limits.LENGTH)
    return size_x, size_y


def _parse_levels(reader: YamlReader, layers: tuple[LayerSpec, ...], models: tuple[ModelEntry, ...]) -> tuple[LevelSpec, ...]:
    known = {model.name for model in models} | {name for layer in layers for name in layer.names}
    seen: set[str] = set()
    levels = []
    for entry in reader.get_map_list("levels", []):
        name = _unique_name(entry, seen, "level")
        x, y = entry.get_position("pose")
        size_x, size_y = _size(entry)
        buffer = entry.get_float("buffer", 0.0, within=limits.DISTANCE)
        refs = tuple(entry.get_str_list("refs", []))
        unknown = [ref for ref in refs if ref not in known]
        if unknown:
            listed = ", ".join(f'"{ref}"' for ref in unknown)
            raise entry.error(f"names {listed}, which no model or layer of this world is called", "refs")
        entry.ensure_all_keys_used()
        levels.append(LevelSpec(name, x, y, size_x, size_y, buffer, refs, entry.location))
    return tuple(levels)


def _description(reader: YamlReader) -> str:
    text = reader.get_str("description", "")
    if len(text) > limits.MAX_DESCRIPTION_CHARS:
        raise reader.error(f"has {len(text)} characters, more than the limit of {limits.MAX_DESCRIPTION_CHARS}", "description")
    return text


def _parse_named_poses(reader: YamlReader) -> tuple[NamedPoseSpec, ...]:
    seen: set[str] = set()
    poses = []
    for entry in reader.get_map_list("named_poses", []):
        name = _unique_name(entry, seen, "named pose")
        pose = entry.get_pose("pose")
        description = _description(entry)
        tags = tuple(dict.fromkeys(entry.get_name_list("tags", [])))
        radius = entry.get_float("radius", None, within=limits.RADIUS)
        entry.ensure_all_keys_used()
        poses.append(NamedPoseSpec(name, pose, description, tags, radius, entry.location))
    return tuple(poses)


def _parse_performers(reader: YamlReader, models: tuple[ModelEntry, ...]) -> tuple[PerformerSpec, ...]:
    model_names = {model.name for model in models}
    seen: set[str] = set()
    taken: dict[str, str] = {}
    performers = []
    for entry in reader.get_map_list("performers", []):
        name = _unique_name(entry, seen, "performer")
        ref = entry.get_name("ref")
        if ref not in model_names:
            raise entry.error(f'names model "{ref}", which does not exist in this world', "ref")
        if ref in taken:
            raise entry.error(f'model "{ref}" is already performer "{taken[ref]}"', "ref")
        taken[ref] = name
        size_x, size_y = _size(entry)
        entry.ensure_all_keys_used()
        performers.append(PerformerSpec(name, ref, size_x, size_y, entry.location))
    return tuple(performers)


def _parse_layers(reader: YamlReader, path: Path) -> tuple[LayerSpec, ...]:
    layers: list[LayerSpec] = []
    taken: list[str] = []
    for entry in reader.get_map_list("layers", []):
        names = tuple(entry.get_name_list("name", scalar_ok=True))
        if not names:
            raise entry.error("must name at least one layer", "name")
        entry.rename(f'{entry.location} ("{names[0]}")')
        for name in names:
            if name in taken or names.count(name) > 1:
                raise entry.error(f'names layer "{name}", which already exists', "name")
        if len(taken) + len(names) > MAX_LAYERS:
            listed = ",".join(names)
            raise entry.error(
                f"Unable to add {len(names)} additional layer(s) {{{listed}}}, current layers count is "
                f"{len(taken)}, max allowed is {MAX_LAYERS}"
            )
        taken.extend(names)
        map_name = entry.get_str("map", "")
        map_path = resolve_path(map_name, path) if map_name else None
        color = entry.get_floats("color", 4, DEFAULT_LAYER_COLOR)
        streaming = None
        if entry.has("streaming"):
            settings = entry.get_map("streaming")
            streaming = StreamingSpec(
                tile_size=settings.get_float("tile_size", within=limits.LENGTH),
                buffer=settings.get_float("buffer", 0.0, within=limits.DISTANCE),
            )
            settings.ensure_all_keys_used()
            if map_path is None:
                raise entry.error("needs a map to stream", "streaming")
        entry.ensure_all_keys_used()
        layers.append(
            LayerSpec(names=names, map_path=map_path, color=color, location=entry.location, streaming=streaming)  # type: ignore[arg-type]
        )
    return tuple(layers)


def _parse_model_entry(entry: YamlReader, path: Path) -> ModelEntry:
    name = entry.get_name("name")
    problem = model_name_problem(name)
    if problem is not None:
        raise entry.error(problem, "name")
    entry.rename(f'{entry.location} ("{name}")')
    namespace = entry.get_str("namespace", "")
    problem = namespace_problem(namespace)
    if problem is not None:
        raise entry.error(problem, "namespace")
    model = ModelEntry(
        name=name,
        model_path=resolve_path(entry.get_str("model"), path),
        namespace=namespace,
        pose=entry.get_pose("pose", Pose2D()),
        location=entry.location,
    )
    entry.ensure_all_keys_used()
    return model
