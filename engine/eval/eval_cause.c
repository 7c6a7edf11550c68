/*
** Causes (docs/host.md): what a failing finding says about why, for rules
** with a `cause:` key. It runs after the evaluation, on the failures only:
** the host-side tables a cause needs (OS runtime calls, call stacks) are
** read then (tg_model_host_load), so a run whose rules pass never pays for
** them, and a table that is absent or unreadable makes the cause unknown,
** with the nsys option that records it, never the run fail.
**
** - host: for each cited row (a gap; a device, over its steady window; an
**   iteration) what the threads of its process did meanwhile
**   (tg_model_host_window): OS runtime calls, CUDA calls of 100 us or more
**   and NVTX ranges by total time inside the window, the threads that feed
**   the GPU first.
** - call_site: every row that passed the rule's `where`, grouped by the
**   call site of the CUDA call behind it (the first frame of its stack
**   outside CUDA and system libraries).
** - launch: the kernels that ran shorter than their launching calls in
**   steady state, by name (model_host.c counts them in the launch pass).
**
** Each cause gets one summary sentence and a reproduce query
** (eval_cause_sql.c) that returns its numbers.
*/
#include "eval_cause.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"

#define MAX_ITEMS 8            /* items per window, call sites, kernels */
#define MAX_STACK 16           /* frames shown for a call site */

/* ---------------------------------------------------------------- words */

/* A string of the trace, copied: the result outlives the trace. */
static const char *own_str(tg_cause_cc *cc, int32_t id)
{
    const char *s = id >= 0 ? tg_trace_str(cc->m->trace, id) : NULL;
    if (!s) return NULL;
    const char *copy = tg_arena_strdup(cc->arena, s);
    if (!copy) cc->oom = true;
    return copy;
}

static const char *fmt_ns(char *buf, double ns)
{
    return tg_fmt_num(buf, TG_FMT_BUF, ns, TG_UNIT_NS);
}

static const char *fmt_pct(char *buf, double frac)
{
    return tg_fmt_num(buf, TG_FMT_BUF, frac, TG_UNIT_RATIO);
}

bool tg_cause_add_unknown(tg_cause_cc *cc, const char *sentence)
{
    if (!sentence) return cc->oom = true, false;
    for (size_t i = 0; i < cc->n_unknown; i++)
        if (!strcmp(cc->unknown[i], sentence)) return true;
    if (!TG_PUSH(cc->unknown, cc->n_unknown, cc->cap_unknown, sentence)) cc->oom = true;
    return !cc->oom;
}

/* What the capture lacks for OS runtime calls, if anything. */
static void unknown_osrt(tg_cause_cc *cc)
{
    const tg_trace *t = cc->m->trace;
    tg_arena *a = cc->arena;
    const char *never = tg_trace_never_records(t, TG_TABLE_OSRT);
    if (never)
        tg_cause_add_unknown(cc, tg_arena_printf(a, "OS runtime calls unknown: %s; record them with '%s'", never,
                                                 tg_trace_table_option(t, TG_TABLE_OSRT)));
    else if (cc->load_error)
        tg_cause_add_unknown(cc, tg_arena_printf(a, "OS runtime calls unknown: %s", cc->load_error));
    else if (!t->has_table[TG_TABLE_OSRT])
        tg_cause_add_unknown(cc, tg_arena_printf(a, "OS runtime calls unknown: the capture did not record them "
                                                 "(no %s table); record them with '%s'",
                                                 tg_table_names[TG_TABLE_OSRT], tg_table_option[TG_TABLE_OSRT]));
    else if (t->n_osrts == 0)
        tg_cause_add_unknown(cc, tg_arena_printf(a, "OS runtime calls unknown: %s is empty; record them with '%s'",
                                                 t->table_name[TG_TABLE_OSRT], tg_table_option[TG_TABLE_OSRT]));
}

