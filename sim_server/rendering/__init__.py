"""Pictures of worlds, headless (no display, no GPU, no rclpy): :func:`render` a world,
:class:`~sim_server.rendering.renderer.View` what to show, and
:class:`~sim_server.rendering.renderer.Renderer` for drawing one world again and again.

The core does not know this package: it takes a world and draws it.
"""

from sim_server.rendering.renderer import Renderer, View, render

__all__ = ["Renderer", "View", "render"]
