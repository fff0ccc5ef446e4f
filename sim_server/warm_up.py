"""Fill numba's on-disk cache of the ray caster, of the batch body access and of the renderer's
rasterizer: ``python -m sim_server.warm_up``.

``make setup`` runs it, so that the first server started after an install loads the compiled ray
caster in a few tenths of a second instead of compiling it for some 15 to 45 s (see
:func:`sim_server.core.sensing.raycast.warm_up`). Run it again by hand after editing a compiled
module (the ray caster's kernels, ``sim_server/core/sensing/ray_kernels.py``, say) or upgrading
numba; it is quick when the cache is up to date.

Prints three lines: what it did for the ray caster, how long it took and where the cache is;
whether bodies are read and written in memory (:mod:`sim_server.core.physics.body_memory`) or through
SWIG; how long the rasterizer took. Exit code 0, also when numba has no writable cache directory (then it says so: every
process compiles on its own).
"""

from __future__ import annotations

import argparse
import sys

from sim_server.core import compiled
from sim_server.core.motion import drive_kernels
from sim_server.core.physics import body_memory
from sim_server.core.sensing import raycast


def cache_directory() -> str | None:
    """Where numba keeps the ray caster's cache (that of its kernels' module), or None when it
    keeps none."""
    cache = getattr(raycast.ENTRY_POINTS[-1], "_cache", None)
    return getattr(cache, "_cache_path", None) if compiled.CACHED else None


def main(argv: list[str] | None = None) -> int:
    """Compile the ray caster (or check that its cache loads); returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m sim_server.warm_up",
        description="Compile the ray caster into numba's on-disk cache (make setup runs this).",
    )
    parser.parse_args(sys.argv[1:] if argv is None else argv)
    seconds = raycast.warm_up(log=lambda message: None)
    if not hasattr(raycast.ENTRY_POINTS[-1], "signatures"):
        print(f"ray caster: numba's JIT is disabled (NUMBA_DISABLE_JIT): nothing to compile ({seconds:.1f} s)")
        print("body access: through SWIG, one body at a time (numba's JIT is disabled)")
        return 0
    loaded, compiled = raycast._cache_counts()  # noqa: SLF001 - same package
    directory = cache_directory()
    if compiled:
        what = f"compiled {compiled} function(s) in {seconds:.1f} s"
    else:
        what = f"loaded {loaded} compiled function(s) from the cache in {seconds:.1f} s"
    where = (
        f"cache: {directory}"
        if directory
        else "not cached: numba found no writable cache directory (set NUMBA_CACHE_DIR)"
    )
    print(f"ray caster: {what}; {where}")
    print(f"body access: {_body_access()}")
    print(f"rasterizer: ready in {_rasterizer_seconds():.1f} s (the renderer's compiled line drawing)")
    return 0


def _rasterizer_seconds() -> float:
    """Compile the renderer's rasterizer (or load it)."""
    from sim_server.core.pictures import raster

    return raster.warm_up()


def _body_access() -> str:
    """Compile the batch body access (or load it) and say how bodies are reached."""
    drive_kernels.warm_up()  # (the drives' arithmetic: compiled whether or not bodies are reached in memory)
    if body_memory.memory_access_works():
        return "in memory (compiled batch reads and writes of Box2D bodies)"
    return "through SWIG, one body at a time (the memory layout check failed)"


if __name__ == "__main__":
    sys.exit(main())
