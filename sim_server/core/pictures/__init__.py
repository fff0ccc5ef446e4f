"""Pictures of a world seen from above, headless (no display, no GPU, no rclpy): :func:`render` a
world, :class:`~sim_server.core.pictures.renderer.View` what to show, and
:class:`~sim_server.core.pictures.renderer.Renderer` for drawing one world again and again, by the
compiled rasterizer of :mod:`~sim_server.core.pictures.raster`.

A sensing service of the core, as the ray caster is: cameras take their pictures with it (through
the plugin face, :mod:`sim_server.core.plugins.services`); videos, overlays of laser rays and
trails, and the picture command are :mod:`sim_server.rendering`'s.
"""

from sim_server.core.pictures.renderer import Overlay, Renderer, View, render

__all__ = ["Overlay", "Renderer", "View", "render"]
