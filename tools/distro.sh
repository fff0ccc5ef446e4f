# shellcheck shell=bash
# The ROS 2 distributions this checkout sets up from PyPI wheels, which one is in use, and where
# its environment is. Sourced by env.sh, tools/setup_env.sh and tools/ros2_tools.sh: the one
# place that names them and lays out their folders.
#
# Each distro has an environment of its own, so switching never mixes two distros' wheels:
#   .envs/<distro>/.venv        the virtual environment (requirements/ros-<distro>.txt, ...)
#   .envs/<distro>/{build,install,log}   the interface packages built by colcon
#   .envs/<distro>/ros2_tools   the real ROS 2 command-line tools (make ros2-tools)
#   .envs/<distro>/env.sh       `source` it for that distro whatever ROS_DISTRO says
#
# Jazzy is the default: the LTS release (supported until May 2029), the one most ROS 2 users run;
# Kilted's support ends on 2026-12-31.

SIM_DISTROS=(jazzy kilted)
SIM_DEFAULT_DISTRO=jazzy

# Print the distro to use: $ROS_DISTRO where set, else the default. Fails with one line naming
# the value when it is not one of SIM_DISTROS.
sim_resolve_distro() {
    local wanted="${ROS_DISTRO:-$SIM_DEFAULT_DISTRO}" known
    for known in "${SIM_DISTROS[@]}"; do
        if [[ "$wanted" == "$known" ]]; then
            printf '%s\n' "$wanted"
            return 0
        fi
    done
    printf 'ROS_DISTRO=%s: this checkout sets up %s from PyPI wheels (default %s); with a full ROS 2 %s installation, build the packages with colcon instead (docs/setup.md)\n' \
        "$wanted" "${SIM_DISTROS[*]}" "$SIM_DEFAULT_DISTRO" "$wanted" >&2
    return 1
}

# Print the environment folder of distro $2 in the checkout $1.
sim_env_dir() {
    printf '%s/.envs/%s\n' "$1" "$2"
}

# Print, a line each, the CMake arguments of every colcon build of this checkout's interface
# packages, for the venv's interpreter $1.
sim_cmake_args() {
    printf '%s\n' -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release "-DPython3_EXECUTABLE=$1" -DPython3_FIND_VIRTUALENV=ONLY
}

# Take every entry inside the checkout $1's environments (any distro's, and .venv/ and install/
# of the layout before .envs/) off the path variables named after it; a variable left empty is
# unset. Another distro's paths would mix its libraries and modules into this one's.
sim_strip_env_paths() {
    local root="$1" var cleaned
    shift
    for var in "$@"; do
        [[ -n "${!var+x}" ]] || continue
        cleaned="$(printf '%s' "${!var}" | tr ':' '\n' \
            | grep -v -e "^$root/.envs/" -e "^$root/.venv" -e "^$root/install" | paste -sd: - || true)"
        if [[ -n "$cleaned" ]]; then export "$var=$cleaned"; else unset "$var"; fi
    done
}
