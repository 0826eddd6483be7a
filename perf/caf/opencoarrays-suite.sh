#!/bin/bash
# opencoarrays-suite.sh — OpenCoarrays' own test programs (src/tests of the release tag, the
# add_caf_test list of its top-level CMakeLists.txt with the same image counts and arguments),
# built twice from the same sources: against OpenCoarrays' libcaf_openmpi (`caf`) and against
# libcaf_rmx (gfortran -fcoarray=lib + BUILD/libcaf_rmx.a BUILD/librmx.a, the Makefile's CAF_LIBS).
# Each build runs under mpirun with the test's image count; a run passes when it exits 0 and its
# output contains "Test passed" (OpenCoarrays' PASS_REGULAR_EXPRESSION is the regex "Test passed.",
# which a final " Test passed" and its newline match; plus the exit status).
# Prints one table row per test and the totals.  A development tool, not run by CI.
#
#   perf/caf/opencoarrays-suite.sh [test-name...]     (default: every test of the list)
#
# Environment: BUILD (build directory, default build; `make caf` first), OC_REPO (OpenCoarrays git
# repository), OC_TAG (default 2.10.1), OC_TIMEOUT (seconds per run, default 60), OC_OUT (work
# directory, default BUILD/oc-suite: sources, binaries, and one log per build and run).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OC_REPO=${OC_REPO:-/work/.mirror/sourceryinstitute+OpenCoarrays/repo}
OC_TAG=${OC_TAG:-2.10.1}
TIMEOUT=${OC_TIMEOUT:-60}
OUT=${OC_OUT:-$BUILD/oc-suite}
FFLAGS=(-fcoarray=lib -O2 -g)
# The utilities' feature macros, as OpenCoarrays' CMake sets them for gfortran >= 7.
UTIL_DEFS=(-DHAVE_ERROR_STOP_IN_PURE -DHAVE_VARIABLE_STOP_CODE -DUSE_ASSERTIONS=.true.)
RMX_LIBS="$BUILD/libcaf_rmx.a $BUILD/librmx.a $(pkg-config --libs ucx hwloc pmix) -lpthread -lm"
MPIRUN="mpirun --allow-run-as-root --oversubscribe"

# Tests that use MPI itself (`use mpi` / mpif.h, or the opencoarrays module's get_communicator):
# they cannot be built against a runtime that is not MPI.
declare -A NEEDS_MPI=([initialize_mpi]="uses MPI directly (use mpi, MPI_COMM_SIZE)"
                      [get_communicator]="uses MPI directly (opencoarrays get_communicator + use mpi)")

for f in "$BUILD/libcaf_rmx.a" "$BUILD/librmx.a"; do
    [ -f "$f" ] || { echo "opencoarrays-suite: $f missing: run make caf first" >&2; exit 2; }
done
command -v caf > /dev/null ||
    { echo "opencoarrays-suite: no caf (OpenCoarrays) on PATH" >&2; exit 2; }
git -C "$OC_REPO" rev-parse -q --verify "$OC_TAG^{commit}" > /dev/null ||
    { echo "opencoarrays-suite: no tag $OC_TAG in $OC_REPO" >&2; exit 2; }

rm -rf "$OUT" && mkdir -p "$OUT/src" "$OUT/logs"
git -C "$OC_REPO" archive "$OC_TAG" src/tests | tar x -C "$OUT/src" || exit 2
T="$OUT/src/src/tests"

# target -> sources (relative to src/tests): every single-line caf_compile_executable(target main);
# the two integration programs that CMake builds with add_executable are listed by hand.
declare -A SRCS
while read -r dir tgt main; do
    SRCS[$tgt]="$dir/$main"
done < <(cd "$T" && grep -H '^[[:space:]]*caf_compile_executable(' -r --include=CMakeLists.txt . |
         sed -n 's|^\./\(.*\)/CMakeLists.txt:[[:space:]]*caf_compile_executable(\([^ )]*\)[[:space:]]\+\([^ )$]*\).*|\1 \2 \3|p')
