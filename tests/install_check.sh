#!/bin/sh
# install_check.sh — rmx as a user outside this tree gets it: make install into a temporary prefix,
# then programs written to a temporary directory and built with nothing but pkg-config (and the
# installed rmxcaf), run on 1 and 2 ranks:
#   - C, shared: pkg-config --cflags --libs rmx; runs on the installed librmx.so.MAJOR (ldd);
#   - C, static: pkg-config --static --libs rmx with librmx.a (no librmx.so needed at run time);
#   - Fortran coarrays: the installed rmxcaf + rmxrun, and gfortran with pkg-config caf-rmx;
# then make uninstall, and nothing may be left.  A DESTDIR install (with LIBDIR) must stage the same
# files whose contents name the final prefix, never this build tree.
# make check-install runs it from the top of the tree; environment: MAKE, BUILD, CC, FC, and
# EXTRA_LDFLAGS (a sanitizer build's runtime, which any program linking it needs).
set -u
cd "$(dirname "$0")/.." || exit 1
MAKE=${MAKE:-make} BUILD=${BUILD:-build} CC=${CC:-cc} FC=${FC:-gfortran}
EXTRA_LDFLAGS=${EXTRA_LDFLAGS:-}
tree=$(pwd) build_abs=$(cd "$BUILD" && pwd)
tmp=$(mktemp -d /tmp/rmx-install-check.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
# Nothing from the caller's environment may find rmx for the programs: only pkg-config does.
unset CPATH C_INCLUDE_PATH LIBRARY_PATH LD_LIBRARY_PATH LD_RUN_PATH
prefix=$tmp/prefix
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig

fail() { echo "install_check: FAIL: $*" >&2; exit 1; }
step() { echo "install_check: $*"; }
# Run a command, its output kept for the failure message.
run() {
    "$@" > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "$*"; }
}
left_in() { find "$1" ! -type d | sed "s|^$1||"; }

step "make install PREFIX=$prefix"
run $MAKE -s install BUILD="$BUILD" PREFIX="$prefix"
for f in include/rmx.h include/rmx_fork.h lib/librmx.a lib/libcaf_rmx.a bin/rmx_perf \
         bin/rmx_forkrun bin/rmxcaf bin/rmxrun lib/pkgconfig/rmx.pc lib/pkgconfig/caf-rmx.pc; do
    [ -f "$prefix/$f" ] || fail "make install did not install $f"
