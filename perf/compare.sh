#!/bin/sh
# compare.sh — rmx, raw UCP, Open MPI and OpenSHMEM side by side in one table.
#
#   perf/compare.sh [rmx_perf options...]        (make compare PERF_ARGS="...")
#
# Builds build/rmx_perf, build/perf/osu_rma (mpicc, perf/mpi/osu_rma.c) and, when Open MPI's
# OpenSHMEM is installed, build/perf/bench_shmem (oshcc, perf/shmem/bench_shmem.c).  Then ROUNDS
# times, one after the other under the same placement (mpirun / oshrun, -np NP, --bind-to core):
#   - Open MPI's one-sided version of the tests with osc ucx (when this Open MPI has it, else its
#     default osc; the table's header says which)                           -> column mpi
#   - the same with osc sm, when every rank is on this node (osc sm serves MPI_Win_allocate only
#     then)                                                                  -> column mpi_sm
#   - the OpenSHMEM version (spml ucx)                                       -> column shmem
#   - rmx_perf with the raw-UCP baseline                                     -> columns rmx, ucp
# rmx and UCP are measured side by side inside each rmx_perf run; the others run in their own
# processes, so their columns are only as comparable as the machine's load is steady: interleaving
# the rounds spreads load drift over all of them.  The table is the median per row over the rounds
# (rmx_perf --merge ... --mpi ... --mpi-sm ... --shmem ...), each run itself the median of --reps
# repetitions.  Every program takes the same options (sizes, --iters, --time, --reps); output
# options (--csv, --json, --plot FILE) apply to the final table.  A column whose program is missing
# or fails is left out (or its rows are n/a) with a message on stderr; the rest of the table stays.
# Environment: BUILD (default build), NP (default 2), ROUNDS (default 3), MPIRUN_ARGS (given to
# mpirun and oshrun alike).
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

# --bind-to core is mpirun's default for 2 ranks; said explicitly so every run shares it.
MPIRUN="mpirun --allow-run-as-root --oversubscribe -np $NP --bind-to core ${MPIRUN_ARGS:-}"

# osc sm: only when this Open MPI has it and every rank lands on this node (off-node, osc sm
# declines MPI_Win_allocate and the window cannot be created at all).
SM=""
if ! ompi_info 2>/dev/null | grep -q "MCA osc: sm"; then
    echo "compare.sh: this Open MPI has no osc sm; no mpi_sm column" >&2
else
    # shellcheck disable=SC2086  # MPIRUN is a word list on purpose
    nodes=$($MPIRUN hostname 2>/dev/null | sort -u | wc -l)
    if [ "$nodes" = 1 ]; then
        SM="--mca osc sm"
    else
        echo "compare.sh: the ranks span $nodes nodes; no osc sm (mpi_sm) column" >&2
    fi
fi

# OpenSHMEM (Open MPI's oshmem over UCX).  --mca osc ^rdma: Open MPI 4.1's oshmem crashes in
# shmem_finalize otherwise (osc rdma's finalize frees memory through a memory-release hook left
# by an already closed component; open-mpi/ompi#11604), after the results are printed but with
# a failing exit status.  oshmem makes no MPI windows, so no measured path changes.
OSHRUN=""
if ! command -v oshcc >/dev/null 2>&1 || ! command -v oshrun >/dev/null 2>&1; then
    echo "compare.sh: oshcc/oshrun not found (Open MPI's OpenSHMEM); no shmem column" >&2
elif ! make -s BUILD="$BUILD" "$OUT/bench_shmem"; then
    echo "compare.sh: perf/shmem/bench_shmem.c does not build; no shmem column" >&2
else
    OSHRUN="oshrun --allow-run-as-root --oversubscribe -np $NP --bind-to core ${MPIRUN_ARGS:-}"
    OSHRUN="$OSHRUN --mca spml ucx --mca osc ^rdma"
fi

# run_column NAME ROUND COMMAND...: an optional column's run for one round.  Its file joins the
# merge when the run succeeded; otherwise a message, and the column is the median of the rounds
# that did (n/a when none).
run_column() {
    name=$1 round=$2
    shift 2
    rc=0
    "$@" > "$OUT/$name.$round.csv" || rc=$?
    [ "$rc" = 0 ] && return 0
    echo "compare.sh: the $name run of round $round failed (exit $rc); its rows come from the" \
         "other rounds" >&2
    return 1
}

ROUNDS=${ROUNDS:-3}
merge=""
mpi=""
sm=""
shmem=""
r=1
while [ "$r" -le "$ROUNDS" ]; do
    echo "compare.sh: round $r of $ROUNDS" >&2
    # shellcheck disable=SC2086  # OSC, SM, MPIRUN and OSHRUN are word lists on purpose
    $MPIRUN $OSC "$OUT/osu_rma" "$@" > "$OUT/mpi.$r.csv"
    mpi="$mpi --mpi $OUT/mpi.$r.csv"
    # shellcheck disable=SC2086
    if [ -n "$SM" ] && run_column mpi_sm "$r" $MPIRUN $SM "$OUT/osu_rma" "$@"; then
        sm="$sm --mpi-sm $OUT/mpi_sm.$r.csv"
    fi
    # shellcheck disable=SC2086
    if [ -n "$OSHRUN" ] && run_column shmem "$r" $OSHRUN "$OUT/bench_shmem" "$@"; then
        shmem="$shmem --shmem $OUT/shmem.$r.csv"
    fi
    # shellcheck disable=SC2086
    $MPIRUN "$BUILD/rmx_perf" --baseline ucp --quiet "$@" --csv > "$OUT/rmx.$r.csv"
    merge="$merge --merge $OUT/rmx.$r.csv"
    r=$((r + 1))
done
# shellcheck disable=SC2086
"$BUILD/rmx_perf" "$@" $merge $mpi $sm $shmem
