"""Live views and MCAP logs of a world over the Foxglove protocol, without ROS.

* :mod:`.scene` -- the world as the Foxglove SDK's well-known messages (scene entities, laser
  scans, transforms);
* :mod:`.feed` -- one stream (a server's or a file's): its channels and what goes on them;
* :mod:`.discovery` -- the lasers, cameras, odometry and drives among a world's plugins, found
  by what they offer;
* :mod:`.view` -- :class:`~.view.LiveView`: a Foxglove WebSocket server fed from the step loop,
  and the same channels written to an MCAP file;
* :mod:`.control`, :mod:`.requests`, :mod:`.services`, :mod:`.teleop` -- what viewers may do:
  the services (spawn, delete, move, pause, resume, step, reset) and driving robots, carried
  out by the thread that steps the world;
* :mod:`.files` -- MCAP files of bounded size, the newest kept;
* :mod:`.log` -- a run recorded to MCAP (``python -m sim_server.record ... --out run.mcap``).

The SDK is imported with :class:`LiveView` only (the ROS node's services share
:mod:`.control` without paying for it).
"""

from typing import Any

__all__ = ["DEFAULT_PORT", "LiveView"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from sim_server.live import view

        return getattr(view, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
