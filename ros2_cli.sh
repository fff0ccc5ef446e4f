# shellcheck shell=bash
# The sim_server environment (env.sh) and, on top of it, the real ROS 2 command-line tools built
# for it by `make ros2-tools` (ros2 launch/run/topic/service/param/action, teleop), for the distro
# env.sh picks (ROS_DISTRO, default in tools/distro.sh). Source it from bash:
#
#     source ros2_cli.sh
#     export ROS_DISTRO=kilted; source ros2_cli.sh
#
# With a full ROS 2 installation, source its setup.bash and then env.sh instead.

_sim_cli_main() {
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    # shellcheck source=env.sh
    source "$root/env.sh" || return 1
    if [[ ! -f "$SIM_SERVER_ENV/ros2_tools/setup_cli.sh" ]]; then
        printf 'ros2_cli.sh: the ROS 2 tools of %s are not built; run `make ros2-tools ROS_DISTRO=%s`\n' \
            "$ROS_DISTRO" "$ROS_DISTRO" >&2
        return 1
    fi
    # shellcheck disable=SC1091
    source "$SIM_SERVER_ENV/ros2_tools/setup_cli.sh"
}

_sim_cli_main
_sim_cli_status=$?
unset -f _sim_cli_main
if ((_sim_cli_status != 0)); then
    unset _sim_cli_status
    return 1 2>/dev/null || exit 1
fi
unset _sim_cli_status