/* What the capture lacks for CUDA call stacks, if anything; true when
** stacks can be read. */
static bool unknown_stacks(tg_cause_cc *cc)
{
    const tg_trace *t = cc->m->trace;
    tg_arena *a = cc->arena;
    const char *what = NULL, *never = tg_trace_never_records(t, TG_TABLE_CALLCHAINS);
    if (never)
        what = tg_arena_printf(a, "call sites unknown: %s; record them with '%s'", never,
                               tg_trace_table_option(t, TG_TABLE_CALLCHAINS));
    else if (cc->load_error)
        what = tg_arena_printf(a, "call sites unknown: %s", cc->load_error);
    else if (!t->has_table[TG_TABLE_CALLCHAINS])
        what = tg_arena_printf(a, "call sites unknown: the capture recorded no CUDA call stacks (no %s table); "
                               "record them with '%s'", tg_table_names[TG_TABLE_CALLCHAINS],
                               tg_table_option[TG_TABLE_CALLCHAINS]);
    else if (t->n_frames[TG_STACKS_CUDA] == 0)
        what = tg_arena_printf(a, "call sites unknown: %s is empty; record the stacks with '%s'",
                               t->table_name[TG_TABLE_CALLCHAINS], tg_table_option[TG_TABLE_CALLCHAINS]);
    if (what) tg_cause_add_unknown(cc, what);
    return what == NULL;
}

/* "name in module", or the name alone. */
static const char *site_text(tg_arena *a, const char *site, const char *module)
{
    if (!site) return NULL;
    return module ? tg_arena_printf(a, "%s in %s", site, module) : tg_arena_strdup(a, site);
}

/* ---------------------------------------------------------------- host */

static const char *rows_table(const tg_model *m, tg_host_source src)
{
    tg_table_id id = src == TG_HSRC_OSRT ? TG_TABLE_OSRT : src == TG_HSRC_CUDA ? TG_TABLE_RUNTIME : TG_TABLE_NVTX;
    return tg_trace_cite_table(m->trace, id);
}

static bool item_of_entry(tg_cause_cc *cc, const tg_host_entry *e, double window, tg_cause_item *it)
{
    const tg_model *m = cc->m;
    *it = (tg_cause_item){
        .source = tg_host_source_names[e->source], .name = own_str(cc, e->name), .thread = own_str(cc, e->thread),
        .tid = e->tid, .launch_thread = e->launch_thread, .count = e->rows, .time = (double)e->time,
        .launch_time = NAN, .share = window > 0 ? (double)e->time / window : NAN,
        .table = rows_table(m, e->source),
    };
    int stacks = e->source == TG_HSRC_OSRT ? TG_STACKS_OSRT : TG_STACKS_CUDA;
    if (e->source != TG_HSRC_NVTX) {
        it->call_site = own_str(cc, tg_model_call_site(m, stacks, e->callchain, false));
        it->call_module = it->call_site ? own_str(cc, tg_model_call_site(m, stacks, e->callchain, true)) : NULL;
    }
    it->rowids = tg_arena_alloc(cc->arena, e->n_rowids * sizeof *it->rowids + 1);
    if (!it->rowids) return false;
    memcpy(it->rowids, e->rowids, e->n_rowids * sizeof *it->rowids);
    it->n_rowids = e->n_rowids;
    return true;
}

/* The window a cited row stands for, and its process; false: none. */
static bool row_window(const tg_cause_cc *cc, int64_t row, int32_t *pid, int64_t *s, int64_t *e)
{
    const tg_model *m = cc->m;
    switch (cc->rule->source) {
    case TG_SRC_GAP:
        if ((size_t)row >= m->n_gaps) return false;
        *pid = m->gaps[row].pid, *s = m->gaps[row].start, *e = m->gaps[row].end;
        return true;
    case TG_SRC_ITERATION:
        if ((size_t)row >= m->n_iterations) return false;
        *pid = m->iterations[row].pid, *s = m->iterations[row].start, *e = m->iterations[row].end;
        return true;
    case TG_SRC_DEVICE: {
        if ((size_t)row >= m->n_devices) return false;
        const tg_device *d = &m->devices[row];
        *pid = tg_model_device_pid(m, d->device);
        *s = m->steady_start > d->start ? m->steady_start : d->start;
        *e = m->steady_end < d->end ? m->steady_end : d->end;
        return *pid >= 0 && *e > *s;
    }
    default:
        return false;
    }
}

/* The item that says what the host did: the launch threads' longest call. */
static const tg_cause_item *top_call(const tg_cause_window *w)
{
    for (size_t i = 0; i < w->n_items; i++)
        if (w->items[i].launch_thread && strcmp(w->items[i].source, "nvtx") != 0) return &w->items[i];
    return NULL;
}

