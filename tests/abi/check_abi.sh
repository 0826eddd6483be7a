#!/bin/sh
# check_abi.sh — the symbols a shared library exports are exactly those its list names, and (with
# headers) exactly the functions those headers declare RMX_API:
#   tests/abi/check_abi.sh LIB.so LIST [HEADER...]
# Exit 0 when they agree; 1 with each difference and what to do.  make check-abi runs it.
set -u
lib=$1 list=$2
shift 2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

[ -f "$lib" ] || { echo "check_abi: $lib: no such library (make lib caf first)" >&2; exit 1; }
# Symbols a sanitizer build adds to any instrumented library, and the linker's own markers, are
# not rmx's ABI.
nm -D --defined-only "$lib" | awk '{ print $NF }' |
    grep -Ev '^(__(asan|ubsan|sanitizer|odr_asan)|___asan|_init$|_fini$|_edata$|_end$|__bss_start$)' |
    sort -u > "$tmp/exported" || { echo "check_abi: nm -D $lib failed" >&2; exit 1; }
grep -Ev '^[[:space:]]*(#|$)' "$list" | sort -u > "$tmp/listed"

rc=0
comm -23 "$tmp/exported" "$tmp/listed" > "$tmp/new"
comm -13 "$tmp/exported" "$tmp/listed" > "$tmp/gone"
if [ -s "$tmp/new" ] || [ -s "$tmp/gone" ]; then
    echo "check_abi: $lib does not export what $list lists:"
    sed 's/^/  exported, not listed: /' "$tmp/new"
    sed 's/^/  listed, not exported: /' "$tmp/gone"
    echo "  An exported symbol appeared or disappeared.  If that is intended, update $list"
    echo "  together with the public header (RMX_API declarations; a removed or changed symbol"
    echo "  also needs a new RMX_VERSION_MAJOR in api/rmx.h); if not, an internal function lost"
    echo "  its static / hidden visibility, or a public one lost RMX_API."
    rc=1
fi

if [ $# -gt 0 ]; then
    # The name before the first '(' of every line that starts with RMX_API.
    sed -n 's/^RMX_API[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$@" | sort -u > "$tmp/declared"
    comm -23 "$tmp/exported" "$tmp/declared" > "$tmp/undeclared"
    comm -13 "$tmp/exported" "$tmp/declared" > "$tmp/undefined"
    if [ -s "$tmp/undeclared" ] || [ -s "$tmp/undefined" ]; then
        echo "check_abi: $lib and the RMX_API declarations of $* disagree:"
        sed 's/^/  exported, not declared RMX_API: /' "$tmp/undeclared"
        sed 's/^/  declared RMX_API, not exported (not defined, or hidden): /' "$tmp/undefined"
        echo "  Every public function is declared with RMX_API in the header and listed in $list."
        rc=1
    fi
fi
[ $rc = 0 ] && echo "check_abi: $lib exports the $(wc -l < "$tmp/exported") symbols of $list"
exit $rc
