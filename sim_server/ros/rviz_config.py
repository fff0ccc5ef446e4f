"""An RViz 2 configuration for any world: its markers, lasers and a view that shows all of it.

:func:`write_rviz_config` reads a world file (and the model and map files it names, but builds
nothing: no Box2D, no plugins, no ROS) and writes an ``.rviz`` file (RViz 2's YAML format, as
Kilted writes it) with

* fixed frame ``map``, a 1 m grid and the TF display;
* MarkerArray displays of the server's all-layers and all-models topics
  (``<namespace>/<node>/debug/layers`` and ``.../debug/models``, transient local), whose
  marker namespaces (one per layer, one per model) switch entities on and off;
* a display per topic the models' plugins advertise (each plugin class says what it publishes
  for its configuration: :class:`~sim_server.core.plugins.capabilities.Advertiser`; a plugin of
  any package is shown as long as its class says so), on the topic resolved in the model's
  namespace against the server node's namespace as rclpy does:

  - a LaserScan display per scan topic (``Laser``: its ``topic``, ``scan`` by default); the first
    :data:`ENABLED_SENSOR_DISPLAYS` are on;
  - an Image display per camera (``Camera``: ``image_raw``);
  - a Range display per range topic (``Range``: its cone, ``range``), the first
    :data:`ENABLED_SENSOR_DISPLAYS` on;
  - an Odometry display per odometry topic (the drives: ``odom_pub``, ``odometry/filtered``),
    switched off: the footprints already show where the robots are; turn one on to see where a
    robot's (noisy) odometry believes it is. (RViz's default plugins have no display of
    ``sensor_msgs/Imu``: an ``Imu``'s frame shows in TF.)
* a top-down orthographic view (TopDownOrtho) centred on the world and zoomed so that the
  extent of every layer's map (an image's ``resolution`` x its size in pixels from ``origin``, a
  line-segment file's segments), every model's starting position and every level's box fits the
  3D view of a window of the configured size, with a margin of :data:`FIT_MARGIN`.

The server's ``marker_line_width`` is in metres, so how wide lines look depends on the zoom:
:func:`readable_line_width` gives the width that is 2 pixels in the generated view (the file's
header says it too).

Models spawned at run time are not in the file: they show up on the all-models topic anyway
(their lasers need a display added by hand). A world with more than
:data:`MAX_SENSOR_DISPLAYS` sensors lists only that many.

Command line: ``python -m sim_server.ros.rviz_config WORLD_YAML OUT.rviz [--node-name NAME]
[--namespace NS] [-p NAME:=VALUE ...]`` (``-p`` gives values to the world's ``param()``).
Errors are one line: a :class:`~sim_server.core.errors.ConfigError` from the API, exit status 1
and ``rviz_config: error: ...`` on stderr from the command line.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from sim_server.core.errors import ConfigError, one_line
from sim_server.core.format.entity_names import SERVER_NODE_NAME, plugin_topic
from sim_server.core.format.model_file import ModelSpec, PluginSpec, load_model_file
from sim_server.core.format.world_file import WorldSpec, load_world_file
from sim_server.core.format.yaml_preprocessor import YamlPreprocessor
from sim_server.core.format.yaml_reader import YamlReader, load_yaml_file, resolve_path
from sim_server.core.geometry import Pose2D
from sim_server.core.plugins import MODEL_PLUGIN_GROUP, ModelPlugin
from sim_server.core.plugins.capabilities import (
    CAMERA_DISPLAY, DISPLAY_KINDS, LASER_DISPLAY, ODOMETRY_DISPLAY, RANGE_DISPLAY, Advertised, Advertiser,
)
from sim_server.core.plugins.manager import plugin_class_of
from sim_server.ros.names import ALL_LAYERS_TOPIC, ALL_MODELS_TOPIC, PEDESTRIAN_MARKERS_TOPIC

#: Default window size (pixels).
WINDOW_WIDTH = 1400
WINDOW_HEIGHT = 900
#: Pixels of the window that are not the 3D view: the Displays panel on the left, the menu,
#: tool bar, Time panel and status bar above and below (RViz 2's default layout, about).
PANEL_WIDTH = 350
PANEL_HEIGHT = 150
#: Share of the world's extent added on every side when fitting the view.
FIT_MARGIN = 0.05
#: Smallest extent fitted (m), so that a world of one robot is not shown at a 1000x zoom.
MIN_EXTENT = 10.0
#: Half-size of the box kept around each model's starting position (m).
MODEL_MARGIN = 1.0
#: At most this many LaserScan and Odometry displays are written (each kind).
MAX_SENSOR_DISPLAYS = 100
#: The first this many LaserScan displays are enabled (each enabled one makes its laser scan).
ENABLED_SENSOR_DISPLAYS = 10
#: Line width (pixels) :func:`line_width_for` aims at.
READABLE_LINE_PIXELS = 2.0

#: Colour of the Range displays' cones.
RANGE_COLOR = "255; 200; 0"
#: Colours of the LaserScan displays, in turn.
SCAN_COLORS = ("255; 64; 64", "64; 200; 255", "255; 200; 0", "200; 90; 255", "90; 255; 120", "255; 140; 200")


@dataclass(frozen=True)
class Extent:
    """An axis-aligned box of the world plane (m)."""

    x_min: float
    y_min: float
    x_max: float
    y_max: float

    def union(self, other: "Extent | None") -> "Extent":
        if other is None:
            return self
        return Extent(
            min(self.x_min, other.x_min), min(self.y_min, other.y_min),
            max(self.x_max, other.x_max), max(self.y_max, other.y_max),
        )

    @property
    def width(self) -> float:
        return self.x_max - self.x_min

    @property
    def height(self) -> float:
        return self.y_max - self.y_min


@dataclass(frozen=True)
class SensorTopic:
    """A topic a model's plugin publishes: ``kind`` (``laser``, ``camera``, ``range`` or ``odometry``), model,
    plugin and the fully qualified topic."""

    kind: str
    model: str
    plugin: str
    topic: str


@dataclass(frozen=True)
class View:
    """A TopDownOrtho view: centre (m) and scale (pixels per metre)."""

    x: float
    y: float
    scale: float


@dataclass
class WorldSummary:
    """What the configuration needs of a world: the extents and the sensors' topics."""

    map_extent: Extent | None = None
    extent: Extent | None = None
    sensors: list[SensorTopic] = field(default_factory=list)
    #: Whether the world has crowds (their markers get a display).
    pedestrians: bool = False