static const tg_cause_item *top_range(const tg_cause_window *w)
{
    for (size_t i = 0; i < w->n_items; i++)
        if (w->items[i].launch_thread && !strcmp(w->items[i].source, "nvtx")) return &w->items[i];
    return NULL;
}

static const char *window_noun(tg_source_id src, bool plural)
{
    switch (src) {
    case TG_SRC_GAP: return plural ? "cited gaps" : "gap";
    case TG_SRC_ITERATION: return plural ? "cited iterations" : "iteration";
    default: return plural ? "steady windows" : "steady window";
    }
}

static const char *thread_text(tg_arena *a, const tg_cause_item *it)
{
    return it->thread ? tg_arena_printf(a, "%s, tid %lld", it->thread, (long long)it->tid)
                      : tg_arena_printf(a, "tid %lld", (long long)it->tid);
}

/* One sentence over the windows: the launch threads' main activity; when
** they spent most of the time in no traced call, that the cause is unknown. */
static const char *host_summary(tg_cause_cc *cc, const tg_cause *c)
{
    tg_arena *a = cc->arena;
    char b1[TG_FMT_BUF], b2[TG_FMT_BUF], b3[TG_FMT_BUF], b4[TG_FMT_BUF], b5[TG_FMT_BUF];
    const tg_cause_item *top = NULL;
    double total = 0, accounted = 0, top_time = 0;
    size_t with = 0;
    for (size_t w = 0; w < c->n_windows; w++) {
        total += (double)(c->windows[w].end - c->windows[w].start);
        accounted += (double)c->windows[w].accounted;
    }
    /* the name that is the top call in the most windows (by its time) */
    for (size_t w = 0; w < c->n_windows; w++) {
        const tg_cause_item *t = top_call(&c->windows[w]);
        if (!t) continue;
        double sum = 0;
        size_t n = 0;
        for (size_t v = 0; v < c->n_windows; v++) {
            const tg_cause_item *u = top_call(&c->windows[v]);
            if (u && !strcmp(u->name, t->name) && !strcmp(u->source, t->source)) sum += u->time, n++;
        }
        if (sum > top_time) top = t, top_time = sum, with = n;
    }
    bool plural = c->n_windows > 1;
    const char *noun = window_noun(cc->rule->source, plural);
    const char *where = plural ? tg_arena_printf(a, "in %zu of the %zu %s", with, c->n_windows, noun)
                               : cc->rule->source == TG_SRC_DEVICE
                                     ? tg_arena_printf(a, "over the %s (%s)", noun, fmt_ns(b3, total))
                                     : tg_arena_printf(a, "during the %s %s", fmt_ns(b3, total), noun);
    double untraced = total - accounted;
    if (!top)
        return tg_arena_printf(a, "unknown: the threads that launch GPU work made no traced call during the %s "
                               "(%s of %s in untraced code)", noun, fmt_ns(b1, untraced), fmt_ns(b2, total));
    const char *who = thread_text(a, top);
    if (top_time < 0.5 * total && untraced > 0.5 * total)
        return tg_arena_printf(a, "unknown: %s the thread that launches GPU work (%s) ran untraced code "
                               "(computation, Python, calls the profiler did not record) for %s of %s (%s); its longest "
                               "traced call was %s, %s (%s)", where, who, fmt_ns(b1, untraced), fmt_ns(b2, total),
                               fmt_pct(b3, untraced / total), top->name, fmt_ns(b4, top_time),
                               fmt_pct(b5, top_time / total));
    const char *site = site_text(a, top->call_site, top->call_module);
    const tg_cause_item *range = top_range(&c->windows[0]);
    return tg_arena_printf(a, "%s the thread that launches GPU work (%s) was in %s for %s of %s (%s)%s%s%s%s", where,
                           who, top->name, fmt_ns(b1, top_time), fmt_ns(b2, total),
                           fmt_pct(b3, total > 0 ? top_time / total : NAN), site ? ", called from " : "",
                           site ? site : "", range && !plural ? ", inside NVTX range " : "",
                           range && !plural ? range->name : "");
}

