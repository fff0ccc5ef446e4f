"""The social force model: pedestrians pushed by their goals, each other, groups and walls.

Helbing and Molnar's model with the forces and parameters of pedsim (``pedsim_ros``'s
libpedsim), as pysocialforce 1.1.2 writes them for all agents at once:

* desired force ``(v0 e - v) / tau`` towards the goal (``e``: the walking direction, ``v0``: the
  preferred speed), ``-v / tau`` within ``goal_threshold`` of it;
* social force of every other agent within ``neighbor_range`` (Moussaid et al. 2009): with
  ``d`` the unit vector from the other to this agent, ``t`` the unit vector of
  ``D = lambda (v_other - v) + d`` and ``B = gamma |D|``, theta the angle from ``d`` to ``t``,
  ``factor (exp(-r/B - (n' B theta)^2) t - sign(theta) exp(-r/B - (n B theta)^2) t_left)``;
* obstacle force of the nearest wall point within ``obstacle_threshold`` of the body,
  ``factor exp(-gap / sigma)`` away from it (pedsim's: the nearest obstacle only);
* group forces of pedsim_ros (pysocialforce's ``...Alt`` versions): coherence towards the
  group's centre, repulsion between members nearer than a threshold, gaze keeping the others in
  view.

A step (``dt``): ``v' = v + dt F``, its speed capped at the agent's maximum, zero within
``stop_distance`` of the goal, and then cut so that no body enters a wall
(:func:`~sim_server.core.crowd.walls.keep_out_of_walls`); the physics moves the bodies by
``v' dt``, as pysocialforce's ``x' = x + v' dt``.

Two differences from pysocialforce, both pedsim's behaviour: forces come from agents within
``neighbor_range`` only (pysocialforce sums all pairs), and from the nearest wall point
(pysocialforce sums over points sampled 10 per metre along each obstacle line). pysocialforce
also leaves theta unwrapped (the difference of two ``atan2``, up to +-2 pi): pedsim wraps it to
(-pi, pi], and so does this model unless ``wrap_angle`` is off (only to compare with
pysocialforce).

Every agent is computed in one compiled call, neighbours found through a
:mod:`~sim_server.core.crowd.neighbors` grid.
"""

from __future__ import annotations

import math
from contextlib import nullcontext

import numpy as np
from numba import get_num_threads, prange

from sim_server.core.compiled import ThreadChoice, jit, take_next
from sim_server.core.format.crowd_file import SocialForceParameters
from sim_server.core.crowd.neighbors import build_grid, cell_span
from sim_server.core.crowd.robot_footprints import Footprints, nearest_on_footprint
from sim_server.core.crowd.walls import keep_out_of_walls, nearest_wall, walls_within

#: Most walls a pedestrian's step is checked against (the nearest ones).
MAX_WALLS_PER_AGENT = 8
#: Walls within this (m) beyond what a step can reach are found exactly, not from the map.
NEAR_WALL = 0.5


__all__ = ["SocialForceParameters", "social_force_step", "neighbour_grids", "angle_of", "robot_shapes", "no_robots",
           "NO_EXTRA_FORCES"]

# Indices into SocialForceParameters.array().
(_TAU, _DESIRED, _GOAL_THRESHOLD, _SOCIAL, _LAMBDA, _GAMMA, _N, _N_PRIME, _RANGE, _OBSTACLE, _SIGMA,
 _OBSTACLE_THRESHOLD, _COHERENCE, _GROUP_REPULSION, _GROUP_THRESHOLD, _GAZE, _STOP, _MULTIPLIER, _WRAP,
 _CUTOFF_EXPONENT, _ROBOT_SCALING) = range(21)
#: Which way a person turns from a robot straight ahead (theta exactly 0, where the model has no
#: side): to its right, as pedestrians keep right.
ROBOT_TIE = 1.0
#: Angles theta (rad) within this of 0 are 0: where theta is exactly 0 (people standing in a
#: line, where the interaction vector is the unit direction), rounding the unit vectors leaves
#: about 1e-16 rad of either sign, and the sideways term, which takes theta's sign, would push
#: at full strength to a side the rounding picked (a copy of a world 20 m away walked otherwise).
THETA_TIE = 1e-12
#: ``extra`` of :func:`social_force_step` for no forces beyond the model's.
NO_EXTRA_FORCES = np.zeros((0, 2))


