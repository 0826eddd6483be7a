#!/bin/sh
# run.sh — the coarray benchmark (perf/caf/bench_caf.f90) on libcaf_rmx and on OpenCoarrays'
# libcaf_openmpi (Debian libcoarrays-openmpi-dev, linked through its `caf` wrapper), same source,
# same image count, side by side; then the ratio rmx / OpenCoarrays per line (> 1: rmx faster;
# for us/op lines the ratio is inverted so that > 1 still means rmx is faster).
#   perf/caf/run.sh [images]        (default 2; BUILD=dir selects the build directory)
set -eu
NP=${1:-2}
BUILD=${BUILD:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT="$ROOT/$BUILD/perf/caf"
mkdir -p "$OUT/mod-rmx" "$OUT/mod-oca"
LIBS=$(pkg-config --libs ucx hwloc pmix)
gfortran -fcoarray=lib -O2 -J"$OUT/mod-rmx" -o "$OUT/bench_caf_rmx" "$HERE/bench_caf.f90" \
    "$ROOT/$BUILD/libcaf_rmx.a" "$ROOT/$BUILD/librmx.a" $LIBS -lpthread -lm
caf -O2 -J"$OUT/mod-oca" -o "$OUT/bench_caf_oca" "$HERE/bench_caf.f90"
RUN="mpirun --allow-run-as-root --oversubscribe -np $NP"
echo "== libcaf_rmx ($NP images)";   $RUN "$OUT/bench_caf_rmx" | tee "$OUT/rmx.txt"
echo "== OpenCoarrays libcaf_openmpi ($NP images)"; $RUN "$OUT/bench_caf_oca" | tee "$OUT/oca.txt"
echo "== ratio (rmx vs OpenCoarrays; > 1 means rmx is faster)"
paste "$OUT/rmx.txt" "$OUT/oca.txt" | awk 'NR > 1 {
    r = ($3 == "us/op") ? $5 / $2 : $2 / $5
    printf "%-12s rmx %12s %-6s  OpenCoarrays %12s %-6s  x%.2f\n", $1, $2, $3, $5, $6, r }'