# ------------------------------------------------------------------------------ reading a world
def _preprocessor(parameters: Mapping[str, Any] | None) -> YamlPreprocessor:
    values = {str(name).strip("/").replace("/", "."): value for name, value in (parameters or {}).items()}

    def lookup(name: str) -> tuple[bool, Any]:
        key = name.strip("/").replace("/", ".")
        return (key in values, values.get(key))

    return YamlPreprocessor(lookup)


def _box(points: Sequence[tuple[float, float]], origin: Pose2D) -> Extent:
    placed = [origin.transform_point(x, y) for x, y in points]
    xs, ys = [p[0] for p in placed], [p[1] for p in placed]
    return Extent(min(xs), min(ys), max(xs), max(ys))


def _map_extent(path: Path, layer: str, preprocessor: YamlPreprocessor) -> Extent | None:
    """Where a layer's map lies in the world: an image's rectangle, or its segments' box.

    Only the image's header is read (its size), not its pixels.
    """
    reader = YamlReader(load_yaml_file(path, f'map file of layer "{layer}"', preprocessor), path)
    if reader.get_str("type", "") == "line_segments":
        from sim_server.core.format.map_file import load_map_file  # reads the segments, checks them

        data = load_map_file(path, layer, preprocessor)
        if len(data.edges) == 0:
            return None
        points = data.edges.reshape(-1, 2)
        low, high = points.min(axis=0), points.max(axis=0)
        corners = [(low[0], low[1]), (low[0], high[1]), (high[0], low[1]), (high[0], high[1])]
        return _box([(float(x), float(y)) for x, y in corners], data.origin)
    resolution = reader.get_float("resolution")
    origin = reader.get_pose("origin")
    image = resolve_path(reader.get_str("image"), path)
    if not image.is_file():
        raise reader.error(f'names image "{image}", which is not a readable file', "image")
    from PIL import Image

    try:
        with Image.open(image) as opened:  # reads the header only
            width, height = opened.size
    except Exception as exc:  # noqa: BLE001 - any unreadable image is one error line
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise reader.error(f'names image "{image}", which cannot be read: {reason}', "image") from None
    size_x, size_y = width * resolution, height * resolution
    return _box([(0.0, 0.0), (size_x, 0.0), (0.0, size_y), (size_x, size_y)], origin)


