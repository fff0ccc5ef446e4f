#!/usr/bin/env bash
# Build simulation_interfaces with the 2.x definitions (Lyrical, Rolling) into the environment of
# the distro in use (.envs/<distro>/simulation_interfaces_2), for the tests that run the standard
# interface against them (test/ros/standard_interface/test_definitions.py): compat's 1.x copy
# with test/data/simulation_interfaces_2/ laid over it, as version 2.1.0. Skipped when up to date
# (a hash of its inputs). Afterwards, on top of env.sh:
#
#     COLCON_CURRENT_PREFIX=<printed prefix> . <printed prefix>/local_setup.sh
#
# Prints the install prefix as its last line.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [[ -z "${SIM_SERVER_ENV:-}" ]]; then
    # shellcheck source=env.sh
    source "$ROOT/env.sh"
fi
# shellcheck source=tools/distro.sh
source "$ROOT/tools/distro.sh"
OUT="$SIM_SERVER_ENV/simulation_interfaces_2"
SOURCES=(compat/simulation_interfaces test/data/simulation_interfaces_2)
inputs="$( { cat "$SIM_SERVER_ENV/.venv/.requirements.sha256" 2>/dev/null || true;
             find "${SOURCES[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)"
if [[ -f "$OUT/.built" && "$(cat "$OUT/.built")" == "$inputs" && -f "$OUT/install/local_setup.sh" ]]; then
    printf '%s\n' "$OUT/install"
    exit 0
fi
rm -rf "$OUT"
mkdir -p "$OUT/src"
cp -r compat/simulation_interfaces "$OUT/src/"
cp -r test/data/simulation_interfaces_2/msg test/data/simulation_interfaces_2/srv "$OUT/src/simulation_interfaces/"
sed -i 's#<version>1\.[0-9.]*</version>#<version>2.1.0</version>#' "$OUT/src/simulation_interfaces/package.xml"
grep -q '<version>2.1.0</version>' "$OUT/src/simulation_interfaces/package.xml" \
    || { echo "simulation_interfaces_2: could not set the version in package.xml" >&2; exit 1; }
mapfile -t cmake_args < <(sim_cmake_args "$VIRTUAL_ENV/bin/python")
if ! colcon --log-base "$OUT/log" build \
        --base-paths "$OUT/src" \
        --build-base "$OUT/build" \
        --install-base "$OUT/install" \
        --event-handlers console_direct- \
        --cmake-args "${cmake_args[@]}" >&2; then
    tail -n 60 "$OUT"/log/latest_build/*/stdout_stderr.log >&2 2>/dev/null || true
    echo "simulation_interfaces_2: colcon build failed (logs in $OUT/log)" >&2
    exit 1
fi
printf '%s\n' "$inputs" > "$OUT/.built"
printf '%s\n' "$OUT/install"
