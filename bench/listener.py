"""A separate process that subscribes to topics and discards the messages, as RViz or a
navigation stack would listen, so that benchmarks publish as in normal runs.

    python -m bench.listener /clock rosgraph_msgs/msg/Clock /scan sensor_msgs/msg/LaserScan
"""

from __future__ import annotations

import importlib
import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.qos import qos_profile_sensor_data


def message_type(name: str):
    package, _, type_name = name.split("/")
    return getattr(importlib.import_module(f"{package}.msg"), type_name)


def main(argv: list[str]) -> int:
    rclpy.init()
    node = rclpy.create_node("bench_listener")
    counts = {}
    for topic, type_name in zip(argv[0::2], argv[1::2]):
        counts[topic] = 0
        node.create_subscription(
            message_type(type_name), topic, lambda _m, t=topic: counts.__setitem__(t, counts[t] + 1), qos_profile_sensor_data
        )
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    print(" ".join(f"{topic}={count}" for topic, count in counts.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
