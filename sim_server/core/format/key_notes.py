"""What the key reference needs that the reading code cannot say: one line of meaning per key,
units where no range names one, the type of a value read raw, defaults computed from other keys,
and which keys are ours rather than Flatland's.

Everything else (type, range, default, required or not) comes from the reads themselves
(:mod:`~sim_server.core.format.key_catalog`). A note is named, most particular first, by the
key's scope and path (``world:layers[].streaming.tile_size``), by the module that reads it and
its path or last key (``sim_plugins.odometry:pub_rate``, shared by every drive), or for a
plugin key by ``plugin:KEY`` (``plugin:body``). The crowd models' parameters are described by
their dataclasses' docstrings and defaults (:func:`parameter_notes`), so they are never written
twice. A key the readers read without a note, or a note of no key, fails
test/core/format/test_key_catalog.py and the docs build.
"""

from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, fields

from sim_server.core.format import crowd_file
from sim_server.core.format.model_file import BODY_TYPES, FOOTPRINT_TYPES, JOINT_TYPES


@dataclass(frozen=True)
class Note:
    """What the reference says of a key beyond its reads.

    Attributes:
        meaning: one line: what the key does.
        unit: the unit, where the range read with names none (``m``, ``rad``, ``Hz`` ...).
        type: the value's type, where the key is read raw (a point or a region's name ...).
        default: the default in words, where the code computes it (from another key, the
            plugin's name ...) or does not read one (an absent key changes what happens).
        choices: the words accepted, where the code checks them after reading a string.
        ours: a key of ours, which Flatland (the reference) does not read.
    """

    meaning: str
    unit: str = ""
    type: str = ""
    default: str = ""
    choices: tuple[str, ...] = ()
    ours: bool = False


#: Scopes and paths whose keys are all ours (Flatland does not read them).
OURS_PREFIXES = (
    "world:description", "world:tags", "world:levels", "world:performers", "world:named_poses",
    "world:pedestrians", "world:layers[].streaming", "plugin AckermannDrive:", "plugin OmniDrive:",
    "plugin Camera:", "plugin Range:",
)


def ours(scope: str, dotted: str, note: Note | None) -> bool:
    """Whether the key ``dotted`` of ``scope`` is ours (:data:`OURS_PREFIXES` or its note)."""
    name = f"{scope}:{dotted}"
    return (note is not None and note.ours) or any(name.startswith(prefix) for prefix in OURS_PREFIXES)


_DYNAMICS = "{acceleration_limit, deceleration_limit, velocity_limit} of the"
_NOISE_VARIANCE = "variances of the white noise added to the"

