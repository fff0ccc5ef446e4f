"""Debug markers for RViz: every layer and model on one topic each, and on a topic of its own.

Topics (relative to the node's private namespace; all ``visualization_msgs/MarkerArray``,
reliable, transient local, depth 1):

``~/debug/layers``
    Every layer: marker namespace = the layer's name, id 0, its loaded edges as one LINE_LIST in
    frame ``map``. A layer with no loaded edges (no map, or every tile streamed out) sends a
    DELETE of that marker, never an empty line list.
``~/debug/models``
    Every model: marker namespace = the model's name (so RViz lists every model under
    *Namespaces* and each can be switched off), ids 0, 1, ... : per footprint a CYLINDER (circle)
    or closed LINE_STRIP (polygon), per joint lines from each body to its anchor.
``~/debug/layer/<token>``, ``~/debug/model/<token>``
    Flatland's per-entity topics: the same markers of one entity (a layer's message starts with
    a DELETEALL; a deleted model's topic gets a DELETEALL). ``<token>`` is the entity's name made
    a visible topic token (:mod:`sim_server.ros.names`).
``~/debug/topics``
    ``sim_msgs/DebugTopicList`` of the per-entity topics.

In short (each in full in its module):

* Full state, not deltas: every message on ``~/debug/layers`` and ``~/debug/models`` is the
  complete current state, with DELETEs of the models removed in the last seconds; sent when
  models come or go, and for motion in ``map`` within a marker budget (:mod:`.publisher`).
* Frame-locked markers: a body whose TF frame this server's plugins publish with one chain of
  parents up to ``map`` is drawn in that frame with ``frame_locked: true`` and sent only when
  models come or go; every other body is drawn in ``map``, re-posed while it moves
  (:mod:`.frame_lock`).
* Wire format: markers are serialized once per shape and joined as CDR bytes, published raw; no
  message object is built per refresh (:mod:`.wire`).
* Costs: a refresh round takes about 0.02 ms with 1,000 robots on TF and 7-20 ms with 1,000
  moving robots without TF, so rounds are skipped to stay under a share of the wall time
  (:mod:`.publisher`).

Modules, each importing only those before it:

* :mod:`.messages` -- marker messages as rclpy objects, and the fixed frame ``map``;
* :mod:`.wire` -- markers as CDR bytes, joined into MarkerArray messages;
* :mod:`.markers` -- the markers of one layer or model, serialized once, re-posed in place;
* :mod:`.frame_lock` -- which bodies follow TF, and the models to decide again;
* :mod:`.publisher` -- the topics: :class:`~.publisher.DebugVisualization`.
"""

from sim_server.ros.visualization.messages import VIZ_FRAME
from sim_server.ros.visualization.publisher import LATCHED_QOS, DebugVisualization
from sim_server.ros.visualization.wire import Wire, wire

__all__ = ["LATCHED_QOS", "VIZ_FRAME", "DebugVisualization", "Wire", "wire"]