static tg_cause *host_cause(tg_cause_cc *cc)
{
    tg_arena *a = cc->arena;
    const tg_rule_result *res = cc->res;
    tg_cause *c = tg_arena_alloc(a, sizeof *c);
    if (!c) return NULL;
    c->kind = TG_CAUSE_HOST;
    c->windows = tg_arena_alloc(a, (res->n_evidence + 1) * sizeof *c->windows);
    if (!c->windows) return NULL;
    for (size_t k = 0; k < res->n_evidence; k++) {
        int32_t pid;
        int64_t s, e;
        if (res->evidence[k].row < 0 || !row_window(cc, res->evidence[k].row, &pid, &s, &e)) continue;
        tg_host_window hw;
        if (!tg_model_host_window(cc->m, pid, s, e, &hw)) return NULL;
        tg_cause_window *w = &c->windows[c->n_windows++];
        *w = (tg_cause_window){.evidence = k, .pid = pid, .start = s, .end = e, .accounted = hw.launch_busy};
        size_t n = hw.n_entries < MAX_ITEMS ? hw.n_entries : MAX_ITEMS;
        w->items = tg_arena_alloc(a, (n + 1) * sizeof *w->items);
        bool ok = w->items != NULL;
        for (size_t i = 0; ok && i < n; i++) ok = item_of_entry(cc, &hw.entries[i], (double)(e - s), &w->items[i]);
        w->n_items = ok ? n : 0;
        tg_host_window_free(&hw);
        if (!ok) return NULL;
    }
    unknown_osrt(cc);
    c->summary = c->n_windows ? host_summary(cc, c)
                              : tg_arena_printf(a, "unknown: the cited rows name no window of host time");
    c->reproduce = tg_cause_host_query(cc, c);
    return c->summary ? c : NULL;
}

/* ---------------------------------------------------------------- call sites */

static void site_cite(tg_site_group *g, int64_t rowid, int64_t dur, int32_t chain)
{
    size_t at = g->n_rowids;
    while (at > 0 && g->durs[at - 1] < dur) at--;
    if (at >= TG_HOST_ROWIDS) return;
    size_t last = g->n_rowids < TG_HOST_ROWIDS ? g->n_rowids : TG_HOST_ROWIDS - 1;
    memmove(&g->rowids[at + 1], &g->rowids[at], (last - at) * sizeof *g->rowids);
    memmove(&g->durs[at + 1], &g->durs[at], (last - at) * sizeof *g->durs);
    g->rowids[at] = rowid;
    g->durs[at] = dur;
    if (g->n_rowids < TG_HOST_ROWIDS) g->n_rowids++;
    if (at == 0) g->chain = chain;
}

static int cmp_group(const void *a, const void *b)
{
    const tg_site_group *x = a, *y = b;
    if (x->count != y->count) return (x->count < y->count) - (x->count > y->count);
    return (x->time < y->time) - (x->time > y->time);
}

static const char *row_noun(tg_source_id src)
{
    switch (src) {
    case TG_SRC_MEMCPY: return "copies";
    case TG_SRC_MEMSET: return "memsets";
    case TG_SRC_KERNEL: return "kernels";
    default: return "calls";
    }
}

static const char *row_noun_one(tg_source_id src)
{
    switch (src) {
    case TG_SRC_MEMCPY: return "copy";
    case TG_SRC_MEMSET: return "memset";
    case TG_SRC_KERNEL: return "kernel";
    default: return "call";
    }
}

static const char **stack_text(tg_cause_cc *cc, int32_t chain, size_t *n)
{
    size_t nf;
    const tg_frame *f = tg_model_stack(cc->m, TG_STACKS_CUDA, chain, &nf);
    *n = nf < MAX_STACK ? nf : MAX_STACK;
    const char **out = tg_arena_alloc(cc->arena, (*n + 1) * sizeof *out);
    for (size_t i = 0; out && i < *n; i++) {
        const char *sym = tg_trace_str(cc->m->trace, f[i].symbol), *mod = tg_trace_str(cc->m->trace, f[i].module);
        const char *file = mod && strrchr(mod, '/') ? strrchr(mod, '/') + 1 : mod;
        out[i] = tg_arena_printf(cc->arena, "%s (%s)", sym ? sym : "?", file ? file : "?");
        if (!out[i]) return NULL;
    }
    return out;
}

