"""A small neural network in NumPy: a value function, trained by Adam, kept in a .npz file.

The robot policies trained here (:mod:`sim_server.learning.lookahead`) need a function of a
state to one number, fitted to targets by regression: a multilayer perceptron with ReLU
between layers, trained on mean squared error by Adam (Kingma and Ba, 2015; its usual
constants). No deep-learning library is needed. A network is saved as NumPy's ``.npz``
(``weights_<k>`` and ``biases_<k>`` of each layer, and the caller's own arrays), and read back
with limits (:data:`~sim_server.core.limits.MAX_POLICY_FILE_BYTES`, layers and units), no
pickled objects, every number finite: a bad file is one line naming it.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.bounded_read import read_bytes

#: Adam's constants: first and second moment decay, and the term that keeps its division finite.
ADAM_BETA1 = 0.9
ADAM_BETA2 = 0.999
ADAM_EPSILON = 1e-8
#: Arrays of a network's file besides its layers (the caller's own) at most.
MAX_EXTRA_ARRAYS = 64


class ValueNetwork:
    """A perceptron of ``sizes`` (inputs, hidden units..., outputs), ReLU between layers,
    weights drawn by He's rule from ``rng``; the last layer's are scaled by ``last_scale``
    (small: the network starts near 0)."""

    def __init__(self, sizes: Sequence[int], rng: np.random.Generator, last_scale: float = 1.0) -> None:
        sizes = [int(size) for size in sizes]
        if len(sizes) < 2 or not limits.POLICY_LAYERS.contains(len(sizes) - 1):
            raise ValueError(f"a network has {limits.POLICY_LAYERS.describe()} layers, got {len(sizes) - 1}")
        for size in sizes:
            if not limits.POLICY_UNITS.contains(size):
                raise ValueError(f"a layer has {limits.POLICY_UNITS.describe()} units, got {size}")
        self.weights = [rng.standard_normal((a, b)) * np.sqrt(2.0 / a) for a, b in zip(sizes[:-1], sizes[1:])]
        self.weights[-1] *= last_scale
        self.biases = [np.zeros(b) for b in sizes[1:]]
        self._reset_moments()

    def _reset_moments(self) -> None:
        self._first = [np.zeros_like(p) for p in self.parameters]
        self._second = [np.zeros_like(p) for p in self.parameters]
        self._updates = 0

    @property
    def parameters(self) -> list[np.ndarray]:
        return self.weights + self.biases

    @property
    def inputs(self) -> int:
        return self.weights[0].shape[0]

    @property
    def sizes(self) -> list[int]:
        return [self.inputs] + [w.shape[1] for w in self.weights]

    def copy(self) -> "ValueNetwork":
        """A copy of the weights (a fresh optimizer)."""
        made = ValueNetwork.__new__(ValueNetwork)
        made.weights = [w.copy() for w in self.weights]
        made.biases = [b.copy() for b in self.biases]
        made._reset_moments()
        return made

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The first output of each row of ``x`` (..., inputs)."""
        return self._layers(x)[-1][..., 0]

    def _layers(self, x: np.ndarray) -> list[np.ndarray]:
        out = [x]
        last = len(self.weights) - 1
        for k, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = out[-1] @ w + b
            out.append(np.maximum(h, 0.0) if k < last else h)
        return out

    def gradients(self, x: np.ndarray, targets: np.ndarray, offset: np.ndarray | float = 0.0) -> tuple[float, list[np.ndarray]]:
        """The mean squared error of ``offset`` plus the first output against ``targets`` over
        the rows of ``x`` (N, inputs), and its gradient by each of :attr:`parameters`."""
        layers = self._layers(x)
        error = layers[-1][:, 0] + offset - targets
        grad = np.zeros_like(layers[-1])
        grad[:, 0] = (2.0 / len(targets)) * error
        weight_grads: list[np.ndarray] = [np.empty(0)] * len(self.weights)
        bias_grads: list[np.ndarray] = [np.empty(0)] * len(self.weights)
        for k in range(len(self.weights) - 1, -1, -1):
            weight_grads[k] = layers[k].T @ grad
            bias_grads[k] = grad.sum(axis=0)
            if k:
                grad = (grad @ self.weights[k].T) * (layers[k] > 0.0)
        return float(np.mean(error * error)), weight_grads + bias_grads

    def fit(self, x: np.ndarray, targets: np.ndarray, rate: float, offset: np.ndarray | float = 0.0) -> float:
        """One Adam step of learning ``rate`` on :meth:`gradients`; returns the error before it."""
        loss, gradients = self.gradients(x, targets, offset)
        self._updates += 1
        step = self._updates
        for k, (parameter, gradient) in enumerate(zip(self.parameters, gradients)):
            self._first[k] = ADAM_BETA1 * self._first[k] + (1.0 - ADAM_BETA1) * gradient
            self._second[k] = ADAM_BETA2 * self._second[k] + (1.0 - ADAM_BETA2) * gradient * gradient
            first = self._first[k] / (1.0 - ADAM_BETA1**step)
            second = self._second[k] / (1.0 - ADAM_BETA2**step)
            parameter -= rate * first / (np.sqrt(second) + ADAM_EPSILON)
        return loss

    # ------------------------------------------------------------------------------- files
    def save(self, path: Path, **extra: np.ndarray) -> None:
        """Write the network and ``extra`` arrays (no objects) to ``path`` (.npz)."""
        arrays = {f"weights_{k}": w for k, w in enumerate(self.weights)}
        arrays.update({f"biases_{k}": b for k, b in enumerate(self.biases)})
        arrays.update({key: np.asarray(value) for key, value in extra.items()})
        with open(path, "wb") as file:
            np.savez(file, **arrays)

    @classmethod
    def load(cls, path: Path, what: str = "policy file") -> tuple["ValueNetwork", dict[str, np.ndarray]]:
        """The network in ``path`` and its extra arrays (ConfigError: one line naming the file)."""
        shown = f'{what} "{path}"'
        data = read_bytes(Path(path), what, limits.MAX_POLICY_FILE_BYTES)
        arrays = _npz_arrays(data, shown)
        layers = 0
        while f"weights_{layers}" in arrays:
            layers += 1
        if not limits.POLICY_LAYERS.contains(layers):
            raise ConfigError(f"{shown}: a network needs weights_0 ... and has {limits.POLICY_LAYERS.describe()} layers, got {layers}")
        made = cls.__new__(cls)
        made.weights, made.biases = [], []
        inputs = None
        for k in range(layers):
            weights, biases = arrays.pop(f"weights_{k}"), arrays.pop(f"biases_{k}", None)
            if biases is None:
                raise ConfigError(f"{shown}: weights_{k} has no biases_{k}")
            if weights.ndim != 2 or biases.shape != (weights.shape[1],) or (inputs is not None and weights.shape[0] != inputs):
                raise ConfigError(f"{shown}: layer {k} has weights of shape {weights.shape} and biases of shape "
                                  f"{biases.shape}, which do not follow the layer before")
            for size in weights.shape:
                if not limits.POLICY_UNITS.contains(size):
                    raise ConfigError(f"{shown}: layer {k} has {size} units, beyond {limits.POLICY_UNITS.describe()}")
            if weights.dtype.kind != "f" or biases.dtype.kind != "f" or not (np.isfinite(weights).all() and np.isfinite(biases).all()):
                raise ConfigError(f"{shown}: layer {k} holds numbers that are not finite floats")
            made.weights.append(weights.astype(np.float64))
            made.biases.append(biases.astype(np.float64))
            inputs = weights.shape[1]
        if any(key.startswith("biases_") for key in arrays):
            raise ConfigError(f"{shown}: biases without weights: {', '.join(sorted(k for k in arrays if k.startswith('biases_')))}")
        made._reset_moments()
        return made, arrays


def _npz_arrays(data: bytes, shown: str) -> dict[str, np.ndarray]:
    """The arrays of an .npz file's bytes, the sizes of its members checked before reading."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if len(members) > 2 * limits.POLICY_LAYERS.high + MAX_EXTRA_ARRAYS:
                raise ConfigError(f"{shown} has {len(members)} arrays, more than a policy's")
            unpacked = sum(member.file_size for member in members)
            if unpacked > limits.MAX_POLICY_FILE_BYTES:
                raise ConfigError(f"{shown} unpacks to {unpacked} bytes, more than the limit of {limits.MAX_POLICY_FILE_BYTES}")
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}
    except ConfigError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ConfigError(f"{shown} is not a policy saved by sim_server (NumPy .npz): {first[:200]}") from None
