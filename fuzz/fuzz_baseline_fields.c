/*
** Fuzz target: the baseline loader's tampered-field space. fuzz-baseline
** feeds raw text, which rarely gets past the YAML parser into the checks
** that matter; here the input is a list of edits applied to a valid
** baseline (three runs, two metrics, one with a null run), so every field
** is tampered with directly: its type, its value (huge, tiny, subnormal,
** negative, NaN, infinite, quoted, non-UTF-8, aliases), its presence
** (deleted, duplicated, renamed, unknown keys added), list lengths.
**
** Input: 3-byte edits [op, target, arg]; target picks a node of the tree
** in depth-first order, arg a value or key from the vocabularies below.
**   0 set the node to vocabulary scalar arg     5 wrap the node in a list or a mapping
**   1 set it to the next arg % 24 input bytes   6 swap it with node arg
**   2 delete it from its parent                 7 rename its key to vocabulary key arg
**   3 duplicate it in its parent (same key)     8 append scalar arg to it (a list) or
**   4 add vocabulary key arg to it (a mapping)    remove its last entry
**                                               9 empty it (list or mapping)
**
** Oracle (a failure aborts, so libFuzzer saves the input):
** - refused: at least one error with a message and status 2 (4 only when
**   out of memory); never NULL without a word;
** - loaded: what the recorder guarantees holds: at least one run, each
**   named; per metric one value per run, n_runs finite ones (>= 1), median
**   and MAD equal to those of the runs, finite sorted samples, n_samples
**   >= the samples kept, metrics sorted by unique rule id; UTF-8 strings;
** - written back, it loads again, without error, to the same baseline;
** - compared with a run (tg_baseline_apply_with), verdicts and numbers
**   stay in range (p-value in [0, 1] or NaN).
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline/baseline.h"
#include "common/stats.h"
#include "fuzz_common.h"
#include "run_builder.h"

/* ------------------------------------------------------------ the tree */

enum { N_SCALAR, N_MAP, N_SEQ };

typedef struct node {
    int kind;
    char *text;                /* scalar: raw YAML text as emitted */
    char **keys;               /* map: raw key text per entry */
    struct node **kids;
    size_t n;
} node;

static node *scalar(const char *text, size_t len)
{
    node *n = calloc(1, sizeof *n);
    if (!n || !(n->text = strndup(text, len))) abort();
    return n;
}

static node *container(int kind)
{
    node *n = calloc(1, sizeof *n);
    if (!n) abort();
    n->kind = kind;
    return n;
}

static void add(node *parent, const char *key, node *kid)
{
    parent->kids = realloc(parent->kids, (parent->n + 1) * sizeof *parent->kids);
    parent->keys = realloc(parent->keys, (parent->n + 1) * sizeof *parent->keys);
    if (!parent->kids || !parent->keys) abort();
    parent->keys[parent->n] = key ? strdup(key) : NULL;
    parent->kids[parent->n++] = kid;
}

static void put(node *map, const char *key, const char *text) { add(map, key, scalar(text, strlen(text))); }

static node *seq_of(const char *const *items, size_t n)
{
    node *s = container(N_SEQ);
    for (size_t i = 0; i < n; i++) add(s, NULL, scalar(items[i], strlen(items[i])));
    return s;
}

static void free_node(node *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n; i++) {
        free_node(n->kids[i]);
        free(n->keys[i]);
    }
    free(n->kids);
    free(n->keys);
    free(n->text);
    free(n);
}

static node *copy_node(const node *n)
{
    node *c = n->kind == N_SCALAR ? scalar(n->text, strlen(n->text)) : container(n->kind);
    for (size_t i = 0; i < n->n; i++) add(c, n->keys[i], copy_node(n->kids[i]));
    return c;
}

