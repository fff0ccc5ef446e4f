"""Pictures of a learning fleet's world: everything from above, with the lasers' rays and each
robot's goal as a yellow cross (the environments' ``render()``, ``render_mode="rgb_array"``)."""

from __future__ import annotations

import numpy as np

from sim_server.learning.fleet import NavigationFleet
from sim_server.rendering import Renderer, View
from sim_server.core.pictures.renderer import MAX_PIXELS_SIDE as MAX_PIXELS
from sim_server.rendering.overlays import Overlay, laser_rays

#: The render modes of the learning environments.
RENDER_MODES = ("rgb_array",)
#: Colour of a goal's cross in pictures (RGBA).
GOAL_COLOR = (255, 220, 0, 255)
#: Half the size of a goal's cross in pictures (m).
GOAL_CROSS = 0.25


def check_render_mode(render_mode: str | None, pixels: int) -> None:
    """Raise ValueError unless ``render_mode`` is None or one of :data:`RENDER_MODES` and
    ``pixels`` a whole number from 1 to :data:`MAX_PIXELS` (checked with a render mode only)."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f'render_mode must be None or "rgb_array", got {render_mode!r:.100}')
    if render_mode is not None and (
        isinstance(pixels, bool) or not isinstance(pixels, (int, np.integer)) or not 1 <= pixels <= MAX_PIXELS
    ):
        raise ValueError(f"pixels must be a whole number from 1 to {MAX_PIXELS}, got {pixels!r:.100}")


def goal_cross(x: float, y: float) -> Overlay:
    """The goal at (x, y) (m, world frame) as a cross to draw."""
    size = GOAL_CROSS
    return Overlay(np.array([(x - size, y - size, x + size, y + size), (x - size, y + size, x + size, y - size)]), GOAL_COLOR)


class FleetPictures:
    """Draws ``fleet``'s whole world, ``pixels`` on the longer side, when ``render_mode`` asks."""

    def __init__(self, fleet: NavigationFleet, render_mode: str | None, pixels: int) -> None:
        check_render_mode(render_mode, pixels)
        self._fleet = fleet
        self._renderer = Renderer(fleet.world) if render_mode else None
        self._view = View.fit(fleet.world, pixels) if render_mode else None

    def render(self) -> np.ndarray | None:
        """An (height, width, 3) uint8 RGB picture now, or None without a render mode."""
        if self._renderer is None:
            return None
        fleet = self._fleet
        fleet.check_open()
        goals = [goal_cross(x + dx, y + dy) for (x, y), (dx, dy) in zip(fleet.goals.tolist(), fleet.offsets.tolist())]
        return self._renderer.render(self._view, [laser_rays(fleet.world), *goals])