B=integration/pde_solvers/coarrayBurgers
SRCS[coarray_burgers_pde]="$B/library/object_interface.F90 $B/library/ForTrilinos_assertion_utility.F90
    $B/library/co_object_interface.F90 $B/local_field.F90 $B/global_field.F90 $B/main.F90"
H=integration/pde_solvers/coarrayHeatSimplified
SRCS[co_heat]="$H/local_field.f90 $H/global_field.f90 $H/main.f90"
# A test whose target CMake builds only for other compiler versions (send-strided-self: an elseif
# gfortran 12 never reaches) is still built, from the source file of its name.
find_source() {
    (cd "$T" && find . -name "$1.f90" -o -name "$1.F90" | sed 's|^\./||' | head -1)
}
mkdir -p "$OUT/inc" &&
    cp "$T/$B/include-files/gfortran_capabilities.txt" "$OUT/inc/compiler_capabilities.txt"

# The test list: name, images, target, arguments (commented-out lines and the one without an image
# count, under `if (FALSE)`, are not tests).
TESTS=()
while read -r name np tgt args; do
    [[ $np =~ ^[0-9]+$ ]] || continue
    if [ $# -gt 0 ]; then
        keep=0; for w in "$@"; do [ "$w" = "$name" ] && keep=1; done
        [ $keep = 1 ] || continue
    fi
    TESTS+=("$name|$np|$tgt|$args")
done < <(git -C "$OC_REPO" show "$OC_TAG:CMakeLists.txt" |
         sed -n 's/^[[:space:]]*add_caf_test(\([^)]*\)).*/\1/p')

# The test utilities (assertions), linked into every program as OpenCoarrays' CMake does.
build_utils() {
    local rt=$1 fc=$2 d="$OUT/$1/utils"
    mkdir -p "$d"
    for s in opencoarrays_object_interface.f90 oc_assertions_interface.F90 oc_assertions_implementation.F90; do
        $fc "${FFLAGS[@]}" "${UTIL_DEFS[@]}" -J"$d" -c "$T/utilities/$s" -o "$d/${s%.*}.o" >> "$OUT/logs/utils-$rt.log" 2>&1 ||
            { echo "opencoarrays-suite: the test utilities do not build for $rt (see $OUT/logs/utils-$rt.log)" >&2; exit 2; }
    done
}
# build RT TARGET: compile and link TARGET for runtime RT (oca | rmx); prints nothing on success,
# else "compile error" or "link error (the undefined symbols)".
build() {
    local rt=$1 tgt=$2 fc libs d="$OUT/$1/$2" log="$OUT/logs/$2.$1.build.log" objs=()
    if [ "$rt" = oca ]; then fc=caf; libs=""; else fc=gfortran; libs=$RMX_LIBS; fi
    mkdir -p "$d"
    for s in ${SRCS[$tgt]}; do
        local o
        o="$d/$(basename "${s%.*}").o"
        if ! $fc "${FFLAGS[@]}" -I"$OUT/inc" -I"$OUT/$rt/utils" -J"$d" -c "$T/$s" -o "$o" >> "$log" 2>&1; then
            echo "compile error"; return
        fi
        objs+=("$o")
    done
    # shellcheck disable=SC2086
    if ! $fc "${FFLAGS[@]}" -o "$d/$tgt" "${objs[@]}" "$OUT/$rt"/utils/*.o $libs >> "$log" 2>&1; then
        local syms
        syms=$(sed -n "s/.*undefined reference to \`\([^']*\)'.*/\1/p" "$log" | sort -u | tr '\n' ' ')
        echo "link error (${syms% })"
    fi
}

# run RT TARGET NP ARGS -> pass | FAIL (exit N) | timeout | crash (...)
run() {
    local rt=$1 tgt=$2 np=$3 args=$4 name=$5 log="$OUT/logs/$5.$1.run.log" rc
    # shellcheck disable=SC2086
    (cd "$OUT/$rt/$tgt" && timeout "$TIMEOUT" $MPIRUN -np "$np" "./$tgt" $args > "$log" 2>&1)
    rc=$?
    if [ $rc = 124 ]; then echo "timeout"
    elif grep -q -E "exited on signal|Program received signal|Segmentation fault|core dumped" "$log"; then
        echo "crash ($(grep -o -m1 -E 'signal [0-9]+( \([A-Za-z ]+\))?|SIG[A-Z]+' "$log" | head -1))"
    elif [ $rc = 0 ] && grep -q "Test passed" "$log"; then echo "pass"
    elif [ $rc = 0 ]; then echo "FAIL (no \"Test passed\")"
    else echo "FAIL (exit $rc)"
    fi
}

# What a failed rmx run says about why: libcaf_rmx's own message, else the ERROR STOP or assertion,
# else the innermost rmx/libcaf_rmx frame of a backtrace, else its first error line.
why() {
    local l
    l=$(grep -a -m1 -E "libcaf_rmx|not supported|ERROR STOP|Assertion" "$1")
    [ -n "$l" ] || l=$(grep -a -m1 -A1 -E "^#[0-9]+ .* in (caf_|_gfortran_caf_|rmx_)" "$1" | tr -s ' \t\n' ' ')
    [ -n "$l" ] || l=$(grep -a -i -E "error|fail" "$1" | grep -v -E "mpirun|Primary job|non-zero" | head -1)
    echo "$l" | cut -c1-110
}

build_utils oca caf
build_utils rmx gfortran

declare -A TOTAL
printf '%-48s %6s  %-26s %s\n' test images OpenCoarrays libcaf_rmx
for t in "${TESTS[@]}"; do
    IFS='|' read -r name np tgt args <<< "$t"
    [ -n "${SRCS[$tgt]:-}" ] || SRCS[$tgt]=$(find_source "$tgt")
    if [ -n "${NEEDS_MPI[$tgt]:-}" ]; then
        oca="skipped"; rmx="skipped: ${NEEDS_MPI[$tgt]}"
    elif [ -z "${SRCS[$tgt]:-}" ]; then
        oca="no sources"; rmx="no sources (target $tgt not found)"
    else
        for rt in oca rmx; do
            r=$(build $rt "$tgt")
            [ -z "$r" ] && r=$(run $rt "$tgt" "$np" "$args" "$name")
            printf -v "$rt" '%s' "$r"
        done
        if [ "$rmx" != pass ] && [ -f "$OUT/logs/$name.rmx.run.log" ]; then
            w=$(why "$OUT/logs/$name.rmx.run.log")
            [ -n "$w" ] && rmx="$rmx: $w"
        fi
    fi
    printf '%-48s %6s  %-26s %s\n' "$name${args:+ $args}" "$np" "$oca" "$rmx"
    ko=${oca%% *}; ko=${ko%:}; kr=${rmx%% *}; kr=${kr%:}
    TOTAL[oca $ko]=$(( ${TOTAL[oca $ko]:-0} + 1 ))
    TOTAL[rmx $kr]=$(( ${TOTAL[rmx $kr]:-0} + 1 ))
    [ "$oca" = pass ] && [ "$kr" != pass ] && TOTAL[regress]=$(( ${TOTAL[regress]:-0} + 1 ))
done
summary() {   # summary oca|rmx
    local out="" k
    for k in pass FAIL compile link timeout crash skipped no; do
        local n=${TOTAL[$1 $k]:-0} label=$k
        case $k in compile) label="compile error" ;; link) label="link error" ;; no) label="no sources" ;; esac
        [ "$n" -gt 0 ] && out="$out${out:+, }$n $label"
    done
    echo "$out"
}
echo
echo "tests: ${#TESTS[@]} ($OC_TAG, timeout ${TIMEOUT}s per run; logs in $OUT/logs)"
echo "OpenCoarrays: $(summary oca)"
echo "libcaf_rmx:   $(summary rmx)"
echo "pass on OpenCoarrays but not on libcaf_rmx: ${TOTAL[regress]:-0}"