/* A valid baseline: what `baseline record` writes for three runs. */
static node *template(void)
{
    node *root = container(N_MAP);
    put(root, "date", "\"2026-01-02\"");
    put(root, "format_version", "1");
    node *metrics = container(N_MAP);
    node *a = container(N_MAP);
    put(a, "direction", "higher_is_worse");
    put(a, "mad", "10");
    put(a, "median", "110");
    put(a, "metric", "\"p50(period)\"");
    put(a, "n_runs", "3");
    put(a, "n_samples", "9");
    add(a, "runs", seq_of((const char *[]){"100", "110", "120"}, 3));
    add(a, "samples", seq_of((const char *[]){"95", "100", "105", "110", "115.5"}, 5));
    put(a, "samples_field", "\"period\"");
    put(a, "unit", "ns");
    add(metrics, "iteration-time-regression", a);
    node *b = container(N_MAP);
    put(b, "direction", "lower_is_worse");
    put(b, "mad", "0.5");
    put(b, "median", "0.25");
    put(b, "metric", "\"ratio(busy)\"");
    put(b, "n_runs", "2");
    add(b, "runs", seq_of((const char *[]){"-0.25", "null", "0.75"}, 3));
    add(b, "samples", seq_of((const char *[]){"1e-300", "0.5", "1.5e300"}, 3));
    put(b, "samples_field", "null");
    put(b, "unit", "ratio");
    add(metrics, "busy-ratio", b);
    add(root, "metrics", metrics);
    node *runs = container(N_SEQ);
    static const char *const names[] = {"\"r1.sqlite\"", "\"r2.sqlite\"", "\"r\\u00e9.sqlite\""};
    for (int i = 0; i < 3; i++) {
        node *r = container(N_MAP);
        put(r, "gpu_names", "\"NVIDIA H100, NVIDIA H100 80GB HBM3\"");
        put(r, "nsys_version", "\"2024.5.1\"");
        put(r, "schema_version", "\"3.11\"");
        put(r, "trace", names[i]);
        add(runs, NULL, r);
    }
    add(root, "runs", runs);
    put(root, "tool_version", "\"0.1.0\"");
    return root;
}

/* --------------------------------------------------------- vocabularies */

static const char *const values[] = {
    "0", "1", "-1", "3", "110", "0.5", "-0.0", "1e15", "1e16", "1e308", "1e400", "-1e400",
    "1e-400", "5e-324", "2.2250738585072014e-308", ".inf", "-.inf", ".nan", "nan", "inf",
    "infinity", "null", "~", "", "\"\"", "\"110\"", "'110'", "true", "0x6E", "0o156", "1_000",
    "+110", "110.00000000000001", "18446744073709551616", "9007199254740993", "higher_is_worse",
    "lower_is_worse", "none", "ns", "bytes", "ratio", "bogus", "\"p50(gpu_time)\"", "\"\\0\"",
    "\"a\\0b\"", "\"\\uFFFE\"", "\"\\u0085\"", "\"\\x1b[2J\"", "\"caf\\xe9\"", "\"\\U0010FFFF\"",
    "[]", "{}", "[1, 2]", "{a: 1}", "&x 5", "*x", "!!str 5", "!!float 1", "!!binary aGk=",
    "\"NVIDIA H100\"", "\"3.0\"", "\"4.0\"", "|\n  block", "\"x\"",
};
#define N_VALUES (sizeof values / sizeof *values)

static const char *const keys[] = {
    "date", "format_version", "metrics", "runs", "tool_version", "direction", "mad", "median",
    "metric", "n_runs", "n_samples", "samples", "samples_field", "unit", "gpu_names",
    "nsys_version", "schema_version", "trace", "iteration-time-regression", "busy-ratio",
    "gpu-time-regression", "x-unknown", "\"quoted\"", "''", "<<", "? [a]", "&k date", "1",
};
#define N_KEYS (sizeof keys / sizeof *keys)

/* ---------------------------------------------------------------- edits */

typedef struct slot {
    node *parent;              /* NULL for the root */
    size_t index;
} slot;

static void collect(node *parent, node *n, size_t index, slot *out, size_t *count, size_t cap)
{
    if (*count == cap) return;
    out[(*count)++] = (slot){parent, index};
    for (size_t i = 0; i < n->n; i++) collect(n, n->kids[i], i, out, count, cap);
}

static node **at(node **root, slot s) { return s.parent ? &s.parent->kids[s.index] : root; }

static void remove_entry(node *parent, size_t i)
{
    free_node(parent->kids[i]);
    free(parent->keys[i]);
    memmove(parent->kids + i, parent->kids + i + 1, (parent->n - i - 1) * sizeof *parent->kids);
    memmove(parent->keys + i, parent->keys + i + 1, (parent->n - i - 1) * sizeof *parent->keys);
    parent->n--;
}

