/*
** Suppression files (suppress.h, docs/suppressions.md): read with the one
** YAML reader (common/yaml.h) under small limits, every problem reported
** with file:line:col and the line, the key probably meant suggested; then
** matched against a run's results.
**
** A suppression matches a result when the rule ids are equal, its trace
** glob (if any) matches the trace's path as given or its file name, and
** the result is a finding (fail or inconclusive). Then: past `expires` it
** accepts nothing (expired); a count above `max_count` is not accepted
** (exceeded); otherwise the result is marked suppressed. The first
** suppression in file order that matches a result is the one that
** decides it.
*/
#include "suppress.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sha256.h"
#include "../common/yaml.h"

#define SUPPRESS_MAX_FILE ((size_t)1 << 20)

static const tg_yaml_limits suppress_limits = {
    .what = "suppression file",
    .max_scalar = 4096,
    .max_depth = 8,
    .max_nodes = 200000,
    .max_expanded = 200000,
    .one_document = true,
};

struct tg_suppressions {
    tg_arena *arena;
    tg_suppression *items;
    size_t n, cap;
    tg_src **srcs;             /* kept for the lines of later messages */
    size_t n_srcs;
};

/* The one reading a file: where errors go and whether there were any. */
typedef struct reader {
    tg_suppressions *s;
    tg_diag *diag;
    const tg_src *src;
    bool failed;
} reader;

