"""A compiled rasterizer (numba) for RGB images: line segments (the walls of a map, the rays of a
laser, the trails of robots) and filled, outlined convex polygons and ellipses (the bodies).

A segment is given in the world (m) and mapped to pixels by an affine transform (the view's, see
:meth:`sim_server.core.pictures.renderer.View.affine`); it is clipped to the image, then sampled at
:data:`SAMPLES_PER_PIXEL` points per pixel of its length, so it has no gaps at any slope. Each
pixel a batch of segments covers is blended once with the colour (so overlapping segments of a
translucent colour do not darken each other), exactly as one NumPy pass over all samples would.

Shapes are filled row by row: a row's pixels whose centres lie inside are blended with the fill
colour (each once). A polygon's outline is its edges drawn as segments, so a polygon thinner than
a pixel still shows; an ellipse's outline is the filled pixels next to unfilled ones, and an
ellipse smaller than a pixel is its centre's pixel. Only the rows and columns inside the image are
visited, so a shape far larger than the picture (a view inside a body) costs no more than the
picture.

Compiled on first use into numba's on-disk cache (``python -m sim_server.warm_up``, which
``make setup`` runs, fills it); :func:`warm_up` compiles it ahead. No rclpy here.
"""

from __future__ import annotations

import math
from time import perf_counter
from typing import Sequence

import numpy as np

from sim_server.core.compiled import jit

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
def _visible_part(x0: float, y0: float, x1: float, y1: float, width: int, height: int):
    """The part of a segment in pixel coordinates to sample, and how many samples it takes:
    (x0, y0, x1, y1, count), count 0 when none of it is in the picture or it is not finite."""
    if not (math.isfinite(x0) and math.isfinite(y0) and math.isfinite(x1) and math.isfinite(y1)):
        return x0, y0, x1, y1, 0
    if max(x0, x1) < 0.0 or min(x0, x1) >= width or max(y0, y1) < 0.0 or min(y0, y1) >= height:
        return x0, y0, x1, y1, 0
    if not (0.0 <= min(x0, x1) and max(x0, x1) < width and 0.0 <= min(y0, y1) and max(y0, y1) < height):
        t0, t1 = _clip(x0, y0, x1, y1, float(width), float(height))
        if t0 > t1:
            return x0, y0, x1, y1, 0
        dx, dy = x1 - x0, y1 - y0
        x0, y0, x1, y1 = x0 + t0 * dx, y0 + t0 * dy, x0 + t1 * dx, y0 + t1 * dy
    return x0, y0, x1, y1, int(math.ceil(math.hypot(x1 - x0, y1 - y0) * SAMPLES_PER_PIXEL)) + 1


@jit
def _sample(x0: float, y0: float, x1: float, y1: float, k: int, count: int):
    """The pixel (row, column) of sample ``k`` of ``count`` along a visible part."""
    t = k / (count - 1) if count > 1 else 0.0
    return int(math.floor(y0 + (y1 - y0) * t)), int(math.floor(x0 + (x1 - x0) * t))


@jit
def _blend(canvas, row, column, color, alpha) -> None:
    for channel in range(3):
        value = canvas[row, column, channel] * (1.0 - alpha) + color[channel] * alpha
        canvas[row, column, channel] = np.uint8(min(255.0, max(0.0, math.floor(value + 0.5))))


@jit
def _draw_segments(canvas, covered, segments, affine, color, alpha) -> int:
    height, width = canvas.shape[0], canvas.shape[1]
    a, b, c, d, e, f = affine[0], affine[1], affine[2], affine[3], affine[4], affine[5]
    drawn = 0
    for i in range(segments.shape[0]):
        sx0, sy0, sx1, sy1 = segments[i, 0], segments[i, 1], segments[i, 2], segments[i, 3]
        x0, y0, x1, y1, count = _visible_part(
            a * sx0 + b * sy0 + c, d * sx0 + e * sy0 + f, a * sx1 + b * sy1 + c, d * sx1 + e * sy1 + f, width, height
        )
        for k in range(count):
            row, column = _sample(x0, y0, x1, y1, k, count)
            if 0 <= column < width and 0 <= row < height and not covered[row, column]:
                covered[row, column] = True
                drawn += 1
                _blend(canvas, row, column, color, alpha)
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


