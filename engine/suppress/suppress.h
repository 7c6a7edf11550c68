/*
** Suppressions (docs/suppressions.md): known findings a team accepts, each
** with its reason, in a YAML file kept beside the rules:
**
**   version: 1
**   suppressions:
**     - rule: pageable-async-memcpy
**       reason: the loader's 8-byte flag copies (JIRA-123)
**       trace: "eval-*.sqlite"       # optional: a glob on the trace's path or name
**       max_count: 40                # optional: only while the finding counts <= 40
**       expires: 2026-06-30          # optional: ends after this day (UTC)
**
** Applied after the evaluation (and the baseline comparison, or merge's
** straggler check), a suppression marks the failing or inconclusive
** results it matches: they stay in every format, shown as suppressed with
** the reason, and no longer gate. What each suppression did is kept in the
** run (used, unused, expired, exceeded) for the reports and the CLI to say.
** A suppression never turns a rule that could not be evaluated into a
** pass: errors and missing data are not findings and are never suppressed.
*/
#ifndef TG_SUPPRESS_H
#define TG_SUPPRESS_H

#include "../common/common.h"
#include "../eval/result.h"

typedef struct tg_suppression {
    const char *rule;
    const char *reason;
    const char *trace;         /* fnmatch(3) glob; NULL: every trace */
    int64_t max_count;         /* -1: any count */
    const char *expires;       /* YYYY-MM-DD; NULL: never */
    const char *file;
    tg_pos pos;                /* of its entry, for messages */
} tg_suppression;

typedef struct tg_suppressions tg_suppressions;

/* Read and check suppression files (their entries in order, as one set).
** NULL after reporting every problem (file:line:col with the line;
** TG_EUSAGE, or TG_EINTERNAL when out of memory). */
tg_suppressions *tg_suppress_load(const char *const *paths, size_t n_paths, tg_diag *diag);
void tg_suppress_free(tg_suppressions *s);

size_t tg_suppress_count(const tg_suppressions *s);

/* Every rule id a suppression names must be one of ids: an error (with a
** "did you mean") for each that is not. lint adds a warning for each
** suppression already expired on `today` (YYYY-MM-DD). TG_OK or
** TG_EUSAGE. */
tg_status tg_suppress_check_rules(const tg_suppressions *s, const char *const *ids, size_t n_ids,
                                  const char *today, bool lint, tg_diag *diag);

/* Mark the results the suppressions accept (tg_rule_result.suppressed)
** and record what each suppression did in run->suppressions (allocated in
** run->arena). today: YYYY-MM-DD (UTC). False when out of memory. */
bool tg_suppress_apply(const tg_suppressions *s, tg_run_result *run, const char *today);

/* One sentence per suppression that did not simply apply (unused,
** expired, exceeded) as warnings in diag, at the suppression's line. */
void tg_suppress_warn(const tg_suppressions *s, const tg_run_result *run, tg_diag *diag);

/* The suppressions' part of a result's rule-set digest (docs/formats.md,
** "Where a result comes from"): each entry's rule, reason, trace glob,
** max_count and expiry, in order (not the file or line it came from). s
** may be NULL (no suppressions). */
struct tg_sha256;
void tg_suppress_digest(const tg_suppressions *s, struct tg_sha256 *h);

#endif
