/*
** Evaluation: runs a compiled rule set over a built model and fills one
** tg_trace_result (verdicts, aggregates, evidence, reproduce SQL, metric
** values and samples). Rules that share a source are evaluated in one pass
** over it. Regression verdicts are decided later by engine/baseline.
*/
#ifndef TG_EVAL_H
#define TG_EVAL_H

#include "../model/model.h"
#include "../rules/rules.h"
#include "result.h"

typedef enum tg_missing_mode { TG_MISSING_FAIL, TG_MISSING_SKIP } tg_missing_mode;

typedef struct tg_eval_opts {
    tg_missing_mode missing;   /* rule needs a table the capture lacks */
    bool has_baseline;         /* false: regression rules are skipped ("no baseline") */
    size_t evidence_limit;     /* cap on evidence rows per rule when the rule gives none; 0 = 10 */
    /* Stored-baseline comparisons, one per rule of the set (index as in
    ** tg_rules_info), read by baseline.STAT and copied into each result;
    ** NULL when there is no baseline. */
    const tg_baseline_cmp *baselines;
} tg_eval_opts;

/* Evaluate every enabled rule. Allocations go to `arena` (the run's).
** Returns TG_OK, or TG_EINTERNAL with a diag. Missing data is reported per
** rule (verdict SKIP + missing_data, or ERROR + missing_data in FAIL mode). */
tg_status tg_eval_model(const tg_ruleset *rs, const tg_model *m, const tg_eval_opts *opts,
                        tg_arena *arena, tg_trace_result *out, tg_diag *diag);

#endif