done
for l in librmx libcaf_rmx; do
    soname=$(readelf -d "$prefix/lib/$l.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
    [ "$soname" = "$l.so.$(pkg-config --modversion rmx | cut -d. -f1)" ] ||
        fail "$l.so: SONAME '$soname', not $l.so.MAJOR"
    [ -e "$prefix/lib/$soname" ] || fail "$l: no $soname symlink"
done
grep -rlI "$build_abs\|$tree/api" "$prefix/lib/pkgconfig" "$prefix/bin/rmxcaf" "$prefix/bin/rmxrun" &&
    fail "installed files name the build tree"

mkdir "$tmp/src" && cd "$tmp/src" || exit 1
cat > hello.c <<'EOF'
/* Each rank puts a word into its right neighbour's window, reads it back, checks the version. */
#include <rmx.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call) do { int rc_ = (call); if (rc_ != RMX_OK) { \
    fprintf(stderr, "%s: %s\n", #call, rmx_strerror(rc_)); return 1; } } while (0)

int main(void)
{
    if (rmx_version() != RMX_VERSION || strcmp(rmx_version_string(), RMX_VERSION_STRING) != 0) {
        fprintf(stderr, "library %s (%u), header %s (%d)\n", rmx_version_string(), rmx_version(),
                RMX_VERSION_STRING, RMX_VERSION);
        return 1;
    }
    rmx_ctx_t *ctx;
    CHECK(rmx_init(NULL, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx), right = (me + 1) % n, left = (me + n - 1) % n;
    long *base, v = 1000 + me, back = 0;
    rmx_win_t *win;
    CHECK(rmx_win_allocate(ctx, (size_t)n * sizeof(long), (void **)&base, &win));
    CHECK(rmx_put(win, &v, sizeof v, right, (size_t)me * sizeof(long)));
    CHECK(rmx_sync_all(ctx));
    CHECK(rmx_get(win, &back, sizeof back, right, (size_t)me * sizeof(long)));
    if (base[left] != 1000 + left || back != v) {
        fprintf(stderr, "rank %d: read %ld and %ld\n", me, base[left], back);
        return 1;
    }
    CHECK(rmx_win_free(&win));
    CHECK(rmx_finalize(ctx));
    printf("rank %d of %d: rmx %s ok\n", me, n, rmx_version_string());
    return 0;
}
EOF
cat > hello.f90 <<'EOF'
! Each image writes its number into its right neighbour's coarray.
program hello
  implicit none
  integer :: x[*], me, n
  me = this_image()
  n = num_images()
  x = 0
  sync all
  x[mod(me, n) + 1] = me
  sync all
  if (x /= mod(me - 2 + n, n) + 1) error stop 1
  if (me == 1) print '(a,i0,a)', 'coarray ok on ', n, ' images'
end program
EOF
forkrun=$prefix/bin/rmx_forkrun
libdir=$(pkg-config --variable=libdir rmx)
[ "$libdir" = "$prefix/lib" ] || fail "rmx.pc: libdir=$libdir, not $prefix/lib"

step "C program, shared: \$CC hello.c \$(pkg-config --cflags --libs rmx)"
run $CC -std=c11 -Wall -Werror -o hello_shared hello.c $(pkg-config --cflags --libs rmx) $EXTRA_LDFLAGS
readelf -d hello_shared | grep -q 'NEEDED.*\[librmx\.so\.[0-9]*\]' || fail "hello_shared: no librmx.so.MAJOR needed"
LD_LIBRARY_PATH=$libdir ldd hello_shared | grep -q "librmx\.so\.[0-9]* => $libdir/librmx\.so\.[0-9]* " ||
    fail "hello_shared does not load the installed librmx.so: $(LD_LIBRARY_PATH=$libdir ldd hello_shared)"
run env LD_LIBRARY_PATH="$libdir" timeout 60 ./hello_shared
grep -q "rmx $(pkg-config --modversion rmx) ok" "$tmp/out" ||
    fail "rmx.pc's version $(pkg-config --modversion rmx), the library's: $(cat "$tmp/out")"
run env LD_LIBRARY_PATH="$libdir" timeout 60 "$forkrun" --timeout 50 -n 2 ./hello_shared
[ "$(grep -c ' ok$' "$tmp/out")" = 2 ] || { cat "$tmp/out"; fail "hello_shared on 2 ranks"; }

step "C program, static librmx.a: \$(pkg-config --static --libs rmx) (-lrmx as -l:librmx.a)"
libs=$(pkg-config --static --libs rmx | sed 's/-lrmx\b/-l:librmx.a/')
run $CC -std=c11 -Wall -Werror -o hello_static hello.c $(pkg-config --cflags rmx) $libs $EXTRA_LDFLAGS
readelf -d hello_static | grep -q 'librmx' && fail "hello_static needs librmx.so"
run timeout 60 ./hello_static
run timeout 60 "$forkrun" --timeout 50 -n 2 ./hello_static
[ "$(grep -c ' ok$' "$tmp/out")" = 2 ] || { cat "$tmp/out"; fail "hello_static on 2 ranks"; }

if command -v "$FC" > /dev/null 2>&1; then
    step "coarray program: installed rmxcaf + rmxrun --launcher fork"
    run env RMXCAF_FC="$FC" "$prefix/bin/rmxcaf" -o caf_static hello.f90 $EXTRA_LDFLAGS
    run timeout 60 "$prefix/bin/rmxrun" --launcher fork --timeout 50 -n 2 ./caf_static
    grep -q 'coarray ok on 2 images' "$tmp/out" || { cat "$tmp/out"; fail "caf_static"; }
    step "coarray program, shared: \$FC -fcoarray=lib hello.f90 \$(pkg-config --libs caf-rmx)"
    run $FC -fcoarray=lib -o caf_shared hello.f90 $(pkg-config --libs caf-rmx) $EXTRA_LDFLAGS
    LD_LIBRARY_PATH=$libdir ldd caf_shared | grep -q "libcaf_rmx\.so\.[0-9]* => $libdir/" ||
        fail "caf_shared does not load the installed libcaf_rmx.so"
    run env LD_LIBRARY_PATH="$libdir" timeout 60 "$forkrun" --timeout 50 -n 2 ./caf_shared
    grep -q 'coarray ok on 2 images' "$tmp/out" || { cat "$tmp/out"; fail "caf_shared"; }
else
    step "no $FC: coarray programs skipped"
fi
cd "$tree" || exit 1

step "make uninstall"
run $MAKE -s uninstall BUILD="$BUILD" PREFIX="$prefix"
left=$(left_in "$prefix")
[ -z "$left" ] || fail "make uninstall left: $left"

step "make install DESTDIR=... PREFIX=/opt/rmx LIBDIR=/opt/rmx/lib64, then uninstall"
stage=$tmp/stage
run $MAKE -s install BUILD="$BUILD" DESTDIR="$stage" PREFIX=/opt/rmx LIBDIR=/opt/rmx/lib64
[ -L "$stage/opt/rmx/lib64/librmx.so" ] || fail "DESTDIR install: no lib64/librmx.so"
grep -qx 'libdir=/opt/rmx/lib64' "$stage/opt/rmx/lib64/pkgconfig/rmx.pc" || fail "DESTDIR: rmx.pc libdir"
grep -q '/opt/rmx/bin/rmx_forkrun' "$stage/opt/rmx/bin/rmxrun" || fail "DESTDIR: rmxrun's launcher"
grep -rlI "$stage\|$build_abs" "$stage" && fail "DESTDIR install names the staging or build directory"
run $MAKE -s uninstall BUILD="$BUILD" DESTDIR="$stage" PREFIX=/opt/rmx LIBDIR=/opt/rmx/lib64
left=$(left_in "$stage")
[ -z "$left" ] || fail "make uninstall DESTDIR=... left: $left"
step "ok"
