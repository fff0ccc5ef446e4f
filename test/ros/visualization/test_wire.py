"""The wire format: markers joined from their bytes deserialize to the markers."""

from __future__ import annotations

import random

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from visualization_msgs.msg import Marker, MarkerArray

from sim_server.ros.visualization.wire import Wire, wire


def test_joined_marker_bytes_deserialize_to_the_markers() -> None:
    Wire().self_check()
    codec = wire()
    rng = random.Random(5)
    for _ in range(30):
        made, expected = [], []
        for index in range(rng.randint(0, 6)):
            frame = "".join(rng.choice("ab_ü") for _ in range(rng.randint(0, 9)))
            namespace = "".join(rng.choice("xy/地") for _ in range(rng.randint(0, 9)))
            marker = Marker(ns=namespace, id=index, type=rng.choice([Marker.CYLINDER, Marker.LINE_STRIP, Marker.LINE_LIST]))
            marker.header.frame_id = frame
            marker.header.stamp.sec, marker.header.stamp.nanosec = rng.randint(0, 99), rng.randint(0, 999)
            marker.frame_locked = rng.random() < 0.5
            marker.scale.x = rng.choice([0.05, 0.1, 0.25])
            marker.color.r, marker.color.a = 0.5, 1.0
            marker.pose.position.x, marker.pose.orientation.w = rng.uniform(-5, 5), 1.0
            points = np.array([[rng.uniform(-9, 9), rng.uniform(-9, 9), 0.0] for _ in range(rng.choice([2, 4, 5]))])
            copy = deserialize_message(serialize_message(marker), Marker)
            copy.points = [type(copy.pose.position)(x=p[0], y=p[1], z=p[2]) for p in points]
            expected.append(copy)
            made.append(codec.marker(marker, points=points))
        joined = codec.message(made)
        assert deserialize_message(joined, MarkerArray) == MarkerArray(markers=expected)