def expand_topic(topic: str, node_name: str, namespace: str) -> str:
    """The fully qualified name of ``topic`` created on node ``node_name`` in ``namespace``, as
    rclpy's ``expand_topic_name`` makes it (``~`` is the node's private namespace)."""
    namespace = "/" + namespace.strip("/") if namespace.strip("/") else "/"
    if "{" in topic:
        from rclpy.expand_topic_name import expand_topic_name

        return expand_topic_name(topic, node_name, namespace)
    if topic.startswith("~"):
        private = f"{namespace.rstrip('/')}/{node_name}"
        return private + topic[1:]
    if topic.startswith("/"):
        return topic
    return f"{namespace.rstrip('/')}/{topic}"


def _advertised(plugin: PluginSpec, where: str) -> list[Advertised]:
    """What a model's plugin says it publishes (:class:`~sim_server.core.plugins.capabilities.Advertiser`);
    nothing for a plugin class that says nothing or cannot be loaded (the server reports that)."""
    try:
        plugin_class = plugin_class_of(plugin, MODEL_PLUGIN_GROUP, ModelPlugin, f'plugin "{plugin.name}"')
    except ConfigError:
        return []
    if not isinstance(plugin_class, Advertiser):
        return []
    try:
        offers = plugin_class.advertised(plugin.config)
    except ValueError as exc:
        raise ConfigError(f"{where}: key {one_line(str(exc))}") from None
    return [offer for offer in offers if offer.kind in DISPLAY_KINDS]


def summarize_world(
    world_path: str | Path, node_name: str = SERVER_NODE_NAME, namespace: str = "",
    parameters: Mapping[str, Any] | None = None,
) -> WorldSummary:
    """The extents and sensor topics of the world file at ``world_path``.

    Raises:
        ConfigError: a file is missing or invalid (one line naming file, entry and key).
    """
    preprocessor = _preprocessor(parameters)
    spec: WorldSpec = load_world_file(Path(world_path), preprocessor)
    summary = WorldSummary()
    for layer in spec.layers:
        if layer.map_path is None:
            continue
        try:
            box = _map_extent(layer.map_path, layer.name, preprocessor)
        except ConfigError as exc:
            raise ConfigError(f"{spec.path}: {layer.location}: {exc}") from None
        if box is not None:
            summary.map_extent = box.union(summary.map_extent)
    extent = summary.map_extent
    for level in spec.levels:
        half_x, half_y = 0.5 * level.size_x, 0.5 * level.size_y
        extent = Extent(level.x - half_x, level.y - half_y, level.x + half_x, level.y + half_y).union(extent)
    models: dict[Path, ModelSpec] = {}
    for entry in spec.models:
        pose = entry.pose
        extent = Extent(pose.x - MODEL_MARGIN, pose.y - MODEL_MARGIN, pose.x + MODEL_MARGIN, pose.y + MODEL_MARGIN).union(extent)
        try:
            model = models.get(entry.model_path)
            if model is None:
                model = models[entry.model_path] = load_model_file(entry.model_path, preprocessor)
            for plugin in model.plugins:
                where = f"{plugin.source}: {plugin.location}"
                for offer in _advertised(plugin, where):
                    full = expand_topic(plugin_topic(entry.namespace, offer.topic), node_name, namespace)
                    summary.sensors.append(SensorTopic(offer.kind, entry.name, plugin.name, full))
        except ConfigError as exc:
            raise ConfigError(f"{spec.path}: {entry.location}: {exc}") from None
    summary.extent = extent
    summary.pedestrians = bool(spec.crowds)
    return summary


