"""Rendering of worlds (no display, no GPU, no rclpy): :class:`~sim_server.rendering.renderer.View`
and :class:`~sim_server.rendering.renderer.Renderer`."""

from sim_server.rendering.renderer import Renderer, View

__all__ = ["Renderer", "View"]