NOTES: dict[str, Note] = {
    # ------------------------------------------------------------------ world file
    "world:properties": Note("the physics solver's settings"),
    "world:properties.velocity_iterations": Note("Box2D velocity iterations per step"),
    "world:properties.position_iterations": Note("Box2D position iterations per step"),
    "world:layers": Note("the static layers: walls that models collide with and sensors see"),
    "world:layers[].name": Note("the layer's name, or several names sharing one static body (Flatland's multi-layer)"),
    "world:layers[].map": Note("the map file of its walls (image or line segments); none: an empty layer",
                               default="none: no walls"),
    "world:layers[].color": Note("RGBA colour of its walls, each 0 to 1, in pictures and views"),
    "world:layers[].streaming": Note("cut the layer's walls into tiles that load near performers, as levels do",
                                     default="none: all walls always loaded"),
    "world:layers[].streaming.tile_size": Note("side of a square tile"),
    "world:layers[].streaming.buffer": Note("distance around a tile within which a performer loads it"),
    "world:models": Note("the models placed when the world loads"),
    "world:models[].name": Note("the model's unique name"),
    "world:models[].namespace": Note("the ROS namespace of its topics and frames"),
    "world:models[].model": Note("its model file"),
    "world:models[].pose": Note("where it is placed, in the world frame"),
    "world:plugins": Note("the world plugins (package entry points of group sim_server.world_plugins)"),
    "world:plugins[].name": Note("the plugin's unique name"),
    "world:plugins[].type": Note("the plugin's type: an entry point name"),
    "world:plugins[].*": Note("the plugin's own keys, read by the plugin", type="any key the plugin reads"),
    "world:levels": Note("boxes of the world whose models and layers load only near a performer"),
    "world:levels[].name": Note("the level's unique name"),
    "world:levels[].pose": Note("centre of the level's box"),
    "world:levels[].size": Note("width and height of the box"),
    "world:levels[].buffer": Note("the box grows by this on every side when deciding what is near"),
    "world:levels[].refs": Note("names of the models and layers that belong to the level"),
    "world:performers": Note("models whose box loads the levels it touches"),
    "world:performers[].name": Note("the performer's unique name"),
    "world:performers[].ref": Note("the model that performs"),
    "world:performers[].size": Note("width and height of the box around its first body"),
    "world:named_poses": Note("places worth naming: to spawn at, park, head for"),
    "world:named_poses[].name": Note("the pose's unique name"),
    "world:named_poses[].pose": Note("where it is, in the world frame"),
    "world:named_poses[].description": Note("what it is, for people"),
    "world:named_poses[].tags": Note("what it is for (spawn, parking, a kind of robot ...)"),
    "world:named_poses[].radius": Note("free space around it", default="none: not given"),
    "world:description": Note("what the world is, for people (the standard interface's world resource)"),
    "world:tags": Note("words that describe the world (the standard interface's world resource)"),
    # ------------------------------------------------------------------ crowds
    "world:pedestrians": Note("the crowds: people walking the world"),
    "world:pedestrians[].name": Note("the crowd's unique name; its people are NAME_0, NAME_1 ..."),
    "world:pedestrians[].model": Note("the crowd model that moves them", choices=tuple(crowd_file.MODELS)),
    "world:pedestrians[].parameters": Note("the crowd model's parameters by name (below)"),
    "world:pedestrians[].radius": Note("radius of each person's body"),
    "world:pedestrians[].speed": Note("preferred walking speed: one, or a range [low, high] drawn from per person"),
    "world:pedestrians[].update_rate": Note("rate of the crowd model; 0: every physics step"),
    "world:pedestrians[].layers": Note("the layers whose walls people avoid and whose sensors see them",
                                       default="every layer"),
    "world:pedestrians[].seed": Note("the crowd's random seed", default="drawn from the world's seed"),
    "world:pedestrians[].robot_visible": Note("false: people ignore robots when deciding (they still collide)"),
    "world:pedestrians[].regions": Note("named boxes in which starts and goals are drawn"),
    "world:pedestrians[].regions.*": Note("a region: its name, the key, and its box [x_min, y_min, x_max, y_max]"),
    "world:pedestrians[].goals_per_region": Note("candidate goals drawn in each region"),
    "world:pedestrians[].navigation_cell": Note("side of a cell of the walking grid that routes people round walls"),
    "world:pedestrians[].agents": Note("people placed when the world loads"),
    "world:pedestrians[].agents[].count": Note("how many people this entry places"),
    "world:pedestrians[].agents[].start": Note("where they start: a point, or a region (free places drawn in it)",
                                               type="point [x, y] or region name", unit="m"),
    "world:pedestrians[].agents[].goals": Note("a region in which their goals are drawn at random (not with waypoints)",
                                               default="none: waypoints, or stand"),
    "world:pedestrians[].agents[].loop": Note("after the last waypoint, the first again (else they stand there)"),
    "world:pedestrians[].agents[].wait": Note("time spent at each goal: one, or a range [low, high] drawn from",
                                              default="0"),
    "world:pedestrians[].agents[].group": Note("the entry's people walk together as a group"),
    "world:pedestrians[].agents[].speed": Note("their preferred walking speed (one, or a range)", default="the crowd's speed"),
    "world:pedestrians[].agents[].waypoints": Note("points visited in order (not with goals)",
                                                   type="list of points [x, y]", unit="m", default="none"),
    "world:pedestrians[].spawners": Note("doors where people arrive while the world runs"),
    "world:pedestrians[].spawners[].at": Note("where they appear: a point, or a region",
                                              type="point [x, y] or region name", unit="m"),
    "world:pedestrians[].spawners[].rate": Note("arrivals a second, the mean of a seeded Poisson process"),
    "world:pedestrians[].spawners[].limit": Note("most of this spawner's people in the world at once"),
    "world:pedestrians[].spawners[].total": Note("most arrivals ever", default="no end"),
    "world:pedestrians[].spawners[].size": Note("people per arrival, walking together"),
    "world:pedestrians[].spawners[].waypoints": Note("points visited in order; a spawned person leaves the world at the last",
                                                     type="list of points [x, y]", unit="m", default="none"),
    "world:pedestrians[].spawners[].goals": Note("a region in which their goals are drawn (not with waypoints)",
                                                 default="none"),
    "world:pedestrians[].spawners[].loop": Note("after the last waypoint, the first again (else they leave)"),
    "world:pedestrians[].spawners[].wait": Note("time spent at each goal: one, or a range", default="0"),
    "world:pedestrians[].spawners[].speed": Note("their preferred walking speed (one, or a range)",
                                                 default="the crowd's speed"),
    "world:pedestrians[].pedsim_scenario": Note("a pedsim_ros scenario file (XML): its walls, stops, queues, attractions and people",
                                                default="none"),
    "world:pedestrians[].pedsim_walls": Note("the scenario's walls also a layer NAME_walls that robots and sensors see"),
    "world:pedestrians[].pedsim_robot": Note("a named pose made where the scenario's robot agent (type 2) starts",
                                             default="none: the robot agent is ignored"),
    # ------------------------------------------------------------------ map file
    "map:type": Note("`line_segments` for a line-segment map; absent for an image map",
                     choices=("line_segments",), default='absent: image map'),
    "map:image": Note("the occupancy image (PNG, PGM ...)"),
    "map:resolution": Note("size of a pixel"),
    "map:origin": Note("pose of the map's frame (its lower-left corner) in the world"),
    "map:occupied_thresh": Note("pixels darker than this (0 to 1, 1 = white) are walls"),
    "map:negate": Note("map_server's; accepted and ignored, as in Flatland"),
    "map:free_thresh": Note("map_server's; accepted and ignored, as in Flatland"),
    "map:mode": Note("map_server's; accepted and ignored"),
    "map:data": Note("the text file of segments, one `x1 y1 x2 y2` per line"),
    "map:scale": Note("the data's coordinates are multiplied by it (to m)"),
    # ------------------------------------------------------------------ model file
    "model:bodies": Note("the model's rigid bodies (at least one)"),
    "model:bodies[].name": Note("the body's name, unique in the model"),
    "model:bodies[].type": Note("how it moves: Box2D's body type", choices=BODY_TYPES),
    "model:bodies[].pose": Note("its pose relative to the model's"),
    "model:bodies[].color": Note("RGBA colour, each 0 to 1, in pictures and views"),
    "model:bodies[].linear_damping": Note("Box2D's damping of its linear velocity"),
    "model:bodies[].angular_damping": Note("Box2D's damping of its angular velocity"),
    "model:bodies[].footprints": Note("the body's fixtures"),
    "model:bodies[].footprints[].type": Note("the fixture's shape", choices=FOOTPRINT_TYPES),
    "model:bodies[].footprints[].center": Note("the circle's centre in the body frame"),
    "model:bodies[].footprints[].radius": Note("the circle's radius"),
    "model:bodies[].footprints[].points": Note("the polygon's vertices in the body frame (made counter-clockwise)"),
    "model:bodies[].footprints[].density": Note("mass per area; 0 on every fixture gives the body Box2D's 1 kg"),
    "model:bodies[].footprints[].friction": Note("Coulomb friction coefficient"),
    "model:bodies[].footprints[].restitution": Note("bounciness"),
    "model:bodies[].footprints[].sensor": Note("true: detects contacts without a collision response"),
    "model:bodies[].footprints[].layers": Note("the layers it collides with; `all`: every layer"),
    "model:bodies[].footprints[].collision": Note("false: collides with nothing"),
    "model:joints": Note("joints between two bodies of the model"),
    "model:joints[].name": Note("the joint's name, unique in the model"),
    "model:joints[].type": Note("the kind of joint", choices=JOINT_TYPES),
    "model:joints[].bodies": Note("the two bodies it joins (exactly two)"),
    "model:joints[].bodies[].name": Note("a body of the model"),
    "model:joints[].bodies[].anchor": Note("where the joint holds, in that body's frame"),
    "model:joints[].collide_connected": Note("whether the two bodies collide with each other"),
    "model:joints[].color": Note("RGBA colour, each 0 to 1, in views"),
    "model:joints[].limits": Note("[lower, upper] angle limits", default="none: turns freely"),
    "model:joints[].angle": Note("the weld's reference angle"),
    "model:joints[].frequency": Note("the weld's spring frequency; 0: rigid"),
    "model:joints[].damping": Note("the weld spring's damping ratio", unit="none (a ratio)"),
    "model:plugins": Note("the model's plugins (below, by type)"),
    "model:plugins[].name": Note("the plugin's name, unique in the model"),
    "model:plugins[].type": Note("the plugin's type: an entry point of group sim_server.model_plugins"),
    "model:plugins[].*": Note("the plugin's own keys (the plugin sections below)", type="any key the plugin reads"),
    "sim_server.core.format.yaml_preprocessor:enabled": Note(
        "the preprocessor's: false removes the entry, true keeps it (the value may come from `$eval`)"),
    # ------------------------------------------------------------------ keys of many plugins
    "plugin:body": Note("the body it is on (a body of the model)"),
    "sim_plugins.bool_sensor:body": Note("a body that must exist (any body's contact counts)", default="the model's first body"),
    "plugin:topic": Note("the topic it publishes (in the model's namespace)"),
    "plugin:frame": Note("its TF frame (in the model's namespace)", default="the plugin's name"),
    "plugin:broadcast_tf": Note("true: publishes body -> its frame on /tf_static"),
    "plugin:always_publish": Note("false: works only while somebody subscribes (in-process, always)"),
    "plugin:update_rate": Note("how often it publishes"),
    "plugin:origin": Note("its pose on the body"),
    "plugin:layers": Note("the layers it sees; `all`: every layer"),
    "plugin:noise_std_dev": Note("standard deviation of the Gaussian noise added to a hit", unit="m"),
    "plugin:world_frame_id": Note("the world's frame (not namespaced; a leading / is dropped)"),
    "plugin:exclude": Note("bodies it leaves out"),
    "sim_plugins.velocity_command:twist_sub": Note("the velocity command topic it subscribes"),
    "sim_plugins.velocity_command:stamped": Note("true: TwistStamped commands; false: Twist", ours=True),
    "sim_plugins.odometry:odom_pub": Note("topic of the noisy odometry"),
    "sim_plugins.odometry:ground_truth_pub": Note("topic of the true odometry"),
    "sim_plugins.odometry:odom_frame_id": Note("frame of the odometry (in the model's namespace)"),
    "sim_plugins.odometry:ground_truth_frame_id": Note("frame of the true odometry (not namespaced)"),
    "sim_plugins.odometry:pub_rate": Note("how often odometry is published"),
    "sim_plugins.odometry:enable_odom_pub": Note("false: no odometry topics"),
    "sim_plugins.odometry:twist_in_local_frame": Note("true: the odometry's twist in the body frame, else the world's"),
    "sim_plugins.odometry:odom_pose_covariance": Note("the covariance the noisy odometry reports (6 x 6, row-major)",
                                                      default="the pose noise variances on the diagonal"),
    "sim_plugins.odometry:odom_twist_covariance": Note("the twist covariance it reports (6 x 6, row-major)",
                                                       default="the twist noise variances on the diagonal"),
    "sim_plugins.odometry:enable_odom_tf_pub": Note("true: odom -> body on /tf from the noisy odometry"),
    "sim_plugins.odometry_noise:odom_pose_noise": Note(f"{_NOISE_VARIANCE} odometry's pose (x, y, yaw)", unit="m^2, rad^2"),
    "sim_plugins.odometry_noise:odom_twist_noise": Note(f"{_NOISE_VARIANCE} odometry's twist (vx, vy, wz)",
                                                               unit="(m/s)^2, (rad/s)^2"),
    "sim_plugins.odometry_noise:odom_drift": Note("the odometry's drift: variance rates of its four error terms", ours=True),
    "sim_plugins.odometry_noise:translation_from_translation": Note("variance of translation error per metre driven",
                                                                    ours=True, unit="m^2/m"),
    "sim_plugins.odometry_noise:translation_from_rotation": Note("variance of translation error per radian turned",
                                                                 ours=True, unit="m^2/rad"),
    "sim_plugins.odometry_noise:rotation_from_rotation": Note("variance of heading error per radian turned",
                                                              ours=True, unit="rad^2/rad"),
    "sim_plugins.odometry_noise:rotation_from_translation": Note("variance of heading error per metre driven",
                                                                 ours=True, unit="rad^2/m"),
    "sim_plugins.common:linear_dynamics": Note(f"{_DYNAMICS} forward speed (0: none)"),
    "sim_plugins.common:angular_dynamics": Note(f"{_DYNAMICS} turn rate, or of the steering (0: none)"),
    "sim_plugins.common:lateral_dynamics": Note(f"{_DYNAMICS} sideways speed (0: none)"),
    "sim_plugins.common:acceleration_limit": Note("largest rise of the speed a second; 0: none", unit="m/s^2 or rad/s^2"),
    "sim_plugins.common:deceleration_limit": Note("largest fall of the speed a second; 0: none", unit="m/s^2 or rad/s^2",
                                                  default="the acceleration_limit"),
    "sim_plugins.common:velocity_limit": Note("largest speed either way; 0: none", unit="m/s or rad/s"),
    # ------------------------------------------------------------------ drives
    "sim_plugins.diff_drive:twist_pub": Note("topic of the measured forward speed and yaw rate (TwistStamped)"),
    "sim_plugins.diff_drive:enable_twist_pub": Note("false: no twist topic"),
    "sim_plugins.tricycle_drive:front_wheel_joint": Note("the revolute joint of the steered front wheel"),
    "sim_plugins.tricycle_drive:rear_left_wheel_joint": Note("the weld joint of the rear left wheel"),
    "sim_plugins.tricycle_drive:rear_right_wheel_joint": Note("the weld joint of the rear right wheel"),
    "sim_plugins.tricycle_drive:max_steer_angle": Note("the steering angle's limit either way; 0: none", unit="rad"),
    "sim_plugins.tricycle_drive:max_angular_velocity": Note("legacy steering-rate limit, used when the dynamics give none",
                                                           unit="rad/s"),
    "sim_plugins.tricycle_drive:max_steer_acceleration": Note("legacy steering acceleration limit, used when the dynamics give none",
                                                             unit="rad/s^2"),
    "sim_plugins.ackermann_drive:wheelbase": Note("from the rear axle to the front axle"),
    "sim_plugins.ackermann_drive:rear_axle": Note("the rear axle's midpoint on the body: the point that moves straight ahead"),
    "sim_plugins.ackermann_drive:max_steer_angle": Note("the steering angle's limit either way"),
    "sim_plugins.ackermann_drive:command_angular": Note("what cmd_vel's angular.z is: the steering angle (rad) or the yaw rate (rad/s)"),
    "sim_plugins.ackermann_drive:ackermann_sub": Note("topic of AckermannDriveStamped commands (where ackermann_msgs is installed)"),
    "sim_plugins.omni_drive:max_wheel_speed": Note("fastest speed of a mecanum wheel's rim; a command asking more is scaled down; 0: none",
                                                   unit="m/s"),
    "sim_plugins.omni_drive:wheelbase": Note("distance between front and rear wheels (for max_wheel_speed)"),
    "sim_plugins.omni_drive:track_width": Note("distance between left and right wheels (for max_wheel_speed)"),
    # ------------------------------------------------------------------ sensors and others
    "sim_plugins.laser:range": Note("the beams' length"),
    "sim_plugins.laser:angle": Note("the beams' angles"),
    "sim_plugins.laser:angle.min": Note("angle of the first beam"),
    "sim_plugins.laser:angle.max": Note("angle of the last beam"),
    "sim_plugins.laser:angle.increment": Note("angle between beams; negative: scans clockwise"),
    "sim_plugins.laser:dropout_rate": Note("probability that a beam returns nothing (NaN)", ours=True),
    "sim_plugins.laser:max_range_rate": Note("probability that a beam reads `range` exactly, hit or not", ours=True),
    "sim_plugins.laser:upside_down": Note("true: the beam angles negated (a scanner mounted upside down)"),
    "sim_plugins.bumper:publish_all_collisions": Note("true: publish every step while in contact, else at update_rate"),
    "sim_plugins.gps:ref_lat": Note("latitude of the world's origin"),
    "sim_plugins.gps:ref_lon": Note("longitude of the world's origin"),
    "sim_plugins.camera:field": Note("width and height of the world shown"),
    "sim_plugins.camera:pixels": Note("width and height of the picture", unit="pixels"),
    "sim_plugins.camera:north_up": Note("true: the picture keeps the world's axes; false: it turns with the body"),
    "sim_plugins.tween:mode": Note("how it moves: there and back, round again, once, or on a trigger"),
    "sim_plugins.tween:duration": Note("time of one way"),
    "sim_plugins.tween:delta": Note("the move from the start pose, in world axes"),
    "sim_plugins.tween:trigger_topic": Note("std_msgs/Bool topic that moves it in trigger mode; empty: none"),
    "sim_plugins.tween:easing": Note("the easing curve of the motion"),
    "sim_plugins.model_tf_publisher:publish_tf_world": Note("true: also publish world_frame_id -> reference"),
    "sim_plugins.model_tf_publisher:reference": Note("the body every other body is published relative to",
                                                     default="the model's first body"),
    "sim_plugins.imu:enable_imu_pub": Note("false: no IMU topics"),
    "sim_plugins.imu:imu_frame_id": Note("the IMU's frame (in the model's namespace)"),
    "sim_plugins.imu:imu_pub": Note("topic of the noisy readings"),
    "sim_plugins.imu:ground_truth_pub": Note("topic of the true readings"),
    "sim_plugins.imu:orientation_noise": Note(f"{_NOISE_VARIANCE} orientation [x, y, z]", unit="rad^2"),
    "sim_plugins.imu:angular_velocity_noise": Note(f"{_NOISE_VARIANCE} angular velocity [x, y, z]", unit="(rad/s)^2"),
    "sim_plugins.imu:linear_acceleration_noise": Note(f"{_NOISE_VARIANCE} acceleration [x, y, z]", unit="(m/s^2)^2"),
    "sim_plugins.imu:orientation_covariance": Note("the orientation covariance reported (3 x 3, row-major)",
                                                   default="the noise variances on the diagonal"),
    "sim_plugins.imu:angular_velocity_covariance": Note("the angular velocity covariance reported (3 x 3, row-major)",
                                                        default="the noise variances on the diagonal"),
    "sim_plugins.imu:linear_acceleration_covariance": Note("the acceleration covariance reported (3 x 3, row-major)",
                                                           default="the noise variances on the diagonal"),
    "sim_plugins.imu:pub_rate": Note("how often it publishes"),
    "sim_plugins.imu:origin": Note("its pose on the body", ours=True),
    "sim_plugins.imu:angular_velocity_bias_walk": Note("standard deviation over a second of the gyroscope bias's random walk",
                                                       unit="rad/s/sqrt(s)", ours=True),
    "sim_plugins.imu:linear_acceleration_bias_walk": Note("standard deviation over a second of the accelerometer bias's random walk",
                                                          unit="m/s^2/sqrt(s)", ours=True),
    "sim_plugins.range_sensor:field_of_view": Note("the cone's full width"),
    "sim_plugins.range_sensor:beams": Note("rays spread over the cone; the nearest hit counts"),
    "sim_plugins.range_sensor:range_min": Note("nearer hits read -inf"),
    "sim_plugins.range_sensor:range_max": Note("nothing within it reads +inf"),
    "sim_plugins.range_sensor:radiation_type": Note("sensor_msgs/Range's radiation type"),
}


