#!/usr/bin/env bash
# Build the real ROS 2 command-line tools (ros2 launch/run/topic/service/param/pkg, launch_ros,
# teleop_twist_keyboard) on top of the pip-only environment (run by `make ros2-tools`, and by
# `make test`, whose end-to-end tests drive them), for the distro of the environment
# (ROS_DISTRO, default in tools/distro.sh) into .envs/<distro>/ros2_tools.  Afterwards, from bash:
#
#     source ros2_cli.sh        # env.sh, then the tools (ROS_DISTRO=kilted for Kilted's)
#
# None of these tools is on PyPI: their unmodified upstream sources and build script come with
# the development machines, in ros2_tools/ beside the checkout (../shared/ros2_tools).  Where
# to look, first match wins:
#   $SIM_ROS2_TOOLS_SRC           a folder holding build.sh and ros2_tools_src.tar.gz
#   <checkout>/../shared/ros2_tools
#   /work/shared/ros2_tools
# With a full ROS 2 installation (`ros2` on PATH before env.sh), nothing is built: the tests use
# the installed tools.  Where neither exists, this says so and exits 0; the tests that need the
# tools are then skipped with that reason.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tools/distro.sh
source "$ROOT/tools/distro.sh"
DISTRO="$(sim_resolve_distro)" || exit 1
ENV_DIR="$(sim_env_dir "$ROOT" "$DISTRO")"
DEST="$ENV_DIR/ros2_tools"
# build.sh takes the distro's sources from ROS_DISTRO, and sources $ENV_DIR/env.sh (this distro's).
export ROS_DISTRO="$DISTRO"

log() { printf '[ros2-tools] %s\n' "$*"; }

if command -v ros2 >/dev/null 2>&1 && [[ "$(command -v ros2)" != "$ROOT/.envs/"* && "$(command -v ros2)" != "$ROOT/build/"* ]]; then
    log "using the installed ros2 ($(command -v ros2))"
    exit 0
fi

candidates=()
[[ -n "${SIM_ROS2_TOOLS_SRC:-}" ]] && candidates+=("$SIM_ROS2_TOOLS_SRC")
candidates+=("$ROOT/../shared/ros2_tools" "/work/shared/ros2_tools")
for src in "${candidates[@]}"; do
    if [[ -f "$src/build.sh" && -f "$src/ros2_tools_src.tar.gz" ]]; then
        log "building ROS 2 $DISTRO's from $(cd "$src" && pwd) into .envs/$DISTRO/ros2_tools (about a minute the first time)"
        bash "$src/build.sh" "$ENV_DIR" "$DEST"
        exit 0
    fi
done
log "not built: no ros2 on PATH and no ros2_tools sources (looked in: ${candidates[*]});"
log "the end-to-end tests with the real ROS 2 tools will be skipped"
