"""A Foxglove (and Lichtblick) layout for a world's live view: "Import from file" in the
layout menu, then "Open connection".

The layout (the apps' layout file: ``configById``, ``layout``, ...) holds a 3D panel seen from
above in ``map`` on a dark background, fitted to the world, with the walls, footprints, people,
scans and odometry on (Lichtblick does not draw odometry in 3D); an Image panel on the first
camera's topic; a Teleop panel on the first drive's command topic, publishing at
:data:`TELEOP_RATE` Hz; and buttons for ``/pause``, ``/resume``, ``/step_world`` (10 steps) and
``/reset_world``. ``config/foxglove/layout.json`` is this layout for the crowd world (the office of the
demo; a drive on ``/cmd_vel``, a camera on ``/image_raw``); ``python -m sim_server.serve WORLD
--layout FILE`` writes the one of a world.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sim_server.live.discovery import CAMERA, LASER, ODOMETRY, drive_commands, sensor_topics
from sim_server.live.scene import WORLD_FRAME

if TYPE_CHECKING:
    from sim_server.core.world import World

#: Hz at which the Teleop panel publishes while a button is held (the view's commands hold 1.5 s).
TELEOP_RATE = 10.0
#: Speed (m/s) and turn rate (rad/s) of the Teleop panel's buttons.
TELEOP_SPEED, TELEOP_TURN = 0.5, 0.8
#: The 3D panel's camera distance: the world's extent (m) times this (seen in Lichtblick at 1600 x
#: 900, a distance d shows about 1.1 d of width: the world fits with room round it).
VIEW_MARGIN = 1.1
#: The 3D panel's background (dark: the models' and walls' colours show on it) and the scans' colour.
BACKGROUND, LASER_COLOR = "#1e1e24", "#ff4040ff"
#: The service buttons: (service, request, label, colour).
BUTTONS = (
    ("/pause", {}, "Pause", "#d08020"),
    ("/resume", {}, "Resume", "#20a040"),
    ("/step_world", {"steps": 10}, "Step 10", "#2080d0"),
    ("/reset_world", {}, "Reset", "#c03030"),
)


def world_topics(world: "World") -> tuple[list[str], list[str], list[str]]:
    """The topics of ``world``'s lasers, cameras and drives' commands (sorted; found as the view
    finds them, :mod:`sim_server.live.discovery`)."""
    return sensor_topics(world, LASER), sensor_topics(world, CAMERA), sorted(drive_commands(world))


def layout(lasers: list[str], cameras: list[str], drives: list[str], odometry: list[str] = (),
           bounds: tuple[float, float, float, float] = (-20.0, -20.0, 20.0, 20.0)) -> dict[str, Any]:
    """The layout showing ``lasers``' scans and ``odometry`` in the 3D panel (seen from above,
    fitted to ``bounds``: x, y low and high, m), the first of ``cameras`` in the Image panel, and
    driving the first of ``drives``."""
    topics = {"/scene": {"visible": True}, "/scene/static": {"visible": True},
              # (a colour field must be named, else the apps colour by intensity whatever the mode)
              **{topic: {"visible": True, "pointSize": 4, "colorField": "range", "colorMode": "flat", "flatColor": LASER_COLOR}
                 for topic in lasers},
              **{topic: {"visible": True} for topic in odometry}}
    low_x, low_y, high_x, high_y = bounds
    centre = [round(0.5 * (low_x + high_x), 2), round(0.5 * (low_y + high_y), 2), 0]
    config: dict[str, Any] = {
        "3D!sim": {
            "followTf": WORLD_FRAME,
            "followMode": "follow-none",
            "cameraState": {"perspective": False, "distance": round(VIEW_MARGIN * max(high_x - low_x, high_y - low_y, 1.0), 1),
                            "phi": 0, "thetaOffset": 0, "target": [0, 0, 0], "targetOffset": centre,
                            "targetOrientation": [0, 0, 0, 1]},
            "scene": {"backgroundColor": BACKGROUND, "transforms": {"showLabel": False, "axisScale": 0.5, "lineWidth": 0.5}},
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
        # Only the button shows (Foxglove reads editingMode, Lichtblick advancedView).
        config[panel] = {"serviceName": service, "requestPayload": json.dumps(request), "layout": "horizontal",
                         "buttonText": label, "buttonColor": colour, "editingMode": False, "advancedView": False}
        buttons.append(panel)
    grid = {"first": {"first": buttons[0], "second": buttons[1], "direction": "row", "splitPercentage": 50},
            "second": {"first": buttons[2], "second": buttons[3], "direction": "row", "splitPercentage": 50},
            "direction": "column", "splitPercentage": 50}
    side = {"first": "Image!sim", "second": {"first": "Teleop!sim", "second": grid, "direction": "column",
                                              "splitPercentage": 40}, "direction": "column", "splitPercentage": 35}
    return {
        "configById": config,
        "globalVariables": {},
        "userNodes": {},
        "playbackConfig": {"speed": 1},
        "layout": {"first": "3D!sim", "second": side, "direction": "row", "splitPercentage": 70},
    }


def world_bounds(world: "World") -> tuple[float, float, float, float]:
    """x, y low and high (m) of the world's loaded walls and its models."""
    points = [np.asarray(layer.world_edges(), dtype=np.float64).reshape(-1, 2) for layer in world.layers]
    points.append(np.array([[model.pose.x, model.pose.y] for model in world.models.values()]).reshape(-1, 2))
    everything = np.concatenate(points)
    if not len(everything):
        return -20.0, -20.0, 20.0, 20.0
    (low_x, low_y), (high_x, high_y) = everything.min(axis=0), everything.max(axis=0)
    return float(low_x), float(low_y), float(high_x), float(high_y)


def world_layout(world: "World") -> dict[str, Any]:
    """The layout for ``world``'s sensors and drives, fitted to its walls and models."""
    lasers, cameras, drives = world_topics(world)
    return layout(lasers, cameras, drives, sensor_topics(world, ODOMETRY), world_bounds(world))


def write_layout(world: "World", path: Path) -> None:
    """Write ``world``'s layout as JSON to ``path``."""
    Path(path).write_text(json.dumps(world_layout(world), indent=2) + "\n")