#: atan(t) / t as a polynomial in t^2 on 0 <= t <= 1 (least squares on 4,000 Chebyshev nodes,
#: weighted by t; largest error of atan 1.5e-10 rad).
_ATAN = (
    0.999999997328526, -0.33333305359800036, 0.19999183184510683, -0.14274853202897442,
    0.11030534826836921, -0.08719032671777682, 0.06550411121697179, -0.04218877256488612,
    0.020537157253579227, -0.006421636755747806, 0.0009420392865652494,
)


@jit
def angle_of(y, x):  # pragma: no cover - compiled
    """``atan2(y, x)`` in [-pi, pi] within 2e-10 rad, about three times as fast as libm's
    (the social force's cost was mostly atan2): the octant's ratio in [0, 1] into :data:`_ATAN`,
    then selects without branches."""
    ax, ay = abs(x), abs(y)
    big, small = max(ax, ay), min(ax, ay)
    t = small / big if big > 0.0 else 0.0
    z = t * t
    c = _ATAN
    angle = t * (c[0] + z * (c[1] + z * (c[2] + z * (c[3] + z * (c[4] + z * (c[5] + z * (c[6] + z * (
        c[7] + z * (c[8] + z * (c[9] + z * c[10]))))))))))
    angle = math.pi / 2.0 - angle if ay > ax else angle
    angle = math.pi - angle if x < 0.0 else angle
    return -angle if y < 0.0 else angle


def _interaction(lam, gamma, inverse_gamma, smallest_sq, cutoff, dx, dy, distance_sq, vxi, vyi, vxj,
                 vyj):  # pragma: no cover - compiled
    """What the social force of a pair is made of, agent j at ``(dx, dy)`` = i - j from agent i
    (m, ``distance_sq`` its square, > 0), moving at (vxj, vyj) and (vxi, vyi) (m/s): d (ex, ey),
    t (tx, ty), B, r / B and cos(d, t); B is -1 where the pair pushes nothing (the interaction
    vector is 0, or the cutoff: ``lam`` ... ``cutoff`` as :func:`_social` takes them). Divisions
    are few: they cost most here."""
    distance = math.sqrt(distance_sq)
    inverse = 1.0 / distance
    ex, ey = dx * inverse, dy * inverse
    ix = lam * (vxj - vxi) + ex
    iy = lam * (vyj - vyi) + ey
    length_sq = ix * ix + iy * iy
    if length_sq == 0.0:
        return ex, ey, 0.0, 0.0, -1.0, 0.0, 0.0
    inverse_length = 1.0 / math.sqrt(length_sq)
    b = gamma * length_sq * inverse_length
    decay = distance * inverse_length * inverse_gamma
    tx, ty = ix * inverse_length, iy * inverse_length
    # Skip a pair whose force is surely negligible: theta^2 >= 2 (1 - cos theta), so the larger
    # of the two terms is at most exp(-(decay + min(n, n')^2 b^2 2 (1 - cos theta))).
    cosine = tx * ex + ty * ey
    if decay + smallest_sq * b * b * 2.0 * (1.0 - cosine) > cutoff:
        return ex, ey, tx, ty, -1.0, decay, cosine
    return ex, ey, tx, ty, b, decay, cosine


#: Inlined into the step's loop at numba's level (a call per pair cost a third of the step).
_interaction = jit(_interaction, inline="always")


def _amounts(decay, b, theta, n_sq, n_prime_sq, tie):  # pragma: no cover - compiled
    """The social force's two exponentials for ``theta``: along t, and along t's left normal
    signed as theta's opposite; where theta is 0 (within :data:`THETA_TIE`) the sideways one
    times ``tie``, the side taken (0: none, as the model; 1: to the right)."""
    spread = b * theta * b * theta
    velocity_amount = math.exp(-decay - n_prime_sq * spread)
    angle_amount = math.exp(-decay - n_sq * spread)
    if theta > THETA_TIE:
        angle_amount = -angle_amount
    elif theta >= -THETA_TIE:
        angle_amount *= tie
    return velocity_amount, angle_amount


