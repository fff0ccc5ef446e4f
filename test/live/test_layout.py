"""The Foxglove layout: the shipped file is the one made for the bundled robots, and everything
it names (topics, the Teleop panel's topic, the buttons' services and requests) is what a view
of the world offers and accepts."""

from __future__ import annotations

import json

from sim_server.core import World
from sim_server.live import LiveView
from sim_server.live.layout import world_layout
from test.conftest import REPO_ROOT
from test.live.client import Client, stepping

CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"
SHIPPED = REPO_ROOT / "config" / "foxglove" / "layout.json"


def test_the_shipped_layout_is_the_one_made_for_the_crowd_world() -> None:
    world = World.from_file(CROWD_WORLD)
    try:
        made = world_layout(world)
        walls = world.layers[0].world_edges().reshape(-1, 2)
    finally:
        world.close()
    assert json.loads(SHIPPED.read_text()) == made
    camera = made["configById"]["3D!sim"]["cameraState"]
    centre = (walls.min(axis=0) + walls.max(axis=0)) / 2
    assert camera["targetOffset"][:2] == [round(float(centre[0]), 2), round(float(centre[1]), 2)]  # the world in view
    assert camera["distance"] >= 0.8 * float((walls.max(axis=0) - walls.min(axis=0)).max())


def test_what_the_layout_names_is_offered_and_works() -> None:
    layout = json.loads(SHIPPED.read_text())
    config = layout["configById"]
    world = World.from_file(CROWD_WORLD, step_size=0.005)
    try:
        with LiveView(world, port=0) as view:
            client = Client(view.url)
            loop = stepping(view, world)

            try:
                wanted = set(config["3D!sim"]["topics"]) | {config["Image!sim"]["imageMode"]["imageTopic"]}
                client.until(lambda: wanted <= client.topics(), loop)
                buttons = sorted(key for key in config if key.startswith("CallService!"))
                assert buttons == ["CallService!pause", "CallService!reset_world", "CallService!resume", "CallService!step_world"]
                for panel in ("CallService!pause", "CallService!step_world", "CallService!resume", "CallService!reset_world"):
                    answer = client.call(config[panel]["serviceName"], json.loads(config[panel]["requestPayload"]), loop)
                    assert answer["success"], (panel, answer)
                teleop = config["Teleop!sim"]
                command = next(p.command for p in world.plugins.plugins_of(world.models["cleaner1"]) if getattr(p, "command", None))
                client.publish(client.advertise(teleop["topic"]), {"linear": {"x": teleop["upButton"]["value"]}})
                client.until(lambda: command.linear == teleop["upButton"]["value"], loop)
            finally:
                client.close()
    finally:
        world.close()
    panels = set(config)
    shown = json.dumps(layout["layout"])
    assert all(panel in shown for panel in panels)  # every configured panel is placed