static void error_at(reader *rd, tg_pos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void error_at(reader *rd, tg_pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
    va_end(ap);
    tg_src_msg(rd->diag, TG_DIAG_ERROR, TG_EUSAGE, rd->src, pos, "%s", msg ? msg : fmt);
    free(msg);
    rd->failed = true;
}

/* The source a suppression was read from (for messages after the load). */
static const tg_src *src_of(const tg_suppressions *s, const tg_suppression *x)
{
    for (size_t i = 0; i < s->n_srcs; i++)
        if (s->srcs[i]->name == x->file) return s->srcs[i];
    return NULL;
}

/* ------------------------------------------------------------- values */

/* YYYY-MM-DD that is a real day. */
static bool is_date(const char *v)
{
    int y, m, d;
    char tail;
    if (strlen(v) != 10 || sscanf(v, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3) return false;
    if (v[4] != '-' || v[7] != '-' || m < 1 || m > 12 || d < 1) return false;
    static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d <= days[m - 1] && !(m == 2 && d == 29 && !leap);
}

static const char *scalar(reader *rd, const tg_ynode *n, const char *key)
{
    if (!n || n->kind != TG_Y_SCALAR || tg_ynode_is_null(n) || !n->len) {
        error_at(rd, n ? n->pos : (tg_pos){0}, "%s wants a text, not %s", key,
                 n && n->kind == TG_Y_SCALAR ? "nothing" : tg_ynode_kind_name(n));
        return NULL;
    }
    if (strlen(n->value) != n->len) {
        error_at(rd, n->pos, "%s holds a NUL byte", key);
        return NULL;
    }
    return tg_arena_strdup(rd->s->arena, n->value);
}

static bool read_count(reader *rd, const tg_ynode *n, int64_t *out)
{
    char *end;
    long long v = n && n->kind == TG_Y_SCALAR ? strtoll(n->value, &end, 10) : -1;
    if (!n || n->kind != TG_Y_SCALAR || !n->len || *end || v < 0) {
        error_at(rd, n ? n->pos : (tg_pos){0}, "max_count wants a whole number of findings (0 or more), not '%s'",
                 n && n->kind == TG_Y_SCALAR ? n->value : tg_ynode_kind_name(n));
        return false;
    }
    *out = v;
    return true;
}

/* ------------------------------------------------------------- entries */

static const char *const entry_keys[] = {"rule", "reason", "trace", "max_count", "expires"};
#define N_ENTRY_KEYS (sizeof entry_keys / sizeof *entry_keys)

static bool keys_known(reader *rd, const tg_ynode *map, const char *const *keys, size_t n, const char *where)
{
    bool ok = true;
    long dup = tg_ymap_duplicate(map);
    if (dup >= 0) {
        error_at(rd, map->items[dup]->pos, "'%s' is given twice in %s", map->items[dup]->value, where);
        ok = false;
    }
    for (size_t i = 0; i < map->n; i++) {
        const tg_ynode *k = map->items[i];
        bool known = false;
        for (size_t j = 0; j < n && !known; j++) known = tg_yscalar_is(k, keys[j]);
        if (known) continue;
        const char *hint = k->kind == TG_Y_SCALAR ? tg_suggest(k->value, keys, n) : NULL;
        error_at(rd, k->pos, "unknown key '%s' in %s%s%s%s", k->kind == TG_Y_SCALAR ? k->value : "?", where,
                 hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
        ok = false;
    }
    return ok;
}

static void read_entry(reader *rd, const tg_ynode *e)
{
    if (e->kind != TG_Y_MAP) {
        error_at(rd, e->pos, "a suppression is a mapping (rule, reason, and optionally trace, max_count, "
                             "expires), not %s", tg_ynode_kind_name(e));
        return;
    }
    bool ok = keys_known(rd, e, entry_keys, N_ENTRY_KEYS, "a suppression");
    tg_suppression x = {.max_count = -1, .file = rd->src->name, .pos = e->pos};
    const tg_ynode *rule = tg_ymap_get(e, "rule"), *reason = tg_ymap_get(e, "reason");
    if (!rule || !reason) {
        error_at(rd, e->pos, "a suppression needs %s: which rule, and why the finding is accepted",
                 !rule && !reason ? "rule and reason" : !rule ? "rule" : "reason");
        return;
    }
    ok = (x.rule = scalar(rd, rule, "rule")) != NULL && ok;
    ok = (x.reason = scalar(rd, reason, "reason")) != NULL && ok;
    const tg_ynode *trace = tg_ymap_get(e, "trace"), *count = tg_ymap_get(e, "max_count"),
                   *expires = tg_ymap_get(e, "expires");
    if (trace) ok = (x.trace = scalar(rd, trace, "trace")) != NULL && ok;
    if (count) ok = read_count(rd, count, &x.max_count) && ok;
    if (expires && (x.expires = scalar(rd, expires, "expires")) && !is_date(x.expires)) {
        error_at(rd, expires->pos, "expires wants a day as YYYY-MM-DD, not '%s'", x.expires);
        ok = false;
    }
    if (ok && !TG_PUSH(rd->s->items, rd->s->n, rd->s->cap, x)) {
        tg_diag_error(rd->diag, TG_EINTERNAL, "out of memory while reading %s", rd->src->name);
        rd->failed = true;
    }
}

static const char *const top_keys[] = {"version", "suppressions"};

static void read_root(reader *rd, const tg_ynode *root)
{
    if (!root || root->kind != TG_Y_MAP) {
        error_at(rd, root ? root->pos : (tg_pos){rd->src->name, 1, 1},
                 "a suppression file is a mapping with 'version: 1' and a 'suppressions' list");
        return;
    }
    keys_known(rd, root, top_keys, 2, "a suppression file");
    const tg_ynode *version = tg_ymap_get(root, "version"), *list = tg_ymap_get(root, "suppressions");
    if (!version || !tg_yscalar_is(version, "1"))
        error_at(rd, version ? version->pos : root->pos, "a suppression file starts with 'version: 1'");
    if (!list || (list->kind != TG_Y_SEQ && !tg_ynode_is_null(list))) {
        error_at(rd, list ? list->pos : root->pos, "'suppressions' wants a list of suppressions");
        return;
    }
    for (size_t i = 0; list->kind == TG_Y_SEQ && i < list->n; i++) read_entry(rd, list->items[i]);
}

static bool load_one(tg_suppressions *s, const char *path, tg_diag *diag)
{
    char why[256] = "";
    size_t len;
    char *text = tg_read_small_file(path, SUPPRESS_MAX_FILE, &len, why, sizeof why);
    if (!text) {
        if (!why[0]) tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading %s", path);
        else tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){path, 0, 0}, NULL, "the suppression file %s", why);
        return false;
    }
    tg_src *src = tg_src_new(s->arena, diag, path, text, len);
    if (!src) return false;
    tg_src **grown = realloc(s->srcs, (s->n_srcs + 1) * sizeof *grown);
    if (!grown) {
        tg_src_release(src);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading %s", path);
        return false;
    }
    s->srcs = grown;
    s->srcs[s->n_srcs++] = src;
    reader rd = {s, diag, src, false};
    bool ok = true;
    const tg_ynode *root = tg_yaml_read(s->arena, diag, src, &suppress_limits, &ok);
    if (ok) read_root(&rd, root);
    return ok && !rd.failed;
}

tg_suppressions *tg_suppress_load(const char *const *paths, size_t n_paths, tg_diag *diag)
{
    tg_suppressions *s = calloc(1, sizeof *s);
    if (!s || !(s->arena = tg_arena_new())) {
        free(s);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading the suppressions");
        return NULL;
    }
    bool ok = true;
    for (size_t i = 0; i < n_paths; i++) ok = load_one(s, paths[i], diag) && ok;
    if (!ok) {
        tg_suppress_free(s);
        return NULL;
    }
    return s;
}

void tg_suppress_free(tg_suppressions *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_srcs; i++) tg_src_release(s->srcs[i]);
    free(s->srcs);
    free(s->items);
    tg_arena_free(s->arena);
    free(s);
}

size_t tg_suppress_count(const tg_suppressions *s) { return s ? s->n : 0; }

/* -------------------------------------------------------------- checks */

static bool expired(const tg_suppression *x, const char *today)
{
    return x->expires && today && strcmp(today, x->expires) > 0;   /* YYYY-MM-DD sorts as text */
}

