#!/bin/bash
# slurm_run.sh BIN_DIR — rmx jobs under Slurm's srun on a single-node Slurm of its own.
#
# Starts slurmctld and slurmd in the foreground with a temporary configuration (a temporary
# directory: slurm.conf, state, spool, logs; free TCP ports picked at random; no accounting;
# auth/none where this Slurm still has it, else munged with a temporary key), waits until the
# node is idle, then runs BIN_DIR/prog_launch:
#   srun --mpi=pmix -n 2, -n 3   must pass: rmx joins Slurm's PMIx server, put/get/atomics between
#                          ranks, each rank's rmx_rank its SLURM_PROCID;
#   srun --mpi=pmix -n 3 BIN_DIR/prog_survivors: a rank killed mid-traffic, both survivors
#                          finish rmx_finalize in time (the step kept alive: --kill-on-bad-exit=0);
#   srun --mpi=none -n 2   and --mpi=pmi2 must fail in rmx_init, every rank saying it was started
#                          by Slurm without a PMIx server and to use `srun --mpi=pmix` (not run
#                          as two one-rank jobs).
# The daemons it started are stopped and the directory removed whatever happens (trap; a watchdog
# process when the script itself is killed).
# RMX_TEST_WRAPPER, when set, runs each rank under it (make valgrind).
#
# Output: progress lines, then one last line: "PASS", "SKIP: <why>" (exit 77: Slurm is missing or
# cannot run here) or "FAIL: <why>" (exit 1).  tests/test_launch.c runs it.
set -u

BIN_DIR=${1:?usage: slurm_run.sh BIN_DIR}
PROG=$BIN_DIR/prog_launch
WRAPPER=${RMX_TEST_WRAPPER:-}
# Bounded waits (seconds): the node becoming idle, a job step.
IDLE_WAIT=${SLURM_RUN_IDLE_WAIT:-15}
STEP_TIMEOUT=${SLURM_RUN_STEP_TIMEOUT:-60}

DIR=""
PIDS=()      # the daemons this script started, also listed in $DIR/pids for the watchdog
WATCHDOG=""

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# The last lines of a daemon's log, on one line, for a skip or failure reason.
log_tail() { [ -r "$1" ] && tail -n "${2:-4}" "$1" | tr '\n' '|'; }

