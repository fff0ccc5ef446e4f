"""State datapacks over ROS: model, link and joint states published and read or set on demand.

Topics (at ``state_pub_rate`` Hz of sim time, 0 = off): ``~/model_states`` and ``~/link_states``
(sim_msgs/EntityStates: every model, every body as ``model::body``) and ``~/joint_states``
(sensor_msgs/JointState: every revolute joint as ``model::joint``). Services (relative to the
node's namespace, so ``/get_model_state`` by default): ``get_model_state``, ``set_model_state``
(pose and twist, as Gazebo's set_entity_state), ``set_joint_motor`` (a revolute joint's motor
speed and torque limit) and ``get_camera_datapack`` (a camera's picture: width, height, depth,
bytes). Unknown names and non-finite values answer success false.
"""

from __future__ import annotations

import math
from typing import Iterable

from rclpy.node import Node
from sensor_msgs.msg import JointState as JointStateMsg

from sim_msgs.msg import CameraDatapack, EntityState, EntityStates
from sim_msgs.srv import GetCameraDatapack, GetModelState, SetJointMotor, SetModelState
from sim_server.core.errors import RequestError
from sim_server.core.geometry import Pose2D
from sim_server.core.plugins.api import UpdateTimer
from sim_server.core.state import BodyState, ImageDatapack, JointState, camera_datapack, joint_states, link_states, model_state
from sim_server.core.timing.timekeeper import TimeKeeper
from sim_server.core.world import World
from sim_server.ros.conversions import time_msg
from sim_server.ros.services import answer
from sim_server.ros.world_user import WorldUser

#: Frame of the world in the datapacks.
WORLD_FRAME = "map"


def entity_state_msg(state: BodyState) -> EntityState:
    """A sim_msgs/EntityState of a planar body state."""
    half = 0.5 * state.theta
    return EntityState(
        name=state.name,
        position=[state.x, state.y, 0.0],
        orientation=[0.0, 0.0, math.sin(half), math.cos(half)],
        linear_velocity=[state.vx, state.vy, 0.0],
        angular_velocity=[0.0, 0.0, state.wz],
    )


def joint_state_msg(states: Iterable[JointState], stamp_ns: int) -> JointStateMsg:
    """A sensor_msgs/JointState of revolute joint states."""
    states = list(states)
    message = JointStateMsg()
    message.header.stamp = time_msg(stamp_ns)
    message.name = [s.name for s in states]
    message.position = [s.position for s in states]
    message.velocity = [s.velocity for s in states]
    message.effort = [s.effort for s in states]
    return message


def camera_datapack_msg(pack: ImageDatapack) -> CameraDatapack:
    """A sim_msgs/CameraDatapack of a camera's datapack."""
    message = CameraDatapack(name=pack.name, width=pack.width, height=pack.height, depth=pack.depth)
    message.header.stamp, message.header.frame_id = time_msg(pack.time_ns), pack.frame
    message.data = pack.data
    return message


def yaw_of(orientation) -> float:
    """The yaw (rad) of a finite, nonzero [x, y, z, w] quaternion of any length (scaled by its
    largest component first, so no square overflows)."""
    x, y, z, w = (float(v) for v in orientation)
    scale = max(abs(x), abs(y), abs(z), abs(w))
    x, y, z, w = x / scale, y / scale, z / scale, w / scale
    return math.atan2(2.0 * (w * z + x * y), w * w + x * x - y * y - z * z)


