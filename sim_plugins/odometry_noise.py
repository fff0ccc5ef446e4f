"""The errors of a drive's odometry: the reference's white noise, and drift as real odometry has.

Parameters (all opt-in: without them odometry is ground truth, as the reference's):

* ``odom_pose_noise`` and ``odom_twist_noise`` ([x, y, yaw] and [vx, vy, wz] variances, m^2,
  rad^2, (m/s)^2, (rad/s)^2; [0, 0, 0]): white noise on each measurement, as the reference adds.
* ``odom_drift`` (a map, every key 0 by default): errors integrated from the motion, so that
  odometry wanders off the ground truth the farther and the more the robot turns, as wheel
  odometry does (what AMCL's ``alpha1`` to ``alpha4`` and robot_localization are tuned against):

  - ``translation_from_translation`` (m^2/m): variance of the distance error per metre driven
    (wheel radius and slip);
  - ``translation_from_rotation`` (m^2/rad): of the distance error per radian turned;
  - ``rotation_from_rotation`` (rad^2/rad): of the heading error per radian turned (wheel base);
  - ``rotation_from_translation`` (rad^2/m): of the heading error per metre driven (unequal
    wheels: a robot driving straight believes it turns).

  Between two measurements the true motion, in the body's frame, is scaled along its direction
  by a normal error of variance ``translation_from_translation * d + translation_from_rotation
  * |dtheta|`` over the distance d, and its turn gets one of variance ``rotation_from_rotation *
  |dtheta| + rotation_from_translation * d``; the odometry pose integrates these noisy steps
  from where it started. The variances add up over a path, so how far odometry drifts depends
  on the path, not on ``pub_rate``. A model placed by hand (moved, reset) starts its odometry
  afresh where it was put. The white pose noise is added on top.

Every measurement of a noisy odometry draws its numbers from the plugin's own stream
(:mod:`sim_server.core.random_streams`): 6 for the white noise, 2 more with drift; a batch of
drives draws for all of them in one compiled call and computes their errors in another.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from sim_server.core.plugins import PluginContext, YamlReader, limits as bounds
from sim_server.core.plugins.services import draw_normals, gather, jit
from sim_plugins.common import plugin_stream

#: The drift's keys, in the order of :attr:`OdometryNoise.drift`.
DRIFT_KEYS = (
    "translation_from_translation", "translation_from_rotation", "rotation_from_rotation", "rotation_from_translation",
)
#: Numbers a measurement draws: the white noise (x, y, yaw, vx, vy, wz), then the drift's two.
WHITE_DRAWS, DRIFT_DRAWS = 6, 2


def _variances(config: YamlReader, key: str) -> tuple[float, ...]:
    values = tuple(config.get_floats(key, 3, (0.0, 0.0, 0.0), within=bounds.NOISE))
    if any(v < 0.0 for v in values):
        raise config.error(f"variances must be >= 0, got {list(values)}", key)
    return values


class OdometryNoise:
    """One drive's odometry errors: the keys read, the stream, and the drift's state.

    Args:
        context: the plugin's context (its stream).
        config: the plugin's keys.
    """

    def __init__(self, context: PluginContext, config: YamlReader) -> None:
        #: Variances of the white noise: pose (x, y, yaw) and twist (vx, vy, wz).
        self.pose_variances = _variances(config, "odom_pose_noise")
        self.twist_variances = _variances(config, "odom_twist_noise")
        drift = config.get_map("odom_drift", {})
        #: The drift's variance rates, in the order of :data:`DRIFT_KEYS`.
        self.drift = np.array([drift.get_float(key, 0.0, within=bounds.NOISE) for key in DRIFT_KEYS])
        drift.ensure_all_keys_used()
        #: Standard deviations of the white noise (x, y, yaw, vx, vy, wz).
        self.white_std = np.sqrt(np.array(self.pose_variances + self.twist_variances))
        self.drifting = bool(self.drift.any())
        #: Whether anything random is added (without, no number is drawn at all).
        self.noisy = self.drifting or bool(self.white_std.any())
        #: Numbers a measurement draws (0 without noise).
        self.draws = (WHITE_DRAWS + (DRIFT_DRAWS if self.drifting else 0)) if self.noisy else 0
        self.stream = plugin_stream(context)
        #: The drift's state: the odometry pose (x, y, yaw) and the true pose it was last
        #: measured at (rows of a batch's arrays while in one), whether it has started, and the
        #: model's placements then.
        self.estimate = np.zeros((1, 3))
        self.last_truth = np.zeros((1, 3))
        self.started = np.zeros(1, dtype=bool)
        self.placements = np.zeros(1, dtype=np.int64)

    def apply(self, truth: np.ndarray, placements: int, extra: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """The noisy odometry of one measurement (``truth``: (6,) x, y, yaw, vx, vy, wz) and
        ``extra`` more numbers drawn after the odometry's for the caller (a twist's noise).
        ``placements``: the model's :attr:`~sim_server.core.physics.model.Model.placements`."""
        out, more = _apply(
            self.stream.keys, self.stream.counters, _ONE_ROW, self.draws, extra, truth.reshape(1, 6),
            self.white_std.reshape(1, 6), self.drift.reshape(1, 4), self.estimate, self.last_truth, self.started,
            self.placements, np.array([placements], dtype=np.int64),
        )
        return out[0], more[0]


_ONE_ROW = np.zeros(1, dtype=np.int64)


@jit
def _wrap(angle):
    """``angle`` (rad) wrapped into [-pi, pi)."""
    return angle - 2.0 * math.pi * math.floor((angle + math.pi) / (2.0 * math.pi))