static bool contains(const node *tree, const node *n)
{
    if (tree == n) return true;
    for (size_t i = 0; i < tree->n; i++)
        if (contains(tree->kids[i], n)) return true;
    return false;
}

#define MAX_NODES 512
#define MAX_EDITS 64           /* per input: each edit walks the tree */

/* Apply one edit; returns the bytes consumed beyond the 3 of the edit. */
static size_t edit(node **root, const uint8_t *e, const uint8_t *more, size_t n_more)
{
    slot slots[MAX_NODES];
    size_t count = 0;
    collect(NULL, *root, 0, slots, &count, MAX_NODES);
    slot s = slots[e[1] % count];
    node **target = at(root, s);
    const char *v = values[e[2] % N_VALUES];
    switch (e[0] % 10) {
    case 0:
        free_node(*target);
        *target = scalar(v, strlen(v));
        return 0;
    case 1: {
        size_t len = e[2] % 24 < n_more ? e[2] % 24 : n_more;
        free_node(*target);
        *target = scalar((const char *)more, len);
        return len;
    }
    case 2:
        if (s.parent) remove_entry(s.parent, s.index);
        return 0;
    case 3:
        if (s.parent && s.parent->n < 64) add(s.parent, s.parent->keys[s.index], copy_node(*target));
        return 0;
    case 4:
        if ((*target)->kind == N_MAP && (*target)->n < 64) add(*target, keys[e[2] % N_KEYS], scalar(v, strlen(v)));
        return 0;
    case 5: {
        node *w = container(e[2] & 1 ? N_MAP : N_SEQ);
        add(w, e[2] & 1 ? keys[(e[2] >> 1) % N_KEYS] : NULL, *target);
        *target = w;
        return 0;
    }
    case 6: {
        slot o = slots[e[2] % count];
        node **other = at(root, o);
        /* only disjoint subtrees: neither may contain the other */
        if (o.parent && s.parent && !contains(*target, *other) && !contains(*other, *target)) {
            node *t = *target;
            *target = *other;
            *other = t;
        }
        return 0;
    }
    case 7:
        if (s.parent && s.parent->kind == N_MAP) {
            free(s.parent->keys[s.index]);
            s.parent->keys[s.index] = strdup(keys[e[2] % N_KEYS]);
        }
        return 0;
    case 8:
        if ((*target)->kind == N_SEQ && (e[2] & 1) && (*target)->n) remove_entry(*target, (*target)->n - 1);
        else if ((*target)->kind == N_SEQ && (*target)->n < 2000) add(*target, NULL, scalar(v, strlen(v)));
        return 0;
    default:
        while ((*target)->kind != N_SCALAR && (*target)->n) remove_entry(*target, (*target)->n - 1);
        return 0;
    }
}

/* ----------------------------------------------------------------- YAML */

static void emit_flow(FILE *f, const node *n)
{
    if (n->kind == N_SCALAR) {
        fputs(n->text, f);
        return;
    }
    fputc(n->kind == N_MAP ? '{' : '[', f);
    for (size_t i = 0; i < n->n; i++) {
        if (i) fputs(", ", f);
        if (n->kind == N_MAP) fprintf(f, "%s: ", n->keys[i]);
        emit_flow(f, n->kids[i]);
    }
    fputc(n->kind == N_MAP ? '}' : ']', f);
}

/* Mappings in block style (as baseline_write.c), lists in flow style. */
static void emit_block(FILE *f, const node *map, int indent)
{
    for (size_t i = 0; i < map->n; i++) {
        const node *v = map->kids[i];
        fprintf(f, "%*s%s:", indent, "", map->keys[i]);
        if (v->kind == N_MAP && v->n) {
            fputc('\n', f);
            emit_block(f, v, indent + 2);
        } else {
            fputc(' ', f);
            emit_flow(f, v);
            fputc('\n', f);
        }
    }
}

static char *emit(const node *root, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) abort();
    fputs("# tampered baseline\n", f);
    if (root->kind == N_MAP) emit_block(f, root, 0);
    else emit_flow(f, root);
    if (fclose(f) != 0) abort();
    return buf;
}

