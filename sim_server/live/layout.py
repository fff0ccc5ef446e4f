"""A Foxglove (and Lichtblick) layout for a world's live view: "Import from file" in the
layout menu, then "Open connection".

The layout (the apps' layout file: ``configById``, ``layout``, ...) holds a 3D panel seen from
above in ``map`` with the walls, footprints, people, scans and odometry on; an Image panel on the
first camera's topic; a Teleop panel on the first drive's command topic, publishing at
:data:`TELEOP_RATE` Hz; and buttons for ``/pause``, ``/resume``, ``/step_world`` (10 steps) and
``/reset_world``. ``config/foxglove/layout.json`` is this layout for the bundled worlds' robots
(a drive on ``/cmd_vel``, a camera on ``/image_raw``); ``python -m sim_server.serve WORLD
--layout FILE`` writes the one of a world.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim_server.live.scene import WORLD_FRAME

if TYPE_CHECKING:
    from sim_server.core.world import World

#: Hz at which the Teleop panel publishes while a button is held (the view's commands hold 1.5 s).
TELEOP_RATE = 10.0
#: Speed (m/s) and turn rate (rad/s) of the Teleop panel's buttons.
TELEOP_SPEED, TELEOP_TURN = 0.5, 0.8
#: The service buttons: (service, request, label, colour).
BUTTONS = (
    ("/pause", {}, "Pause", "#d08020"),
    ("/resume", {}, "Resume", "#20a040"),
    ("/step_world", {"steps": 10}, "Step 10", "#2080d0"),
    ("/reset_world", {}, "Reset", "#c03030"),
)


def _topic(name: str) -> str:
    return "/" + name.lstrip("/")


def world_topics(world: "World") -> tuple[list[str], list[str], list[str]]:
    """The topics of ``world``'s lasers, cameras and drives' commands (sorted)."""
    lasers, cameras, drives = set(), set(), set()
    for model in world.models.values():
        for plugin in world.plugins.plugins_of(model):
            if hasattr(plugin, "scanner") and hasattr(plugin, "topic_name"):
                lasers.add(_topic(plugin.topic_name))
            elif hasattr(plugin, "last_image") and hasattr(plugin, "topic_name"):
                cameras.add(_topic(plugin.topic_name))
            command = getattr(plugin, "command", None)
            if isinstance(getattr(command, "topic", None), str):
                drives.add(_topic(command.topic))
    return sorted(lasers), sorted(cameras), sorted(drives)


def layout(lasers: list[str], cameras: list[str], drives: list[str], odometry: list[str] = ()) -> dict[str, Any]:
    """The layout showing ``lasers``' scans and ``odometry`` in the 3D panel, the first of
    ``cameras`` in the Image panel, and driving the first of ``drives``."""
    topics = {"/scene": {"visible": True}, **{topic: {"visible": True, "pointSize": 3} for topic in lasers},
              **{topic: {"visible": True} for topic in odometry}}
    config: dict[str, Any] = {
        "3D!sim": {
            "followTf": WORLD_FRAME,
            "followMode": "follow-none",
            "cameraState": {"perspective": False, "distance": 40, "phi": 0, "thetaOffset": 0,
                            "target": [0, 0, 0], "targetOffset": [0, 0, 0], "targetOrientation": [0, 0, 0, 1]},
            "scene": {"transforms": {"showLabel": False, "axisScale": 0.5}},
            "topics": topics,
        },
        "Image!sim": {"imageMode": {"imageTopic": cameras[0] if cameras else ""}},
        "Teleop!sim": {
            "topic": drives[0] if drives else "/cmd_vel",
            "publishRate": TELEOP_RATE,
            "upButton": {"field": "linear-x", "value": TELEOP_SPEED},
            "downButton": {"field": "linear-x", "value": -TELEOP_SPEED},
            "leftButton": {"field": "angular-z", "value": TELEOP_TURN},
            "rightButton": {"field": "angular-z", "value": -TELEOP_TURN},
        },
    }
    buttons = []
    for service, request, label, colour in BUTTONS:
        panel = f"CallService!{service.strip('/')}"
        config[panel] = {"serviceName": service, "requestPayload": json.dumps(request), "layout": "horizontal",
                         "buttonText": label, "buttonColor": colour}
        buttons.append(panel)
    column: Any = buttons[-1]
    for panel in reversed(buttons[:-1]):
        column = {"first": panel, "second": column, "direction": "row"}
    side = {"first": "Image!sim", "second": {"first": "Teleop!sim", "second": column, "direction": "column",
                                              "splitPercentage": 75}, "direction": "column", "splitPercentage": 45}
    return {
        "configById": config,
        "globalVariables": {},
        "userNodes": {},
        "playbackConfig": {"speed": 1},
        "layout": {"first": "3D!sim", "second": side, "direction": "row", "splitPercentage": 70},
    }


def world_layout(world: "World") -> dict[str, Any]:
    """The layout for ``world``'s sensors and drives."""
    lasers, cameras, drives = world_topics(world)
    odometry = sorted({_topic(plugin.odometry.odom_topic) for model in world.models.values()
                       for plugin in world.plugins.plugins_of(model)
                       if getattr(getattr(plugin, "odometry", None), "enabled", False)})
    return layout(lasers, cameras, drives, odometry)


def write_layout(world: "World", path: Path) -> None:
    """Write ``world``'s layout as JSON to ``path``."""
    Path(path).write_text(json.dumps(world_layout(world), indent=2) + "\n")
