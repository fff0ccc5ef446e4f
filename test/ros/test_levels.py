"""Levels over ROS: set_performer and the latched ~/levels topic."""

from __future__ import annotations

from geometry_msgs.msg import Pose2D, Vector3

from sim_msgs.msg import Levels
from sim_msgs.srv import MoveModel, SetPerformer
from test.conftest import DATA_DIR
from test.ros.conftest import Harness
from test.ros.test_server_node import LATCHED


def test_performers_and_level_topic(ros_context) -> None:
    harness = Harness(ros_context, DATA_DIR / "levels" / "world.yaml", enable_levels=True, step_size=0.01)
    try:
        levels: list[list[str]] = []
        harness.client.create_subscription(Levels, "/sim_server/levels", lambda m: levels.append(list(m.loaded)), LATCHED)
        harness.run_until(lambda: bool(levels), "the latched level list")
        assert levels[-1] == []
        moved = harness.call(MoveModel, "/move_model", MoveModel.Request(name="R2", pose=Pose2D(x=20.0, y=0.0)))
        assert moved.success
        harness.run_ticks(3)
        assert "M3" not in harness.server.world.models  # R2 is not a performer yet
        made = harness.call(SetPerformer, "/set_performer", SetPerformer.Request(name="R2", size=Vector3()))
        assert made.success and "2 x 2 m" in made.message
        harness.run_until(lambda: levels[-1] == ["L2"], "L2 to load")
        assert "M3" in harness.server.world.models
        for name, fact in (("", "needs the name of a model"), ("ghost", 'model with name "ghost" does not exist'),
                           ("R2", 'model "R2" is already a performer')):
            refused = harness.call(SetPerformer, "/set_performer", SetPerformer.Request(name=name))
            assert not refused.success and fact in refused.message
    finally:
        harness.close()
