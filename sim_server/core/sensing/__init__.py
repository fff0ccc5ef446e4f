"""Sensing: what sensors compute from the physics world.

* :mod:`.raycast` -- the batch ray caster's Python API (scenes, beam layouts, casts, warm-up);
* :mod:`.ray_kernels` -- its compiled kernels (numba; editing them recompiles the cache);
* :mod:`.laser_scanner` -- the world as lasers see it (:class:`~.laser_scanner.ScanScene`) and
  planar scanners on bodies, all cast in one compiled call;
* :mod:`.geodesy` -- the world's ENU frame to WGS-84 (GPS).

Sensors reach a world through a :class:`~sim_server.core.physics.world_view.WorldView`, what the
world's parts may read of it.
"""
