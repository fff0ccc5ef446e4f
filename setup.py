"""Build script of the sim_server ROS 2 package (ament_python)."""

import os
from setuptools import find_packages, setup

PACKAGE_NAME = "sim_server"
HERE = os.path.dirname(os.path.abspath(__file__))


def _files_under(top, share_subdir):
    """Map every file below ``top`` (recursively) to share/<pkg>/<share_subdir>/...

    Returns a list of ``(install_dir, [files])`` tuples for ``data_files``,
    one per directory that holds files, keeping the sub-folder layout.  A
    missing or empty ``top`` yields an empty list.  Paths are relative to the
    directory of this file, as setuptools expects.
    """
    entries = []
    root = os.path.join(HERE, top)
    if not os.path.isdir(root):
        return entries
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        files = sorted(
            os.path.relpath(os.path.join(dirpath, name), HERE)
            for name in filenames
            if not name.endswith((".pyc", "~"))
        )
        if not files:
            continue
        rel = os.path.relpath(dirpath, root)
        dest = os.path.join("share", PACKAGE_NAME, share_subdir)
        if rel != os.curdir:
            dest = os.path.join(dest, rel)
        entries.append((dest, files))
    return entries


setup(
    name=PACKAGE_NAME,
    version="0.2.0",
    description="Flatland-style 2D robot simulator for ROS 2",
    license="BSD-3-Clause",
    maintainer="sim_server maintainers",
    maintainer_email="sim-maintainers@example.com",
    python_requires=">=3.10",
    packages=find_packages(
        include=["sim_server", "sim_server.*", "sim_plugins", "sim_plugins.*"]
    ),
    data_files=[
        (
            "share/ament_index/resource_index/packages",
            ["resource/" + PACKAGE_NAME],
        ),
        ("share/" + PACKAGE_NAME, ["package.xml"]),
    ]
    + _files_under("launch", "launch")
    + _files_under("config", "config"),
    install_requires=["setuptools"],
    # The ROS 2 wheels and the rest come from requirements/ (make setup); these are optional.
    extras_require={"learning": ["gymnasium>=1.0", "pettingzoo>=1.24"], "ray": ["ray>=2.40"], "live": ["foxglove-sdk>=0.30"]},
    entry_points={
        "console_scripts": [
            "sim_server = sim_server.__main__:main",
        ],
        "sim_server.model_plugins": [
            "DiffDrive = sim_plugins.diff_drive:DiffDrive",
            "TricycleDrive = sim_plugins.tricycle_drive:TricycleDrive",
            "AckermannDrive = sim_plugins.ackermann_drive:AckermannDrive",
            "OmniDrive = sim_plugins.omni_drive:OmniDrive",
            "Laser = sim_plugins.laser:Laser",
            "Bumper = sim_plugins.bumper:Bumper",
            "BoolSensor = sim_plugins.bool_sensor:BoolSensor",
            "Gps = sim_plugins.gps:Gps",
            "Camera = sim_plugins.camera:Camera",
            "Tween = sim_plugins.tween:Tween",
            "ModelTfPublisher = sim_plugins.model_tf_publisher:ModelTfPublisher",
            "Imu = sim_plugins.imu:Imu",
            "Range = sim_plugins.range_sensor:RangeSensor",
        ],
        "sim_server.world_plugins": [],
    },
)