_amounts = jit(_amounts, inline="always")


def _social(lam, gamma, inverse_gamma, n_sq, n_prime_sq, smallest_sq, cutoff, wrap, dx, dy, distance_sq, vxi, vyi, vxj,
            vyj, tie):  # pragma: no cover - compiled
    """The social force on agent i of agent j at ``(dx, dy)`` = i - j (m, ``distance_sq`` its
    square, > 0) with velocities (vxi, vyi) and (vxj, vyj) (m/s), before ``social_factor``
    (Moussaid et al. 2009, pysocialforce's terms; ``lam`` ... ``wrap`` the parameters: gamma and
    its inverse, n^2, n'^2, the smaller of them, the cutoff as an exponent). ``tie`` is the side
    taken where theta is 0 (:func:`_amounts`)."""
    ex, ey, tx, ty, b, decay, cosine = _interaction(lam, gamma, inverse_gamma, smallest_sq, cutoff, dx, dy, distance_sq,
                                                    vxi, vyi, vxj, vyj)
    if b < 0.0:
        return 0.0, 0.0
    if wrap:
        theta = angle_of(ex * ty - ey * tx, cosine)  # from d to t, within (-pi, pi]
    else:
        theta = math.atan2(ty, tx) - math.atan2(ey, ex)  # pysocialforce's, up to +-2 pi
    velocity_amount, angle_amount = _amounts(decay, b, theta, n_sq, n_prime_sq, tie)
    # t and its left normal (-ty, tx)
    return velocity_amount * tx - angle_amount * ty, velocity_amount * ty + angle_amount * tx


_social = jit(_social, inline="always")


def _opposite(angle):  # pragma: no cover - compiled
    """The direction (rad, in (-pi, pi]) of the vector opposite to one of direction ``angle`` (in
    (-pi, pi], as :func:`angle_of` gives it: never -pi)."""
    return angle - math.pi if angle > 0.0 else angle + math.pi


_opposite = jit(_opposite, inline="always")


def _social_pair(lam, gamma, inverse_gamma, n_sq, n_prime_sq, smallest_sq, cutoff, wrap, dx, dy, distance_sq, vxi, vyi,
                 vxj, vyj):  # pragma: no cover - compiled
    """The social forces between two agents at once: on agent i of agent j at ``(dx, dy)`` =
    i - j, and on j of i (:func:`_social` seen from each; no tie). Seen from j, d and the
    interaction vector turn round (D_ji = -D_ij), so r, B and the cutoff's test are the same.
    Wrapped, theta is too and F_ji = -F_ij. Unwrapped (pysocialforce's difference of two angles),
    each angle turns by pi, and theta_ji is theta_ij or differs from it by 2 pi: the angles come
    from :func:`angle_of` (within 2e-10 rad of atan2), j's from i's, so a pair costs two
    instead of four, and the exponentials are shared where the thetas agree."""
    ex, ey, tx, ty, b, decay, cosine = _interaction(lam, gamma, inverse_gamma, smallest_sq, cutoff, dx, dy, distance_sq,
                                                    vxi, vyi, vxj, vyj)
    if b < 0.0:
        return 0.0, 0.0, 0.0, 0.0
    if wrap:
        velocity_amount, angle_amount = _amounts(decay, b, angle_of(ex * ty - ey * tx, cosine), n_sq, n_prime_sq, 0.0)
        fx, fy = velocity_amount * tx - angle_amount * ty, velocity_amount * ty + angle_amount * tx
        return fx, fy, -fx, -fy
    angle_t, angle_d = angle_of(ty, tx), angle_of(ey, ex)
    theta = angle_t - angle_d
    theta_j = _opposite(angle_t) - _opposite(angle_d)
    velocity_amount, angle_amount = _amounts(decay, b, theta, n_sq, n_prime_sq, 0.0)
    velocity_j, angle_j = velocity_amount, angle_amount
    if theta_j != theta:
        velocity_j, angle_j = _amounts(decay, b, theta_j, n_sq, n_prime_sq, 0.0)
    # seen from j, t turns round and so does its left normal
    return (velocity_amount * tx - angle_amount * ty, velocity_amount * ty + angle_amount * tx,
            -(velocity_j * tx - angle_j * ty), -(velocity_j * ty + angle_j * tx))