/* --------------------------------------------------------------- oracle */

static const char *current_text;

static void check(bool ok, const char *fmt, ...)
{
    if (ok) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz-baseline-fields: oracle violated: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n--- baseline ---\n%s\n----------------\n", current_text);
    va_end(ap);
    abort();
}

static bool same_num(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static bool same_str(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

static void check_utf8(const char *s, const char *what)
{
    check(!s || tg_utf8_valid(s, strlen(s)), "%s is not UTF-8", what);
}

static void check_invariants(const tg_baseline *b)
{
    check(b->n_runs >= 1, "no runs");
    for (size_t i = 0; i < b->n_runs; i++) {
        const tg_baseline_run *r = &b->runs[i];
        check(r->trace != NULL, "run %zu has no trace name", i);
        check_utf8(r->trace, "runs[].trace");
        check_utf8(r->gpu_names, "runs[].gpu_names");
        check_utf8(r->nsys_version, "runs[].nsys_version");
        check_utf8(r->schema_version, "runs[].schema_version");
    }
    for (size_t k = 0; k < b->n_metrics; k++) {
        const tg_baseline_metric *m = &b->metrics[k];
        check(m->rule && *m->rule, "metric %zu has no rule id", k);
        check(k == 0 || strcmp(b->metrics[k - 1].rule, m->rule) < 0, "metrics not sorted or not unique at %s", m->rule);
        check(m->metric && *m->metric, "%s has no metric expression", m->rule);
        check_utf8(m->metric, "metric");
        double finite[4096];
        size_t nf = 0;
        for (size_t i = 0; i < b->n_runs && nf < 4096; i++)
            if (isfinite(m->runs[i])) finite[nf++] = m->runs[i];
        check(nf == m->n_runs && nf >= 1, "%s: n_runs %zu but %zu finite run values", m->rule, m->n_runs, nf);
        check(isfinite(m->median) && isfinite(m->mad), "%s: median or MAD not finite", m->rule);
        check(near(m->median, tg_stats_median(finite, nf)), "%s: median %.17g is not that of the runs", m->rule, m->median);
        check(near(m->mad, tg_stats_mad(finite, nf)), "%s: MAD %.17g is not that of the runs", m->rule, m->mad);
        check(m->n_samples <= m->n_samples_total, "%s: %zu samples kept of %zu", m->rule, m->n_samples, m->n_samples_total);
        for (size_t i = 0; i < m->n_samples; i++) {
            check(isfinite(m->samples[i]), "%s: sample %zu is %g", m->rule, i, m->samples[i]);
            check(i == 0 || m->samples[i - 1] <= m->samples[i], "%s: samples not sorted", m->rule);
        }
    }
}

static void check_same(const tg_baseline *a, const tg_baseline *b)
{
    check(a->format_version == b->format_version && same_str(a->date, b->date) &&
          same_str(a->tool_version, b->tool_version), "header differs after a round trip");
    check(a->n_runs == b->n_runs && a->n_metrics == b->n_metrics, "run or metric count differs after a round trip");
    for (size_t i = 0; i < a->n_runs; i++) {
        const tg_baseline_run *x = &a->runs[i], *y = &b->runs[i];
        check(same_str(x->trace, y->trace) && same_str(x->gpu_names, y->gpu_names) &&
              same_str(x->nsys_version, y->nsys_version) && same_str(x->schema_version, y->schema_version),
              "run %zu differs after a round trip", i);
    }
    for (size_t k = 0; k < a->n_metrics; k++) {
        const tg_baseline_metric *x = &a->metrics[k], *y = &b->metrics[k];
        check(same_str(x->rule, y->rule) && same_str(x->metric, y->metric) &&
              same_str(x->samples_field, y->samples_field) && x->unit == y->unit &&
              x->direction == y->direction && x->n_runs == y->n_runs && same_num(x->median, y->median) &&
              same_num(x->mad, y->mad) && x->n_samples == y->n_samples &&
              x->n_samples_total == y->n_samples_total, "metric %s differs after a round trip", x->rule);
        for (size_t i = 0; i < a->n_runs; i++)
            check(same_num(x->runs[i], y->runs[i]), "%s: run %zu differs after a round trip", x->rule, i);
        for (size_t i = 0; i < x->n_samples; i++)
            check(same_num(x->samples[i], y->samples[i]), "%s: sample %zu differs after a round trip", x->rule, i);
    }
}

static void check_refused(const tg_diag *d)
{
    check(d->n_errors > 0 && d->n > 0, "refused without an error message");
    for (size_t i = 0; i < d->n; i++) {
        const tg_diag_msg *m = &d->msgs[i];
        check(m->text && *m->text, "an empty message");
        if (m->level == TG_DIAG_ERROR) check(d->status == TG_EUSAGE || d->status == TG_EINTERNAL, "error status %d", d->status);
    }
}

static void check_round_trip(const tg_baseline *b)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) abort();
    tg_status st = tg_baseline_write(b, f);
    if (fclose(f) != 0) abort();
    check(st == TG_OK, "a loaded baseline cannot be written");
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *again = tg_baseline_load_string(buf, len, "again.yaml", &d);
    if (!again) {
        current_text = buf;
        check(false, "written back, it does not load: %s", d.n ? d.msgs[0].text : "(no message)");
    }
    check(d.n_errors == 0, "written back, it loads with errors");
    check_same(b, again);
    tg_baseline_free(again);
    tg_diag_clear(&d);
    free(buf);
}

