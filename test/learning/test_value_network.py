"""The NumPy value network (sim_server.learning.value_network): its gradients against finite
differences, Adam fitting a function, files written and read back, and bad files refused in
one line naming them."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.learning import value_network as value_network_module
from sim_server.learning.value_network import ValueNetwork


def test_gradients_are_those_of_finite_differences() -> None:
    rng = np.random.default_rng(1)
    network = ValueNetwork([4, 7, 5, 1], rng)
    x, targets, offset = rng.standard_normal((9, 4)), rng.standard_normal(9), rng.standard_normal(9)
    loss, gradients = network.gradients(x, targets, offset)
    step = 1e-6
    for parameter, gradient in zip(network.parameters, gradients):
        for index in [tuple(rng.integers(0, n) for n in parameter.shape) for _ in range(6)]:
            kept = parameter[index]
            parameter[index] = kept + step
            above = network.gradients(x, targets, offset)[0]
            parameter[index] = kept - step
            below = network.gradients(x, targets, offset)[0]
            parameter[index] = kept
            assert gradient[index] == pytest.approx((above - below) / (2 * step), rel=1e-5, abs=1e-8)
    assert loss == pytest.approx(np.mean((network(x) + offset - targets) ** 2))


def test_adam_fits_a_smooth_function() -> None:
    rng = np.random.default_rng(2)
    network = ValueNetwork([2, 32, 32, 1], rng, last_scale=0.01)
    x = rng.uniform(-1.0, 1.0, (2000, 2))
    y = np.sin(2.0 * x[:, 0]) * x[:, 1]
    assert abs(network(x)).max() < 0.1  # a small last layer: it starts near 0
    first = network.fit(x, y, 0.0)
    for _ in range(1500):
        rows = rng.integers(0, len(x), 100)
        network.fit(x[rows], y[rows], 3e-3)
    assert network.fit(x, y, 0.0) < first / 20


def test_a_saved_network_reads_back_the_same(tmp_path: Path) -> None:
    network = ValueNetwork([3, 6, 1], np.random.default_rng(3))
    path = tmp_path / "net.npz"
    network.save(path, format=np.array(1), kinematics=np.array("holonomic"))
    read, extra = ValueNetwork.load(path)
    x = np.random.default_rng(4).standard_normal((5, 3))
    assert np.array_equal(read(x), network(x)) and read.sizes == [3, 6, 1]
    assert set(extra) == {"format", "kinematics"} and str(extra["kinematics"]) == "holonomic"
    copy = network.copy()
    copy.weights[0][0, 0] += 1.0
    assert network.weights[0][0, 0] != copy.weights[0][0, 0]


def _npz(path: Path, **arrays: np.ndarray) -> Path:
    with open(path, "wb") as file:
        np.savez(file, **arrays)
    return path


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = {"weights_0": np.ones((3, 4)), "biases_0": np.zeros(4), "weights_1": np.ones((4, 1)), "biases_1": np.zeros(1)}
    (tmp_path / "text.npz").write_text("not a zip at all")
    (tmp_path / "folder.npz").mkdir()
    with open(tmp_path / "pickled.npz", "wb") as file:
        np.savez(file, weights_0=np.array([{"a": 1}, None], dtype=object), biases_0=np.zeros(1))
    return {
        "not a zip": (tmp_path / "text.npz", "is not a policy saved by sim_server (NumPy .npz)"),
        "a folder": (tmp_path / "folder.npz", "is a directory, not a regular file"),
        "missing": (tmp_path / "missing.npz", "does not exist"),
        "pickled objects": (tmp_path / "pickled.npz", "is not a policy saved by sim_server"),
        "no layers": (_npz(tmp_path / "none.npz", format=np.array(1)), "a network needs weights_0"),
        "no biases": (_npz(tmp_path / "nob.npz", weights_0=np.ones((3, 1))), "weights_0 has no biases_0"),
        "shapes apart": (_npz(tmp_path / "apart.npz", **{**good, "weights_1": np.ones((5, 1))}),
                         "layer 1 has weights of shape (5, 1) and biases of shape (1,), which do not follow"),
        "biases of a wrong shape": (_npz(tmp_path / "bshape.npz", **{**good, "biases_0": np.zeros(3)}),
                                    "layer 0 has weights of shape (3, 4) and biases of shape (3,)"),
        "not finite": (_npz(tmp_path / "nan.npz", **{**good, "weights_1": np.full((4, 1), np.nan)}),
                       "layer 1 holds numbers that are not finite floats"),
        "integers": (_npz(tmp_path / "int.npz", **{**good, "biases_0": np.zeros(4, dtype=np.int64)}),
                     "layer 0 holds numbers that are not finite floats"),
        "stray biases": (_npz(tmp_path / "stray.npz", **good, biases_7=np.zeros(2)), "biases without weights: biases_7"),
        "too wide": (_npz(tmp_path / "wide.npz", weights_0=np.zeros((1, 5000)), biases_0=np.zeros(5000)),
                     "layer 0 has 5000 units, beyond"),
        "too deep": (_npz(tmp_path / "deep.npz", **{f"{kind}_{k}": (np.ones((2, 2)) if kind == "weights" else np.zeros(2))
                                                     for k in range(17) for kind in ("weights", "biases")}),
                     "layers, got 17"),
    }


def test_bad_files_are_refused_in_one_line_naming_them(tmp_path: Path) -> None:
    for case, (path, message) in _bad_files(tmp_path).items():
        with pytest.raises(ConfigError) as caught:
            ValueNetwork.load(path)
        assert message in str(caught.value) and path.name in str(caught.value), case
        assert "\n" not in str(caught.value) and len(str(caught.value)) < 400, case


def test_reads_are_bounded_before_unpacking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.npz"
    with open(path, "wb") as file:  # 8 MB of zeros packed into a few kB: a small zip bomb
        np.savez_compressed(file, weights_0=np.zeros((1000, 1000)), biases_0=np.zeros(1000))
    assert path.stat().st_size < 100_000
    monkeypatch.setattr(limits, "MAX_POLICY_FILE_BYTES", 1_000_000)
    with pytest.raises(ConfigError, match=r"unpacks to \d+ bytes, more than the limit of 1000000"):
        ValueNetwork.load(path)
    monkeypatch.setattr(limits, "MAX_POLICY_FILE_BYTES", 1000)
    with pytest.raises(ConfigError, match="more than the limit"):
        ValueNetwork.load(path)
    members = io.BytesIO()
    with zipfile.ZipFile(members, "w") as archive:
        for k in range(value_network_module.MAX_EXTRA_ARRAYS + 40):
            archive.writestr(f"a{k}.npy", b"")
    (tmp_path / "many.npz").write_bytes(members.getvalue())
    monkeypatch.setattr(limits, "MAX_POLICY_FILE_BYTES", 64 * 1024 * 1024)
    with pytest.raises(ConfigError, match="arrays, more than a policy's"):
        ValueNetwork.load(tmp_path / "many.npz")


def test_bad_shapes_of_a_new_network_are_refused() -> None:
    rng = np.random.default_rng(5)
    with pytest.raises(ValueError, match="layers, got 0"):
        ValueNetwork([3], rng)
    with pytest.raises(ValueError, match="layers, got 17"):
        ValueNetwork([2] * 18, rng)
    with pytest.raises(ValueError, match="units, got 0"):
        ValueNetwork([3, 0, 1], rng)
