"""Every bound on user input, named once, with its unit.

Numbers from files, parameters, service requests and messages pass through these bounds before
they reach Box2D or size an allocation: Box2D computes in float32, so a coordinate of 1e30 or a
radius whose inertia overflows poisons the whole world, and one NaN spreads to every body.
Reads are bounded too (bytes, pixels, YAML nodes and depth, includes, Lua instructions and
memory), so no file can exhaust the machine or hang the server.

A :class:`Range` checks a value and words the error; callers add the file, entry and key.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from sim_server.core.errors import ConfigError


@dataclass(frozen=True)
class Range:
    """A closed (or, with ``open_low``, half-open) interval of acceptable values.

    Attributes:
        low: smallest value accepted (inclusive unless ``open_low``).
        high: largest value accepted (inclusive).
        unit: the unit shown in errors ("m", "Hz", ...), empty for a pure number.
        open_low: ``low`` itself is excluded (for sizes and rates that must be > 0).
    """

    low: float
    high: float
    unit: str = ""
    open_low: bool = False

    def contains(self, value: float) -> bool:
        """Whether ``value`` is finite and inside the range (an integer of any size compared
        exactly)."""
        if not isinstance(value, int) and not math.isfinite(value):
            return False
        above_low = value > self.low if self.open_low else value >= self.low
        return above_low and value <= self.high

    def describe(self) -> str:
        """The range as words, e.g. ``a finite number > 0 and <= 10000 m``."""
        low = f"> {self.low:g}" if self.open_low else f">= {self.low:g}"
        unit = f" {self.unit}" if self.unit else ""
        return f"a finite number {low} and <= {self.high:g}{unit}"

    def check(self, value: float, what: str) -> float:
        """Return ``value`` as a float, or raise :class:`ConfigError` naming ``what``."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{what} must be {self.describe()}, got {value!r}")
        if not self.contains(value):
            raise ConfigError(f"{what} must be {self.describe()}, got {value!r:.60}")
        return float(value)


# ------------------------------------------------------------------------------------ numbers
#: Largest magnitude of any number read from a file (beyond the specific bounds below).
MAX_MAGNITUDE = 1.0e9
#: World coordinates (m): poses, origins, level boxes, map edges. At 1e5 m float32 still
#: resolves 8 mm, Box2D's slop is 5 mm.
COORDINATE = Range(-1.0e5, 1.0e5, "m")
#: Angles (rad): headings, joint limits, laser angles. Wider than one turn, bounded so that
#: trigonometry and normalisation stay exact.
ANGLE = Range(-1.0e4, 1.0e4, "rad")
#: Sizes of shapes and boxes (m): radii, polygon points relative to their body, level and
#: performer sizes, map resolution and scale, laser range, tile sizes.
SHAPE_EXTENT = 1.0e4
#: A length that must be > 0 (m).
LENGTH = Range(0.0, SHAPE_EXTENT, "m", open_low=True)
#: A length that may be 0 (m): buffers, offsets.
DISTANCE = Range(0.0, SHAPE_EXTENT, "m")
#: Smallest circle radius (m): Box2D computes inertia in float32, a radius of 1e-20 gives 0.
MIN_RADIUS = 1.0e-4
RADIUS = Range(MIN_RADIUS, SHAPE_EXTENT, "m")
#: Offsets of points (polygon vertices, anchors, centres) in a body's frame (m).
BODY_OFFSET = Range(-SHAPE_EXTENT, SHAPE_EXTENT, "m")
#: Fixture density (kg/m^2).
DENSITY = Range(0.0, 1.0e6, "kg/m^2")
#: Friction coefficients and restitution (ratios).
FRICTION = Range(0.0, 1.0e3)
RESTITUTION = Range(0.0, 1.0e3)
#: Damping (1/s) of bodies and ratios of weld joints.
DAMPING = Range(0.0, 1.0e6, "1/s")
#: Frequencies of soft joints (Hz).
FREQUENCY = Range(0.0, 1.0e6, "Hz")
#: Colour components (RGBA, 0..1).
COLOR_COMPONENT = Range(0.0, 1.0)
#: Iterations of Box2D's velocity and position solvers per step.
SOLVER_ITERATIONS = Range(1, 10_000)
#: Physics step (s of sim time).
STEP_SIZE = Range(1.0e-6, 1.0, "s")
#: Rates (Hz): update_rate of the server (0 = as fast as possible), plugin and viz rates.
RATE = Range(0.0, 1.0e6, "Hz")
POSITIVE_RATE = Range(0.0, 1.0e6, "Hz", open_low=True)
#: Width of the lines of debug markers (m).
MARKER_LINE_WIDTH = Range(0.0, 100.0, "m", open_low=True)
#: Speeds commanded through cmd_vel or set through services (m/s and rad/s, steering rad).
SPEED = Range(-1.0e4, 1.0e4, "m/s")
ANGULAR_SPEED = Range(-1.0e4, 1.0e4, "rad/s")
#: Torques of joint motors (N m).
TORQUE = Range(0.0, 1.0e9, "N m")
#: Noise standard deviations (m, rad, m/s ...).
NOISE = Range(0.0, 1.0e4)
#: Entries of a covariance matrix (off-diagonal ones may be negative).
COVARIANCE = Range(-1.0e4, 1.0e4)
#: Geodetic reference of GPS (degrees).
LATITUDE = Range(-90.0, 90.0, "deg")
LONGITUDE = Range(-180.0, 180.0, "deg")
#: Durations (s) of tweens and the like.
DURATION = Range(0.0, 1.0e9, "s")
#: Occupancy threshold of map images (fraction of white).
THRESHOLD = Range(0.0, 1.0)
#: Probabilities (of a laser beam dropping out, say).
PROBABILITY = Range(0.0, 1.0)
#: Accelerations and velocity limits of drives (m/s^2, m/s; rad likewise).
DYNAMICS_LIMIT = Range(0.0, 1.0e6)
#: Largest steering angle of a car (rad): its turn rate grows with tan(angle), without bound
#: towards a right angle; 1.5 rad turns a 1 m wheelbase on a 7 cm circle.
STEER_ANGLE = Range(0.0, 1.5, "rad", open_low=True)
#: Steps of one step_world request.
MAX_STEPS_PER_REQUEST = 10_000_000
#: Pairs of footprints (bounding boxes) a spawned or moved model may overlap with other models'
#: (not with layers): every pair is a contact Box2D handles on every step, and a pile of a
#: thousand robots in one place made one step take a minute.
MAX_OVERLAPPING_FOOTPRINTS = 256
#: Seeds of the noise sources and crowds, wherever one is given (a file, an option, an argument):
#: numpy's generators take them >= 0, ROS integer parameters are int64. No seed at all
#: (None; the ROS parameter's -1) makes a run nondeterministic.
SEED = Range(0, 2**63 - 1)