# ------------------------------------------------------------------------------ the view
def fit_view(extent: Extent | None, width: int = WINDOW_WIDTH, height: int = WINDOW_HEIGHT) -> View:
    """The TopDownOrtho view that shows ``extent`` (plus :data:`FIT_MARGIN` on every side) in
    the 3D view of a ``width`` x ``height`` window; the origin's 10 m around for no extent."""
    if extent is None:
        extent = Extent(-0.5 * MIN_EXTENT, -0.5 * MIN_EXTENT, 0.5 * MIN_EXTENT, 0.5 * MIN_EXTENT)
    span_x = max(extent.width, MIN_EXTENT) * (1.0 + 2.0 * FIT_MARGIN)
    span_y = max(extent.height, MIN_EXTENT) * (1.0 + 2.0 * FIT_MARGIN)
    view_width, view_height = max(width - PANEL_WIDTH, 100), max(height - PANEL_HEIGHT, 100)
    scale = min(view_width / span_x, view_height / span_y)
    return View(0.5 * (extent.x_min + extent.x_max), 0.5 * (extent.y_min + extent.y_max), scale)


def visible_extent(view: View, width: int = WINDOW_WIDTH, height: int = WINDOW_HEIGHT) -> Extent:
    """The part of the world the view shows in a ``width`` x ``height`` window."""
    half_x = 0.5 * max(width - PANEL_WIDTH, 100) / view.scale
    half_y = 0.5 * max(height - PANEL_HEIGHT, 100) / view.scale
    return Extent(view.x - half_x, view.y - half_y, view.x + half_x, view.y + half_y)


def line_width_for(scale: float, pixels: float = READABLE_LINE_PIXELS) -> float:
    """The marker line width (m) that is ``pixels`` wide at ``scale`` pixels per metre: a value
    for the server's ``marker_line_width`` that suits a view."""
    return pixels / scale


def readable_line_width(
    world_path: str | Path, *, parameters: Mapping[str, Any] | None = None,
    width: int = WINDOW_WIDTH, height: int = WINDOW_HEIGHT,
) -> float:
    """The ``marker_line_width`` (m) that draws 2-pixel lines in the view :func:`write_rviz_config`
    writes for this world (a launch file may pass it to the server with the generated file).

    Raises:
        ConfigError: as :func:`summarize_world`.
    """
    return line_width_for(fit_view(summarize_world(world_path, parameters=parameters).extent, width, height).scale)


# ------------------------------------------------------------------------------ the file
#: Most cells of the grid on a side (a 1 m grid around the origin).
MAX_GRID_CELLS = 1000


def _grid_cells(shown: Extent) -> int:
    """Cells of the grid (centred on the origin, 1 m cells) that cover what the view shows."""
    reach = max(abs(shown.x_min), abs(shown.x_max), abs(shown.y_min), abs(shown.y_max))
    return int(min(2 * math.ceil(reach), MAX_GRID_CELLS))


def _topic(value: str, durability: str, reliability: str, depth: int) -> dict[str, Any]:
    return {
        "Depth": depth,
        "Durability Policy": durability,
        "History Policy": "Keep Last",
        "Reliability Policy": reliability,
        "Value": value,
    }