def _attribute_lines(doc: str) -> dict[str, str]:
    """The ``name: text`` entries of a Google-style ``Attributes:`` section (a line naming
    several, ``a, b: text``, gives each the text), the text on one line."""
    section = doc.split("Attributes:", 1)[1] if "Attributes:" in doc else ""
    entries: dict[str, str] = {}
    names: list[str] = []
    for line in section.splitlines():
        match = re.match(r"^ {4,8}([a-z_][a-z_0-9, ]*):\s*(.*)$", line)
        if match and not line.startswith(" " * 12):
            names = [name.strip() for name in match.group(1).split(",")]
            for name in names:
                entries[name] = match.group(2)
        elif line.strip() and names:
            for name in names:
                entries[name] += " " + line.strip()
    return {name: _markdown(text) for name, text in entries.items()}


def _markdown(text: str) -> str:
    """reST inline markup as markdown: ``:role:`~a.b.c``` as ``c``, double backquotes as one."""
    text = re.sub(r":[a-z]+:`~?(?:[\w.]*\.)?([\w]+)`", r"`\1`", text)
    return text.replace("``", "`")


def parameter_notes() -> dict[str, Note]:
    """Notes of the crowd models' parameters, from their dataclasses: the meaning from the
    docstring's attribute (the first model's where both have it), the default by model."""
    meanings: dict[str, str] = {}
    defaults: dict[str, list[str]] = {}
    for model, parameters in crowd_file.MODELS.items():
        described = _attribute_lines(parameters.__doc__ or "")
        for item in fields(parameters):
            meanings.setdefault(item.name, described.get(item.name, ""))
            value = "" if item.default is MISSING else f"{item.default:g}"
            defaults.setdefault(item.name, []).append(f"{value} ({model})")
    for name, shown in defaults.items():
        if len(shown) == 1:  # one model's: the reference names the model beside the key
            defaults[name] = [shown[0].rsplit(" (", 1)[0]]
    return {
        f"world:pedestrians[].parameters.{name}": Note(meanings[name].rstrip("."), default=", ".join(defaults[name]))
        for name in meanings
    }


# The notes made from the code (parameter_notes), looked up after NOTES; as they follow the
# code, one of no key read is no mistake (a field the reader leaves out).
DERIVED_NOTES: dict[str, Note] = parameter_notes()
