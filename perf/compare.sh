#!/bin/sh
# compare.sh — rmx, raw UCP and Open MPI side by side in one table.
#
#   perf/compare.sh [rmx_perf options...]        (make compare PERF_ARGS="...")
#
# Builds build/rmx_perf and build/perf/osu_rma (mpicc, perf/mpi/osu_rma.c), then ROUNDS times
# runs Open MPI's one-sided version of the tests (osc ucx when this Open MPI has it, else its
# default osc; the table's header says which) and rmx_perf with the raw-UCP baseline, one after
# the other under the same mpirun placement.  rmx and UCP are measured side by side inside each
# rmx_perf run; Open MPI runs in its own processes, so its column is only as comparable as the
# machine's load is steady: interleaving the rounds spreads load drift over both.  The table is
# the median per row over the rounds (rmx_perf --merge ... --mpi ...), each run itself the median
# of --reps repetitions.  Both programs take the same options (sizes, --iters, --time, --reps);
# output options (--csv, --json, --plot FILE) apply to the final table.
# Environment: BUILD (default build), NP (default 2), ROUNDS (default 3), MPIRUN_ARGS.
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

ROUNDS=${ROUNDS:-3}
merge=""
mpi=""
r=1
while [ "$r" -le "$ROUNDS" ]; do
    echo "compare.sh: round $r of $ROUNDS" >&2
    # shellcheck disable=SC2086  # OSC and MPIRUN are word lists on purpose
    $MPIRUN $OSC "$OUT/osu_rma" "$@" > "$OUT/mpi.$r.csv"
    # shellcheck disable=SC2086
    $MPIRUN "$BUILD/rmx_perf" --baseline ucp --quiet "$@" --csv > "$OUT/rmx.$r.csv"
    merge="$merge --merge $OUT/rmx.$r.csv"
    mpi="$mpi --mpi $OUT/mpi.$r.csv"
    r=$((r + 1))
done
# shellcheck disable=SC2086
"$BUILD/rmx_perf" "$@" $merge $mpi
