#!/bin/sh
# perf_signal_shm.sh RMX_PERF RUNS — rmx_perf SIGTERMed RUNS times, 20 .. 220 ms after its
# start (its ranks' rmx_init, window creation and first points), in a private /dev/shm and IPC
# namespace so that no other job's files count; prints how many /dev/shm files are left.
# Exit 77 when this process may not make the namespaces (needs root or user namespaces).
unshare -m -i --propagation private true 2>/dev/null || exit 77
exec unshare -m -i --propagation private sh -c '
mount -t tmpfs tmpfs /dev/shm || exit 77
for i in $(seq 1 "$2"); do
  "$1" --test put_lat,win_create,sync_all --reps 3 --quiet >/dev/null 2>&1 & P=$!
  sleep 0.$(printf %03d $((20 + (i * 37) % 200)))
  kill -TERM $(pgrep -P $P) 2>/dev/null
  wait $P
done
ls /dev/shm | wc -l' sh "$1" "$2"