_social_pair = jit(_social_pair, inline="always")


def _pair_rows(first, end, positions, velocities, copies, reach, lam, gamma, n, n_prime, cutoff, wrap, grid, robot_grid,
               robots, scaling, social):  # pragma: no cover - compiled
    """The social forces (before ``social_factor``) of the pairs that agents ``first..end-1``
    begin, added to ``social`` (one row per agent): each agent within ``reach`` of one of them
    (the other agents: ``grid`` over the agents' positions) and the others after them (robots:
    ``robot_grid``, item k is ``positions[count + k]``, count the rows of ``social``).
    A robot counts by its footprint (``robots``: angles, largest reach from its origin and
    :class:`~sim_server.core.crowd.robot_footprints.Footprints` arrays): the distance from the
    agent to the footprint's nearest point, divided by ``scaling`` (pedsim's
    ``robotPosDiffScalingFactor``), with the robot's velocity; straight ahead, the agent turns
    right (:data:`ROBOT_TIE`).

    Each pair of agents is computed once for both (:func:`_social_pair`): from the agent in the
    earlier cell (row by row), or within one cell from the lower index. Cells wholly beyond
    ``reach`` are skipped, and so are the others of other copies of the world (``copies``).
    """
    count = social.shape[0]
    x0, y0, cell, nx, ny, starts, items = grid
    rx0, ry0, rcell, rnx, rny, rstarts, ritems = robot_grid
    angles, robot_reach, circles, circle_starts, polygons, polygon_counts, polygon_skins, polygon_starts = robots
    reach_sq = reach * reach
    inverse_gamma = 1.0 / gamma if gamma > 0.0 else 0.0
    n_sq, n_prime_sq = n * n, n_prime * n_prime
    smallest_sq = min(n_sq, n_prime_sq)
    for i in range(first, end):
        xi, yi = positions[i, 0], positions[i, 1]
        vxi, vyi = velocities[i, 0], velocities[i, 1]
        sx, sy = 0.0, 0.0
        own_x = min(int((xi - x0) / cell), nx - 1)  # as build_grid sorted it
        own_y = min(int((yi - y0) / cell), ny - 1)
        ix_low, ix_high, iy_low, iy_high = cell_span(xi, yi, reach, x0, y0, cell, nx, ny)
        for gy in range(max(iy_low, own_y), iy_high + 1):
            bottom = y0 + gy * cell
            gap_y = max(bottom - yi, yi - (bottom + cell), 0.0)
            for gx in range(ix_low, ix_high + 1):
                own = gy == own_y and gx == own_x
                if gy == own_y and gx < own_x:
                    continue
                left = x0 + gx * cell
                gap_x = max(left - xi, xi - (left + cell), 0.0)
                if gap_x * gap_x + gap_y * gap_y > reach_sq and not own:
                    continue
                c = gy * nx + gx
                for k in range(starts[c], starts[c + 1]):
                    j = items[k]
                    if (own and j <= i) or copies[j] != copies[i]:
                        continue
                    dx = xi - positions[j, 0]
                    dy = yi - positions[j, 1]
                    distance_sq = dx * dx + dy * dy
                    if distance_sq > reach_sq or distance_sq == 0.0:
                        continue
                    px, py, qx, qy = _social_pair(lam, gamma, inverse_gamma, n_sq, n_prime_sq, smallest_sq, cutoff,
                                                  wrap, dx, dy, distance_sq, vxi, vyi, velocities[j, 0],
                                                  velocities[j, 1])
                    sx += px
                    sy += py
                    social[j, 0] += qx
                    social[j, 1] += qy
        # the robots push, by their footprints, and are not pushed here
        robot_search = reach + robot_reach
        ix_low, ix_high, iy_low, iy_high = cell_span(xi, yi, robot_search, rx0, ry0, rcell, rnx, rny)
        for gy in range(iy_low, iy_high + 1):
            for gx in range(ix_low, ix_high + 1):
                c = gy * rnx + gx
                for k in range(rstarts[c], rstarts[c + 1]):
                    r = ritems[k]
                    j = count + r
                    if copies[j] != copies[i]:
                        continue
                    ox, oy = xi - positions[j, 0], yi - positions[j, 1]
                    if ox * ox + oy * oy > robot_search * robot_search:  # its footprint is beyond reach too
                        continue
                    gap, qx, qy = nearest_on_footprint(xi, yi, r, positions[j, 0], positions[j, 1], angles[r], circles,
                                                       circle_starts, polygons, polygon_counts, polygon_skins,
                                                       polygon_starts)
                    if gap > reach:
                        continue
                    dx, dy = xi - qx, yi - qy
                    if gap <= 0.0 or dx * dx + dy * dy == 0.0:  # within the footprint: from its origin
                        dx, dy = xi - positions[j, 0], yi - positions[j, 1]
                    dx, dy = dx / scaling, dy / scaling
                    distance_sq = dx * dx + dy * dy
                    if distance_sq == 0.0:
                        continue
                    px, py = _social(lam, gamma, inverse_gamma, n_sq, n_prime_sq, smallest_sq, cutoff, wrap, dx, dy,
                                     distance_sq, vxi, vyi, velocities[j, 0], velocities[j, 1], ROBOT_TIE)
                    sx += px
                    sy += py
        social[i, 0] += sx
        social[i, 1] += sy


