"""sim_server: a fast 2D robot simulator for ROS 2 that reads Flatland worlds.

The package has two layers:

* :mod:`sim_server.core` -- the pure simulation core (world, layers, models, Box2D physics).
  It never imports rclpy and can be used in-process, e.g. from a learning loop.
* :mod:`sim_server.ros` -- the thin ROS 2 layer (node, services, topics, markers).
"""

__version__ = "0.1.0"
