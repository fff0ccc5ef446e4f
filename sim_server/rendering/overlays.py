"""What a picture may show beside the world itself: the rays of the lasers' last scans and the
trails the models left. Each is a batch of segments in the world frame (m) with a colour, which
:meth:`sim_server.core.pictures.renderer.Renderer.render` draws over the walls, under the bodies.

No rclpy here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim_server.core.plugins.capabilities import ScanSource
from sim_server.core.pictures.renderer import Overlay, rgba

if TYPE_CHECKING:
    from sim_server.core.world import World

#: Laser rays: a translucent red, so the walls they hit stay visible.
RAY_COLOR = (255, 60, 60, 90)

__all__ = ["MAX_TRAIL_POINTS", "RAY_COLOR", "Overlay", "Trails", "laser_rays"]
#: Most points a trail keeps per model; beyond, every other point is dropped (the trail stays
#: whole, only coarser).
MAX_TRAIL_POINTS = 20_000


def laser_rays(world: "World") -> Overlay:
    """A ray from each laser (a plugin offering
    :class:`~sim_server.core.plugins.capabilities.ScanSource`) to each point its last scan hit
    (misses are not drawn); the rays start where the laser is now."""
    batches = []
    for model in world.all_models():
        for plugin in world.plugins.plugins_of(model):
            if not isinstance(plugin, ScanSource):
                continue
            scan = plugin.latest_scan
            if scan is None:
                continue
            hit = np.isfinite(scan.ranges)
            pose = plugin.sensor_pose()
            angles = pose.theta + plugin.scan_layout.angles[hit]
            lengths = scan.ranges[hit].astype(np.float64)
            rays = np.empty((len(lengths), 4))
            rays[:, 0], rays[:, 1] = pose.x, pose.y
            rays[:, 2] = pose.x + lengths * np.cos(angles)
            rays[:, 3] = pose.y + lengths * np.sin(angles)
            batches.append(rays)
    return Overlay(np.concatenate(batches) if batches else np.empty((0, 4)), RAY_COLOR)


class Trails:
    """The paths of the models, one point per :meth:`record` (call it once per frame)."""

    def __init__(self) -> None:
        self._points: dict[str, list[tuple[float, float]]] = {}
        self._colors: dict[str, tuple[int, int, int, int]] = {}

    def record(self, world: "World") -> None:
        """Add every model's position now; a model that left the world leaves its trail behind."""
        for model in world.all_models():
            points = self._points.setdefault(model.name, [])
            pose = model.pose
            points.append((pose.x, pose.y))
            if len(points) > MAX_TRAIL_POINTS:
                self._points[model.name] = points[::2]
            if model.name not in self._colors:
                self._colors[model.name] = rgba(model.first_body.spec.color, alpha=1.0)

    def overlays(self) -> list[Overlay]:
        """One overlay per model: its path so far in its first body's colour."""
        result = []
        for name, points in self._points.items():
            if len(points) < 2:
                continue
            path = np.array(points)
            result.append(Overlay(np.hstack((path[:-1], path[1:])), self._colors[name]))
        return result