/* Compare a run (one trace, every metric's rule) with it. */
static void check_apply(const tg_baseline *b)
{
    tg_run_result *run = tb_run_new();
    tg_trace_result *t = tb_trace(run, "current.sqlite", "NVIDIA H100", "3.11");
    double *samples = tb_values(run, 7, 112, 5, 3);
    for (size_t k = 0; k < b->n_metrics && k < 16; k++) {
        const tg_baseline_metric *m = &b->metrics[k];
        tb_rule(run, t, m->rule, m->metric, m->direction ? m->direction : (k & 1 ? -1 : 1), 112, samples, 7);
    }
    tg_diag d;
    tg_diag_init(&d);
    tg_status st = tg_baseline_apply_with(b, NULL, run, true, &d);
    check(st == TG_OK, "apply with --allow-mismatch returned %d", st);
    for (size_t i = 0; i < t->n_results; i++) {
        const tg_rule_result *r = &t->results[i];
        /* inconclusive: a change inside the run-to-run band (docs/regressions.md) */
        check(r->verdict == TG_V_PASS || r->verdict == TG_V_FAIL || r->verdict == TG_V_SKIP ||
                  r->verdict == TG_V_INCONCLUSIVE, "verdict %s", tg_verdict_name(r->verdict));
        if (!r->baseline.present) continue;
        double p = r->baseline.p_value;
        check(isnan(p) || (p >= 0 && p <= 1), "%s: p-value %g", r->rule, p);
        /* the value compared with is the median of the runs' values the
        ** file holds, less its kept outliers (tg_baseline_spread), not the
        ** stored `median`, which a tampered file may contradict */
        const tg_baseline_metric *m = tg_baseline_find(b, r->rule);
        tg_spread sp;
        check(tg_baseline_spread(b, m, NAN, &sp), "%s: out of memory", r->rule);
        double want = isnan(sp.value) ? m->median : sp.value;
        check(same_num(r->baseline.value, want), "%s: compared with %g, not the runs' median %g", r->rule,
              r->baseline.value, want);
    }
    tg_diag_clear(&d);
    tb_run_free(run);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    node *root = template();
    for (size_t i = 0, edits = 0; i + 3 <= size && edits < MAX_EDITS; edits++) {
        const uint8_t *e = data + i;
        i += 3;
        i += edit(&root, e, data + i, size - i);
    }
    size_t len;
    char *text = emit(root, &len);
    free_node(root);
    current_text = text;

    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_load_string(text, len, "tampered.yaml", &d);
    if (!b) {
        check_refused(&d);
    } else {
        check_invariants(b);
        tg_diag check_d;
        tg_diag_init(&check_d);
        tg_baseline_check_runs(b, size & 1, &check_d);
        tg_diag_clear(&check_d);
        check_round_trip(b);
        check_apply(b);
        tg_baseline_free(b);
    }
    tg_diag_clear(&d);
    free(text);
    return 0;
}
