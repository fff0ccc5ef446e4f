"""The simulator's own model plugins (DiffDrive, TricycleDrive, Laser, Bumper, BoolSensor, Gps,
Tween, ModelTfPublisher), registered as entry points of the group ``sim_server.model_plugins``.

The physics and sensing math lives in :mod:`sim_server.core`; these classes read the reference's
YAML parameters and publish standard ROS messages.
"""
