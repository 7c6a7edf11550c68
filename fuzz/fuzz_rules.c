/*
** Fuzz target: the rule loader and compiler on YAML text in memory
** (tg_rules_load_texts), then lint, explain of every rule, and, when the
** text compiles, an evaluation of it on a small export built once per
** process, so that any expression the compiler accepts is also run.
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "fixture.h"

static tg_trace *trace;

static void free_trace(void) { tg_trace_close(trace); }

static tg_trace *fixture_trace(void)
{
    if (trace) return trace;
    char *rows = fz_rows_sql();
    char *path = rows ? tg_fixture_build(tg_fixture_schema_3_0, rows) : NULL;
    free(rows);
    tg_diag d;
    tg_diag_init(&d);
    trace = path ? tg_trace_open(path, &d) : NULL;
    tg_diag_clear(&d);
    tg_fixture_remove(path);
    if (!trace) abort();
    atexit(free_trace);
    return trace;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    /* Two files: the input, then the same text overriding itself (ids
    ** collide, overrides apply), as `--rules builtin --rules team/` does. */
    tg_rules_text texts[2] = {{"fuzz.yaml", text}, {"again.yaml", text}};
    tg_param_set sets[1] = {{"x", "min_gap", "200ms"}};
    tg_diag diag;
    tg_diag_init(&diag);
    tg_rules_lint_texts(texts, 1, &diag);
    tg_diag_clear(&diag);
    tg_ruleset *rs = tg_rules_load_texts(texts, 1 + (size & 1), sets, size % 3 == 0, &diag);
    for (size_t i = 0; i < diag.n; i++) free(tg_diag_format(&diag.msgs[i], (size & 2) != 0));
    tg_diag_clear(&diag);
    if (rs) {
        for (size_t i = 0; i < tg_rules_count(rs); i++) {
            const tg_rule_info *info = tg_rules_info(rs, i);
            free(tg_rules_explain(rs, info->id));
            (void)tg_rules_param(rs, info->id, "min_change", 0.0);
        }
        fz_run_trace(fixture_trace(), rs);
        tg_rules_free(rs);
    }
    free(text);
    return 0;
}