class StateDatapacks(WorldUser):
    """Publishes the state datapacks and serves the state services.

    Args:
        node: the server node.
        world: its world.
        rate: publishing rate in Hz of sim time (0: no topics, services only).
    """

    def __init__(self, node: Node, world: World, rate: float) -> None:
        self._node = node
        self._world = world
        self._services = [
            node.create_service(GetModelState, "get_model_state", self._get_model_state),
            node.create_service(SetModelState, "set_model_state", self._set_model_state),
            node.create_service(SetJointMotor, "set_joint_motor", self._set_joint_motor),
            node.create_service(GetCameraDatapack, "get_camera_datapack", self._get_camera_datapack),
        ]
        self._publishers = None
        if rate > 0.0:
            self._timer = UpdateTimer(rate)
            self._publishers = (
                node.create_publisher(EntityStates, "~/model_states", 10),
                node.create_publisher(EntityStates, "~/link_states", 10),
                node.create_publisher(JointStateMsg, "~/joint_states", 10),
            )
            world.after_step_hooks.append(self.publish)

    def use_world(self, world: World, loaded: bool = True) -> None:
        """Publish the datapacks of ``world`` from now on."""
        super().use_world(world, loaded)
        if self._publishers is not None:
            world.after_step_hooks.append(self.publish)

    def publish(self, time: TimeKeeper) -> None:
        """Publish every datapack (an after-step hook, at the configured rate)."""
        if self._publishers is None or not self._timer.check(time):
            return
        model_publisher, link_publisher, joint_publisher = self._publishers
        models = list(self._world.models.values())
        stamp = time_msg(time.time_ns)
        if model_publisher.get_subscription_count():
            message = EntityStates(states=[entity_state_msg(model_state(m)) for m in models])
            message.header.stamp, message.header.frame_id = stamp, WORLD_FRAME
            model_publisher.publish(message)
        if link_publisher.get_subscription_count():
            message = EntityStates(states=[entity_state_msg(s) for m in models for s in link_states(m)])
            message.header.stamp, message.header.frame_id = stamp, WORLD_FRAME
            link_publisher.publish(message)
        if joint_publisher.get_subscription_count():
            step = time.step_size
            joint_publisher.publish(joint_state_msg((s for m in models for s in joint_states(m, step)), time.time_ns))

    def _get_model_state(self, request: GetModelState.Request, response: GetModelState.Response) -> GetModelState.Response:
        def get() -> str:
            model = self._world.model(request.name)
            response.state = entity_state_msg(model_state(model))
            response.links = [entity_state_msg(s) for s in link_states(model)]
            response.joints = joint_state_msg(joint_states(model, self._world.time.step_size), self._world.time.time_ns)
            return f'state of model "{model.name}" at sim time {self._world.time.sim_time:.9f} s'

        return answer(response, get, f'get_model_state "{request.name}"')

    def _get_camera_datapack(
        self, request: GetCameraDatapack.Request, response: GetCameraDatapack.Response
    ) -> GetCameraDatapack.Response:
        def get() -> str:
            pack = camera_datapack(self._world, request.name)
            response.datapack = camera_datapack_msg(pack)
            return f'picture of camera "{pack.name}" at sim time {pack.time_ns / 1e9:.9f} s'

        return answer(response, get, f'get_camera_datapack "{request.name}"')

    def _set_model_state(self, request: SetModelState.Request, response: SetModelState.Response) -> SetModelState.Response:
        def set_state() -> str:
            state = request.state
            values = list(state.position) + list(state.orientation) + list(state.linear_velocity) + list(state.angular_velocity)
            if not all(math.isfinite(v) for v in values):
                raise RequestError("state must be finite")
            if all(v == 0.0 for v in state.orientation):
                raise RequestError("orientation must be a unit quaternion, got [0, 0, 0, 0]")
            pose = Pose2D(float(state.position[0]), float(state.position[1]), yaw_of(state.orientation))
            self._world.set_model_state(
                state.name, pose, float(state.linear_velocity[0]), float(state.linear_velocity[1]),
                float(state.angular_velocity[2]),
            )
            return f'set the state of model "{state.name}"'

        return answer(response, set_state, f'set_model_state "{request.state.name}"')

    def _set_joint_motor(self, request: SetJointMotor.Request, response: SetJointMotor.Response) -> SetJointMotor.Response:
        def set_motor() -> str:
            self._world.set_joint_motor(request.model, request.joint, request.enable, request.speed, request.max_torque)
            return f'motor of joint "{request.joint}" of model "{request.model}" ' + ("on" if request.enable else "off")

        return answer(response, set_motor, f'set_joint_motor "{request.model}::{request.joint}"')
