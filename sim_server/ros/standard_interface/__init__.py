"""The ROS 2 standard simulation interface (simulation_interfaces) beside the Flatland services.

:mod:`.simulation_state` holds the states and their transitions (no rclpy); :mod:`.services`
offers the services on the server node, through the same operations as the Flatland ones.
"""
