"""File formats: reading Flatland's world, model and map files strictly, with limits on every read.

* :mod:`.bounded_read` -- reading files with a size limit (regular files only);
* :mod:`.file_targets` -- where files the simulator writes go (a checked target, written beside
  it until whole);
* :mod:`.yaml_parsing`, :mod:`.yaml_preprocessor` -- YAML with bounded size and depth, and the
  reference's ``$eval`` (sandboxed Lua) and ``$include``;
* :mod:`.yaml_reader` -- the strict reader every file and plugin configuration goes through:
  keys not read are errors, every error names file, entry and key;
* :mod:`.world_file`, :mod:`.model_file`, :mod:`.map_file`, :mod:`.map_image` -- the validated
  descriptions (``WorldSpec``, ``ModelSpec``, ``MapData``);
* :mod:`.crowd_file` -- the world file's crowds (the ``pedestrians`` key of ours) and the crowd
  models' parameters;
* :mod:`.pedsim_scenario` -- pedsim's scenario files (XML: walls, waypoints, queues,
  attractions, agent clusters and the robot), read with limits;
* :mod:`.entity_names`, :mod:`.shape_validation` -- the rules for names and footprints.
* :mod:`.key_catalog`, :mod:`.key_notes` -- the reference of every key the readers accept, found
  by recording their reads (of the files :mod:`sim_server.core.key_reference` loads; the docs'
  page ``keys``) and what code cannot say of them.

Nothing here creates Box2D objects: :mod:`sim_server.core.physics` builds them from these specs.
"""
