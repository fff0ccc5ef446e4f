"""Camera: a bird's-eye picture of the world around a body, published as sensor_msgs/Image (rgb8).

The picture is the renderer's (:mod:`sim_server.rendering`): walls in their layer's colour, bodies
in theirs, on dark grey; it needs no display and no GPU. It shows a rectangle of the world
``field`` metres wide and high, centred at ``origin`` on the body, at ``pixels``. By default it
turns with the body: the origin's x axis (the body's heading at yaw 0) points up in the image,
so the robot drives "up". With ``north_up: true`` the image keeps the world's axes (east right,
north up) and only its centre follows the body.

Parameters: ``body`` (required), ``topic`` (``image_raw``), ``frame`` (the plugin's name),
``update_rate`` (Hz, 10), ``field`` ([width, height] in m, [10, 10]), ``pixels`` ([width,
height], [128, 128], each within :data:`~sim_server.core.limits.CAMERA_PIXELS`), ``origin``
([x, y, yaw] on the body, [0, 0, 0]; yaw must be 0 with ``north_up``), ``north_up`` (false), ``broadcast_tf`` (true: the
camera's frame on /tf_static, or on /tf with each picture when north-up), ``always_publish``
(false: a picture only while somebody subscribes; in-process, without ROS, always).

The camera's frame is an optical frame looking down: its origin is the centre of the picture,
x to the picture's right, y down the picture, z into the ground. There is no CameraInfo: the
picture is an orthographic projection, which the pinhole model cannot describe; a pixel is
``field / pixels`` metres.

In-process: :attr:`Camera.last_image` (the last picture taken at the rate, an (height, width, 3)
uint8 array) and :meth:`Camera.datapack` (the picture now: width, height, depth in bytes per
pixel, data).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from sim_server.core.plugins import (
    ImageDatapack, ModelPlugin, Pose2D, TimeKeeper, UpdateTimer, YamlReader, limits as bounds,
)
from sim_server.core.plugins.capabilities import CAMERA_DISPLAY, Advertised, Picture, SensorMount, configured_string
from sim_server.core.plugins.services import (
    MIN_VIEW_SIZE, SCOPE, Renderer, View, prepare_pictures,
)
from sim_plugins.common import body_of, sensor_parent_frame

DEFAULT_CAMERA_RATE = 10.0
DEFAULT_FIELD = (10.0, 10.0)
DEFAULT_PIXELS = (128, 128)
#: Bytes per pixel of the pictures (rgb8).
DEPTH = 3
IMAGE_QUEUE_DEPTH = 5
#: Where pictures go unless ``topic`` says otherwise (in the model's namespace).
DEFAULT_TOPIC = "image_raw"


class Camera(ModelPlugin):
    """Renders the view around its body at ``update_rate`` and publishes it. Offers
    :class:`~sim_server.core.plugins.capabilities.ImageSource` and ``DemandDriven``."""

    @classmethod
    def advertised(cls, config: Mapping[str, Any]) -> list[Advertised]:
        """Its pictures' topic (``topic``)."""
        return [Advertised(CAMERA_DISPLAY, configured_string(config, "topic", DEFAULT_TOPIC))]

    @classmethod
    def prepare(cls) -> None:
        """The compiled rasterizer, ready before the first picture (levels bring cameras in steps)."""
        prepare_pictures()

    def on_initialize(self, config: YamlReader) -> None:
        body_name = config.get_name("body")
        topic = config.get_topic("topic", DEFAULT_TOPIC)
        frame = config.get_frame("frame", self.context.name)
        self.broadcast_tf = config.get_bool("broadcast_tf", True)
        self.always_publish = config.get_bool("always_publish", False)
        self.timer = UpdateTimer(config.get_rate("update_rate", DEFAULT_CAMERA_RATE))
        self.field = config.get_floats("field", 2, DEFAULT_FIELD, within=bounds.LENGTH)
        if min(self.field) < MIN_VIEW_SIZE:
            raise config.error(f"sides must be at least {MIN_VIEW_SIZE:g} m, got {list(self.field)}", "field")
        width, height = config.get_ints("pixels", 2, DEFAULT_PIXELS, within=bounds.CAMERA_PIXELS)
        self.pixels = (width, height)
        self.origin = config.get_pose("origin", Pose2D())
        self.north_up = config.get_bool("north_up", False)
        if self.north_up and self.origin.theta != 0.0:
            raise config.error(
                f"a north-up camera keeps the world's axes, so its origin's yaw must be 0, got {self.origin.theta:g}",
                "origin",
            )
        self.body = body_of(self.model, config, body_name)
        self.frame_id = self.context.frame(frame)
        self.body_frame_id = sensor_parent_frame(self.context, config, body_name, self.frame_id, self.broadcast_tf)
        self.renderer = Renderer(self.context.world)
        #: The last picture, (height, width, 3) uint8 (rows top to bottom), or None before the first.
        self.last_image: np.ndarray | None = None
        #: Sim time (ns) of the last picture.
        self.last_time_ns: int | None = None
        #: The topic of the pictures (in the model's namespace).
        self.topic_name = self.image_topic = self.context.topic(topic)
        #: Whether a consumer outside ROS (a live view) wants the pictures, whoever else listens.
        self.demanded = False
        self._publisher = None
        self._tf = None
        node = self.context.ros_node
        if node is not None:
            self._setup_ros(node)

    def _setup_ros(self, node) -> None:
        from sensor_msgs.msg import Image

        from sim_server.ros.plugin_support import SubscriberCheck, broadcaster_for, set_stamp, transform

        self._set_stamp = set_stamp
        self._publisher = node.create_publisher(Image, self.topic_name, IMAGE_QUEUE_DEPTH)
        self._listened = SubscriberCheck(self._publisher)
        message = Image()
        message.header.frame_id = self.frame_id
        message.width, message.height = self.pixels
        message.encoding = "rgb8"
        message.is_bigendian = 0
        message.step = DEPTH * self.pixels[0]
        self._message = message
        if self.broadcast_tf:
            self._tf = broadcaster_for(node)
            self._frame_tf = transform(self.body_frame_id, self.frame_id, self.frame_pose(), self.context.world.time.time_ns)
            _look_down(self._frame_tf, self.frame_pose().theta)
            if self.north_up:
                self._tf.claim(self.frame_id, self.body_frame_id, self.context.describe())
            else:
                self._tf.send_static([self._frame_tf], owner=self.context.describe())

    def view(self) -> View:
        """The part of the world the camera sees now."""
        body = self.body.pose
        centre = body.compose(self.origin)
        yaw = 0.0 if self.north_up else centre.theta - 0.5 * math.pi
        width, height = self.field
        return View(centre.x, centre.y, width, height, self.pixels[0], self.pixels[1], yaw)

    def picture(self) -> np.ndarray:
        """Render the view now (does not change :attr:`last_image`)."""
        return self.renderer.render(self.view())

    def datapack(self) -> ImageDatapack:
        """The camera's datapack: its picture of the world now, at the current sim time (taken
        for the asking: a world that is paused may have been changed since the last step)."""
        image = self.picture()
        height, width = image.shape[:2]
        name = f"{self.model.name}{SCOPE}{self.context.name}"
        return ImageDatapack(name, self.frame_id, self.context.world.time.time_ns, width, height, DEPTH, image.tobytes())

    @property
    def latest_picture(self) -> Picture | None:
        """The last picture taken at the rate, or None before the first."""
        if self.last_image is None or self.last_time_ns is None:
            return None
        return Picture(self.last_time_ns, self.last_image)

    @property
    def image_mount(self) -> SensorMount:
        """The camera's frame on its body now (see :meth:`frame_pose`), looking down."""
        return SensorMount(self.frame_id, self.body_frame_id, self.frame_pose(), flipped=True)

    def _wanted(self) -> bool:
        return self._publisher is None or self.always_publish or self.demanded or self._listened()

    def after_physics_step(self, time: TimeKeeper) -> None:
        if not self.timer.check(time) or not self._wanted():
            return
        image = self.last_image = self.picture()
        self.last_time_ns = time.time_ns
        if self._publisher is None:
            return
        message = self._message
        self._set_stamp(message.header, time.time_ns)
        message.data = image.tobytes()
        self._publisher.publish(message)
        if self.north_up and self._tf is not None:
            pose = self.frame_pose()
            update = self._frame_tf
            self._set_stamp(update.header, time.time_ns)
            update.transform.translation.x, update.transform.translation.y = pose.x, pose.y
            _look_down(update, pose.theta)
            self._tf.send([update])

    def frame_pose(self) -> Pose2D:
        """Where the camera's frame is on the body now (m, rad): at the origin, its x axis the
        picture's right, z into the ground (rolled over by pi)."""
        if self.north_up:  # the world's axes: turned back by the body's heading
            return Pose2D(self.origin.x, self.origin.y, -self.body.pose.theta)
        return Pose2D(self.origin.x, self.origin.y, self.origin.theta - 0.5 * math.pi)

    def on_shutdown(self) -> None:
        node = self.context.ros_node
        if node is None or self._publisher is None:
            return
        node.destroy_publisher(self._publisher)
        self._publisher = None
        if self._tf is not None:
            if self.north_up:
                self._tf.release(self.context.describe())
            else:
                self._tf.remove_static([self.frame_id], owner=self.context.describe())


def _look_down(tf, yaw: float) -> None:
    """Set ``tf``'s rotation to ``yaw`` about z, then a half turn about x (z into the ground)."""
    half = 0.5 * yaw
    rotation = tf.transform.rotation
    rotation.x, rotation.y, rotation.z, rotation.w = math.cos(half), math.sin(half), 0.0, 0.0