_pair_rows = jit(_pair_rows, inline="always")


def _pair_runs(count, positions, velocities, copies, reach, lam, gamma, n, n_prime, cutoff, wrap, grid, robot_grid,
               robots, scaling, parts, threads):  # pragma: no cover - compiled
    """The social force (before ``social_factor``) on each of agents ``0..count-1`` of everyone
    within ``reach`` (:func:`_pair_rows`; the arguments as it takes them). The agents are cut into
    ``parts`` runs of rows, each run's pairs summed into forces of its own, and those added up
    run by run: the forces are the same whatever thread computed a run, one after the other
    (``threads`` 1, or inlined into :func:`_social_forces_serial`) or on numba's ``threads``
    threads (:func:`_social_forces_parallel`; each takes the next run left,
    :func:`~sim_server.core.compiled.take_next`), and with one part they are the sums of a single
    loop over the rows."""
    partial = np.empty((parts, count, 2))
    next_part = np.zeros(1, dtype=np.int64)
    for _thread in prange(threads):
        while True:
            part = take_next(next_part)
            if part >= parts:
                break
            partial[part] = 0.0
            _pair_rows(part * count // parts, (part + 1) * count // parts, positions, velocities, copies, reach, lam,
                       gamma, n, n_prime, cutoff, wrap, grid, robot_grid, robots, scaling, partial[part])
    social = partial[0]  # the first run's forces, the others added in order
    for part in range(1, parts):
        for i in range(count):
            social[i, 0] += partial[part, i, 0]
            social[i, 1] += partial[part, i, 1]
    return social


_pair_runs = jit(_pair_runs, inline="always")


# Two functions, not one compiled twice: numba's on-disk cache tells a function's machine code by
# its name, line and signature, not by its options, so a serial and a parallel compilation of one
# function would load each other's code (the parallel one, loaded as serial, crashed the process
# where numba's threads had not started). With fastmath (no NaN or infinity reaches them: every
# input is finite, every division guarded, the cutoff exponent finite): about 7 % faster.
def _social_forces_serial(count, positions, velocities, copies, reach, lam, gamma, n, n_prime, cutoff, wrap, grid,
                          robot_grid, robots, scaling, parts):  # pragma: no cover - compiled
    """:func:`_pair_runs` one run after the other."""
    return _pair_runs(count, positions, velocities, copies, reach, lam, gamma, n, n_prime, cutoff, wrap, grid,
                      robot_grid, robots, scaling, parts, 1)


