# shellcheck shell=bash
# Development environment of sim_server.  Source it from bash (from any
# directory), after `make setup`:
#
#     source env.sh
#
# It activates .venv (ROS 2 Kilted wheels, Box2D, ...), puts the venv prefix on
# AMENT_PREFIX_PATH / CMAKE_PREFIX_PATH, and overlays the interface packages
# built by colcon in install/ (sim_msgs, and the tf2_msgs stand-in when built).
# Safe to source under `set -u` and more than once.

_sim_env_main() {
    local root venv install_setup prefix_var
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    venv="$root/.venv"

    if [[ ! -x "$venv/bin/python" || ! -f "$venv/bin/activate" ]]; then
        printf 'env.sh: %s/.venv is missing; run `make setup` first\n' "$root" >&2
        return 1
    fi

    # colcon's and venv's scripts are not written for `set -u`: relax it while
    # sourcing them, and restore the caller's setting afterwards.
    local had_nounset=0
    [[ $- == *u* ]] && had_nounset=1
    set +u

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
    install_setup="$root/install/local_setup.sh"
    if [[ -f "$install_setup" ]]; then
        COLCON_CURRENT_PREFIX="$root/install"
        # shellcheck disable=SC1090
        source "$install_setup"
        unset COLCON_CURRENT_PREFIX
        # package.xml, launch/ and config/ of the source tree (see setup_env.sh)
        if [[ -d "$root/install/sim_server_source" ]]; then
            case ":${AMENT_PREFIX_PATH:-}:" in
                *":$root/install/sim_server_source:"*) ;;
                *) export AMENT_PREFIX_PATH="$root/install/sim_server_source:$AMENT_PREFIX_PATH" ;;
            esac
        fi
    else
        printf 'env.sh: %s is missing; run `make setup` to build the interfaces\n' \
            "$install_setup" >&2
    fi

    # Drop empty entries (an empty LD_LIBRARY_PATH entry means the current
    # directory) that the package hooks leave when a variable started unset.
    local var cleaned
    for var in LD_LIBRARY_PATH PYTHONPATH AMENT_PREFIX_PATH CMAKE_PREFIX_PATH; do
        [[ -n "${!var+x}" ]] || continue
        cleaned="$(printf '%s' "${!var}" | tr -s ':' | sed -e 's/^://' -e 's/:$//')"
        export "$var=$cleaned"
    done

    export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
    export SIM_SERVER_ROOT="$root"

    ((had_nounset)) && set -u
    return 0
}

_sim_env_main
_sim_env_status=$?
unset -f _sim_env_main
# Propagate failure without killing an interactive shell.
if ((_sim_env_status != 0)); then
    unset _sim_env_status
    return 1 2>/dev/null || exit 1
fi
unset _sim_env_status
