/*
 * interrupt.h — SIGINT / SIGTERM in rmx_perf (interrupt.c): rank 0 prints the rows measured so
 * far, every rank ends, the exit status is 128 + the signal.
 */
#ifndef RMX_PERF_INTERRUPT_H
#define RMX_PERF_INTERRUPT_H

/* Prints the partial report; called once, from rank 0's watcher thread, with the signal. */
typedef void (*perf_reporter_t)(int sig, void *arg);

/* The forking launcher, before it forks: forward the two signals to the ranks.  0 or -1. */
int perf_launcher_signals(void);
/* After the ranks are reaped: the signal the launcher received; 0: none. */
int perf_launcher_signal(void);

/* A rank, before rmx_init: block the two signals in every thread to come and take them in a
 * watcher thread, which calls fn (rank 0 only passes one) and exits with 128 + the signal.
 * fork_rank: this rank under the forking launcher, -1 under a PMIx launcher.  0 or -1. */
int perf_rank_signals(int fork_rank, perf_reporter_t fn, void *arg);

/* Whoever prints the report claims it first (1: this caller won), and says when it is out. */
int perf_report_claim(void);
void perf_report_out(void);

#endif
