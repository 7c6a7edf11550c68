/*
** Internals of the cause pass (eval_cause.c, docs/host.md) shared with the
** reproduce queries it writes (eval_cause_sql.c).
*/
#ifndef TG_EVAL_CAUSE_H
#define TG_EVAL_CAUSE_H

#include "eval_int.h"

/* One failing result whose rule asks for a cause, while it is built. */
typedef struct tg_cause_cc {
    const tg_rule *rule;
    tg_rule_result *res;
    const tg_model *m;
    tg_arena *arena;
    const char *load_error;    /* the host tables could not be read: why */
    const tg_baseline_cmp *baseline;
    const char **unknown;      /* sentences (arena), malloc'd array */
    size_t n_unknown, cap_unknown;
    bool oom;
} tg_cause_cc;

bool tg_cause_add_unknown(tg_cause_cc *cc, const char *sentence);

/* Rows of one call site (cause call_site). */
typedef struct tg_site_group {
    int32_t site, module;      /* string ids */
    int32_t slot;              /* its number among the groups, as rows name it */
    int64_t count;
    double time;
    int64_t rowids[TG_HOST_ROWIDS], durs[TG_HOST_ROWIDS];  /* the longest rows */
    size_t n_rowids;
    int32_t chain;             /* the longest row's stack (as recorded) */
} tg_site_group;

typedef struct tg_site_row {
    int64_t rowid;
    int32_t slot;              /* its group's */
} tg_site_row;

/* eval_cause_sql.c: queries that give a cause's numbers; NULL when none
** can (or out of memory). For an export, sqlite3 SQL; for a Kineto trace,
** a jq program. */
const char *tg_cause_host_query(tg_cause_cc *cc, const tg_cause *c);
const char *tg_cause_sites_query(tg_cause_cc *cc, const tg_site_group *groups, size_t n, const tg_site_row *rows,
                                 size_t n_rows);
const char *tg_cause_launch_query(tg_cause_cc *cc, const tg_cause *c);

#endif