tg_status tg_suppress_check_rules(const tg_suppressions *s, const char *const *ids, size_t n_ids,
                                  const char *today, bool lint, tg_diag *diag)
{
    tg_status st = TG_OK;
    for (size_t i = 0; i < s->n; i++) {
        const tg_suppression *x = &s->items[i];
        bool known = false;
        for (size_t j = 0; j < n_ids && !known; j++) known = !strcmp(ids[j], x->rule);
        if (!known) {
            const char *hint = tg_suggest(x->rule, ids, n_ids);
            tg_src_msg(diag, TG_DIAG_ERROR, TG_EUSAGE, src_of(s, x), x->pos,
                       "suppression of unknown rule '%s'%s%s%s (see 'tracegate rules list')", x->rule,
                       hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
            st = TG_EUSAGE;
        } else if (lint && expired(x, today)) {
            tg_src_msg(diag, TG_DIAG_WARNING, TG_OK, src_of(s, x), x->pos,
                       "the suppression of %s expired on %s: it no longer accepts anything; renew or remove it",
                       x->rule, x->expires);
        }
    }
    return st;
}

/* --------------------------------------------------------------- apply */

static bool trace_matches(const tg_suppression *x, const char *file)
{
    if (!x->trace) return true;
    if (!file) return false;
    const char *slash = strrchr(file, '/');
    return fnmatch(x->trace, file, 0) == 0 || (slash && fnmatch(x->trace, slash + 1, 0) == 0);
}

/* Does x name this result (whatever its date and count)? */
static bool names(const tg_suppression *x, const tg_trace_result *tr, const tg_rule_result *r)
{
    bool finding = r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE;
    return finding && r->rule && !strcmp(r->rule, x->rule) && trace_matches(x, tr->file);
}

static void apply_one(const tg_suppression *x, tg_suppression_use *use, tg_run_result *run, const char *today)
{
    char where[64];
    for (size_t t = 0; t < run->n_traces; t++) {
        tg_trace_result *tr = &run->traces[t];
        for (size_t i = 0; i < tr->n_results; i++) {
            tg_rule_result *r = &tr->results[i];
            if (r->suppressed || !names(x, tr, r)) continue;
            use->matched++;
            if (expired(x, today)) {
                use->status = TG_SUPPRESSION_EXPIRED;
            } else if (x->max_count >= 0 && r->count != TG_NULL_I64 && r->count > x->max_count) {
                use->status = TG_SUPPRESSION_EXCEEDED;
            } else {
                tg_arena *a = tr->arena ? tr->arena : run->arena;
                snprintf(where, sizeof where, ":%d", x->pos.line);
                r->suppressed = tg_arena_strdup(a, x->reason);
                char *at = tg_arena_alloc(a, strlen(x->file) + strlen(where) + 1);
                if (at) sprintf(at, "%s%s", x->file, where);
                r->suppressed_at = at;
                if (use->status == TG_SUPPRESSION_UNUSED) use->status = TG_SUPPRESSION_USED;
            }
        }
    }
}

bool tg_suppress_apply(const tg_suppressions *s, tg_run_result *run, const char *today)
{
    if (!s || !s->n) return true;
    run->suppressions = tg_arena_alloc(run->arena, s->n * sizeof *run->suppressions);
    if (!run->suppressions) return false;
    run->n_suppressions = s->n;
    for (size_t k = 0; k < s->n; k++) {
        const tg_suppression *x = &s->items[k];
        tg_suppression_use *use = &run->suppressions[k];
        *use = (tg_suppression_use){
            .rule = tg_arena_strdup(run->arena, x->rule), .reason = tg_arena_strdup(run->arena, x->reason),
            .trace = x->trace ? tg_arena_strdup(run->arena, x->trace) : NULL, .max_count = x->max_count,
            .expires = x->expires ? tg_arena_strdup(run->arena, x->expires) : NULL,
            .file = tg_arena_strdup(run->arena, x->file), .line = x->pos.line, .status = TG_SUPPRESSION_UNUSED};
        apply_one(x, use, run, today);
    }
    return true;
}

void tg_suppress_warn(const tg_suppressions *s, const tg_run_result *run, tg_diag *diag)
{
    for (size_t k = 0; s && k < s->n && k < run->n_suppressions; k++) {
        char sentence[512];
        tg_suppression_sentence(&run->suppressions[k], sentence, sizeof sentence);
        if (sentence[0])
            tg_src_msg(diag, TG_DIAG_WARNING, TG_OK, src_of(s, &s->items[k]), s->items[k].pos, "%s", sentence);
    }
}

void tg_suppress_digest(const tg_suppressions *s, struct tg_sha256 *h)
{
    char buf[32];
    tg_sha256_str(h, "suppressions");
    for (size_t i = 0; s && i < s->n; i++) {
        const tg_suppression *x = &s->items[i];
        tg_sha256_str(h, x->rule);
        tg_sha256_str(h, x->reason);
        tg_sha256_str(h, x->trace);
        snprintf(buf, sizeof buf, "%lld", (long long)x->max_count);
        tg_sha256_str(h, buf);
        tg_sha256_str(h, x->expires);
    }
}
