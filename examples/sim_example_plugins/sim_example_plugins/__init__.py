"""Example plugins for sim_server, written as any package of yours would be: they import the
simulator only through its two faces, :mod:`sim_server.core.plugins` (with its ``services``) and,
when given a ROS node, :mod:`sim_server.ros.plugin_support`.

* :class:`~sim_example_plugins.sonar.Sonar` -- a model plugin: a fan of sonar beams that the
  live view, MCAP logs, pictures and the RViz configuration show as a laser (it offers
  ``ScanSource``);
* :class:`~sim_example_plugins.doors.Doors` -- a world plugin: sliding doors that open and close
  on a schedule (and on request, in-process).

:data:`TWO_ROOMS` is a world that uses both.
"""

from pathlib import Path

#: Two rooms joined by a doorway with a sliding door; a robot with a sonar faces it.
TWO_ROOMS = Path(__file__).resolve().parent / "worlds" / "two_rooms" / "world.yaml"
