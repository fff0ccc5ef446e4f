#!/usr/bin/env bash
# Idempotent set-up of the development environment of one ROS 2 distro (run by `make setup`;
# `make setup ROS_DISTRO=kilted` for Kilted, Jazzy by default: tools/distro.sh). Everything goes
# into .envs/<distro>/, so each distro has an environment of its own:
#
#   1. create .envs/<distro>/.venv (python3 -m venv) and install the pinned wheels from
#      requirements/ros-<distro>.txt, requirements/python.txt, requirements/extras.txt
#      and requirements/docs.txt (Sphinx, for the documentation build);
#   2. fix the ROS wheels' CMake config files, which carry the include paths of
#      the interpreter the wheels were built with (/opt/python/cpXY-cpXY/...);
#   3. build the interface packages (sim_msgs, and those of compat/ that the ROS
#      wheels lack: tf2_msgs, simulation_interfaces) with colcon into the
#      environment's build/ install/ log/;
#   4. install the sim_server package itself into the venv in editable mode;
#   5. lay out an ament prefix (install/sim_server_source) for the ROS tools:
#      share/sim_server mirrors package.xml, launch/ and config/ and
#      lib/sim_server holds the executable (ros2 launch / run / pkg);
#   6. compile the lasers' ray caster and the batch body access into numba's
#      on-disk cache (in the source tree, shared by the distros' environments);
#   7. write .envs/<distro>/env.sh, which sources env.sh for this distro.
#
# Each step is skipped when a stamp (a hash of its inputs) says it is up to
# date, so a second run on a ready tree takes a few seconds.  Downloads go
# through pip only, from the package indexes pip is configured with.
#
# Environment knobs:
#   ROS_DISTRO=jazzy|kilted  which distro (default: tools/distro.sh)
#   PYTHON=python3.X   interpreter used to create the venv (default: python3)
#   SETUP_FORCE=1      ignore all stamps and redo every step
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

# shellcheck source=tools/distro.sh
source "$ROOT/tools/distro.sh"
DISTRO="$(sim_resolve_distro)" || exit 1
ENV_DIR="$(sim_env_dir "$ROOT" "$DISTRO")"
VENV="$ENV_DIR/.venv"
VPY="$VENV/bin/python"
STAMPS="$VENV/.stamps"
REQ_STAMP="$VENV/.requirements.sha256"
COLCON_STAMP="$STAMPS/colcon.sha256"
EDITABLE_STAMP="$STAMPS/editable.sha256"
REQ_FILES=("requirements/ros-$DISTRO.txt" requirements/python.txt requirements/extras.txt requirements/docs.txt)
FORCE="${SETUP_FORCE:-0}"
log "ROS 2 $DISTRO: environment in .envs/$DISTRO"
if [[ -d "$ROOT/.venv" || -d "$ROOT/install" ]]; then
    log "note: .venv/ and install/ of an earlier set-up (one environment for Kilted) are no longer used; \`make distclean\` removes them"
fi

# Print the sha256 of the given text on stdin.
hash_stdin() { sha256sum | cut -d' ' -f1; }

