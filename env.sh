# shellcheck shell=bash
# Development environment of sim_server.  Source it from bash (from any
# directory), after `make setup`:
#
#     source env.sh                      # ROS 2 Jazzy, the default
#     export ROS_DISTRO=kilted; source env.sh   # after `make setup ROS_DISTRO=kilted`
#
# It activates the distro's venv (.envs/<distro>/.venv: ROS 2 wheels, Box2D,
# ...), puts the venv prefix on AMENT_PREFIX_PATH / CMAKE_PREFIX_PATH, overlays
# the interface packages built by colcon in .envs/<distro>/install (sim_msgs, and
# the compat/ stand-ins when built) and exports ROS_DISTRO, as a ROS setup file
# does.  The distros and the default are named in tools/distro.sh.  Sourcing it
# for another distro first takes the previous one's paths away.  Safe to source
# under `set -u` and more than once.

_sim_env_main() {
    local root distro env_dir venv install_setup prefix_var var cleaned
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    # shellcheck source=tools/distro.sh
    source "$root/tools/distro.sh"
    distro="$(sim_resolve_distro)" || return 1
    env_dir="$(sim_env_dir "$root" "$distro")"
    venv="$env_dir/.venv"

    if [[ ! -x "$venv/bin/python" || ! -f "$venv/bin/activate" ]]; then
        printf 'env.sh: no ROS 2 %s environment in %s; run `make setup ROS_DISTRO=%s` first\n' \
            "$distro" "$env_dir" "$distro" >&2
        return 1
    fi

    # colcon's and venv's scripts are not written for `set -u`: relax it while
    # sourcing them, and restore the caller's setting afterwards.
    local had_nounset=0
    [[ $- == *u* ]] && had_nounset=1
    set +u

    # Paths of this checkout's environments (any distro, or the layout before .envs/) go first,
    # so that switching distro in one shell never mixes two.
    if [[ "${VIRTUAL_ENV:-}" == "$root/.envs/"* ]] && declare -F deactivate >/dev/null; then
        deactivate
    fi
    sim_strip_env_paths "$root" PATH LD_LIBRARY_PATH PYTHONPATH AMENT_PREFIX_PATH CMAKE_PREFIX_PATH
    # The wheels' bootstrapper (a .pth of the venv) puts the venv's libraries on LD_LIBRARY_PATH
    # and restarts Python once, unless this says it did: it must do it again for this venv.
    unset _ROS_WHEELS_BOOTSTRAP_COMPLETE

    # shellcheck disable=SC1091
    source "$venv/bin/activate"

    # The venv is the underlay: put it on the prefix paths first, so that the
    # colcon overlay sourced below ends up in front of it.
    for prefix_var in AMENT_PREFIX_PATH CMAKE_PREFIX_PATH; do
        case ":${!prefix_var:-}:" in
            *":$venv:"*) ;;
            *) export "$prefix_var=$venv${!prefix_var:+:${!prefix_var}}" ;;
        esac
    done

    # colcon-core writes POSIX sh scripts only (no colcon-bash here); a sourced
    # sh script cannot find its own location, so pass it the prefix.
    install_setup="$env_dir/install/local_setup.sh"
    if [[ -f "$install_setup" ]]; then
        COLCON_CURRENT_PREFIX="$env_dir/install"
        # shellcheck disable=SC1090
        source "$install_setup"
        unset COLCON_CURRENT_PREFIX
        # package.xml, launch/ and config/ of the source tree (see setup_env.sh)
        if [[ -d "$env_dir/install/sim_server_source" ]]; then
            case ":${AMENT_PREFIX_PATH:-}:" in
                *":$env_dir/install/sim_server_source:"*) ;;
                *) export AMENT_PREFIX_PATH="$env_dir/install/sim_server_source:$AMENT_PREFIX_PATH" ;;
            esac
        fi
    else
        printf 'env.sh: %s is missing; run `make setup ROS_DISTRO=%s` to build the interfaces\n' \
            "$install_setup" "$distro" >&2
    fi

    # Drop empty entries (an empty LD_LIBRARY_PATH entry means the current
    # directory) that the package hooks leave when a variable started unset.
    for var in LD_LIBRARY_PATH PYTHONPATH AMENT_PREFIX_PATH CMAKE_PREFIX_PATH; do
        [[ -n "${!var+x}" ]] || continue
        cleaned="$(printf '%s' "${!var}" | tr -s ':' | sed -e 's/^://' -e 's/:$//')"
        export "$var=$cleaned"
    done

    export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
    export SIM_SERVER_ROOT="$root"
    # The environment in use (its ros2_tools/ holds the ROS 2 CLI built for it).
    export SIM_SERVER_ENV="$env_dir"
    export ROS_DISTRO="$distro"

    ((had_nounset)) && set -u
    return 0
}

_sim_env_main
_sim_env_status=$?
unset -f _sim_env_main sim_resolve_distro sim_env_dir sim_strip_env_paths
unset SIM_DISTROS SIM_DEFAULT_DISTRO
# Propagate failure without killing an interactive shell.
if ((_sim_env_status != 0)); then
    unset _sim_env_status
    return 1 2>/dev/null || exit 1
fi
unset _sim_env_status
