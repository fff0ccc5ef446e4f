"""Map files of layers: map-server images or line-segment files, as the reference reads them.

Image maps (``image``, ``resolution``, ``origin``, ``occupied_thresh``; ``negate`` and
``free_thresh`` accepted and ignored) become wall edges by pixel-edge extraction. Line-segment
maps (``type: line_segments``, ``data``, ``scale``, ``origin``) list one segment ``x1 y1 x2 y2``
per line of the data file. Either way the result is an (N, 4) edge array in the map frame, placed
in the world at ``origin`` (x, y in metres, yaw in radians).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.bounded_read import read_text
from sim_server.core.format.map_image import MapImageError, extract_edges, occupancy, read_grey_image
from sim_server.core.format.yaml_preprocessor import YamlPreprocessor
from sim_server.core.format.yaml_reader import YamlReader, describe, load_yaml_file, resolve_path
from sim_server.core.geometry import Pose2D

LINE_SEGMENTS_TYPE = "line_segments"
IMAGE_TYPE = ""


@dataclass(frozen=True)
class MapData:
    """The static geometry of one layer.

    Attributes:
        edges: (N, 4) float64 array of segments ``x1, y1, x2, y2`` in metres, map frame.
        origin: pose of the map frame in the world.
        source: the map file it was read from.
    """

    edges: np.ndarray
    origin: Pose2D
    source: Path


def load_map_file(path: Path, layer_name: str, preprocessor: YamlPreprocessor | None = None) -> MapData:
    """Read the map file at ``path`` for layer ``layer_name`` (named in errors)."""
    reader = YamlReader(load_yaml_file(path, f'map file of layer "{layer_name}"', preprocessor), path)
    map_type = reader.get_str("type", IMAGE_TYPE)
    if map_type == LINE_SEGMENTS_TYPE:
        data = _load_line_segments(reader, path)
    elif map_type == IMAGE_TYPE:
        data = _load_image_map(reader, path)
    else:
        raise reader.error(f'must be "{LINE_SEGMENTS_TYPE}" or absent (image map), got {describe(map_type)}', "type")
    reader.ensure_all_keys_used()
    return data


def _load_image_map(reader: YamlReader, path: Path) -> MapData:
    resolution = reader.get_float("resolution", within=limits.LENGTH)
    occupied_thresh = reader.get_float("occupied_thresh", within=limits.THRESHOLD)
    origin = reader.get_pose("origin")
    image_path = resolve_path(reader.get_str("image"), path)
    # Accepted for map_server compatibility and ignored, as in the reference.
    reader.ignore("negate", "free_thresh", "mode")
    try:
        grey = read_grey_image(image_path)
    except MapImageError as exc:
        raise reader.error(str(exc), "image") from None
    extent = max(grey.shape) * resolution
    if extent > limits.SHAPE_EXTENT:
        raise reader.error(
            f"makes the {grey.shape[1]} x {grey.shape[0]} pixel image {extent:g} m wide, more than the limit of "
            f"{limits.SHAPE_EXTENT:g} m",
            "resolution",
        )
    edges = extract_edges(occupancy(grey, occupied_thresh), resolution)
    return MapData(edges=edges, origin=origin, source=path)


def _load_line_segments(reader: YamlReader, path: Path) -> MapData:
    scale = reader.get_float("scale", within=limits.LENGTH)
    origin = reader.get_pose("origin")
    data_path = resolve_path(reader.get_str("data"), path)
    try:
        lines = read_text(data_path, "line segment file", limits.MAX_DATA_FILE_BYTES).splitlines()
    except ConfigError as exc:
        raise reader.error(f"names {exc}", "data") from None
    segments = np.empty((len(lines), 4), dtype=np.float64)
    for index, line in enumerate(lines):
        fields = line.split()
        try:
            if len(fields) < 4:
                raise ValueError
            segments[index] = [float(value) for value in fields[:4]]
        except ValueError:
            raise ConfigError(
                f'{data_path}: line {index + 1}: expected 4 numbers "x1 y1 x2 y2", got "{line.strip()}"'
            ) from None
    outside = np.flatnonzero(~(np.abs(segments * scale) <= limits.COORDINATE.high).all(axis=1))
    if outside.size:
        raise ConfigError(
            f"{data_path}: line {outside[0] + 1}: coordinates must be finite and (scaled) within "
            f"+-{limits.COORDINATE.high:g} m"
        )
    lengths = np.hypot(segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1]) * scale
    degenerate = np.flatnonzero(lengths <= 0.0)
    if degenerate.size:
        raise ConfigError(f"{data_path}: line {degenerate[0] + 1}: segment has zero length")
    return MapData(edges=segments * scale, origin=origin, source=path)