/* Group the rows that pass `where` by call site; each grouped row's
** rowid and group go to *rows (for the reproduce query). */
static bool group_sites(tg_cause_cc *cc, tg_site_group **groups, size_t *n_groups, tg_site_row **rows,
                        size_t *n_rows, int64_t *matched, int64_t *no_stack, int64_t *no_site)
{
    const tg_rule *r = cc->rule;
    tg_source_view view = tg_model_source(cc->m, r->source);
    const tg_field_def *fc = tg_field_find(r->source, "callchain"), *fd = tg_field_find(r->source, "duration");
    const tg_field_def *fs = tg_field_find(r->source, "call_site"), *fm = tg_field_find(r->source, "call_module");
    if (!fc || !fd || !fs || !fm) return true;
    tg_rule_state st = {.rule = r, .m = cc->m, .baseline = cc->baseline};
    if (!tg_eval_slots_init(&st)) {
        tg_eval_slots_free(&st);
        return false;
    }
    size_t last = 0;               /* rows of one site come in runs */
    size_t cap = 0, cap_rows = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < view.n; i++) {
        const char *row = view.base + i * view.def->stride;
        if (r->where && !tg_eval_row_test(&st, row, r->where)) continue;
        (*matched)++;
        int32_t chain;
        memcpy(&chain, row + fc->offset, sizeof chain);
        int32_t site = tg_field_site(cc->m, row, fs), module = tg_field_site(cc->m, row, fm);
        size_t frames = 0;
        if (chain >= 0) tg_model_stack(cc->m, TG_STACKS_CUDA, chain, &frames);
        if (!frames || site < 0) {
            (*(frames ? no_site : no_stack))++;
            continue;
        }
        tg_value dv = tg_field_get(cc->m, &view, fd, i);
        int64_t dur = dv.type == TG_TY_INT ? dv.u.i : 0;
        size_t slot = last < *n_groups && (*groups)[last].site == site && (*groups)[last].module == module
                          ? last : 0;
        while (slot < *n_groups && ((*groups)[slot].site != site || (*groups)[slot].module != module)) slot++;
        if (slot == *n_groups) {
            tg_site_group g = {.site = site, .module = module, .chain = chain, .slot = (int32_t)slot};
            ok = TG_PUSH(*groups, *n_groups, cap, g);
        }
        last = slot;
        tg_site_row sr = {tg_source_row_id(&view, i), (int32_t)slot};
        if (!ok || !TG_PUSH(*rows, *n_rows, cap_rows, sr)) break;
        tg_site_group *g = &(*groups)[slot];
        g->count++;
        g->time += (double)dur;
        site_cite(g, sr.rowid, dur, chain);
    }
    tg_eval_slots_free(&st);
    return ok;
}

static const char *sites_summary(tg_cause_cc *cc, const tg_cause *c, int64_t matched, int64_t no_stack,
                                 int64_t no_site)
{
    tg_arena *a = cc->arena;
    const char *noun = row_noun(cc->rule->source);
    /* one row reads as one: "the 1 copy has", never "none of the 1 copies" */
    if (!c->n_items && no_site && matched == 1)
        return tg_arena_printf(a, "unknown: the stack of the 1 %s holds no frame outside CUDA and system libraries",
                               row_noun_one(cc->rule->source));
    if (!c->n_items && no_site)
        return tg_arena_printf(a, "unknown: the stacks of %lld of the %lld %s hold no frame outside CUDA and system "
                               "libraries%s", (long long)no_site, (long long)matched, noun,
                               no_stack ? tg_arena_printf(a, "; %lld %s no recorded stack", (long long)no_stack,
                                                          no_stack == 1 ? "has" : "have") : "");
    if (!c->n_items && matched == 1)
        return tg_arena_printf(a, "unknown: the 1 %s has no recorded call stack", row_noun_one(cc->rule->source));
    if (!c->n_items)
        return tg_arena_printf(a, "unknown: none of the %lld %s has a recorded call stack", (long long)matched,
                               noun);
    const tg_cause_item *top = &c->items[0];
    const char *site = site_text(a, top->name, top->module);
    if (top->count == matched && matched == 1)
        return tg_arena_printf(a, "the %s was made from %s", row_noun_one(cc->rule->source), site);
    if (top->count == matched)
        return tg_arena_printf(a, "all %lld %s were made from %s", (long long)matched, noun, site);
    const char *rest = c->n_items > 1 ? tg_arena_printf(a, "; %zu call site%s in all", c->n_items,
                                                        c->n_items > 1 ? "s" : "")
                                      : "";
    const char *unknown = no_stack || no_site
                              ? tg_arena_printf(a, "; %lld without a recorded stack or one outside the libraries",
                                                (long long)(no_stack + no_site))
                              : "";
    return tg_arena_printf(a, "%lld of the %lld %s were made from %s%s%s", (long long)top->count,
                           (long long)matched, noun, site, rest ? rest : "", unknown ? unknown : "");
}

