"""Pictures and videos of worlds, headless (no display, no GPU, no rclpy): runs recorded to GIF,
MP4 or PNG (:mod:`~sim_server.rendering.recording`), the laser rays and trails drawn over them
(:mod:`~sim_server.rendering.overlays`). The pictures themselves are the core's
(:mod:`sim_server.core.pictures`): :func:`render`, :class:`View` and :class:`Renderer` are
importable from here too.
"""

from sim_server.core.pictures import Renderer, View, render

__all__ = ["Renderer", "View", "render"]