@jit
def _odometry_errors(truth, rows, draws, white_std, drift, estimate, last_truth, started, placements_seen,
                     placements_now, out):
    for j in range(rows.shape[0]):
        i = rows[j]
        x, y, theta = truth[j, 0], truth[j, 1], truth[j, 2]
        if drift[i, 0] + drift[i, 1] + drift[i, 2] + drift[i, 3] > 0.0:
            if not started[i] or placements_now[j] != placements_seen[i]:
                estimate[i, 0], estimate[i, 1], estimate[i, 2] = x, y, theta  # (afresh, where it is)
                started[i], placements_seen[i] = True, placements_now[j]
            else:
                last_cos, last_sin = math.cos(last_truth[i, 2]), math.sin(last_truth[i, 2])
                world_dx, world_dy = x - last_truth[i, 0], y - last_truth[i, 1]
                dx = last_cos * world_dx + last_sin * world_dy
                dy = -last_sin * world_dx + last_cos * world_dy
                turn = _wrap(theta - last_truth[i, 2])
                distance, turned = math.hypot(dx, dy), abs(turn)
                if distance > 0.0:
                    spread = math.sqrt(drift[i, 0] * distance + drift[i, 1] * turned)
                    scale = 1.0 + draws[j, WHITE_DRAWS] * spread / distance
                    dx, dy = dx * scale, dy * scale
                turn += draws[j, WHITE_DRAWS + 1] * math.sqrt(drift[i, 2] * turned + drift[i, 3] * distance)
                cos, sin = math.cos(estimate[i, 2]), math.sin(estimate[i, 2])
                estimate[i, 0] += cos * dx - sin * dy
                estimate[i, 1] += sin * dx + cos * dy
                estimate[i, 2] = _wrap(estimate[i, 2] + turn)
            last_truth[i, 0], last_truth[i, 1], last_truth[i, 2] = x, y, theta
            x, y, theta = estimate[i, 0], estimate[i, 1], estimate[i, 2]
        out[j, 0] = x + draws[j, 0] * white_std[i, 0]
        out[j, 1] = y + draws[j, 1] * white_std[i, 1]
        out[j, 2] = theta + draws[j, 2] * white_std[i, 2]
        for k in range(3, 6):
            out[j, k] = truth[j, k] + draws[j, k] * white_std[i, k]


def _apply(
    keys: np.ndarray, counters: np.ndarray, rows: np.ndarray, count: int, extra: int, truth: np.ndarray,
    white_std: np.ndarray, drift: np.ndarray, estimate: np.ndarray, last_truth: np.ndarray, started: np.ndarray,
    placements_seen: np.ndarray, placements_now: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``count + extra`` numbers for each of ``rows`` and compute their noisy odometry (M, 6)
    from ``truth`` (M, 6); returns it and the ``extra`` numbers (M, extra)."""
    draws = np.empty((len(rows), count + extra))
    draw_normals(keys, counters, rows, draws)
    out = np.empty((len(rows), 6))
    _odometry_errors(truth, rows, draws, white_std, drift, estimate, last_truth, started, placements_seen,
                     placements_now, out)
    return out, draws[:, count:]


class OdometryNoiseBatch:
    """The odometry errors of a batch of drives, in arrays; each drive's own are views of its row,
    so a drive measured alone or in the batch goes on with the same stream and drift.

    Args:
        noises: each drive's :class:`OdometryNoise`.
    """

    def __init__(self, noises: Sequence[OdometryNoise]) -> None:
        self.noises = list(noises)
        self.keys, self.counters = gather([noise.stream for noise in self.noises])
        self.white_std = np.array([noise.white_std for noise in self.noises], dtype=np.float64).reshape(-1, 6)
        self.drift = np.array([noise.drift for noise in self.noises], dtype=np.float64).reshape(-1, 4)
        self.estimate = np.array([noise.estimate[0] for noise in self.noises], dtype=np.float64).reshape(-1, 3)
        self.last_truth = np.array([noise.last_truth[0] for noise in self.noises], dtype=np.float64).reshape(-1, 3)
        self.started = np.array([noise.started[0] for noise in self.noises], dtype=bool)
        self.placements = np.array([noise.placements[0] for noise in self.noises], dtype=np.int64)
        for row, noise in enumerate(self.noises):
            noise.estimate, noise.last_truth = self.estimate[row:row + 1], self.last_truth[row:row + 1]
            noise.started, noise.placements = self.started[row:row + 1], self.placements[row:row + 1]

    def apply(self, rows: np.ndarray, draws_per_row: int, truth: np.ndarray, placements: np.ndarray, extra: int = 0
              ) -> tuple[np.ndarray, np.ndarray]:
        """The noisy odometry (M, 6) of drives ``rows`` (all drawing ``draws_per_row`` numbers,
        and ``extra`` more for the caller, returned (M, extra)) measured at ``truth`` (M, 6: x, y,
        yaw, vx, vy, wz) with their models' ``placements`` (M,)."""
        return _apply(self.keys, self.counters, rows, draws_per_row, extra, truth, self.white_std, self.drift,
                      self.estimate, self.last_truth, self.started, self.placements, placements)


def warm_up() -> None:
    """Compile (or load) the errors' kernel."""
    one = np.zeros((1, 6))
    _odometry_errors(one, _ONE_ROW, np.zeros((1, 8)), one, np.zeros((1, 4)), np.zeros((1, 3)), np.zeros((1, 3)),
                     np.zeros(1, dtype=bool), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.empty((1, 6)))
