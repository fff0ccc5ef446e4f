"""Occupancy images to wall edges, exactly as the reference simulator extracts them.

An image pixel is free when its grey value, scaled to [0, 1], is at least ``occupied_thresh``
and occupied otherwise. An edge lies wherever two neighbouring pixels (or a pixel and the free
border around the image) differ; neighbouring edge pieces on one pixel boundary merge into one
segment. All of it is vectorised with NumPy, so a 4000 x 4000 map takes a fraction of a second.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.bounded_read import read_bytes, shown_path

# OpenCV's fixed-point BGR -> grey weights (ITU-R BT.601, 14 fractional bits), which the
# reference applies when it reads colour maps as greyscale.
_GREY_SHIFT = 14
_GREY_WEIGHTS = (4899, 9617, 1868)  # R, G, B
_UINT8_MAX = 255.0


class MapImageError(Exception):
    """The image cannot be read; the caller adds the file and key to the message."""


def read_grey_image(path: Path) -> np.ndarray:
    """Read an image as 8-bit grey values (rows top to bottom), as OpenCV's greyscale read does.

    Handles 8-bit and 16-bit grey, grey with alpha, RGB(A), palette and 1-bit images. Alpha is
    ignored; 16-bit values keep their high byte. Files of more than
    :data:`~sim_server.core.limits.MAX_DATA_FILE_BYTES` and images of more than
    :data:`~sim_server.core.limits.MAX_MAP_PIXELS` pixels are refused before they are decoded.
    """
    try:
        data = read_bytes(path, "image", limits.MAX_DATA_FILE_BYTES)
    except ConfigError as exc:
        raise MapImageError(f"names {exc}") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            try:
                image = Image.open(io.BytesIO(data))
            except Image.DecompressionBombError:  # PIL's own (higher) limit, at open
                raise MapImageError(
                    f'names image "{shown_path(path)}" of more than the limit of {limits.MAX_MAP_PIXELS} pixels'
                ) from None
        with image:
            width, height = image.size
            if width * height > limits.MAX_MAP_PIXELS:
                raise MapImageError(
                    f'names image "{shown_path(path)}" of {width} x {height} pixels, more than the limit of '
                    f"{limits.MAX_MAP_PIXELS} pixels"
                )
            image.load()
            mode = image.mode
            if mode == "P":
                image = image.convert("RGBA" if "transparency" in image.info else "RGB")
                mode = image.mode
            if mode in ("1", "L"):
                return np.asarray(image.convert("L"), dtype=np.uint8)
            if mode == "LA":
                return np.asarray(image, dtype=np.uint8)[:, :, 0]
            if mode in ("I;16", "I;16B", "I;16L", "I"):
                values = np.asarray(image).astype(np.int64)
                return np.clip(values >> 8, 0, 255).astype(np.uint8)
            if mode == "F":
                return np.clip(np.rint(np.asarray(image)), 0, 255).astype(np.uint8)
            rgb = np.asarray(image.convert("RGB"), dtype=np.int64)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError, EOFError) as exc:
        reason = " ".join(str(exc).split())
        raise MapImageError(f'names image "{shown_path(path)}", which cannot be read: {reason}') from None
    weights = np.array(_GREY_WEIGHTS, dtype=np.int64)
    grey = (rgb @ weights + (1 << (_GREY_SHIFT - 1))) >> _GREY_SHIFT
    return np.clip(grey, 0, 255).astype(np.uint8)


def occupancy(grey: np.ndarray, occupied_thresh: float) -> np.ndarray:
    """Boolean occupancy (True = wall) of 8-bit grey values against ``occupied_thresh`` (0..1).

    Mirrors the reference: values are scaled to float32 in [0, 1] and a pixel is free when its
    value is in [occupied_thresh, 1].
    """
    scaled = (grey.astype(np.float64) * (1.0 / _UINT8_MAX)).astype(np.float32)
    free = (scaled >= np.float32(occupied_thresh)) & (scaled <= np.float32(1.0))
    return ~free


def _runs(boundaries: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Runs of True along each row of ``boundaries``: (row, start column, end column exclusive)."""
    rows, cols = boundaries.shape
    padded = np.zeros((rows, cols + 2), dtype=bool)
    padded[:, 1:-1] = boundaries
    changes = np.argwhere(padded[:, 1:] != padded[:, :-1])
    starts, ends = changes[0::2], changes[1::2]
    return starts[:, 0], starts[:, 1], ends[:, 1]


def extract_edges(occupied: np.ndarray, resolution: float) -> np.ndarray:
    """Wall edges of an occupancy grid as an (N, 4) array of ``x1, y1, x2, y2`` in metres.

    Coordinates are in the map frame: x to the right, y up, (0, 0) at the image's bottom-left
    corner. Horizontal edges come first (top to bottom), then vertical ones (left to right), each
    a maximal run of pixel boundaries, as in the reference.
    """
    rows, cols = occupied.shape
    # Horizontal boundaries: between row i-1 and row i of the image padded with free rows.
    padded_rows = np.zeros((rows + 2, cols), dtype=bool)
    padded_rows[1:-1] = occupied
    horizontal = padded_rows[1:] != padded_rows[:-1]
    h_line, h_start, h_end = _runs(horizontal)
    # Vertical boundaries: between column i-1 and column i of the image padded with free columns.
    padded_cols = np.zeros((rows, cols + 2), dtype=bool)
    padded_cols[:, 1:-1] = occupied
    vertical = (padded_cols[:, 1:] != padded_cols[:, :-1]).T
    v_line, v_start, v_end = _runs(vertical)

    edges = np.empty((len(h_line) + len(v_line), 4), dtype=np.float64)
    n_h = len(h_line)
    edges[:n_h, 0] = h_start
    edges[:n_h, 1] = h_line
    edges[:n_h, 2] = h_end
    edges[:n_h, 3] = h_line
    edges[n_h:, 0] = v_line
    edges[n_h:, 1] = v_start
    edges[n_h:, 2] = v_line
    edges[n_h:, 3] = v_end
    # Pixel coordinates (row down) to metres (y up).
    edges[:, [0, 2]] *= resolution
    edges[:, [1, 3]] = resolution * (rows - edges[:, [1, 3]])
    return edges