# Hash the contents and relative names of the given files/directories
# (recursively, in a stable order), skipping Python caches.
# Missing paths are skipped (hashing as if empty).
hash_tree() {
    local path present=()
    for path in "$@"; do
        [[ -e "$path" ]] && present+=("$path")
    done
    if ((${#present[@]} == 0)); then
        printf '' | hash_stdin
        return
    fi
    find "${present[@]}" -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 \
        | LC_ALL=C sort -z | xargs -0 -r sha256sum | hash_stdin
}

stamp_matches() { # <stamp file> <expected hash>
    [[ "$FORCE" != 1 && -f "$1" && "$(cat "$1")" == "$2" ]]
}

# Do not let an environment that was already sourced (env.sh, a ROS setup.bash,
# another venv) leak into the set-up: it must depend on this repository only.
# Another distro's environment sourced before must not leak in either.
unset PYTHONPATH PYTHONHOME COLCON_PREFIX_PATH AMENT_CURRENT_PREFIX \
      _ROS_WHEELS_BOOTSTRAP_COMPLETE 2>/dev/null || true
if [[ -n "${VIRTUAL_ENV:-}" && "$VIRTUAL_ENV" != "$VENV" ]]; then
    PATH="$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$VIRTUAL_ENV/bin" | paste -sd: -)"
fi
# Nor the entries of LD_LIBRARY_PATH and PATH inside this checkout's environments.
sim_strip_env_paths "$ROOT" LD_LIBRARY_PATH PATH

# --- 1. virtual environment and pinned requirements --------------------------
if [[ ! -x "$VPY" ]]; then
    PYTHON_BIN="${PYTHON:-python3}"
    command -v "$PYTHON_BIN" >/dev/null || die "$PYTHON_BIN not found"
    log "creating .envs/$DISTRO/.venv with $("$PYTHON_BIN" --version 2>&1)"
    mkdir -p "$ENV_DIR"
    "$PYTHON_BIN" -m venv "$VENV"
    rm -f "$REQ_STAMP"
    rm -rf "$STAMPS"
fi
mkdir -p "$STAMPS"

export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"

# The interpreter version is part of the hash: a different python means other wheels.
PY_TAG="$(readlink -f "$VPY")"
req_hash="$( { printf '%s\n' "$PY_TAG"; cat "${REQ_FILES[@]}"; } | hash_stdin)"
if stamp_matches "$REQ_STAMP" "$req_hash"; then
    log "requirements up to date"
else
    log "installing pinned requirements (${REQ_FILES[*]})"
    # Every file of REQ_FILES (those the stamp hashes), in one resolution.
    req_args=()
    for req_file in "${REQ_FILES[@]}"; do
        req_args+=(-r "$req_file")
    done
    "$VPY" -m pip install --disable-pip-version-check "${req_args[@]}"
    # The build depends on what was installed: rebuild after any change.
    rm -f "$COLCON_STAMP" "$EDITABLE_STAMP"
    printf '%s\n' "$req_hash" > "$REQ_STAMP"
fi

# --- 2. fix the include paths baked into the wheels' CMake files -------------
# The ros-*-msgs wheels were built in a manylinux container; their exported
# CMake targets (share/<pkg>/cmake/export_<pkg>__rosidl_generator_pyExport.cmake)
# list INTERFACE_INCLUDE_DIRECTORIES such as
#   /opt/python/cp311-cp311/include/python3.11
#   /opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include
# which do not exist here, and CMake refuses to use a target whose include
# directory is missing.  Point them at this interpreter and this numpy.  Files
# already fixed no longer contain /opt/python, so re-running is a no-op; a
# reinstalled wheel brings the old paths back and is fixed again.
mapfile -t baked < <(grep -rlE --include='*.cmake' '/opt/python/cp[0-9]+' "$VENV/share" 2>/dev/null || true)
if ((${#baked[@]})); then
    read -r py_inc np_inc < <("$VPY" -c 'import sysconfig, numpy; print(sysconfig.get_paths()["include"], numpy.get_include())')
    [[ -d "$py_inc" ]] || log "warning: Python include dir $py_inc does not exist (no python3-dev headers?)"
    log "rewriting /opt/python include paths in ${#baked[@]} CMake files -> $py_inc ; $np_inc"
    sed -i -E \
        -e "s#/opt/python/cp[0-9]+-cp[0-9]+t?/lib/python[0-9.]+t?/site-packages/numpy/(_core|core)/include#${np_inc}#g" \
        -e "s#/opt/python/cp[0-9]+-cp[0-9]+t?/include/python[0-9.]+t?#${py_inc}#g" \
        "${baked[@]}"
    if left="$(grep -rlE --include='*.cmake' '/opt/python/cp[0-9]+' "$VENV/share")"; then
        die "unexpected /opt/python paths remain in: $left"
    fi
fi

# --- 3. interface packages (colcon) ------------------------------------------
export AMENT_PREFIX_PATH="$VENV"
export CMAKE_PREFIX_PATH="$VENV"
BUILD="$ENV_DIR/build"
INSTALL="$ENV_DIR/install"
LOGS="$ENV_DIR/log"

colcon_hash="$( { printf '%s\n' "$req_hash"; hash_tree sim_msgs compat/tf2_msgs compat/simulation_interfaces compat/ackermann_msgs; } | hash_stdin)"
if stamp_matches "$COLCON_STAMP" "$colcon_hash" \
        && [[ -f "$INSTALL/sim_msgs/share/sim_msgs/package.xml" && -f "$INSTALL/local_setup.sh" ]]; then
    log "interface packages up to date"
else
    base_paths=(sim_msgs)
    packages=(sim_msgs)
    # Only build a package of compat/ when the ROS installation lacks it.
    for compat in tf2_msgs simulation_interfaces ackermann_msgs; do
        if "$VPY" -c "import $compat" >/dev/null 2>&1; then
            log "$compat provided by the ROS installation"
            rm -rf "${BUILD:?}/$compat" "${INSTALL:?}/$compat"
        else
            log "$compat missing from the ROS installation: building compat/$compat"
            base_paths+=("compat/$compat")
            packages+=("$compat")
        fi
    done
    log "colcon build: ${packages[*]}"
    mapfile -t cmake_args < <(sim_cmake_args "$VPY")
    if ! colcon --log-base "$LOGS" build \
            --base-paths "${base_paths[@]}" \
            --packages-select "${packages[@]}" \
            --build-base "$BUILD" \
            --install-base "$INSTALL" \
            --event-handlers console_direct- \
            --cmake-args "${cmake_args[@]}"; then
        for pkg_log in "$LOGS"/latest_build/*/stdout_stderr.log; do
            [[ -f "$pkg_log" ]] || continue
            printf '\n----- %s (last 60 lines) -----\n' "$pkg_log" >&2
            tail -n 60 "$pkg_log" >&2
        done
        die "colcon build failed (full logs in .envs/$DISTRO/log/latest_build)"
    fi
    printf '%s\n' "$colcon_hash" > "$COLCON_STAMP"
fi

# --- 4. the sim_server package, editable --------------------------------------
# Editable, so code changes need no re-install (the console script and the
# plugin entry point groups come from setup.py).  Re-installed when setup.py or
# setup.cfg change, or when a top-level package (sim_server/, sim_plugins/)
# appears or disappears: setuptools' editable finder maps top-level packages
# found at install time only.
top_pkgs="$(for d in sim_server sim_plugins; do [[ -f "$d/__init__.py" ]] && echo "$d"; done || true)"
editable_hash="$( { printf '%s\n' "$req_hash" "$top_pkgs"; hash_tree setup.py setup.cfg; } | hash_stdin)"
shopt -s nullglob
dist_info=("$VENV"/lib/python3*/site-packages/sim_server-*.dist-info)
shopt -u nullglob
if stamp_matches "$EDITABLE_STAMP" "$editable_hash" && ((${#dist_info[@]})); then
    log "sim_server editable install up to date"
else
    log "installing sim_server (editable)"
    "$VPY" -m pip install --disable-pip-version-check --no-deps --no-build-isolation -q -e "$ROOT"
    printf '%s\n' "$editable_hash" > "$EDITABLE_STAMP"
fi

# --- 5. an ament prefix for the ROS tools ------------------------------------
# An editable install does not install setup.py's data_files, so lay out an
# install-like prefix by hand, as the ROS 2 tools expect one:
#   share/ament_index/resource_index/packages/sim_server   (ament_index knows the package)
#   share/sim_server/{package.xml,launch/,config/}          (ros2 launch, get_package_share_directory)
#   lib/sim_server/sim_server                               (ros2 run, launch_ros' Node)
# ros2launch finds launch files with os.walk, which does not enter symlinked
# directories: the directories are real, the files link back to the source tree
# (edits show at once; new files after the next `make setup`, which every make
# target runs).  env.sh puts the prefix on AMENT_PREFIX_PATH.
SRC_PREFIX="$INSTALL/sim_server_source"
SHARE="$SRC_PREFIX/share/sim_server"

# Mirror the files below <source dir> into <dest dir> as symlinks, in real directories.
mirror_tree() {
    local src="$1" dest="$2" file rel
    rm -rf "$dest"
    mkdir -p "$dest"
    while IFS= read -r -d '' file; do
        rel="${file#"$src"/}"
        mkdir -p "$dest/$(dirname "$rel")"
        ln -s "$file" "$dest/$rel"
    done < <(find "$src" -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0)
}

mkdir -p "$SRC_PREFIX/share/ament_index/resource_index/packages" "$SHARE" "$SRC_PREFIX/lib/sim_server"
ln -sfn "$ROOT/resource/sim_server" "$SRC_PREFIX/share/ament_index/resource_index/packages/sim_server"
ln -sfn "$ROOT/package.xml" "$SHARE/package.xml"
for item in launch config; do
    rm -rf "${SHARE:?}/$item"  # an older set-up linked the whole directory
    mirror_tree "$ROOT/$item" "$SHARE/$item"
done
# The console script of the editable install (its first line names the venv's python).
[[ -x "$VENV/bin/sim_server" ]] || die "$VENV/bin/sim_server missing after the editable install"
ln -sfn "$VENV/bin/sim_server" "$SRC_PREFIX/lib/sim_server/sim_server"

# --- 6. the lasers' ray caster, compiled once into numba's on-disk cache -------
# Compiling takes 15-45 s; afterwards every process loads it in a few tenths of a
# second, before its first step (sim_server/warm_up.py).
"$VPY" -m sim_server.warm_up | sed 's/^/[setup] /'

# --- 7. this distro's entry point ----------------------------------------------
# env.sh picks the distro from ROS_DISTRO; this file pins it (the ROS 2 tools' build sources it).
cat > "$ENV_DIR/env.sh" <<EOS
# shellcheck shell=bash
# The sim_server environment of ROS 2 $DISTRO (written by tools/setup_env.sh).
export ROS_DISTRO=$DISTRO
source "$ROOT/env.sh"
EOS

log "environment ready (ROS 2 $DISTRO): source env.sh"