static tg_cause *site_cause(tg_cause_cc *cc)
{
    tg_arena *a = cc->arena;
    tg_cause *c = tg_arena_alloc(a, sizeof *c);
    if (!c) return NULL;
    c->kind = TG_CAUSE_CALL_SITE;
    bool stacks = unknown_stacks(cc);
    tg_site_group *groups = NULL;
    tg_site_row *rows = NULL;
    size_t n = 0, n_rows = 0;
    int64_t matched = 0, no_stack = 0, no_site = 0;
    if (!group_sites(cc, &groups, &n, &rows, &n_rows, &matched, &no_stack, &no_site)) {
        free(groups);
        free(rows);
        return NULL;
    }
    if (n > 1) qsort(groups, n, sizeof *groups, cmp_group);
    size_t keep = n < MAX_ITEMS ? n : MAX_ITEMS;
    c->items = tg_arena_alloc(a, (keep + 1) * sizeof *c->items);
    tg_source_view view = tg_model_source(cc->m, cc->rule->source);
    const char *table = tg_trace_cite_table(cc->m->trace, view.def->table);
    for (size_t i = 0; c->items && i < keep; i++) {
        const tg_site_group *g = &groups[i];
        tg_cause_item *it = &c->items[c->n_items++];
        *it = (tg_cause_item){.source = "call_site", .name = own_str(cc, g->site), .module = own_str(cc, g->module),
                              .tid = -1, .count = g->count, .time = g->time, .launch_time = NAN,
                              .share = matched ? (double)g->count / (double)matched : NAN, .table = table};
        it->rowids = tg_arena_alloc(a, g->n_rowids * sizeof *it->rowids + 1);
        it->stack = stack_text(cc, g->chain, &it->n_stack);
        if (!it->rowids || !it->stack) {
            free(groups);
            free(rows);
            return NULL;
        }
        memcpy(it->rowids, g->rowids, g->n_rowids * sizeof *it->rowids);
        it->n_rowids = g->n_rowids;
    }
    if (stacks && no_stack)
        tg_cause_add_unknown(cc, tg_arena_printf(a, "%lld of the %lld %s have no recorded stack: nsys records one "
                                                 "only for calls longer than --cudabacktrace's threshold (80 us by "
                                                 "default; 'all:0' records every call)",
                                                 (long long)no_stack, (long long)matched,
                                                 row_noun(cc->rule->source)));
    c->summary = sites_summary(cc, c, matched, no_stack, no_site);
    c->reproduce = c->n_items ? tg_cause_sites_query(cc, groups, keep, rows, n_rows) : NULL;
    free(groups);
    free(rows);
    return c->items && c->summary ? c : NULL;
}

/* ---------------------------------------------------------------- launch */