_social_forces_serial = jit(_social_forces_serial, fastmath=True)


def _social_forces_parallel(count, positions, velocities, copies, reach, lam, gamma, n, n_prime, cutoff, wrap, grid,
                            robot_grid, robots, scaling, parts, threads):  # pragma: no cover - compiled
    """:func:`_pair_runs` on ``threads`` of numba's threads."""
    return _pair_runs(count, positions, velocities, copies, reach, lam, gamma, n, n_prime, cutoff, wrap, grid,
                      robot_grid, robots, scaling, parts, threads)


_social_forces_parallel = jit(_social_forces_parallel, fastmath=True, parallel=True)


def robot_shapes(angles: np.ndarray, reach: float, footprints: Footprints) -> tuple:
    """What :func:`social_force_step` takes as ``robots``: the robots' angles (rad), the
    largest distance (m) from a robot's origin to its footprint's edge, and their footprints."""
    return (np.ascontiguousarray(angles, dtype=np.float64), float(reach), *footprints.arrays()[:6])


def no_robots() -> tuple:
    """:func:`robot_shapes` of no robot (for agents alone)."""
    return robot_shapes(np.zeros(0), 0.0, Footprints.empty())


#: Crowds of at least this many agents (all copies of the world together) have their pair forces
#: computed in :data:`PAIR_PARTS` runs of rows, on numba's threads where there are several;
#: smaller ones in one run, serially. Measured on the office (in-process, 2 cores, 2026-11-28):
#: with 1,000 people a step took 530 us on two threads against 830 on one on a quiet host, and
#: 870-900 against 790-850 while another process kept a core busy (the threads' waiting,
#: spinning between loops, slows the rest of the step); with 200 people the threads saved 0-15
#: us of 105 quiet and cost up to 50 busy.
PARALLEL_MIN_AGENTS = 512
#: Runs of rows of a large crowd's pair forces, taken by the threads as they come for them: many
#: more than threads, so that a thread another process keeps waiting holds up few rows; each run
#: adds its own (count, 2) forces.
PAIR_PARTS = 64
#: Whether the pair forces run on the threads or on one: whichever was faster lately (the same
#: velocities either way).
PAIR_THREADS = ThreadChoice()
#: Smallest side (m) of the neighbour grids' cells.
MIN_GRID_CELL = 0.5


def neighbour_grids(positions: np.ndarray, count: int, total: int, reach: float) -> tuple:
    """The two grids :func:`social_force_step` takes, as one tuple: the agents'
    ``positions[:count]`` and the others' ``positions[count:total]``
    (:func:`~sim_server.core.crowd.navigation.build_grid` each), cells of a third of ``reach``
    (m; at least :data:`MIN_GRID_CELL`)."""
    cell = max(min(reach, 1.0e6) / 3.0, MIN_GRID_CELL)
    return build_grid(positions[:count], count, cell), build_grid(positions[count:total], total - count, cell)


def social_force_step(params: np.ndarray, dt: float, count: int, agents: tuple, walking: tuple, groups: tuple,
                      grids: tuple, wall_index: tuple, stamp: int, nearest: tuple, robots: tuple, extra: np.ndarray,
                      out: np.ndarray) -> int:
    """New velocities ``out[:count]`` (m/s) of agents ``0..count-1`` after one step of ``dt`` s
    (:func:`_social_force_step`, whose docstring says what each argument holds). Crowds of
    :data:`PARALLEL_MIN_AGENTS` agents or more have their pair forces computed in
    :data:`PAIR_PARTS` parts, on numba's threads where there are several, no other parallel
    loop runs (:func:`~sim_server.core.compiled.parallel_turn`) and the threads were faster
    lately (:data:`PAIR_THREADS`): the velocities are the same either way. Returns the next
    free stamp."""
    parts = pair_parts(count)
    turn = PAIR_THREADS.turn(count) if parts > 1 and get_num_threads() > 1 else nullcontext(False)
    with turn as parallel:
        return _social_force_step(params, dt, count, agents, walking, groups, grids, wall_index, stamp, nearest, robots,
                                  extra, out, parts, get_num_threads() if parallel else 1)


