"""The ROS 2 layer of the simulator: node, parameters, services, clock and debug markers."""