def _round(value: float) -> float:
    return float(f"{value:.4g}") if abs(value) < 1e4 else round(value, 1)


def rviz_config(
    world_path: str | Path,
    node_name: str = SERVER_NODE_NAME,
    namespace: str = "",
    *,
    parameters: Mapping[str, Any] | None = None,
    width: int = WINDOW_WIDTH,
    height: int = WINDOW_HEIGHT,
    max_sensor_displays: int = MAX_SENSOR_DISPLAYS,
    enabled_sensor_displays: int = ENABLED_SENSOR_DISPLAYS,
) -> dict[str, Any]:
    """The RViz configuration of a world as data (see :func:`write_rviz_config`)."""
    summary = summarize_world(world_path, node_name, namespace, parameters)
    view = fit_view(summary.extent, width, height)
    displays: list[dict[str, Any]] = [
        {
            "Class": "rviz_default_plugins/Grid",
            "Enabled": True,
            "Name": "Grid",
            "Alpha": 0.3,
            "Cell Size": 1,
            "Color": "160; 160; 164",
            "Line Style": {"Line Width": 0.03, "Value": "Lines"},
            "Normal Cell Count": 0,
            "Offset": {"X": 0, "Y": 0, "Z": 0},
            "Plane": "XY",
            "Plane Cell Count": _grid_cells(visible_extent(view, width, height)),
            "Reference Frame": "<Fixed Frame>",
            "Value": True,
        },
        {
            "Class": "rviz_default_plugins/TF",
            "Enabled": True,
            "Name": "TF",
            "Frame Timeout": 15,
            "Marker Scale": 0.5,
            "Show Arrows": False,
            "Show Axes": True,
            "Show Names": False,
            "Update Interval": 0,
            "Value": True,
        },
    ]
    for name, topic in (("Layers", ALL_LAYERS_TOPIC), ("Models", ALL_MODELS_TOPIC)):
        displays.append({
            "Class": "rviz_default_plugins/MarkerArray",
            "Enabled": True,
            "Name": name,
            "Namespaces": {},
            "Topic": _topic(expand_topic(topic, node_name, namespace), "Transient Local", "Reliable", 1),
            "Value": True,
        })
    if summary.pedestrians:
        displays.append({
            "Class": "rviz_default_plugins/MarkerArray",
            "Enabled": True,
            "Name": "Pedestrians",
            "Namespaces": {},
            "Topic": _topic(expand_topic(PEDESTRIAN_MARKERS_TOPIC, node_name, namespace), "Volatile", "Reliable", 5),
            "Value": True,
        })
    def sensor_displays(kind: str, display: str, title: str, reliability: str, enabled: bool, **settings: Any) -> None:
        """One display of class ``display`` per sensor of ``kind`` (the first
        ``enabled_sensor_displays`` on, when ``enabled``), with ``settings`` (a callable's value
        is computed per display, from its index)."""
        chosen = [sensor for sensor in summary.sensors if sensor.kind == kind][:max_sensor_displays]
        for index, sensor in enumerate(chosen):
            on = enabled and index < enabled_sensor_displays
            displays.append({
                "Class": f"rviz_default_plugins/{display}",
                "Enabled": on,
                "Name": f"{title} {sensor.model}/{sensor.plugin}",
                **{key: value(index) if callable(value) else value for key, value in settings.items()},
                "Topic": _topic(sensor.topic, "Volatile", reliability, 5),
                "Value": on,
            })

    sensor_displays(
        LASER_DISPLAY, "LaserScan", "Scan", "Best Effort", True, **{
            "Alpha": 1, "Color": lambda index: SCAN_COLORS[index % len(SCAN_COLORS)], "Color Transformer": "FlatColor",
            "Decay Time": 0, "Position Transformer": "XYZ", "Selectable": True, "Size (Pixels)": 3, "Size (m)": 0.05,
            "Style": "Points", "Use Fixed Frame": True,
        })
    sensor_displays(
        CAMERA_DISPLAY, "Image", "Camera", "Reliable", True,
        **{"Max Value": 1, "Median window": 5, "Min Value": 0, "Normalize Range": False},
    )
    sensor_displays(RANGE_DISPLAY, "Range", "Range", "Best Effort", True, **{"Alpha": 0.5, "Buffer Length": 1, "Color": RANGE_COLOR})
    sensor_displays(
        ODOMETRY_DISPLAY, "Odometry", "Odometry", "Best Effort", False, **{
            "Angle Tolerance": 0.1, "Covariance": {"Value": False}, "Keep": 1, "Position Tolerance": 0.1,
            "Shape": {
                "Alpha": 1, "Color": "255; 25; 0", "Head Length": 0.15, "Head Radius": 0.08, "Shaft Length": 0.5,
                "Shaft Radius": 0.03, "Value": "Arrow",
            },
        })
    return {
        "Panels": [
            {"Class": "rviz_common/Displays", "Name": "Displays"},
            {"Class": "rviz_common/Time", "Name": "Time"},
        ],
        "Visualization Manager": {
            "Class": "",
            "Displays": displays,
            "Enabled": True,
            "Global Options": {"Background Color": "48; 48; 48", "Fixed Frame": "map", "Frame Rate": 30},
            "Name": "root",
            "Tools": [
                {"Class": "rviz_default_plugins/MoveCamera"},
                {"Class": "rviz_default_plugins/Select"},
                {"Class": "rviz_default_plugins/FocusCamera"},
                {"Class": "rviz_default_plugins/Measure"},
            ],
            "Value": True,
            "Views": {
                "Current": {
                    "Class": "rviz_default_plugins/TopDownOrtho",
                    "Angle": 0,
                    "Name": "Current View",
                    "Near Clip Distance": 0.01,
                    "Scale": _round(view.scale),
                    "Target Frame": "<Fixed Frame>",
                    "Value": "TopDownOrtho (rviz_default_plugins)",
                    "X": _round(view.x),
                    "Y": _round(view.y),
                },
                "Saved": None,
            },
        },
        "Window Geometry": {
            "Displays": {"collapsed": False},
            "Height": int(height),
            "Hide Left Dock": False,
            "Hide Right Dock": True,
            "Width": int(width),
        },
    }


