"""Every topic key of every bundled plugin, in each form ``get_topic`` accepts (relative,
absolute, private ``~/``), in a model's namespace, becomes the topic rclpy makes of it: relative
ones in the namespace, absolute ones as they are, private ones the server node's own (not
``ns/~/x``); and a topic ROS refuses never reaches rclpy (one line naming the key instead of
rclpy's exception)."""

from __future__ import annotations

from pathlib import Path

import pytest
import rclpy
from rclpy.validate_full_topic_name import validate_full_topic_name

from sim_server.core import World
from sim_server.core.errors import ConfigError
from test.sim_plugins.plugin_keys import ENTRY_POINTS, MINIMAL, MODEL_NAME, NAMESPACE, model_text, reads_of, write_world

NODE_NAME = "sim_server"
#: Topics of the node itself and of its TF broadcaster, which no plugin key names.
NODE_TOPICS = {"/parameter_events", "/rosout", "/tf", "/tf_static"}
#: Each form a topic key is given in, and the full name rclpy must make of it (``{key}``: the key).
FORMS = {
    "relative": ("rel/{key}", f"/{NAMESPACE}/rel/{{key}}"),
    "absolute": ("/abs/{key}", "/abs/{key}"),
    "private": ("~/priv/{key}", f"/{NODE_NAME}/priv/{{key}}"),
}


def _topic_keys(plugin_type: str, folder: Path) -> list[str]:
    """The topic keys ``plugin_type`` reads at its entry's top level."""
    return [read.key for read in reads_of(plugin_type, folder) if read.method == "get_topic" and len(read.path) == 1]


def _node_topics(node) -> set[str]:
    """The topics the plugins made on ``node``."""
    return {endpoint.topic_name for endpoint in (*node.publishers, *node.subscriptions)} - NODE_TOPICS


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("plugin_type", sorted(ENTRY_POINTS))
def test_topics_are_the_ones_rclpy_makes(ros_context, tmp_path: Path, plugin_type: str, form: str) -> None:
    """(A plugin with no topic key makes no topic.)"""
    keys = _topic_keys(plugin_type, tmp_path)
    given, expected = FORMS[form]
    config = {**MINIMAL[plugin_type], **{key: given.format(key=key) for key in keys}}
    (tmp_path / "case.model.yaml").write_text(model_text(plugin_type, config))
    node = rclpy.create_node(NODE_NAME, context=ros_context)
    world = World.from_file(write_world(tmp_path), ros_node=node)
    try:
        world.spawn_model("case.model.yaml", MODEL_NAME, NAMESPACE)
        made = _node_topics(node)
        for topic in made:
            validate_full_topic_name(topic)
        wanted = {expected.format(key=key) for key in keys}
        # (a topic only made where its package is installed, ackermann_msgs', may be missing)
        assert bool(made) == bool(keys) and made <= wanted and "~" not in "".join(made), (made, wanted)
    finally:
        world.close()
        node.destroy_node()


@pytest.mark.parametrize("plugin_type", sorted(ENTRY_POINTS))
def test_a_topic_ros_refuses_is_one_line_naming_the_key_not_rclpy_s_exception(
    ros_context, tmp_path: Path, plugin_type: str
) -> None:
    """(A plugin with no topic key takes no topic key.)"""
    keys = _topic_keys(plugin_type, tmp_path)
    node = rclpy.create_node(NODE_NAME, context=ros_context)
    world = World.from_file(write_world(tmp_path), ros_node=node)
    try:
        for key in keys or ["topic"]:
            for bad in ("a b", "x//y", "~x", "9lives"):
                (tmp_path / "case.model.yaml").write_text(model_text(plugin_type, {**MINIMAL[plugin_type], key: bad}))
                with pytest.raises(ConfigError) as raised:
                    world.spawn_model("case.model.yaml", MODEL_NAME, NAMESPACE)
                message = str(raised.value)
                assert f'"{key}"' in message and "failed to initialise" not in message and "\n" not in message
                assert keys or "unrecognized key" in message
        assert not _node_topics(node)
    finally:
        world.close()
        node.destroy_node()
