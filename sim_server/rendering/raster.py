"""Line segments drawn on an RGB image by a compiled rasterizer (numba): the walls of a map, the
rays of a laser, the trails of robots.

A segment is given in the world (m) and mapped to pixels by an affine transform (the view's, see
:meth:`sim_server.rendering.renderer.View.affine`); it is clipped to the image, then sampled at
:data:`SAMPLES_PER_PIXEL` points per pixel of its length, so it has no gaps at any slope. Each
pixel a batch of segments covers is blended once with the colour (so overlapping segments of a
translucent colour do not darken each other), exactly as one NumPy pass over all samples would.

Compiled on first use into numba's on-disk cache (``python -m sim_server.core.warm_up``, which
``make setup`` runs, fills it); :func:`warm_up` compiles it ahead. No rclpy here.
"""

from __future__ import annotations

import math
from time import perf_counter

import numpy as np

from sim_server.core.raycast import jit

#: Samples per pixel of a segment's length (two: no gaps at any slope).
SAMPLES_PER_PIXEL = 2.0
#: Pixels beyond the image's sides that a segment is clipped to (samples there are dropped).
CLIP_MARGIN = 1.0


@jit
def _clip(x0: float, y0: float, x1: float, y1: float, width: float, height: float):
    """Liang-Barsky: the part of the segment inside the image (grown by :data:`CLIP_MARGIN`), as
    (t0, t1) along it; t0 > t1 when none of it is inside."""
    t0, t1 = 0.0, 1.0
    dx, dy = x1 - x0, y1 - y0
    low_x, high_x = -CLIP_MARGIN, width + CLIP_MARGIN
    low_y, high_y = -CLIP_MARGIN, height + CLIP_MARGIN
    for p, q in ((-dx, x0 - low_x), (dx, high_x - x0), (-dy, y0 - low_y), (dy, high_y - y0)):
        if p == 0.0:
            if q < 0.0:
                return 1.0, 0.0
        else:
            t = q / p
            if p < 0.0:
                if t > t1:
                    return 1.0, 0.0
                t0 = max(t0, t)
            else:
                if t < t0:
                    return 1.0, 0.0
                t1 = min(t1, t)
    return t0, t1


@jit
def _draw_segments(canvas, covered, segments, affine, color, alpha) -> int:
    height, width = canvas.shape[0], canvas.shape[1]
    a, b, c, d, e, f = affine[0], affine[1], affine[2], affine[3], affine[4], affine[5]
    drawn = 0
    for i in range(segments.shape[0]):
        sx0, sy0, sx1, sy1 = segments[i, 0], segments[i, 1], segments[i, 2], segments[i, 3]
        x0 = a * sx0 + b * sy0 + c
        y0 = d * sx0 + e * sy0 + f
        x1 = a * sx1 + b * sy1 + c
        y1 = d * sx1 + e * sy1 + f
        if not (math.isfinite(x0) and math.isfinite(y0) and math.isfinite(x1) and math.isfinite(y1)):
            continue
        if max(x0, x1) < 0.0 or min(x0, x1) >= width or max(y0, y1) < 0.0 or min(y0, y1) >= height:
            continue
        cx0, cy0, cx1, cy1 = x0, y0, x1, y1
        if not (0.0 <= min(x0, x1) and max(x0, x1) < width and 0.0 <= min(y0, y1) and max(y0, y1) < height):
            t0, t1 = _clip(x0, y0, x1, y1, float(width), float(height))
            if t0 > t1:
                continue
            dx, dy = x1 - x0, y1 - y0
            cx0, cy0 = x0 + t0 * dx, y0 + t0 * dy
            cx1, cy1 = x0 + t1 * dx, y0 + t1 * dy
        count = int(math.ceil(math.hypot(cx1 - cx0, cy1 - cy0) * SAMPLES_PER_PIXEL)) + 1
        for k in range(count):
            t = k / (count - 1) if count > 1 else 0.0
            column = int(math.floor(cx0 + (cx1 - cx0) * t))
            row = int(math.floor(cy0 + (cy1 - cy0) * t))
            if 0 <= column < width and 0 <= row < height and not covered[row, column]:
                covered[row, column] = True
                drawn += 1
                for channel in range(3):
                    value = canvas[row, column, channel] * (1.0 - alpha) + color[channel] * alpha
                    canvas[row, column, channel] = np.uint8(min(255.0, max(0.0, math.floor(value + 0.5))))
    return drawn


def draw_segments(canvas: np.ndarray, segments: np.ndarray, affine: np.ndarray, rgba: tuple[int, int, int, int]) -> int:
    """Draw (N, 4) world segments (x0, y0, x1, y1 in m) on ``canvas`` (H, W, 3 uint8, changed in
    place), mapped to pixels by ``affine`` (six floats: column = a x + b y + c, row = d x + e y + f),
    blending ``rgba`` (0 to 255) over each pixel they cover once. Non-finite segments are skipped.

    Returns:
        How many pixels were drawn.
    """
    if len(segments) == 0:
        return 0
    covered = np.zeros(canvas.shape[:2], dtype=np.bool_)
    color = np.array(rgba[:3], dtype=np.float64)
    return int(_draw_segments(
        canvas, covered, np.ascontiguousarray(segments, dtype=np.float64),
        np.ascontiguousarray(affine, dtype=np.float64), color, rgba[3] / 255.0,
    ))


def warm_up() -> float:
    """Compile the rasterizer (or load it from numba's cache); returns the seconds it took."""
    start = perf_counter()
    canvas = np.zeros((4, 4, 3), dtype=np.uint8)
    draw_segments(canvas, np.array([(0.0, 0.0, 3.0, 3.0)]), np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]), (255, 255, 255, 255))
    return perf_counter() - start
