"""Live views and MCAP logs of a world over the Foxglove protocol, without ROS.

* :mod:`.scene` -- the world as the Foxglove SDK's well-known messages (scene entities, laser
  scans, transforms);
* :mod:`.feed` -- one stream (a server's or a file's): its channels and what goes on them;
* :mod:`.view` -- :class:`~.view.LiveView`: a Foxglove WebSocket server fed from the step loop,
  and the same channels written to an MCAP file;
* :mod:`.files` -- MCAP files of bounded size, the newest kept;
* :mod:`.log` -- a run recorded to MCAP (``python -m sim_server.record ... --out run.mcap``).
"""

from sim_server.live.view import DEFAULT_PORT, LiveView

__all__ = ["DEFAULT_PORT", "LiveView"]