class _RvizDumper(yaml.SafeDumper):
    """YAML as RViz writes it: list items indented under their key, ``""`` and ``~``."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


_RvizDumper.add_representer(type(None), lambda dumper, _: dumper.represent_scalar("tag:yaml.org,2002:null", "~"))
_RvizDumper.add_representer(
    str,
    lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"' if value == "" else None),
)


def config_text(config: Mapping[str, Any], comment: str = "") -> str:
    """The text of an ``.rviz`` file holding ``config``, after ``comment`` lines (``# ...``)."""
    header = "".join(f"# {line}\n" for line in comment.splitlines())
    return header + yaml.dump(dict(config), Dumper=_RvizDumper, sort_keys=False, allow_unicode=True, width=1000)


def _one_line(exc: BaseException) -> str:
    return one_line(str(exc)) or type(exc).__name__


#: Permissions of the written .rviz files (rw-r--r--).
CONFIG_FILE_MODE = 0o644


def write_rviz_config(
    world_path: str,
    out_path: str,
    node_name: str = SERVER_NODE_NAME,
    namespace: str = "",
    **options: Any,
) -> float:
    """Write an RViz 2 configuration for the world file ``world_path`` to ``out_path``.

    Args:
        world_path: the world YAML file.
        out_path: the ``.rviz`` file to write (into an existing folder; written atomically,
            readable by all, as RViz itself writes its files).
        node_name: the server node's name (its topics are ``<namespace>/<node_name>/...``).
        namespace: the server node's namespace ("" or "/" for none).
        options: ``parameters`` (a mapping of values for the world's ``param()``), ``width``,
            ``height`` (window size, pixels), ``max_sensor_displays``,
            ``enabled_sensor_displays``; see :func:`rviz_config`.

    Returns:
        The ``marker_line_width`` (m) that draws 2-pixel lines in the written view (as
        :func:`readable_line_width` gives, for the scale as the file holds it; the world is not
        read again).

    Raises:
        ConfigError: the world (or a file it names) cannot be read, or the file cannot be
            written; the message is one line.
    """
    try:
        config = rviz_config(world_path, node_name, namespace, **options)
        node = expand_topic("~", node_name, namespace)
        scale = config["Visualization Manager"]["Views"]["Current"]["Scale"]
        readable = line_width_for(scale)
        text = config_text(
            config,
            f"RViz 2 configuration for {world_path} (server node {node}), written by\n"
            "python -m sim_server.ros.rviz_config WORLD_YAML OUT.rviz: markers of every layer and model\n"
            "(MarkerArray namespaces toggle entities), the models' laser scans and camera pictures,\n"
            "the whole world in view.\n"
            f"At this zoom ({scale:g} pixels per metre) the server's marker_line_width:={readable:.2g}"
            " draws 2-pixel lines.",
        )
        out = Path(out_path)
        if out.is_dir():
            raise ConfigError(f'"{out_path}" is a directory: name the .rviz file to write')
        if not out.parent.is_dir():
            raise ConfigError(f'cannot write "{out_path}": folder "{out.parent}" does not exist')
        try:
            handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
        except OSError as exc:
            raise ConfigError(f'cannot write "{out_path}": {exc.strerror}') from None
        try:
            os.fchmod(handle, CONFIG_FILE_MODE)  # mkstemp makes it private
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.replace(temporary, out)
        except OSError as exc:
            Path(temporary).unlink(missing_ok=True)
            raise ConfigError(f'cannot write "{out_path}": {exc.strerror}') from None
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except ConfigError as exc:
        raise ConfigError(f"no RViz configuration for {world_path}: {_one_line(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - unknown options, unwritable paths, anything: one line
        raise ConfigError(f"no RViz configuration for {world_path}: {type(exc).__name__}: {_one_line(exc)}") from None
    return readable


def _parse_parameter(text: str) -> tuple[str, Any]:
    name, separator, value = text.partition(":=")
    if not separator or not name:
        raise argparse.ArgumentTypeError(f"expected NAME:=VALUE, got {text!r}")
    try:
        return name, yaml.safe_load(value) if value else ""
    except yaml.YAMLError:
        return name, value  # as text, like any value YAML cannot read


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sim_server.ros.rviz_config WORLD_YAML OUT.rviz``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="rviz_config", description="Write an RViz 2 configuration (.rviz) for a sim_server world file."
    )
    parser.add_argument("world", help="the world YAML file")
    parser.add_argument("out", help="the .rviz file to write")
    parser.add_argument("--node-name", default=SERVER_NODE_NAME, help=f"the server node's name (default: {SERVER_NODE_NAME})")
    parser.add_argument("--namespace", default="", help="the server node's namespace (default: none)")
    parser.add_argument("-p", dest="parameters", action="append", type=_parse_parameter, default=[],
                        metavar="NAME:=VALUE", help="a value for the world files' param()")
    parser.add_argument("--width", type=int, default=WINDOW_WIDTH, help="window width, pixels")
    parser.add_argument("--height", type=int, default=WINDOW_HEIGHT, help="window height, pixels")
    args = parser.parse_args(argv)
    try:
        write_rviz_config(
            args.world, args.out, args.node_name, args.namespace,
            parameters=dict(args.parameters), width=args.width, height=args.height,
        )
    except ConfigError as exc:
        print(f"rviz_config: error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
