"""Crowds: pedestrians that walk among the walls and the robots, as bodies every sensor sees.

* :mod:`.crowds` -- a world's crowds as one collection (``world.crowds``): people found, added
  and removed by name, counted, stepped, seen;
* :mod:`.crowd` -- a crowd in the physics world (:class:`~.crowd.Crowd`): its people as kinematic
  circles, their goals, waits, groups and spawners, one update for all of them;
* :mod:`.people` -- the people's state as arrays;
* :mod:`.places` -- the world file's places checked against the walls, free places, goal pools;
* :mod:`.social_force` -- the social force model (pedsim's forces and parameters), compiled;
* :mod:`.orca` -- ORCA (reciprocal velocity obstacles, RVO2's algorithm), compiled;
* :mod:`.orca_obstacles` -- the walls as ORCA's obstacles (RVO2's vertices, two-sided), and their grid;
* :mod:`.navigation` -- the walking grid: where a body fits, which places connect, distance fields
  and walking directions;
* :mod:`.neighbors`, :mod:`.walls` -- who is near whom, and the walls near each one;
* :mod:`.touch` -- which people's bodies take part in Box2D's contacts (those a robot may reach);
* :mod:`.robots`, :mod:`.robot_footprints` -- the robots people meet: their bodies, footprints
  and the distance from a person to one;
* :mod:`.social_metrics` -- how robots did among people, per robot and episode, step by step:
  the social navigation metrics of CrowdNav, SocNavBench and Arena-Rosnav;
* :mod:`.yielding` -- people never push robots: a step into one is cut.

A crowd reaches the world through :class:`~.crowd.CrowdHost`; sensors and pictures see its
people through :meth:`~sim_server.core.physics.world_view.WorldView.crowd_circles`.
"""