@jit
def _columns(left: float, right: float, width: int):
    """The pixel columns whose centres lie in [left, right], clipped to one beyond the image on
    each side (-1 to width): (first, last), first > last when there are none."""
    left = min(max(left, -2.0), width + 2.0)
    right = min(max(right, -2.0), width + 2.0)
    first = max(int(math.ceil(left - 0.5)), -1)
    last = min(int(math.floor(right - 0.5)), width)
    return first, last


@jit
def _row_range(low: float, high: float, height: int):
    """Rows (first, last) whose centres may lie in [low, high], within the image."""
    low = min(max(low, -2.0), height + 2.0)
    high = min(max(high, -2.0), height + 2.0)
    return max(int(math.floor(low - 0.5)), 0), min(int(math.ceil(high - 0.5)), height - 1)


@jit
def _polygon_span(points, row: int, width: int):
    y = row + 0.5
    left, right = math.inf, -math.inf
    count = points.shape[0]
    for i in range(count):
        x0, y0 = points[i, 0], points[i, 1]
        x1, y1 = points[(i + 1) % count, 0], points[(i + 1) % count, 1]
        if min(y0, y1) <= y <= max(y0, y1):
            if y0 == y1:
                left, right = min(left, x0, x1), max(right, x0, x1)
            else:
                x = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
                left, right = min(left, x), max(right, x)
    if left > right:
        return 1, 0
    return _columns(left, right, width)


@jit
def _fill_polygon(canvas, points, color, alpha) -> None:
    height, width = canvas.shape[0], canvas.shape[1]
    first, last = _row_range(points[:, 1].min(), points[:, 1].max(), height)
    for row in range(first, last + 1):
        a, b = _polygon_span(points, row, width)
        for column in range(max(a, 0), min(b, width - 1) + 1):
            _blend(canvas, row, column, color, alpha)


@jit
def _ellipse_span(cx: float, cy: float, rx: float, ry: float, row: int, width: int):
    t = (row + 0.5 - cy) / ry
    if t * t > 1.0:
        return 1, 0
    half = rx * math.sqrt(1.0 - t * t)
    return _columns(cx - half, cx + half, width)


@jit
def _draw_ellipse(canvas, cx, cy, rx, ry, fill, fill_alpha, line) -> None:
    height, width = canvas.shape[0], canvas.shape[1]
    first, last = _row_range(cy - ry, cy + ry, height)
    drawn = False
    for row in range(first, last + 1):
        a, b = _ellipse_span(cx, cy, rx, ry, row, width)
        if a > b:
            continue
        drawn = True
        above_a, above_b = _ellipse_span(cx, cy, rx, ry, row - 1, width)
        below_a, below_b = _ellipse_span(cx, cy, rx, ry, row + 1, width)
        for column in range(max(a, 0), min(b, width - 1) + 1):
            inner = a < column < b and above_a <= column <= above_b and below_a <= column <= below_b
            if inner:
                _blend(canvas, row, column, fill, fill_alpha)
            else:
                _blend(canvas, row, column, line, 1.0)
    if not drawn and 0.0 <= cx < width and 0.0 <= cy < height:
        _blend(canvas, int(cy), int(cx), line, 1.0)


@jit
def _opaque_line(canvas, x0, y0, x1, y1, color) -> None:
    """A segment in pixel coordinates, sampled as :func:`_draw_segments` does, painted opaque."""
    height, width = canvas.shape[0], canvas.shape[1]
    x0, y0, x1, y1, count = _visible_part(x0, y0, x1, y1, width, height)
    for k in range(count):
        row, column = _sample(x0, y0, x1, y1, k, count)
        if 0 <= column < width and 0 <= row < height:
            _blend(canvas, row, column, color, 1.0)


