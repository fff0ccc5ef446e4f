"""Model files: bodies with footprints, joints between them and the plugins they carry.

:func:`load_model_file` reads and validates a Flatland model file into an immutable
:class:`ModelSpec`; building it in Box2D is :mod:`sim_server.core.physics.model`'s job, so a spec can be
instantiated again and again (spawning, level streaming, resets) without reading the file.
Defaults are the reference simulator's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.shape_validation import (
    MAX_POLYGON_VERTICES,
    ShapeError,
    check_rotational_inertia,
    normalize_polygon,
    polygon_mass,
)
from sim_server.core.format.yaml_preprocessor import YamlPreprocessor
from sim_server.core.format.yaml_reader import YamlReader, load_yaml_file
from sim_server.core.geometry import Pose2D

Color = tuple[float, float, float, float]

BODY_TYPES = ("static", "kinematic", "dynamic")
FOOTPRINT_TYPES = ("circle", "polygon")
JOINT_TYPES = ("revolute", "weld")
DEFAULT_BODY_COLOR: Color = (1.0, 1.0, 1.0, 0.5)
DEFAULT_JOINT_COLOR: Color = (1.0, 1.0, 1.0, 0.5)


@dataclass(frozen=True)
class FootprintSpec:
    """One fixture of a body.

    Attributes:
        shape: "circle" or "polygon".
        center: circle centre in the body frame (m).
        radius: circle radius (m).
        points: polygon vertices in the body frame, counter-clockwise (m).
        density: kg/m^2 (0 gives Box2D's default mass of 1 kg to a body with no mass).
        friction: Coulomb friction coefficient.
        restitution: bounciness, 0..1.
        sensor: detects contacts without a collision response.
        layers: the layers it collides with ("all" for every layer).
        collision: false makes it collide with nothing.
        where: file and entry, for error messages.
    """

    shape: str
    center: tuple[float, float]
    radius: float
    points: tuple[tuple[float, float], ...]
    density: float
    friction: float
    restitution: float
    sensor: bool
    layers: tuple[str, ...]
    collision: bool
    where: str


@dataclass(frozen=True)
class BodySpec:
    """A rigid body of a model; ``pose`` is relative to the model's pose."""

    name: str
    body_type: str
    pose: Pose2D
    color: Color
    linear_damping: float
    angular_damping: float
    footprints: tuple[FootprintSpec, ...]


@dataclass(frozen=True)
class JointSpec:
    """A revolute or weld joint; anchors are in the frames of the two bodies (m).

    ``limits`` (revolute, radians) is None when the joint turns freely. ``angle`` (weld reference
    angle, radians), ``frequency`` (Hz, 0 = rigid) and ``damping`` (ratio) apply to welds.
    """

    name: str
    joint_type: str
    body_a: str
    anchor_a: tuple[float, float]
    body_b: str
    anchor_b: tuple[float, float]
    collide_connected: bool
    color: Color
    limits: tuple[float, float] | None = None
    angle: float = 0.0
    frequency: float = 0.0
    damping: float = 0.0


@dataclass(frozen=True)
class PluginSpec:
    """A plugin entry: its ``name``, ``type`` and the rest of its keys as ``config``."""

    name: str
    plugin_type: str
    config: dict[str, Any]
    source: Path
    location: str


@dataclass(frozen=True)
class ModelSpec:
    """A validated model file."""

    path: Path
    bodies: tuple[BodySpec, ...]
    joints: tuple[JointSpec, ...] = ()
    plugins: tuple[PluginSpec, ...] = field(default=())

    def body(self, name: str) -> BodySpec | None:
        """The body called ``name``, if any."""
        return next((body for body in self.bodies if body.name == name), None)


def load_model_file(path: Path, preprocessor: YamlPreprocessor | None = None) -> ModelSpec:
    """Read, preprocess and validate the model file at ``path``."""
    reader = YamlReader(load_yaml_file(path, "model file", preprocessor), path)
    return parse_model(reader, path)


def load_model_text(text: str, source: Path, preprocessor: YamlPreprocessor | None = None) -> ModelSpec:
    """Preprocess and validate a model file's ``text``, as if read from ``source`` (it names the
    text in errors; relative includes and plugin paths resolve against its folder)."""
    data = (preprocessor or YamlPreprocessor()).load_text(text, source, "model")
    return parse_model(YamlReader(data, source), source)


def parse_model(reader: YamlReader, path: Path) -> ModelSpec:
    """Validate the top-level mapping of a model file."""
    bodies = tuple(_parse_body(entry) for entry in reader.get_map_list("bodies"))
    if not bodies:
        raise reader.error("must list at least one body", "bodies")
    _reject_duplicates([b.name for b in bodies], reader, "body", "bodies")
    body_names = {body.name for body in bodies}
    joints = tuple(_parse_joint(entry, body_names) for entry in reader.get_map_list("joints", []))
    _reject_duplicates([j.name for j in joints], reader, "joint", "joints")
    plugins = tuple(parse_plugin(entry, path) for entry in reader.get_map_list("plugins", []))
    _reject_duplicates([p.name for p in plugins], reader, "plugin", "plugins")
    reader.ensure_all_keys_used()
    return ModelSpec(path=path, bodies=bodies, joints=joints, plugins=plugins)


def _reject_duplicates(names: list[str], reader: YamlReader, what: str, key: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise reader.error(f'has more than one {what} named "{name}"', key)
        seen.add(name)


def _parse_body(reader: YamlReader) -> BodySpec:
    name = reader.get_name("name")
    reader.rename(f'{reader.location} ("{name}")')
    body_type = reader.get_str("type", "dynamic")
    if body_type not in BODY_TYPES:
        raise reader.error(f'must be one of {", ".join(BODY_TYPES)}, got "{body_type}"', "type")
    spec = BodySpec(
        name=name,
        body_type=body_type,
        pose=reader.get_pose("pose", Pose2D()),
        color=reader.get_floats("color", 4, DEFAULT_BODY_COLOR),  # type: ignore[arg-type]
        linear_damping=reader.get_float("linear_damping", 0.0, within=limits.DAMPING),
        angular_damping=reader.get_float("angular_damping", 0.0, within=limits.DAMPING),
        footprints=tuple(_parse_footprint(entry) for entry in reader.get_map_list("footprints")),
    )
    reader.ensure_all_keys_used()
    try:
        check_rotational_inertia([_mass_properties(footprint) for footprint in spec.footprints])
    except ShapeError as exc:
        raise reader.error(str(exc), "footprints") from None
    return spec


def _mass_properties(footprint: FootprintSpec) -> tuple[float, tuple[float, float], float]:
    """Mass (kg), centroid (m) and inertia about the body's origin (kg m^2) of a footprint."""
    if footprint.shape == "circle":
        area = math.pi * footprint.radius**2
        cx, cy = footprint.center
        polar = area * (0.5 * footprint.radius**2 + cx * cx + cy * cy)
        return footprint.density * area, (cx, cy), footprint.density * polar
    area, centroid, polar = polygon_mass(footprint.points)
    return footprint.density * area, centroid, footprint.density * polar


def _parse_footprint(reader: YamlReader) -> FootprintSpec:
    shape = reader.get_name("type")
    if shape not in FOOTPRINT_TYPES:
        raise reader.error(f'must be one of {", ".join(FOOTPRINT_TYPES)}, got "{shape}"', "type")
    center: tuple[float, float] = (0.0, 0.0)
    radius = 0.0
    points: tuple[tuple[float, float], ...] = ()
    if shape == "circle":
        center = reader.get_floats("center", 2, (0.0, 0.0), within=limits.BODY_OFFSET)  # type: ignore[assignment]
        radius = reader.get_float("radius", within=limits.RADIUS)
    else:
        raw_points = reader.get_point_list("points", 3, MAX_POLYGON_VERTICES)
        try:
            points = normalize_polygon(raw_points)
        except ShapeError as exc:
            raise reader.error(str(exc), "points") from None
    spec = FootprintSpec(
        shape=shape,
        center=center,
        radius=radius,
        points=points,
        density=reader.get_float("density", within=limits.DENSITY),
        friction=reader.get_float("friction", 0.0, within=limits.FRICTION),
        restitution=reader.get_float("restitution", 0.0, within=limits.RESTITUTION),
        sensor=reader.get_bool("sensor", False),
        layers=tuple(reader.get_str_list("layers", ["all"])),
        collision=reader.get_bool("collision", True),
        where=f"{reader.file}: {reader.location}",
    )
    reader.ensure_all_keys_used()
    return spec


def _parse_joint(reader: YamlReader, body_names: set[str]) -> JointSpec:
    name = reader.get_name("name")
    reader.rename(f'{reader.location} ("{name}")')
    joint_type = reader.get_name("type")
    if joint_type not in JOINT_TYPES:
        raise reader.error(f'must be one of {", ".join(JOINT_TYPES)}, got "{joint_type}"', "type")
    ends = reader.get_map_list("bodies")
    if len(ends) != 2:
        raise reader.error(f"must list exactly 2 bodies, got {len(ends)}", "bodies")
    attached = []
    for end in ends:
        body = end.get_name("name")
        if body not in body_names:
            raise end.error(f'names body "{body}", which does not exist in this model', "name")
        attached.append((body, end.get_floats("anchor", 2, within=limits.BODY_OFFSET)))
        end.ensure_all_keys_used()
    if attached[0][0] == attached[1][0]:
        raise reader.error(f'must join two different bodies, got "{attached[0][0]}" twice', "bodies")
    common = dict(
        name=name,
        joint_type=joint_type,
        body_a=attached[0][0],
        anchor_a=attached[0][1],
        body_b=attached[1][0],
        anchor_b=attached[1][1],
        collide_connected=reader.get_bool("collide_connected", False),
        color=reader.get_floats("color", 4, DEFAULT_JOINT_COLOR),
    )
    if joint_type == "revolute":
        angle_limits = None
        if reader.has("limits"):
            lower, upper = reader.get_floats("limits", 2, within=limits.ANGLE)
            if lower > upper:
                raise reader.error(f"lower limit {lower} must not exceed upper limit {upper}", "limits")
            angle_limits = (lower, upper)
        spec = JointSpec(limits=angle_limits, **common)  # type: ignore[arg-type]
    else:
        spec = JointSpec(
            angle=reader.get_float("angle", 0.0, within=limits.ANGLE),
            frequency=reader.get_float("frequency", 0.0, within=limits.FREQUENCY),
            damping=reader.get_float("damping", 0.0, within=limits.DAMPING),
            **common,  # type: ignore[arg-type]
        )
    reader.ensure_all_keys_used()
    return spec


def parse_plugin(reader: YamlReader, source: Path) -> PluginSpec:
    """Read a plugin entry (``name``, ``type`` and the plugin's own keys)."""
    name = reader.get_name("name")
    reader.rename(f'{reader.location} ("{name}")')
    plugin_type = reader.get_name("type")
    config = {key: reader.get_any(key) for key in reader.keys() if key not in ("name", "type")}
    return PluginSpec(name=name, plugin_type=plugin_type, config=config, source=source, location=reader.location)


def footprint_error(footprint: FootprintSpec, message: str) -> ConfigError:
    """An error about a footprint, located at its file and entry."""
    return ConfigError(f"{footprint.where}: {message}")