static tg_cause *launch_cause(tg_cause_cc *cc)
{
    tg_arena *a = cc->arena;
    tg_cause *c = tg_arena_alloc(a, sizeof *c);
    if (!c) return NULL;
    c->kind = TG_CAUSE_LAUNCH;
    size_t n;
    const tg_short_kernel *k = tg_model_short_kernels(cc->m, &n);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) total += k[i].count;
    size_t keep = n < MAX_ITEMS ? n : MAX_ITEMS;
    c->items = tg_arena_alloc(a, (keep + 1) * sizeof *c->items);
    if (!c->items) return NULL;
    const char *table = tg_trace_cite_table(cc->m->trace, TG_TABLE_KERNEL);
    for (size_t i = 0; i < keep; i++)
        c->items[c->n_items++] = (tg_cause_item){
            .source = "kernel", .name = own_str(cc, k[i].name), .tid = -1, .count = k[i].count,
            .time = (double)k[i].kernel_time, .launch_time = (double)k[i].launch_time,
            .share = total ? (double)k[i].count / (double)total : NAN, .table = table};
    char b1[TG_FMT_BUF], b2[TG_FMT_BUF], b3[TG_FMT_BUF];
    /* the sentence names the kernel's family; the items keep the whole name */
    const char *family = keep ? own_str(cc, tg_model_kernel_family(cc->m, k[0].name)) : NULL;
    if (!keep)
        c->summary = tg_arena_printf(a, "no kernel of the steady state ran shorter than the call that launched it");
    else
        c->summary = tg_arena_printf(
            a, "%lld steady kernels ran shorter than the calls that launched them; most often %s: %lld kernels of %s "
               "on average, launched by calls of %s (%s of the short ones)",
            (long long)total, family ? family : "?", (long long)c->items[0].count,
            fmt_ns(b1, c->items[0].time / (double)c->items[0].count),
            fmt_ns(b2, c->items[0].launch_time / (double)c->items[0].count), fmt_pct(b3, c->items[0].share));
    c->reproduce = keep ? tg_cause_launch_query(cc, c) : NULL;
    return c->summary ? c : NULL;
}

/* ---------------------------------------------------------------- driver */

static unsigned tables_for(tg_cause_kind k)
{
    switch (k) {
    case TG_CAUSE_HOST: return TG_HOST_OSRT | TG_HOST_STACKS;
    case TG_CAUSE_CALL_SITE: return TG_HOST_STACKS;
    default: return 0;
    }
}

static bool wants_cause(const tg_rule *r, const tg_rule_result *res)
{
    return r->info.cause != TG_CAUSE_NONE && res->verdict == TG_V_FAIL;
}

static tg_cause *build(tg_cause_cc *cc)
{
    tg_cause *c = NULL;
    switch (cc->rule->info.cause) {
    case TG_CAUSE_HOST: c = host_cause(cc); break;
    case TG_CAUSE_CALL_SITE: c = site_cause(cc); break;
    case TG_CAUSE_LAUNCH: c = launch_cause(cc); break;
    default:
        TG_UNREACHABLE();   /* wants_cause lets only the kinds above through */
        return NULL;
    }
    if (!c || cc->oom) return NULL;
    c->unknown = cc->n_unknown ? tg_arena_alloc(cc->arena, cc->n_unknown * sizeof *c->unknown) : NULL;
    if (cc->n_unknown && !c->unknown) return NULL;
    if (cc->n_unknown) memcpy(c->unknown, cc->unknown, cc->n_unknown * sizeof *c->unknown);
    c->n_unknown = cc->n_unknown;
    return c;
}

tg_status tg_eval_causes(const tg_ruleset *rs, tg_model *m, const tg_eval_opts *opts, tg_arena *arena,
                         tg_trace_result *out, tg_diag *diag)
{
    unsigned need = 0;
    for (size_t i = 0, k = 0; i < rs->n && k < out->n_results; i++) {
        if (!rs->rules[i].info.enabled) continue;
        if (wants_cause(&rs->rules[i], &out->results[k])) need |= tables_for(rs->rules[i].info.cause);
        k++;
    }
    const char *load_error = NULL;
    if (need) {
        tg_diag scratch;
        tg_diag_init(&scratch);
        if (!tg_model_host_load(m, need, &scratch)) {
            load_error = tg_arena_strdup(arena, scratch.n ? scratch.msgs[0].text : "the export could not be read again");
            tg_diag_add(diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL, "%s (the findings say their cause is unknown)",
                        load_error);
        }
        tg_diag_clear(&scratch);
    }
    for (size_t i = 0, k = 0; i < rs->n && k < out->n_results; i++) {
        const tg_rule *r = &rs->rules[i];
        if (!r->info.enabled) continue;
        tg_rule_result *res = &out->results[k++];
        if (!wants_cause(r, res)) continue;
        tg_cause_cc cc = {.rule = r, .res = res, .m = m, .arena = arena, .load_error = load_error,
                          .baseline = opts && opts->baselines ? &opts->baselines[i] : NULL};
        res->cause = build(&cc);
        free(cc.unknown);
        if (!res->cause) {
            tg_diag_error(diag, TG_EINTERNAL, "out of memory while naming the cause of %s", r->info.id);
            return TG_EINTERNAL;
        }
    }
    return TG_OK;
}
