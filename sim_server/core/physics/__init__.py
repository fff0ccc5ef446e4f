"""The physics world's parts: Box2D bodies built from validated specs.

* :mod:`.collision_filter` -- layer names as Box2D category bits;
* :mod:`.layer` -- a layer's walls (map edges, cut into streamable pieces);
* :mod:`.model` -- a model's bodies, footprints and joints;
* :mod:`.contacts` -- touching fixtures, and how many footprints a placed model overlaps;
* :mod:`.world_view` -- what the world's parts may read of it (``WorldView``) and what listens to
  its models coming and going (``WorldListener``);
* :mod:`.body_memory` -- compiled batch reads and writes of many bodies' poses and velocities;
* :mod:`.replicas` -- where copies of a world lie side by side.

The world (:mod:`sim_server.core.world`) composes them; nothing here names it.
"""
