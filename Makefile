# rmx — build, test, benchmark.
#   make deps    install the Debian packages rmx needs (no-op when present; root or sudo)
#   make         build/librmx.a build/librmx.so build/rmx.pc build/rmx_perf, and `make caf`:
#                build/libcaf_rmx.{a,so} (gfortran -fcoarray=lib runtime), build/rmxcaf + build/rmxrun
#                (compile and run coarray programs) + tests/caf/*.f90 programs
#   make check   build and run every test (Criterion; multi-process over real UCP), four ways:
#                default transports, RMX_DIRECT=0, UCX_TLS=tcp,self, RMX_WIN_MEMORY=user
#                (CHECK_WAYS= narrows it), the examples of tests/examples/ among them; and, once,
#                compiles every ```c block of README.md (make check-readme)
#   make perf    run the benchmark on 2 local ranks (rmx beside raw UCP)
#   make compare rmx, raw UCP and Open MPI (perf/compare.sh) in one table
#   make asan    the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make valgrind  the whole suite under valgrind memcheck
#   make install   headers, libraries, rmx.pc/caf-rmx.pc and the tools under PREFIX (default
#                /usr/local; DESTDIR=, BINDIR=, LIBDIR=, INCLUDEDIR=, PKGCONFIGDIR= as autotools);
#                make uninstall removes them.  make check also checks the exported symbols
#                (check-abi) and installs into a temporary prefix to build programs (check-install).
#   make stress  4 ranks of random mixed operations for 60 s, verified at every sync_all
#   make fuzz    build/tests/fuzz_subarray, a libFuzzer target (clang); make check then runs it briefly
# Sources are found by wildcard: a new engine/*.c, transports/*.c, tests/test_*.c or perf/*.c file
# needs no edit here.  BUILD=dir puts every artefact in dir (parallel builds, sanitizer builds).

BUILD    ?= build
CC       ?= cc
PKGS      = ucx hwloc pmix
WARN      = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT      ?= -O2 -g
CFLAGS   ?=
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -fPIC $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CFLAGS)
LDLIBS_ALL = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm
LDFLAGS  ?=

DEB_PKGS = libucx-dev ucx-utils libhwloc-dev libpmix-dev libcriterion-dev openmpi-bin \
           libopenmpi-dev pkg-config gfortran clang valgrind libcoarrays-openmpi-dev
# Slurm for tests/test_launch.c (tests/slurm_run.sh starts a single-node Slurm of its own):
# slurm-wlm-basic-plugins holds srun's PMIx plugin (mpi_pmix.so, `srun --mpi=list`).
DEB_PKGS += slurm-wlm slurm-wlm-basic-plugins
# libudev-dev: hwloc.pc names -ludev for static links (pkg-config --static, tests/install_check.sh).
DEB_PKGS += libudev-dev

