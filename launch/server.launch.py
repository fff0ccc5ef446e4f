"""Start the sim_server node on a world file, optionally with RViz.

    ros2 launch sim_server server.launch.py world_path:=/path/to/world.yaml use_rviz:=true

Arguments:
    world_path: Flatland-format world YAML (default: the bundled office demo world).
    update_rate: physics steps per second of wall time, Hz (0 = as fast as possible).
    step_size: sim time per physics step, seconds.
    show_viz: publish debug markers for RViz (true/false).
    viz_pub_rate: model marker refresh rate, Hz.
    use_rviz: also start rviz2 with config/sim.rviz (true/false).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

PACKAGE = "sim_server"

# name -> (default, description); the defaults match the node's own parameter defaults.
ARGUMENTS = {
    "update_rate": ("200.0", "Physics steps per second of wall time, in Hz (0 = as fast as possible)."),
    "step_size": ("0.005", "Sim time advanced by one physics step, in seconds."),
    "show_viz": ("true", "Publish debug MarkerArrays of layers and models for RViz."),
    "viz_pub_rate": ("30.0", "Refresh rate of the model debug markers, in Hz."),
    "use_rviz": ("false", "Start rviz2 with the bundled sim.rviz configuration."),
}


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    default_world = os.path.join(share, "config", "worlds", "demo", "world.yaml")
    declared = [
        DeclareLaunchArgument(
            "world_path", default_value=default_world, description="Path of the Flatland-format world YAML file."
        )
    ]
    declared += [
        DeclareLaunchArgument(name, default_value=default, description=description)
        for name, (default, description) in ARGUMENTS.items()
    ]
    server = Node(
        package=PACKAGE,
        executable="sim_server",
        name="sim_server",
        output="screen",
        parameters=[
            {
                "world_path": LaunchConfiguration("world_path"),
                "update_rate": ParameterValue(LaunchConfiguration("update_rate"), value_type=float),
                "step_size": ParameterValue(LaunchConfiguration("step_size"), value_type=float),
                "show_viz": ParameterValue(LaunchConfiguration("show_viz"), value_type=bool),
                "viz_pub_rate": ParameterValue(LaunchConfiguration("viz_pub_rate"), value_type=float),
            }
        ],
    )
    rviz = Node(
        package="rviz2",
        executable="rviz2",
        name="rviz",
        arguments=["-d", os.path.join(share, "config", "sim.rviz")],
        parameters=[{"use_sim_time": True}],
        condition=IfCondition(LaunchConfiguration("use_rviz")),
        output="screen",
    )
    return LaunchDescription(declared + [server, rviz])