# Cancel this cluster's jobs (their slurmstepd and ranks would outlive slurmd) and wait up to 5 s
# for them to go; then stop the daemons of $DIR/pids (never by name: another run's daemons may be
# alive), each given 5 s to end, and remove $DIR.
stop_daemons() {
    local pids p
    pids=$(cat "$DIR/pids" 2>/dev/null)
    if [ -n "$pids" ] && [ -r "$DIR/slurm.conf" ]; then
        export SLURM_CONF=$DIR/slurm.conf
        timeout 5 scancel --quiet --user="$(id -un)" 2>/dev/null
        for _ in $(seq 50); do
            [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
    rm -rf "$DIR"
}

# Stop what this script started: jobs, daemons, watchdog.
cleanup() {
    [ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2>/dev/null
    [ -n "$DIR" ] || return
    stop_daemons
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

# When this script is killed outright (SIGKILL: a test time limit), no trap runs: a process of its
# own, holding none of its output, stops the daemons once the script is gone.
watchdog() {
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    stop_daemons
}

# Start a daemon in the background, its output to DIR/NAME.out; recorded for both clean-ups.
start() {
    local name=$1
    shift
    "$@" >>"$DIR/$name.out" 2>&1 &
    PIDS+=($!)
    echo $! >>"$DIR/pids"
}

# A TCP port no socket on this machine uses, in a high range unlikely to be handed out.
port_in_use() {
    local hex
    hex=$(printf ':%04X ' "$1")
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q "$hex"
}
free_port() {
    local p
    for _ in $(seq 100); do
        p=$((30000 + RANDOM % 28000))
        [ "$p" != "${1:-0}" ] && ! port_in_use "$p" && { echo "$p"; return 0; }
    done
    return 1
}

# Where this Slurm keeps its plugins (PluginDir is compiled in: Debian, RPM and source builds).
plugin_dir() {
    local d
    for d in /usr/lib/*/slurm-wlm /usr/lib/*/slurm /usr/lib64/slurm /usr/lib/slurm \
             /usr/local/lib/slurm; do
        [ -e "$d/select_cons_tres.so" ] && { echo "$d"; return 0; }
    done
    return 1
}

# ---------------------------------------------------------------- what this machine has
PATH=$PATH:/usr/sbin:/sbin:/usr/local/sbin
for c in slurmctld slurmd srun sinfo squeue scancel; do
    command -v "$c" >/dev/null ||
        skip "Slurm is not installed ($c not found; Debian: slurm-wlm, which make deps installs)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start job steps, and this is uid $(id -u)"
[ -x "$PROG" ] || fail "$PROG is not built (make tests)"
PLUGINS=$(plugin_dir) || skip "Slurm's plugin directory was not found (select_cons_tres.so)"
[ -e "$PLUGINS/mpi_pmix.so" ] ||
    skip "Slurm has no PMIx plugin ($PLUGINS/mpi_pmix.so: Debian's slurm-wlm-basic-plugins has it)"

# Run inside another Slurm's job (make check in an allocation), srun would take that job's id and
# options from SLURM_* variables: none of them belongs to this cluster.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^SLURM_')

DIR=$(mktemp -d "${TMPDIR:-/tmp}/rmx-slurm.XXXXXX") || fail "mktemp -d failed"
mkdir -p "$DIR/state" "$DIR/spool" "$DIR/tmp"
watchdog $$ </dev/null >/dev/null 2>&1 &
WATCHDOG=$!
export SLURM_CONF=$DIR/slurm.conf

# auth/none (gone from Slurm 23.11) needs no daemon; otherwise a munged of our own, on its own
# socket with a temporary key, so that the machine's munge (if any) is neither needed nor used.
AUTH="AuthType=auth/none
CredType=cred/none"
if [ "${SLURM_RUN_AUTH:-}" = munge ] || [ ! -e "$PLUGINS/auth_none.so" ]; then
    command -v munged >/dev/null || skip "this Slurm needs munge (no auth/none) and munged is not installed"
    head -c 1024 /dev/urandom > "$DIR/munge.key" && chmod 600 "$DIR/munge.key"
    start munged munged --foreground --force --key-file="$DIR/munge.key" \
        --socket="$DIR/munge.sock" --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" \
        --seed-file="$DIR/munge.seed"
    for _ in $(seq 50); do [ -S "$DIR/munge.sock" ] && break; sleep 0.1; done
    [ -S "$DIR/munge.sock" ] || skip "munged did not start: $(log_tail "$DIR/munged.log")"
    AUTH="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge.sock"
fi

# ---------------------------------------------------------------- the cluster
CTLD_PORT=$(free_port) || skip "no free TCP port found for slurmctld"
SLURMD_PORT=$(free_port "$CTLD_PORT") || skip "no free TCP port found for slurmd"
NODE=$(hostname -s)
CPUS=$(nproc)
# A job id of its own: Slurm's PMIx plugin names directories after job and step ids, and another
# instance of this test (a parallel make check) starts its own cluster at the same time.
FIRST_JOB=$((1000 + RANDOM * 30 + RANDOM % 30))
cat > "$SLURM_CONF" <<EOF
ClusterName=rmxtest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
$AUTH
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
TmpFS=$DIR/tmp
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
FirstJobId=$FIRST_JOB
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

start slurmctld slurmctld -D -i -f "$SLURM_CONF"
start slurmd slurmd -D -f "$SLURM_CONF"

# Until the node is idle, or a daemon died, or IDLE_WAIT seconds passed.
state=""
for _ in $(seq $((IDLE_WAIT * 5))); do
    for p in "${PIDS[@]}"; do
        kill -0 "$p" 2>/dev/null ||
            skip "a Slurm daemon exited at start: slurmctld: $(log_tail "$DIR/slurmctld.log")" \
                 "slurmd: $(log_tail "$DIR/slurmd.log")"
    done
    state=$(timeout 5 sinfo -h -N -o %T 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.2
done
[ "$state" = idle ] ||
    skip "the Slurm node is not idle after ${IDLE_WAIT} s (state '${state:-no answer}'):" \
         "slurmctld: $(log_tail "$DIR/slurmctld.log") slurmd: $(log_tail "$DIR/slurmd.log")"
echo "slurm: cluster up (node $NODE, ports $CTLD_PORT/$SLURMD_PORT, $CPUS CPUs)"

timeout 10 srun --mpi=list 2>&1 | grep -qw pmix ||
    skip "srun --mpi=list does not offer pmix: $(timeout 10 srun --mpi=list 2>&1 | tr '\n' ' ')"

# srun: at most STEP_TIMEOUT seconds, give up at once when the node cannot take the step (not
# pending), and -O: two tasks on a one-CPU machine too.
run_step() {
    timeout "$STEP_TIMEOUT" srun --immediate=10 -O -N 1 "$@" 2>&1
}

# A step that involves no rmx: when even that fails, Slurm cannot run jobs here (a skip).
out=$(run_step -n 1 true) || skip "Slurm cannot start a job step here: $(echo "$out" | tr '\n' ' ')" \
                                   "slurmd: $(log_tail "$DIR/slurmd.log")"

# ---------------------------------------------------------------- the jobs
count() { printf '%s\n' "$1" | grep -c -- "$2"; }

# 2 ranks, and 3: there a put to the wrong neighbour shows.
for n in 2 3; do
    # shellcheck disable=SC2086 # WRAPPER is a command line
    out=$(run_step --mpi=pmix -n $n $WRAPPER "$PROG" $n)
    rc=$?
    printf '%s\n' "$out" | sed "s/^/srun --mpi=pmix -n $n: /"
    [ "$rc" = 0 ] || fail "srun --mpi=pmix -n $n prog_launch exited $rc"
    for ((r = 0; r < n; r++)); do
        [ "$(count "$out" "^rank $r of $n: OK\$")" = 1 ] ||
            fail "srun --mpi=pmix -n $n prog_launch: rank $r did not say OK (once)"
    done
done

# A rank killed in the middle of the others' traffic (tests/prog_survivors.c): each survivor sees
# RMX_ERR_PEER and returns from rmx_finalize within peer_timeout_s + 2 s.  The step outlives
# the rank (--kill-on-bad-exit=0), as an mpirun job does with orte_enable_recovery.
# shellcheck disable=SC2086
out=$(run_step --mpi=pmix --kill-on-bad-exit=0 -n 3 $WRAPPER "$BIN_DIR/prog_survivors" 2)
printf '%s\n' "$out" | sed "s/^/srun survivors: /"
[ "$(count "$out" 'survivor [0-9]* finalized ok')" = 2 ] ||
    fail "srun --mpi=pmix -n 3 prog_survivors: not both survivors finalized in time"

# Without PMIx (no plugin, or PMI-2's): rmx_init fails on every rank and says what to do.
for mpi in none pmi2; do
    # shellcheck disable=SC2086
    out=$(run_step --mpi=$mpi -n 2 $WRAPPER "$PROG" 2)
    rc=$?
    printf '%s\n' "$out" | sed "s/^/srun --mpi=$mpi: /"
    [ "$rc" != 0 ] || fail "srun --mpi=$mpi -n 2 prog_launch exited 0 without a PMIx server"
    [ "$(count "$out" ': OK$')" = 0 ] || fail "srun --mpi=$mpi: a rank ran as a job of its own"
    if [ "$(count "$out" "started by Slurm's srun as one of SLURM_STEP_NUM_TASKS=2 ranks")" != 2 ] ||
        [ "$(count "$out" 'srun --mpi=pmix')" -lt 2 ]; then
        fail "srun --mpi=$mpi: not every rank said it was started by srun without PMIx, and to" \
             "use srun --mpi=pmix"
    fi
done
echo "PASS"