def checked_seed(seed: object, what: str = "seed") -> int | None:
    """``seed`` as an int within :data:`SEED` (None stays None: a nondeterministic run), or
    ValueError naming ``what``: for seeds given to functions (an in-process world, an
    environment's reset)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not SEED.contains(int(seed)):
        raise ValueError(f"{what} must be None or a whole number from 0 to {int(SEED.high)}, got {seed!r:.100}")
    return int(seed)


#: TCP ports (0: any free one).
PORT = Range(0, 65535)
#: Bytes of one MCAP file of a recording before the next begins (1 MiB to 1 TiB).
MCAP_FILE_BYTES = Range(2**20, 2**40, "bytes")
#: Files of one recording kept (the newest).
MCAP_FILES_KEPT = Range(1, 100_000)

# ------------------------------------------------------------------------------------ counts
#: Beams of one laser scan.
MAX_LASER_BEAMS = 100_000
#: Pieces of a streamed layer (a wall crossing k tile lines becomes k + 1 pieces).
MAX_TILE_PIECES = 5_000_000
#: Models, layers, bodies, ... listed in one file.
MAX_ENTRIES_PER_LIST = 1_000_000
#: Collision layers of a world: Box2D's filters carry 16 category bits, one per layer name.
MAX_LAYERS = 16

# ------------------------------------------------------------------------------------ names
#: Characters of a model, layer, body, plugin or namespace name (ROS names built from them
#: must stay within DDS's 255-character topic limit, prefixes included).
MAX_NAME_LENGTH = 100
#: Characters of a topic a plugin names (``scan``, ``/r1/scan``, ``~/scan``): with a model's
#: namespace (MAX_NAME_LENGTH) and its slashes a topic's full name takes at most 202 of the 247
#: characters ROS 2 allows (255 less 8 reserved), leaving 45 for the server node's namespace.
MAX_TOPIC_LENGTH = 100
#: Characters of a TF frame id a plugin names (the model's namespace is prefixed to it).
MAX_FRAME_LENGTH = 200

# ------------------------------------------------------------------------------------ reads
#: Bytes of one YAML file (world, model, map, included file).
MAX_YAML_BYTES = 64 * 1024 * 1024
#: Characters of a description (of a world, a named pose, an entity).
MAX_DESCRIPTION_CHARS = 4096
#: Characters of a file path in a request (Linux's PATH_MAX).
MAX_PATH_CHARS = 4096

# ------------------------------------------------------------------------------------ the live view
#: Bytes of one service request from a viewer (JSON).
MAX_VIEW_REQUEST_BYTES = 64 * 1024
#: Service requests from viewers waiting for the step loop; more are answered "busy".
MAX_VIEW_REQUESTS_WAITING = 64
#: Service requests of one viewer waiting for the step loop (a flood leaves room for others).
MAX_VIEW_REQUESTS_WAITING_PER_CLIENT = 8
#: Bytes of one message a viewer publishes (a velocity command, JSON).
MAX_VIEW_MESSAGE_BYTES = 4096
#: Channels all viewers may advertise at once (more are ignored).
MAX_VIEW_CLIENT_CHANNELS = 256
#: Bytes of one data file: a map image or a line segment file.
MAX_DATA_FILE_BYTES = 512 * 1024 * 1024
#: Pixels of one map image (width x height); 10,000 x 10,000 at most.
MAX_MAP_PIXELS = 100_000_000
#: Nesting depth of YAML collections (mappings in lists in mappings ...).
MAX_YAML_DEPTH = 100
#: Nodes of one YAML document once aliases are expanded (a "billion laughs" is 1e9).
MAX_YAML_NODES = 5_000_000
#: Depth of $include / $[include] nesting.
MAX_INCLUDE_DEPTH = 32
#: Files included while loading one file (all depths together).
MAX_INCLUDED_FILES = 10_000
#: Lua virtual machine instructions of one ``$eval``.
LUA_INSTRUCTION_BUDGET = 10_000_000
#: Memory of the Lua state of one ``$eval`` (bytes).
LUA_MEMORY_BYTES = 64 * 1024 * 1024
#: Processor seconds of one ``$eval``: its C functions (``string.upper`` of 10 MB, say) cost
#: time the instruction budget does not see.
LUA_SECONDS = 1.0
#: Processor seconds of all ``$eval`` of one load (a file and what it includes) together.
EVAL_SECONDS_PER_LOAD = 10.0
#: Characters of one ``$eval`` result string.
MAX_EVAL_RESULT_CHARS = 1_000_000

# ------------------------------------------------------------------------------------ crowds
#: Pedestrians of one world at once, all crowds together (each is a Box2D body).
MAX_PEDESTRIANS = 10_000
#: Crowds of one world.
MAX_CROWDS = 64
#: Spawners of one world, all crowds together: each is checked on every crowd update.
MAX_SPAWNERS = 256
#: Waypoints of one entry of a crowd.
MAX_WAYPOINTS = 10_000
#: Named regions of one crowd.
MAX_REGIONS = 1_000
#: Waiting queues and attractions of one crowd (a pedsim scenario's): each update looks at each
#: queue of each copy of the world, and at each attraction for each person.
MAX_QUEUES = 1_000
MAX_ATTRACTIONS = 1_000
#: Candidate goals drawn in each region (each needs a distance field of the walls' grid).
GOALS_PER_REGION = Range(1, 1024)
#: Radius of a pedestrian's body (m).
PEDESTRIAN_RADIUS = Range(0.05, 2.0, "m")
#: Preferred walking speed (m/s).
WALKING_SPEED = Range(0.0, 10.0, "m/s", open_low=True)
#: Pedestrians a spawner makes per second.
SPAWN_RATE = Range(0.0, 100.0, "1/s", open_low=True)
#: Waiting time at a waypoint (s).
WAIT = Range(0.0, 1.0e6, "s")
#: Side of the cells of a crowd's walking grid (m).
NAVIGATION_CELL = Range(0.02, 10.0, "m")
#: Cells of one walking grid (its side grows to stay within: 2,000 x 2,000 cells).
MAX_NAVIGATION_CELLS = 4_000_000
#: Bytes of a crowd's distance fields kept at once (the least recently used go first).
MAX_NAVIGATION_FIELD_BYTES = 256 * 1024 * 1024
#: Factors, time constants and lengths of the crowd models (social force, ORCA).
CROWD_FACTOR = Range(0.0, 1.0e4)
CROWD_TIME = Range(0.0, 1.0e3, "s", open_low=True)
CROWD_LENGTH = Range(0.0, 1.0e3, "m")
#: Neighbours ORCA considers per agent.
ORCA_NEIGHBORS = Range(1, 100)
#: People of one entry of a crowd placed as the world loads, and most of a spawner's people in
#: the world at once.
PEOPLE_OF_ENTRY = Range(0, MAX_PEDESTRIANS)
SPAWNER_LIMIT = Range(1, MAX_PEDESTRIANS)
#: Arrivals a spawner makes in all (no end without it), and people of one arrival.
SPAWNER_TOTAL = Range(1, 2**62)
ARRIVAL_SIZE = Range(1, 100)
#: Lengths of the social force that divide (m): gamma, obstacle_sigma.
CROWD_DIVISOR_LENGTH = Range(0.0, 1.0e3, "m", open_low=True)
#: A crowd model's speed cap as a multiple of each person's preferred speed.
SPEED_CAP_MULTIPLIER = Range(1.0, 100.0)
#: What a robot's distance from a person is divided by in the social force (pedsim's
#: robotPosDiffScalingFactor): above 1 people give robots more room than each other.
ROBOT_DISTANCE_SCALING = Range(0.01, 100.0)
#: Updates of a crowd a second of sim time (0: on every physics step); a rate above 0 is at
#: least MIN_CROWD_UPDATE_RATE (one update in 1,000 s: slower, the steps between two updates
#: overflow a count).
CROWD_UPDATE_RATE = Range(0.0, 1.0e6, "Hz")
MIN_CROWD_UPDATE_RATE = 1.0e-3

# ------------------------------------------------------------------------------------ plugins
#: The cone of a Range sensor (rad): 0 (a single ray) to a full turn.
FIELD_OF_VIEW = Range(0.0, 2.0 * math.pi, "rad")
#: The narrowest cone of several rays (rad): the rays' spacing is the cone over the beams less
#: one, which for a cone of 0 (or of 1e-320 over 5 rays) is 0, and the rays cannot be counted.
MIN_CONE_OF_RAYS = 1.0e-6
#: Rays of one Range sensor's cone.
RANGE_BEAMS = Range(1, 1000)
#: Pixels on a side of a camera's picture (a 4096 x 4096 rgb8 picture is 48 MiB).
CAMERA_PIXELS = Range(1, 4096)
#: Wheelbase of a car (m): it turns at speed tan(steer) / wheelbase, so a wheelbase of 1e-320 m
#: turns it infinitely fast (and one of 1e-35 m beyond float32, Box2D's numbers); at 1 mm the
#: fastest command (SPEED, STEER_ANGLE) turns it at 1.4e8 rad/s, which Box2D's step still takes.
WHEELBASE = Range(1.0e-3, SHAPE_EXTENT, "m")
#: Latitude of a GPS's reference point (deg): the world's coordinates (COORDINATE, 0.9 deg of
#: latitude either way) never reach a pole, where longitude is undefined and the conversion to
#: WGS-84 divides by zero (a reference at 90 deg failed at the origin).
GPS_REFERENCE_LATITUDE = Range(-89.0, 89.0, "deg")

# ------------------------------------------------------------------------------------ pedsim scenarios
#: Bytes of one pedsim scenario file (XML): pedsim's largest bundled scenario has 14 kB, a
#: scenario of 100,000 wall segments about 5 MiB.
MAX_SCENARIO_BYTES = 16 * 1024 * 1024
#: Elements of one scenario file, all kinds together (each becomes an object in memory; reading
#: 100,000 takes about 2 s).
MAX_SCENARIO_ELEMENTS = 100_000
#: Attributes in a row anywhere in a scenario file (pedsim's elements take at most 6), counted
#: before the XML parser runs: expat holds all of a start tag's attributes at once, and a tag of
#: 16 MiB of attributes took it and Python 400 MiB.
MAX_SCENARIO_ATTRIBUTES = 32
#: The direction a queue of a scenario faces (deg, as pedsim's files give it; pedsim wraps it
#: to (-180, 180] by steps of 360 degrees, which never ends for 1e300).
QUEUE_DIRECTION = Range(-1.0e4, 1.0e4, "deg")

# ------------------------------------------------------------------------------------ trained policies
#: Bytes of a trained policy's file (NumPy's .npz), and of its arrays once read (a network of
#: 16 layers of 4,096 units is 2 GiB: far beyond; CrowdNav's size, 150-100-100, is 150 kB).
MAX_POLICY_FILE_BYTES = 64 * 1024 * 1024
#: Layers of a policy's network and units of one layer.
POLICY_LAYERS = Range(1, 16)
POLICY_UNITS = Range(1, 4096)
#: Numbers of a policy's observation, and of its action (a linear policy's weights are their
#: product: 2 GB at the bound).
POLICY_INPUTS = Range(1, 100_000)
POLICY_OUTPUTS = Range(1, 1_000)

# ------------------------------------------------------------------------------------ rollouts
#: Steps of one rollout (a policy stepping a vector environment for a batch of steps,
#: :mod:`sim_server.learning.rollouts`): 20 of the task's 500-step episodes.
MAX_ROLLOUT_STEPS = 10_000
#: Environment steps (steps x environments) of one rollout's batch in one process: 2**20 of
#: 40-value observations is 168 MB of observations and about half as much of the rest.
MAX_ROLLOUT_ENVIRONMENT_STEPS = 2**20
