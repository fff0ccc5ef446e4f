"""sim_server: a fast 2D robot simulator for ROS 2 that reads Flatland worlds.

The layers, each importing only those below it (``test/test_layering.py`` keeps it so):

* :mod:`sim_server.core` -- the pure simulation core (world, layers, models, Box2D physics,
  plugins, sensing, crowds). It never imports rclpy and can be used in-process, e.g. from a
  learning loop.
* :mod:`sim_server.rendering` -- pictures of a world, headless (no rclpy).
* :mod:`sim_server.ros` -- the thin ROS 2 layer (node, services, topics, markers, the standard
  simulation interface).
* :mod:`sim_server.learning` -- Gymnasium, PettingZoo and Ray environments over the core.

Modules that moved keep their old import paths for one release (:mod:`sim_server.moved_modules`).
"""

from sim_server import moved_modules

__version__ = "0.2.0"

moved_modules.install()