@jit
def _draw_shapes(canvas, affine, starts, counts, radii, points, fills, lines) -> None:
    a, b, c, d, e, f = affine[0], affine[1], affine[2], affine[3], affine[4], affine[5]
    scale_x, scale_y = math.hypot(a, b), math.hypot(d, e)
    for i in range(starts.shape[0]):
        first, count = starts[i], counts[i]
        pixels = np.empty((count, 2))
        finite = True
        for k in range(count):
            x, y = points[first + k, 0], points[first + k, 1]
            pixels[k, 0] = a * x + b * y + c
            pixels[k, 1] = d * x + e * y + f
            finite = finite and math.isfinite(pixels[k, 0]) and math.isfinite(pixels[k, 1])
        if not finite:
            continue
        fill, alpha, line = fills[i, :3], fills[i, 3] / 255.0, lines[i, :3]
        if radii[i] > 0.0:  # a circle: its centre and radius
            rx, ry = radii[i] * scale_x, radii[i] * scale_y
            if math.isfinite(rx) and math.isfinite(ry) and rx > 0.0 and ry > 0.0:
                _draw_ellipse(canvas, pixels[0, 0], pixels[0, 1], rx, ry, fill, alpha, line)
            continue
        if count >= 3 and alpha > 0.0:
            _fill_polygon(canvas, pixels, fill, alpha)
        edges = count if count > 2 else count - 1
        for k in range(edges):
            j = (k + 1) % count
            _opaque_line(canvas, pixels[k, 0], pixels[k, 1], pixels[j, 0], pixels[j, 1], line)


class Shapes:
    """Footprints to draw in one compiled call, in the order they were added: convex polygons
    (their corners) and circles (centre and radius), in the world frame (m), each with a fill
    (RGBA 0 to 255, blended) and an opaque outline colour."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._counts: list[int] = []
        self._radii: list[float] = []
        self._points: list[Sequence[float]] = []
        self._fills: list[tuple[int, int, int, int]] = []
        self._lines: list[tuple[int, int, int, int]] = []

    def polygon(self, corners, fill: tuple[int, int, int, int], line: tuple[int, int, int, int]) -> None:
        """A convex polygon (two corners: a segment)."""
        self._add(list(corners), 0.0, fill, line)

    def circle(self, x: float, y: float, radius: float, fill: tuple[int, int, int, int], line: tuple[int, int, int, int]) -> None:
        self._add([(x, y)], radius, fill, line)

    def circles(self, circles: np.ndarray, fill: tuple[int, int, int, int], line: tuple[int, int, int, int]) -> None:
        """Many circles of one colour at once: ``circles`` (N, 3) centre x, y and radius (m)."""
        count = len(circles)
        if not count:
            return
        first = len(self._points)
        self._starts.extend(range(first, first + count))
        self._counts.extend([1] * count)
        self._radii.extend(circles[:, 2].tolist())
        self._points.extend(circles[:, :2].tolist())
        self._fills.extend([fill] * count)
        self._lines.extend([line] * count)

    def _add(self, points, radius: float, fill, line) -> None:
        if not points:
            return
        self._starts.append(len(self._points))
        self._counts.append(len(points))
        self._radii.append(radius)
        self._points.extend(points)
        self._fills.append(fill)
        self._lines.append(line)

    def draw(self, canvas: np.ndarray, affine: np.ndarray) -> None:
        """Draw every shape on ``canvas`` (H, W, 3 uint8, changed in place) through ``affine``
        (world to pixels, as in :func:`draw_segments`)."""
        if not self._starts:
            return
        _draw_shapes(
            canvas, np.ascontiguousarray(affine, dtype=np.float64),
            np.array(self._starts, dtype=np.int64), np.array(self._counts, dtype=np.int64),
            np.array(self._radii, dtype=np.float64), np.array(self._points, dtype=np.float64).reshape(-1, 2),
            np.array(self._fills, dtype=np.float64).reshape(-1, 4), np.array(self._lines, dtype=np.float64).reshape(-1, 4),
        )


#: The identity map (pixels to pixels) of :func:`draw_segments`.
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0])


def warm_up() -> float:
    """Compile the rasterizer (or load it from numba's cache); returns the seconds it took."""
    start = perf_counter()
    canvas = np.zeros((4, 4, 3), dtype=np.uint8)
    draw_segments(canvas, np.array([(0.0, 0.0, 3.0, 3.0)]), IDENTITY, (255, 255, 255, 255))
    shapes = Shapes()
    shapes.polygon([(0.0, 0.0), (3.0, 0.0), (3.0, 3.0)], (255, 0, 0, 128), (255, 0, 0, 255))
    shapes.circle(2.0, 2.0, 1.5, (0, 0, 255, 128), (0, 0, 255, 255))
    shapes.draw(canvas, IDENTITY)
    return perf_counter() - start
