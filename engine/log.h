/*
 * log.h — rmx's diagnostics on stderr (RMX_LOG, rmx_config_t.log_level), one line each:
 *
 *     rmx[RANK +SECONDS] LEVEL: message
 *
 * RANK is the context's rank ("-" before it is known, and for messages that have no context),
 * SECONDS the time since rmx_init began (for messages without a context: since the process's
 * first message).  A line is written with one write(2), so lines of ranks and threads sharing a
 * stderr do not interleave within a line.
 *
 * The level check is inline: a disabled rmx_log costs one compare, never a call or a formatting.
 */
#ifndef RMX_LOG_H
#define RMX_LOG_H

#include "../api/rmx.h"

typedef struct rmx_logger {
    rmx_log_level_t level;  /* messages at most this verbose are written (never DEFAULT) */
    int rank;               /* -1: not known yet */
    double t0;              /* CLOCK_MONOTONIC seconds at rmx_init */
} rmx_logger_t;

/* The level RMX_LOG names; unset or empty: *level = dflt.  RMX_ERR_ARG (after a line naming the
 * variable and its words) when it names none. */
int rmx_log_env(rmx_log_level_t dflt, rmx_log_level_t *level);
/* A logger for a context about to be created: level resolved (RMX_LOG wins over the field),
 * rank unknown, clock started.  RMX_ERR_ARG for a bad field or RMX_LOG value (with a line). */
int rmx_log_open(rmx_logger_t *lg, rmx_log_level_t field);
/* The level messages without a context are filtered at: RMX_LOG, or warn (a bad RMX_LOG: warn,
 * rmx_init refuses it in its own words). */
rmx_log_level_t rmx_log_anon_level(void);

/* Write one line (lg NULL: no context).  Call through rmx_logf / rmx_log. */
void rmx_log_emit(const rmx_logger_t *lg, rmx_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int rmx_log_on(const rmx_logger_t *lg, rmx_log_level_t level)
{
    return level <= (lg != NULL ? lg->level : rmx_log_anon_level());
}

/* Through a logger (transports, which have no context; NULL: none at all). */
#define rmx_logf(lg, level, ...)                                                             \
    do {                                                                                     \
        const rmx_logger_t *rmx_lg_ = (lg);                                                  \
        if (__builtin_expect(rmx_log_on(rmx_lg_, (level)), 0))                               \
            rmx_log_emit(rmx_lg_, (level), __VA_ARGS__);                                     \
    } while (0)
/* Through a context (the engine): rmx_log(ctx, RMX_LOG_INFO, "...", ...). */
#define rmx_log(ctx, level, ...) rmx_logf(&(ctx)->log, (level), __VA_ARGS__)

/* At info level, once rmx_init has built everything: bootstrap, binding, progress, direct access
 * and each peer's transports, a line each (engine/log.c). */
void rmx_log_init_report(rmx_ctx_t *ctx);

#endif
