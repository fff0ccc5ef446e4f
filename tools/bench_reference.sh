#!/usr/bin/env bash
# Side by side with the C++ reference, Flatland (run by `make bench-reference`).
#
# The reference's harness, sbs.py, runs Flatland C++ (ROS 1) and this checkout's server
# interleaved on byte-identical worlds; bench/reference.py turns its results into ratios
# (bench/results/reference-<time>.json and .png). The harness, the reference's source and its
# build script come with the development machines, in flatland_reference/ beside the checkout.
# Where to look, first match wins:
#   $SIM_FLATLAND_REFERENCE           a folder holding sbs.py and build_flatland.sh
#   <checkout>/../shared/flatland_reference
#   /work/shared/flatland_reference
#
# Knobs (environment or make variables):
#   SCENARIOS="bench office multi20"   which scenarios (sbs.py --scenario)
#   REPEATS=3                          pairs per scenario (medians are reported)
#   BUILD_REFERENCE=1                  build the reference first if it is missing (apt-get and
#                                      catkin, some 6 to 15 minutes; needs root)
#   SBS_WS=/tmp/flatland_ws            where the reference is (or gets) built
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCENARIOS="${SCENARIOS:-bench office multi20}"
REPEATS="${REPEATS:-3}"
export SBS_WS="${SBS_WS:-/tmp/flatland_ws}"
export SBS_PROJ="$ROOT"

log() { printf '[bench-reference] %s\n' "$*"; }
die() { printf '[bench-reference] ERROR: %s\n' "$*" >&2; exit 1; }

candidates=()
[[ -n "${SIM_FLATLAND_REFERENCE:-}" ]] && candidates+=("$SIM_FLATLAND_REFERENCE")
candidates+=("$ROOT/../shared/flatland_reference" "/work/shared/flatland_reference")
REF=""
for dir in "${candidates[@]}"; do
    if [[ -f "$dir/sbs.py" && -f "$dir/build_flatland.sh" ]]; then
        REF="$(cd "$dir" && pwd)"
        break
    fi
done
[[ -n "$REF" ]] || die "no flatland_reference folder (looked in: ${candidates[*]}); set SIM_FLATLAND_REFERENCE"

if [[ ! -x "$SBS_WS/devel/lib/flatland_server/flatland_benchmark" ]]; then
    [[ "${BUILD_REFERENCE:-0}" == 1 ]] \
        || die "the reference is not built in $SBS_WS: run 'make bench-reference BUILD_REFERENCE=1' (apt-get, catkin; 6-15 min)"
    shopt -s nullglob
    sources=("$REF"/flatland-*.tar.gz)
    shopt -u nullglob
    ((${#sources[@]} == 1)) || die "expected one flatland-*.tar.gz in $REF"
    src="$(mktemp -d /tmp/flatland_src.XXXXXX)"
    log "building the reference from ${sources[0]} into $SBS_WS (log: $src/build.log)"
    tar -xzf "${sources[0]}" -C "$src"
    (apt-get update && bash "$REF/build_flatland.sh" "$src") > "$src/build.log" 2>&1 \
        || { tail -n 30 "$src/build.log" >&2; die "building the reference failed (log: $src/build.log)"; }
fi

# sbs.py runs this checkout's server with <checkout>/.venv/bin/python: point it at the venv of
# the distro env.sh picks (a link of our own is replaced, anything else there is kept).
# shellcheck source=tools/distro.sh
source "$ROOT/tools/distro.sh"
venv="$(sim_env_dir "$ROOT" "$(sim_resolve_distro)")/.venv"
[[ -x "$venv/bin/python" ]] || die "no environment in $venv: run make setup first"
if [[ -L "$ROOT/.venv" || ! -e "$ROOT/.venv" ]]; then
    ln -sfn "$venv" "$ROOT/.venv"
fi

out="$ROOT/build/sbs/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
results=()
for scenario in $SCENARIOS; do
    log "scenario $scenario: $REPEATS interleaved pairs (reference, ours, ...)"
    (cd "$out" && /usr/bin/python3 "$REF/sbs.py" run --scenario "$scenario" --repeats "$REPEATS" --out "$out") \
        | tee "$out/$scenario.log"
    result="$(sed -n 's/^results: //p' "$out/$scenario.log" | tail -n 1)"
    [[ -f "$result" ]] || die "sbs.py gave no results for $scenario (see $out/$scenario.log)"
    results+=("$result")
done
# shellcheck disable=SC1091
source "$ROOT/env.sh"
python -m bench.reference "${results[@]}" \
    --command "make bench-reference SCENARIOS='$SCENARIOS' REPEATS=$REPEATS"