LIB_SRC  = $(wildcard engine/*.c) $(wildcard transports/*.c)
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC = $(wildcard tests/test_*.c) $(wildcard tests/harness*.c)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
PROG_SRC = $(wildcard tests/prog_*.c)
PROG_BIN = $(PROG_SRC:tests/%.c=$(BUILD)/tests/%)
PERF_SRC = $(wildcard perf/*.c)
PERF_OBJ = $(PERF_SRC:%.c=$(BUILD)/obj/%.o)
HDRS     = $(wildcard api/*.h engine/*.h transports/*.h tests/*.h perf/*.h)

# The version is written once, in api/rmx.h; the shared libraries are librmx.so.MAJOR.MINOR.PATCH
# with SONAME librmx.so.MAJOR (and libcaf_rmx likewise), plus the two symlinks.
rmx_vpart = $(shell sed -n 's/^\#define RMX_VERSION_$(1) \([0-9][0-9]*\)$$/\1/p' api/rmx.h)
VERSION_MAJOR := $(call rmx_vpart,MAJOR)
VERSION  := $(VERSION_MAJOR).$(call rmx_vpart,MINOR).$(call rmx_vpart,PATCH)
# Only what api/*.h marks RMX_API leaves librmx.so (tests/abi/librmx.symbols; make check-abi).
# The static archive and the programs linking the objects (tests, rmx_perf) still see everything.
$(LIB_OBJ): CFLAGS_ALL += -fvisibility=hidden

# Criterion runs tests in parallel by default; multi-process UCX tests on 2 cores are steadier
# one at a time.
CHECK_ARGS ?= --jobs 1
CHECK_ENV  ?=

# Fortran coarrays (api/caf/): libcaf_rmx, and tests/caf/*.f90 built with gfortran -fcoarray=lib.
# The .so carries the engine too, so `gfortran -fcoarray=lib prog.f90 -lcaf_rmx` needs nothing else.
CAF_SRC  = $(wildcard api/caf/*.c)
CAF_OBJ  = $(CAF_SRC:%.c=$(BUILD)/obj/%.o)
CAF_PROG = $(patsubst tests/caf/%.f90,$(BUILD)/tests/caf/%,$(wildcard tests/caf/*.f90))
CAF_FC  ?= gfortran
CAF_FFLAGS ?= -fcoarray=lib -O2 -g -Wall -Werror -ffree-line-length-none
CAF_LIBS = $(BUILD)/libcaf_rmx.a $(BUILD)/librmx.a $(LDFLAGS) $(LDLIBS_ALL)
CAF_TOOLS = $(BUILD)/rmxcaf $(BUILD)/rmxrun $(BUILD)/rmx_forkrun

.PHONY: all deps check perf asan valgrind stress clean lib tests fuzz caf perf-caf

all: lib $(BUILD)/rmx_perf caf

lib: $(BUILD)/librmx.a $(BUILD)/librmx.so $(BUILD)/librmx.so.$(VERSION_MAJOR) $(BUILD)/rmx.pc

deps:
	@missing=""; \
	for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all present"; exit 0; fi; \
	echo "deps: installing$$missing"; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing

$(BUILD)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/librmx.a: $(LIB_OBJ)
	@mkdir -p $(BUILD)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/librmx.so.$(VERSION): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,librmx.so.$(VERSION_MAJOR) -o $@ $^ $(LDFLAGS) $(LDLIBS_ALL)

$(BUILD)/librmx.so.$(VERSION_MAJOR) $(BUILD)/librmx.so: $(BUILD)/librmx.so.$(VERSION)
	ln -sf $(notdir $<) $@

# rmx.pc and caf-rmx.pc: $(call rmx_pc,prefix,includedir,libdir).  build/rmx.pc describes this
# build tree (absolute paths: any BUILD=, any working directory); make install writes the installed
# ones.
rmx_pc = printf '%s\n' 'prefix=$(1)' 'includedir=$(2)' 'libdir=$(3)' '' 'Name: rmx' \
  'Description: UCX-native one-sided communication engine' 'Version: $(VERSION)' \
  'Requires.private: $(PKGS)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lrmx' \
  'Libs.private: -lpthread -lm'
caf_pc = printf '%s\n' 'prefix=$(1)' 'includedir=$(2)' 'libdir=$(3)' '' 'Name: caf-rmx' \
  'Description: gfortran -fcoarray=lib runtime on rmx (libcaf_rmx)' 'Version: $(VERSION)' \
  'Requires.private: $(PKGS)' 'Libs: -L$${libdir} -lcaf_rmx' \
  'Libs.private: -lrmx -lpthread -lm'

$(BUILD)/rmx.pc: Makefile api/rmx.h
	@mkdir -p $(BUILD)
	@$(call rmx_pc,$(CURDIR),$(abspath api),$(abspath $(BUILD))) > $@

$(BUILD)/rmx_tests: $(TEST_OBJ) $(BUILD)/librmx.a
	$(CC) -o $@ $(TEST_OBJ) $(BUILD)/librmx.a $(LDFLAGS) $(LDLIBS_ALL) -lcriterion

$(BUILD)/tests/prog_%: tests/prog_%.c $(BUILD)/librmx.a $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/librmx.a $(LDFLAGS) $(LDLIBS_ALL)

# The engine's objects, not the archive: perf/ references some engine calls weakly (it links, and
# prints n/a, without them), and a weak reference alone does not pull a member out of an archive.
$(BUILD)/rmx_perf: $(PERF_OBJ) $(LIB_OBJ)
	$(CC) -o $@ $(PERF_OBJ) $(LIB_OBJ) $(LDFLAGS) $(LDLIBS_ALL)

$(CAF_OBJ): $(wildcard api/caf/*.h)

$(BUILD)/libcaf_rmx.a: $(CAF_OBJ)
	@mkdir -p $(BUILD)
	rm -f $@ && ar rcs $@ $^

# The engine inside libcaf_rmx.so stays private to it (a program may load librmx.so as well, with
# its own state): it exports gfortran's entry points and libcaf_rmx's own extension, nothing else.
$(BUILD)/libcaf_rmx.map: Makefile
	@mkdir -p $(BUILD)
	@printf '%s\n' '{' '  global: _gfortran_caf_*; caf_rmx_stats;' '  local: *;' '};' > $@

$(BUILD)/libcaf_rmx.so.$(VERSION): $(CAF_OBJ) $(LIB_OBJ) $(BUILD)/libcaf_rmx.map
	$(CC) -shared -Wl,-soname,libcaf_rmx.so.$(VERSION_MAJOR) \
	  -Wl,--version-script=$(BUILD)/libcaf_rmx.map -o $@ $(CAF_OBJ) $(LIB_OBJ) $(LDFLAGS) $(LDLIBS_ALL)

$(BUILD)/libcaf_rmx.so.$(VERSION_MAJOR) $(BUILD)/libcaf_rmx.so: $(BUILD)/libcaf_rmx.so.$(VERSION)
	ln -sf $(notdir $<) $@

# Through build/rmxcaf, so that every build tests the wrapper.
$(BUILD)/tests/caf/%: tests/caf/%.f90 tests/caf/check.inc $(BUILD)/libcaf_rmx.a $(BUILD)/librmx.a $(BUILD)/rmxcaf
	@mkdir -p $(BUILD)/tests/caf/mod
	$(BUILD)/rmxcaf $(CAF_FFLAGS) -J$(BUILD)/tests/caf/mod -o $@ $<

# Unoptimized, gfortran leaves the stack's contents in the token field caf_nested is about.
$(BUILD)/tests/caf/caf_nested: CAF_FFLAGS += -O0

# caf_oom fails one malloc of its choosing (tests/caf/fail_malloc.c).
$(BUILD)/tests/caf/caf_oom: CAF_FFLAGS += $(BUILD)/tests/caf/fail_malloc.o
$(BUILD)/tests/caf/caf_oom: $(BUILD)/tests/caf/fail_malloc.o
$(BUILD)/tests/caf/fail_malloc.o: tests/caf/fail_malloc.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

caf: $(BUILD)/libcaf_rmx.a $(BUILD)/libcaf_rmx.so $(BUILD)/libcaf_rmx.so.$(VERSION_MAJOR) \
     $(CAF_TOOLS) $(CAF_PROG)

# build/rmxcaf and build/rmxrun (from api/caf/*.in, absolute paths into this build) compile and run
# coarray programs as OpenCoarrays' caf and cafrun; rmxrun's fork launcher is build/rmx_forkrun.
$(BUILD)/rmxcaf $(BUILD)/rmxrun: $(BUILD)/%: api/caf/%.in Makefile
	@mkdir -p $(BUILD)
	sed -e 's|@BUILD@|$(abspath $(BUILD))|g' -e 's|@FC@|$(CAF_FC)|g' \
	    -e 's|@LIBS@|$(strip $(LDFLAGS) $(LDLIBS_ALL))|g' $< > $@.tmp
	chmod +x $@.tmp && mv $@.tmp $@

$(BUILD)/rmx_forkrun: api/rmx_forkrun.c $(BUILD)/librmx.a $(HDRS)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/librmx.a $(LDFLAGS) $(LDLIBS_ALL)

# The same Fortran benchmark on libcaf_rmx and on OpenCoarrays (perf/caf/run.sh).
perf-caf: caf
	BUILD=$(BUILD) perf/caf/run.sh $(PERF_CAF_ARGS)

# The same programs against OpenCoarrays' libcaf_openmpi, when its `caf` wrapper is installed:
# tests/test_caf_compare.c runs both builds and compares their output.  tests/caf/compare.conf
# lists the programs left out (`skip` lines, shell globs), each with its reason.
CAF_OCA ?= $(shell command -v caf 2>/dev/null)
CAF_OCA_SKIP = $(subst *,%,$(shell awk '$$1 == "skip" { print "tests/caf/" $$2 ".f90" }' tests/caf/compare.conf))
CAF_OCA_PROG = $(if $(CAF_OCA),$(patsubst tests/caf/%.f90,$(BUILD)/tests/caf-oca/%,$(filter-out $(CAF_OCA_SKIP),$(wildcard tests/caf/*.f90))))

$(BUILD)/tests/caf-oca/%: tests/caf/%.f90
	@mkdir -p $(BUILD)/tests/caf-oca/mod
	$(CAF_OCA) $(CAF_FFLAGS) -J$(BUILD)/tests/caf-oca/mod -o $@ $< || \
	  { echo "$<: does not build against OpenCoarrays; if it cannot, list it in tests/caf/compare.conf with the reason" >&2; exit 1; }

$(BUILD)/obj/tests/%.o: CFLAGS_ALL += -DRMX_TEST_BIN_DIR='"$(CURDIR)/$(BUILD)/tests"'
$(BUILD)/obj/tests/%.o: CFLAGS_ALL += -DRMX_TEST_SRC_DIR='"$(CURDIR)/tests"'

# The OpenSHMEM column of make compare (Open MPI's oshmem), built when oshcc is installed;
# tests/test_perf.c runs it once under oshrun.
OSHCC ?= $(shell command -v oshcc 2>/dev/null)
SHMEM_BENCH = $(if $(OSHCC),$(BUILD)/perf/bench_shmem)
$(BUILD)/perf/bench_shmem: perf/shmem/bench_shmem.c perf/driver.h perf/perf.h api/rmx.h
	@mkdir -p $(@D)
	$(OSHCC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o $@ $< -lm

# Examples for users (tests/examples/): C programs on librmx.a, an MPI program (mpicc, when
# installed) that bootstraps rmx through MPI's collectives, a coarray program (build/rmxcaf).
# `make tests` builds them into BUILD/tests/examples/; tests/test_examples.c runs each as a user
# would (mpirun, build/rmx_forkrun, build/rmxrun).  `make check` also compiles and links every
# ```c block of README.md, once (tests/examples/readme_snippets.sh: each block a whole program).
EX_DIR   = $(BUILD)/tests/examples
EX_C     = $(patsubst tests/examples/%.c,$(EX_DIR)/%,$(filter-out tests/examples/mpi_%.c,$(wildcard tests/examples/*.c)))
MPICC   ?= $(shell command -v mpicc 2>/dev/null)
EX_MPI   = $(if $(MPICC),$(patsubst tests/examples/%.c,$(EX_DIR)/%,$(wildcard tests/examples/mpi_*.c)))
EX_CAF   = $(patsubst tests/examples/%.f90,$(EX_DIR)/%,$(wildcard tests/examples/*.f90))
EXAMPLES = $(EX_C) $(EX_MPI) $(EX_CAF)

$(EX_C): $(EX_DIR)/%: tests/examples/%.c $(BUILD)/librmx.a api/rmx.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iapi -o $@ $< $(BUILD)/librmx.a $(LDFLAGS) $(LDLIBS_ALL)

$(EX_MPI): $(EX_DIR)/%: tests/examples/%.c $(BUILD)/librmx.a api/rmx.h
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS_ALL) -Iapi -o $@ $< $(BUILD)/librmx.a $(LDFLAGS) $(LDLIBS_ALL)

$(EX_CAF): $(EX_DIR)/%: tests/examples/%.f90 $(BUILD)/libcaf_rmx.a $(BUILD)/librmx.a $(BUILD)/rmxcaf
	@mkdir -p $(EX_DIR)/mod
	$(BUILD)/rmxcaf $(CAF_FFLAGS) -J$(EX_DIR)/mod -o $@ $<

.PHONY: check-readme
check-readme: $(BUILD)/librmx.a
	CC="$(CC)" CFLAGS="$(CFLAGS_ALL) -Iapi" LIBS="$(BUILD)/librmx.a $(LDFLAGS) $(LDLIBS_ALL)" \
	  sh tests/examples/readme_snippets.sh README.md

tests: $(EXAMPLES)
check: check-readme

tests: $(BUILD)/rmx_tests $(PROG_BIN) caf $(CAF_OCA_PROG) $(BUILD)/rmx_perf $(SHMEM_BENCH)

# The whole suite four ways: default transports (peers' windows reached directly with loads,
# stores and CPU atomics: rmx_direct_t); the same through UCP (RMX_DIRECT=0); tcp only (what
# off-node becomes without an RDMA NIC: UCX serves RMA and atomics in software, so the target's
# progress agent is exercised); and every rmx_win_allocate window of registered memory (the
# rmx_win_create path).  make asan runs all but the second (ASAN_WAYS).
CHECK_WAYS ?= default ucp tcp user
ASAN_WAYS ?= $(filter-out ucp,$(CHECK_WAYS))
check: tests check-abi check-install
	@for way in $(CHECK_WAYS); do \
	  case $$way in \
	    default) env="" ;; \
	    ucp) env="RMX_DIRECT=0" ;; \
	    tcp) env="UCX_TLS=tcp,self" ;; \
	    user) env="RMX_WIN_MEMORY=user" ;; \
	    *) echo "unknown check way $$way"; exit 2 ;; \
	  esac; \
	  echo "== make check: $$way transports and windows $${env:+($$env)}"; \
	  log=$(BUILD)/check-$$way.log; \
	  { env $(CHECK_ENV) $$env ./$(BUILD)/rmx_tests $(CHECK_ARGS) 2>&1; echo $$? > $$log.rc; } | \
	    grep --line-buffered -v 'was not suspended. False leaks are possible' | tee $$log; \
	  rc=$$(cat $$log.rc); \
	  if [ "$$rc" != 0 ]; then \
	    echo "== make check: $$way failed (exit $$rc); the failures (whole output in $$log):"; \
	    grep -E '\[FAIL\]|Assertion Failed|[Tt]imed out|CRASH|[Ss]egmentation|ERROR: AddressSanitizer|runtime error' $$log | head -40; \
	    exit 1; \
	  fi; \
	done

# ---- install, ABI
# Autotools' layout: PREFIX/include/{rmx.h,rmx_fork.h} (#include <rmx.h>), PREFIX/lib/librmx.{so*,a}
# and libcaf_rmx.{so*,a}, PREFIX/lib/pkgconfig/{rmx,caf-rmx}.pc, PREFIX/bin/{rmx_perf,rmx_forkrun,
# rmxcaf,rmxrun}.  DESTDIR stages the whole tree elsewhere (packaging); the files name PREFIX.
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL_HDRS = api/rmx.h api/rmx_fork.h
INSTALL_BINS = rmx_perf rmx_forkrun
INSTALL_SO   = $(foreach l,librmx libcaf_rmx,$(l).so.$(VERSION) $(l).so.$(VERSION_MAJOR) $(l).so)
# Every file make install writes, and so make uninstall removes.
INSTALLED = $(addprefix $(INCLUDEDIR)/,$(notdir $(INSTALL_HDRS))) \
            $(addprefix $(LIBDIR)/,$(INSTALL_SO) librmx.a libcaf_rmx.a) \
            $(addprefix $(PKGCONFIGDIR)/,rmx.pc caf-rmx.pc) \
            $(addprefix $(BINDIR)/,$(INSTALL_BINS) rmxcaf rmxrun)
STAGE = $(BUILD)/install

.PHONY: install uninstall check-abi check-install
install: all
	@mkdir -p $(STAGE)
	@$(call rmx_pc,$(PREFIX),$(INCLUDEDIR),$(LIBDIR)) > $(STAGE)/rmx.pc
	@$(call caf_pc,$(PREFIX),$(INCLUDEDIR),$(LIBDIR)) > $(STAGE)/caf-rmx.pc
	@# The wrappers of the build tree, naming the installed libraries and launcher instead.
	sed -e 's|@BUILD@|$(LIBDIR)|g' -e 's|@FC@|$(CAF_FC)|g' \
	    -e 's|@LIBS@|$(strip $(LDFLAGS) $(LDLIBS_ALL))|g' api/caf/rmxcaf.in > $(STAGE)/rmxcaf
	sed -e 's|@BUILD@|$(BINDIR)|g' api/caf/rmxrun.in > $(STAGE)/rmxrun
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	install -m 644 $(INSTALL_HDRS) $(DESTDIR)$(INCLUDEDIR)/
	install -m 755 $(BUILD)/librmx.so.$(VERSION) $(BUILD)/libcaf_rmx.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	for l in librmx libcaf_rmx; do \
	  ln -sf $$l.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$$l.so.$(VERSION_MAJOR) && \
	  ln -sf $$l.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$$l.so || exit 1; \
	done
	install -m 644 $(BUILD)/librmx.a $(BUILD)/libcaf_rmx.a $(DESTDIR)$(LIBDIR)/
	install -m 644 $(STAGE)/rmx.pc $(STAGE)/caf-rmx.pc $(DESTDIR)$(PKGCONFIGDIR)/
	install -m 755 $(addprefix $(BUILD)/,$(INSTALL_BINS)) $(STAGE)/rmxcaf $(STAGE)/rmxrun $(DESTDIR)$(BINDIR)/

# The files only; directories stay (they may hold others' files, as under /usr/local).
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

# Once per make check, not per way: what librmx.so and libcaf_rmx.so export is what
# tests/abi/*.symbols and the headers' RMX_API declarations say (tests/abi/check_abi.sh).
check-abi: $(BUILD)/librmx.so $(BUILD)/libcaf_rmx.so
	tests/abi/check_abi.sh $(BUILD)/librmx.so tests/abi/librmx.symbols $(INSTALL_HDRS)
	tests/abi/check_abi.sh $(BUILD)/libcaf_rmx.so tests/abi/libcaf_rmx.symbols

# make install into a temporary prefix, programs built there with pkg-config alone, make
# uninstall (tests/install_check.sh).  The build's LDFLAGS (a sanitizer's runtime) and CHECK_ENV
# go along: an instrumented library needs them in any program.
check-install: all
	env $(CHECK_ENV) MAKE="$(MAKE)" BUILD=$(BUILD) CC="$(CC)" FC="$(CAF_FC)" \
	  EXTRA_LDFLAGS="$(LDFLAGS)" tests/install_check.sh

stress: $(BUILD)/tests/prog_stress
	./$(BUILD)/tests/prog_stress $(or $(STRESS_SECONDS),60) 4

perf: $(BUILD)/rmx_perf
	./$(BUILD)/rmx_perf --ranks 2 $(PERF_ARGS)

.PHONY: compare
compare: $(BUILD)/rmx_perf
	BUILD=$(BUILD) sh perf/compare.sh $(PERF_ARGS)

# ASan's allocator and UCX's malloc/mmap hooks both want to intercept allocation: turn UCX's off.
asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
	  CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
	  LDFLAGS="-fsanitize=address,undefined" \
	  CHECK_WAYS="$(ASAN_WAYS)" CHECK_ENV="UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0" check

# Forked ranks are followed (--trace-children); mpirun/orted are Open MPI's, not ours, so they run
# natively and the PMIx-launched ranks get valgrind through RMX_TEST_WRAPPER instead.  So do
# tests/slurm_run.sh and the Slurm daemons it starts (srun's ranks: RMX_TEST_WRAPPER).
VALGRIND = valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
           --suppressions=$(CURDIR)/tests/valgrind.supp -q
# Its own build: the tests' time limits are scaled for memcheck's slowdown (tests/harness.h).
VG_BUILD ?= build-valgrind
valgrind:
	$(MAKE) BUILD=$(VG_BUILD) CFLAGS="-DRMX_TEST_TIME_SCALE=30" tests
	UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none RMX_TEST_WRAPPER="$(VALGRIND)" \
	$(VALGRIND) --trace-children=yes --trace-children-skip='*/timeout,*/mpirun,*/orterun,*/orted' \
	  --trace-children-skip-by-arg='*slurm_run.sh' \
	  ./$(VG_BUILD)/rmx_tests $(CHECK_ARGS)

# The subarray descriptor arithmetic has no UCX underneath, so the fuzz target links it alone.
FUZZ_CC ?= clang
fuzz: $(BUILD)/tests/fuzz_subarray
$(BUILD)/tests/fuzz_subarray: tests/fuzz_subarray.c engine/subarray.c engine/subarray.h api/rmx.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -O1 -g $(WARN) -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -o $@ tests/fuzz_subarray.c engine/subarray.c

clean:
	rm -rf build build-*