def pair_parts(count: int) -> int:
    """Runs of rows of the pair forces of a crowd of ``count`` agents (:data:`PAIR_PARTS` from
    :data:`PARALLEL_MIN_AGENTS`, else one)."""
    return PAIR_PARTS if count >= PARALLEL_MIN_AGENTS else 1


@jit
def _social_force_step(
    params, dt, count, agents, walking, groups, grids, wall_index, stamp, nearest, robots, extra, out, parts, threads,
):  # pragma: no cover - compiled
    """New velocities ``out[:count]`` (m/s) of agents ``0..count-1`` after one step of ``dt`` s.

    ``agents`` is one tuple ``(positions, velocities, radii, copies, offsets)``: positions (m),
    velocities (m/s), radii (m) and copies hold the agents, then others that push them but do
    not move here (robots); entries of different copies of the world (replicas) never meet.
    ``offsets`` (count, 2; m) place each agent's copy in the world: the walls are given in the
    world file's frame. ``walking`` is ``(directions, goal_distances, preferred_speeds)``: where
    each agent walks (unit vectors; m to its goal) and how fast (m/s). ``groups`` is
    ``(group_ids, group_count)``: ids (-1: none) number the groups ``0..group_count-1``.
    ``grids`` (:func:`neighbour_grids`) index the agents and the others. ``wall_index``
    (:meth:`~sim_server.core.crowd.walls.WallIndex.arrays`) holds the walls, ``stamp`` a fresh
    number for its queries; ``nearest`` (:meth:`~sim_server.core.crowd.walls.WallIndex.nearest_map`)
    the nearest wall of each place. ``robots`` gives the others' footprints
    (:func:`robot_shapes`); ``extra`` (count, 2) forces (m/s^2) added to each agent's
    (pedsim_ros's random and along-wall forces, :mod:`~sim_server.core.crowd.pedsim_forces`), or
    :data:`NO_EXTRA_FORCES`. The pair forces are computed in ``parts`` runs of rows
    (:func:`_pair_runs`), on ``threads`` of numba's threads where more than one. Returns the
    next free stamp.
    """
    positions, velocities, radii, copies, offsets = agents
    directions, goal_distances, preferred_speeds = walking
    group_ids, group_count = groups
    nearest_points, nearest_x0, nearest_y0, nearest_cell = nearest
    sums = np.zeros((group_count, 2))
    sizes = np.zeros(group_count)
    for i in range(count):
        g = group_ids[i]
        if g >= 0:
            sums[g, 0] += positions[i, 0]
            sums[g, 1] += positions[i, 1]
            sizes[g] += 1.0
    # the members of each group, group by group
    member_starts = np.zeros(group_count + 1, dtype=np.int64)
    for g in range(group_count):
        member_starts[g + 1] = member_starts[g] + int(sizes[g])
    members = np.empty(member_starts[group_count], dtype=np.int64)
    fill = member_starts[:-1].copy()
    for i in range(count):
        g = group_ids[i]
        if g >= 0:
            members[fill[g]] = i
            fill[g] += 1
    walls = np.empty((MAX_WALLS_PER_AGENT, 3))
    reach = params[_RANGE]
    tau = params[_TAU]
    lam, gamma, n, n_prime = params[_LAMBDA], params[_GAMMA], params[_N], params[_N_PRIME]
    cutoff, wrap = params[_CUTOFF_EXPONENT], params[_WRAP] != 0.0
    if threads > 1:
        social = _social_forces_parallel(count, positions, velocities, copies, reach, lam, gamma, n, n_prime, cutoff, wrap,
                                         grids[0], grids[1], robots, params[_ROBOT_SCALING], parts, threads)
    else:
        social = _social_forces_serial(count, positions, velocities, copies, reach, lam, gamma, n, n_prime, cutoff, wrap,
                                       grids[0], grids[1], robots, params[_ROBOT_SCALING], parts)
    for i in range(count):
        xi, yi = positions[i, 0], positions[i, 1]
        vxi, vyi = velocities[i, 0], velocities[i, 1]
        ex, ey = directions[i, 0], directions[i, 1]
        distance_to_goal = goal_distances[i]
        # desired force
        if distance_to_goal > params[_GOAL_THRESHOLD]:
            fx = (ex * preferred_speeds[i] - vxi) / tau
            fy = (ey * preferred_speeds[i] - vyi) / tau
        else:
            fx = -vxi / tau
            fy = -vyi / tau
        fx *= params[_DESIRED]
        fy *= params[_DESIRED]
        sx, sy = social[i, 0], social[i, 1]
        fx += params[_SOCIAL] * sx
        fy += params[_SOCIAL] * sy
        # the nearest wall (from the map; exactly where it is near), and the walls the step may
        # reach: the walls are in the world file's frame, the agent's copy lies at its offset
        lx, ly = xi - offsets[i, 0], yi - offsets[i, 1]
        wall_distance, wall_x, wall_y = nearest_wall(lx, ly, nearest_points, nearest_x0, nearest_y0, nearest_cell)
        near = radii[i] + dt * params[_MULTIPLIER] * preferred_speeds[i] + NEAR_WALL
        found = 0
        if wall_distance < near + 2.0 * nearest_cell:  # the map is within a cell or so of exact
            found = walls_within(lx, ly, near, stamp, wall_index, walls, MAX_WALLS_PER_AGENT)
            stamp += 1
        if found > 0:
            wall_distance, wall_x, wall_y = walls[0, 0], walls[0, 1], walls[0, 2]
        if 0.0 < wall_distance < math.inf:
            gap = wall_distance - radii[i]
            if gap < params[_OBSTACLE_THRESHOLD]:
                amount = params[_OBSTACLE] * math.exp(-gap / params[_SIGMA]) / wall_distance
                fx += amount * (lx - wall_x)
                fy += amount * (ly - wall_y)
        # group forces
        g = group_ids[i]
        if g >= 0 and sizes[g] > 1.0:
            size = sizes[g]
            cx = sums[g, 0] / size - xi
            cy = sums[g, 1] / size - yi
            norm = math.sqrt(cx * cx + cy * cy)
            soft = (math.tanh(norm - (size - 1.0) / 2.0) + 1.0) / 2.0
            fx += params[_COHERENCE] * cx * soft
            fy += params[_COHERENCE] * cy * soft
            rx, ry = 0.0, 0.0
            for m in range(member_starts[g], member_starts[g + 1]):
                j = members[m]
                if j != i:
                    dx = xi - positions[j, 0]
                    dy = yi - positions[j, 1]
                    if math.sqrt(dx * dx + dy * dy) <= params[_GROUP_THRESHOLD]:
                        rx += dx
                        ry += dy
            fx += params[_GROUP_REPULSION] * rx
            fy += params[_GROUP_REPULSION] * ry
            ox = (sums[g, 0] - xi) / (size - 1.0) - xi
            oy = (sums[g, 1] - yi) / (size - 1.0) - yi
            other_distance = math.sqrt(ox * ox + oy * oy)
            if other_distance > 0.0 and distance_to_goal > 0.0:
                alignment = (ex * ox + ey * oy) / other_distance
                amount = params[_GAZE] * other_distance * alignment / distance_to_goal
                fx += amount * ex
                fy += amount * ey
        if extra.shape[0] > 0:
            fx += extra[i, 0]
            fy += extra[i, 1]
        # integrate, cap, stop, keep out of walls
        vx = vxi + dt * fx
        vy = vyi + dt * fy
        speed = math.sqrt(vx * vx + vy * vy)
        cap = params[_MULTIPLIER] * preferred_speeds[i]
        if speed == 0.0 or not math.isfinite(speed):
            vx, vy = 0.0, 0.0
        elif speed > cap:
            vx *= cap / speed
            vy *= cap / speed
        if distance_to_goal < params[_STOP]:
            vx, vy = 0.0, 0.0
        if found > 0:
            vx, vy = keep_out_of_walls(lx, ly, vx, vy, radii[i], dt, walls, found)
        out[i, 0] = vx
        out[i, 1] = vy
    return stamp
