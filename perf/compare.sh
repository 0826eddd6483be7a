#!/bin/sh
# compare.sh — rmx, raw UCP and Open MPI side by side in one table.
#
#   perf/compare.sh [rmx_perf options...]        (make compare PERF_ARGS="...")
#
# Builds build/rmx_perf and build/perf/osu_rma (mpicc, perf/mpi/osu_rma.c), runs Open MPI's
# one-sided version of the tests first (osc ucx when this Open MPI has it, else its default osc;
# the table's header says which), then rmx_perf with the raw-UCP baseline under the same mpirun
# placement, which joins the MPI numbers by (test, size) and prints rmx, ucp, mpi and both ratios.
# Both programs take the same options (sizes, --iters, --time, --reps) and report medians.
# Environment: BUILD (default build), NP (default 2), MPIRUN_ARGS (extra mpirun options).
set -eu

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NP=${NP:-2}
OUT="$BUILD/perf"
mkdir -p "$OUT"

command -v mpicc >/dev/null 2>&1 || { echo "compare.sh: mpicc not found (make deps)" >&2; exit 1; }
make -s BUILD="$BUILD" "$BUILD/rmx_perf"
mpicc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$OUT/osu_rma" perf/mpi/osu_rma.c -lm

OSC=""
if ompi_info 2>/dev/null | grep -q "MCA osc: ucx"; then
    OSC="--mca osc ucx"
else
    echo "compare.sh: this Open MPI has no osc ucx; using its default osc" >&2
fi

# --bind-to core is mpirun's default for 2 ranks; said explicitly so both runs share it.
MPIRUN="mpirun --allow-run-as-root --oversubscribe -np $NP --bind-to core ${MPIRUN_ARGS:-}"

# shellcheck disable=SC2086  # OSC and MPIRUN are word lists on purpose
$MPIRUN $OSC "$OUT/osu_rma" "$@" > "$OUT/mpi.csv"
# shellcheck disable=SC2086
$MPIRUN "$BUILD/rmx_perf" --baseline ucp --mpi "$OUT/mpi.csv" "$@"
