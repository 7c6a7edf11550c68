/*
** The ranks of one trace (docs/iterations.md, "Ranks within one export"):
** `nsys profile torchrun --nproc_per_node=N` writes one export holding
** every rank. A rank is a process that drives its own GPUs: the kernel
** rows give each process its devices, and when two or more processes did
** GPU work and no device is shared between them, each is a rank, numbered
** by its lowest device. A single GPU process, or processes sharing a GPU
** (which nothing in an export tells apart as ranks: nsys records the
** environment of the profiled launcher only, docs/formats.md), are not
** split: the trace is judged whole, as before.
**
** Per rank, over its own steady iterations (iterations are per process
** already, docs/iterations.md): the p50 period, the p50 GPU time, and the
** share of the steady window its devices ran nothing; each with the query
** that reproduces it over the model's iteration and device views (SQL,
** or jq for a Kineto trace). Then the straggler comparison merge makes
** (eval_straggler.c), inside the trace.
*/
#include "eval_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/idmap.h"
#include "../common/stats.h"
#include "../model/model_jq.h"
#include "../model/model_sql.h"

/* A (pid, device) pair of the kernel rows, as one key. */
#define PAIR_KEY(pid, dev) ((int64_t)(uint32_t)(pid) << 32 | (int64_t)(uint32_t)(dev))

typedef struct pd { int32_t pid, device; } pd;

static int cmp_pd(const void *pa, const void *pb)
{
    const pd *a = pa, *b = pb;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    return (a->device > b->device) - (a->device < b->device);
}

static int cmp_by_device(const void *pa, const void *pb)
{
    const pd *a = pa, *b = pb;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;
    return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The distinct (pid, device) pairs of the kernels, sorted by pid then
** device; their number, -1 when out of memory. */
static ptrdiff_t pairs_of(const tg_model *m, pd **out)
{
    tg_idmap s = {0};
    int64_t last = -1;
    bool ok = true;
    for (size_t i = 0; ok && i < m->trace->n_kernels; i++) {
        const tg_kspan *k = tg_model_kernel(m, i);
        if (k->pid < 0 || k->device < 0) continue;
        int64_t key = PAIR_KEY(k->pid, k->device);
        if (key != last) ok = tg_idmap_put(&s, key, 0);
        last = key;
    }
    size_t n = tg_idmap_count(&s), pos = 0, j = 0;
    *out = ok ? malloc((n ? n : 1) * sizeof **out) : NULL;
    int64_t key;
    int32_t val;
    while (*out && tg_idmap_next(&s, &pos, &key, &val))
        (*out)[j++] = (pd){(int32_t)(uint32_t)(key >> 32), (int32_t)(uint32_t)key};
    tg_idmap_free(&s);
    if (!*out) return -1;
    qsort(*out, n, sizeof **out, cmp_pd);
    return (ptrdiff_t)n;
}

/* Whether a device runs kernels of two processes (then nothing says which
** processes are ranks). Sorts p by device. */
static bool device_shared(pd *p, size_t n)
{
    qsort(p, n, sizeof *p, cmp_by_device);
    for (size_t i = 1; i < n; i++)
        if (p[i].device == p[i - 1].device && p[i].pid != p[i - 1].pid) return true;
    return false;
}

/* The ranks: one per process, its lowest device and device count, in the
** order of their lowest devices. Their number; 0 when the trace is not
** split, -1 when out of memory. */
static ptrdiff_t find_ranks(const tg_model *m, tg_rank_result **out, tg_arena *a)
{
    pd *p;
    ptrdiff_t np = pairs_of(m, &p);
    if (np < 0) return -1;
    size_t n = (size_t)np, procs = 0;
    for (size_t i = 0; i < n; i++) procs += !i || p[i].pid != p[i - 1].pid;
    if (procs < 2) {
        free(p);
        return 0;
    }
    tg_rank_result *r = tg_arena_alloc(a, procs * sizeof *r);
    size_t k = 0;
    for (size_t i = 0; r && i < n; i++) {   /* sorted by pid, device: the first of a pid is its lowest */
        if (i && p[i].pid == p[i - 1].pid) {
            r[k - 1].n_devices++;
            continue;
        }
        r[k++] = (tg_rank_result){.pid = p[i].pid, .device = p[i].device, .n_devices = 1};
    }
    bool shared = device_shared(p, n);
    free(p);
    if (!r) return -1;
    if (shared) return 0;
    /* numbered by device: torchrun's LOCAL_RANK is the device it sets */
    for (size_t i = 1; i < procs; i++)
        for (size_t j = i; j > 0 && r[j - 1].device > r[j].device; j--) {
            tg_rank_result t = r[j];
            r[j] = r[j - 1];
            r[j - 1] = t;
        }
    for (size_t i = 0; i < procs; i++) r[i].rank = (int64_t)i;
    *out = r;
    return (ptrdiff_t)procs;
}

/* The process whose kernels each device ran: one, since a trace whose
** devices are shared is not split (find_ranks). Built once, so that
** finding a rank's devices is not a pass over the kernels per device. */
static bool owners_of(const tg_model *m, tg_idmap *owner)
{
    for (size_t i = 0; i < m->trace->n_kernels; i++) {
        const tg_kspan *k = tg_model_kernel(m, i);
        if (k->pid < 0 || k->device < 0) continue;
        if (tg_idmap_get(owner, k->device) < 0 && !tg_idmap_put(owner, k->device, (int32_t)k->pid)) return false;
    }
    return true;
}

/* Its numbers over the model: the steady iterations of its process, the
** steady busy share of its devices. */
static bool measure(const tg_model *m, const tg_idmap *owner, tg_rank_result *r)
{
    int64_t *per = malloc((m->n_iterations ? m->n_iterations : 1) * sizeof *per);
    int64_t *gpu = malloc((m->n_iterations ? m->n_iterations : 1) * sizeof *gpu);
    if (!per || !gpu) {
        free(per);
        free(gpu);
        return false;
    }
    size_t np = 0, ng = 0;
    for (size_t i = 0; i < m->n_iterations; i++) {
        const tg_iteration *it = &m->iterations[i];
        if (it->pid != r->pid || !it->steady) continue;
        if (it->period != TG_NULL_I64) per[np++] = it->period;
        if (it->gpu_time != TG_NULL_I64) gpu[ng++] = it->gpu_time;
    }
    r->steady_iterations = (int64_t)ng;
    r->period = np ? tg_stats_median_i64(per, np) : NAN;
    r->gpu_time = ng ? tg_stats_median_i64(gpu, ng) : NAN;
    free(per);
    free(gpu);
    double idle = 0;
    int devices = 0;
    for (size_t i = 0; i < m->n_devices; i++) {
        const tg_device *d = &m->devices[i];
        bool mine = d->device == r->device || tg_idmap_get(owner, d->device) == r->pid;
        if (!mine || isnan(d->busy_frac_steady)) continue;
        idle += 1 - (d->busy_frac_steady > 1 ? 1 : d->busy_frac_steady);
        devices++;
    }
    r->idle_frac = devices ? idle / devices : NAN;
    r->idle = r->idle_frac * r->period;
    return true;
}

/* " IN (0, 1)": the devices of rank r (its lowest, or each it drives). */
static void put_devices(FILE *f, const tg_model *m, const tg_idmap *owner, const tg_rank_result *r,
                        const char *sep)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_devices; i++) {
        const tg_device *d = &m->devices[i];
        bool mine = d->device == r->device || tg_idmap_get(owner, d->device) == r->pid;
        if (mine) fprintf(f, "%s%d", n++ ? sep : "", (int)d->device);
    }
    if (!n) fprintf(f, "%d", (int)r->device);
}

static uint64_t bits(tg_source_id src, const char *const *names)
{
    uint64_t b = 0;
    for (; *names; names++) {
        const tg_field_def *f = tg_field_find(src, *names);
        if (f) b |= tg_model_sql_field_bit(f);
    }
    return b;
}

static const char *const iter_fields[] = {"pid", "steady", "period", "gpu_time", NULL};
static const char *const dev_fields[] = {"device", "busy_frac_steady", NULL};

/* The SQL of one number: the view of src, then the select. */
static const char *sql_of(const tg_model *m, tg_source_id src, const char *const *fields, const char *select,
                          tg_arena *a)
{
    char *with = tg_model_sql_with(m, src, bits(src, fields));
    const char *q = with && select ? tg_arena_printf(a, "%s %s;", with, select) : NULL;
    free(with);
    return q;
}

static const char *jq_of(const tg_model *m, tg_source_id src, const char *const *fields, const char *expr,
                         tg_arena *a)
{
    uint64_t f[TG_SRC_COUNT] = {0};
    f[src] = bits(src, fields);
    char *views = tg_model_jq_with(m, 1u << src, f);
    const char *q = views && expr ? tg_arena_printf(a, "%s%s%s", tg_eval_jq_funcs(), views, expr) : NULL;
    free(views);
    return q;
}

/* A memstream's text in the arena. */
static const char *text_of(FILE *f, char **buf, tg_arena *a)
{
    const char *s = fclose(f) == 0 && *buf ? tg_arena_strdup(a, *buf) : NULL;
    free(*buf);
    return s;
}

static const char *sql_p50(const tg_model *m, const tg_rank_result *r, const char *col, tg_arena *a)
{
    char *buf = NULL, rows[96];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    snprintf(rows, sizeof rows, "iteration WHERE pid = %d AND steady", (int)r->pid);
    tg_eval_sql_put_quantile(f, col, rows, 0.5);
    return sql_of(m, TG_SRC_ITERATION, iter_fields, text_of(f, &buf, a), a);
}

static bool queries(const tg_model *m, const tg_idmap *owner, tg_rank_result *r, tg_arena *a)
{
    char *buf = NULL;
    size_t len = 0;
    if (tg_trace_query_lang(m->trace) == TG_QUERY_JQ) {
        r->period_query = jq_of(m, TG_SRC_ITERATION, iter_fields, tg_arena_printf(a, "$iteration | map(select(.pid "
                                "== %d and .steady) | .period) | tg_q(0.5)", (int)r->pid), a);
        r->gpu_time_query = jq_of(m, TG_SRC_ITERATION, iter_fields, tg_arena_printf(a, "$iteration | map(select("
                                  ".pid == %d and .steady) | .gpu_time) | tg_q(0.5)", (int)r->pid), a);
        FILE *f = open_memstream(&buf, &len);
        if (!f) return false;
        fputs("$device | map(select(.device | IN(", f);
        put_devices(f, m, owner, r, ", ");
        fputs(")) | .busy_frac_steady | select(. != null) | 1 - ([., 1] | min)) | tg_mean", f);
        r->idle_query = jq_of(m, TG_SRC_DEVICE, dev_fields, text_of(f, &buf, a), a);
    } else {
        r->period_query = sql_p50(m, r, "period", a);
        r->gpu_time_query = sql_p50(m, r, "gpu_time", a);
        FILE *f = open_memstream(&buf, &len);
        if (!f) return false;
        fputs("SELECT avg(1 - min(busy_frac_steady, 1.0)) FROM device WHERE device IN (", f);
        put_devices(f, m, owner, r, ", ");
        fputs(")", f);
        r->idle_query = sql_of(m, TG_SRC_DEVICE, dev_fields, text_of(f, &buf, a), a);
    }
    return r->period_query && r->gpu_time_query && r->idle_query;
}

/* The straggler comparison over the ranks with a period: one
** rank-straggler result appended to out. */
static bool compare(tg_rank_result *r, size_t n, tg_arena *a, tg_trace_result *out)
{
    tg_straggler_rank *s = malloc(n * sizeof *s);
    tg_rule_result *res = malloc(n * sizeof *res);
    bool ok = s && res;
    size_t k = 0;
    for (size_t i = 0; ok && i < n; i++) {
        if (!(isfinite(r[i].period) && r[i].period > 0)) continue;
        s[k] = (tg_straggler_rank){r[i].period, r[i].gpu_time, r[i].idle, NULL, tg_rank_who(a, &r[i], NULL), a, i};
        ok = s[k++].who != NULL;
    }
    ok = ok && tg_straggler_compare(s, k, TG_STRAGGLER_THRESHOLD, TG_STRAGGLER_SEVERITY, res);
    if (ok && k >= 2) {
        tg_rule_result *all = tg_arena_alloc(a, (out->n_results + 1) * sizeof *all);
        ok = all != NULL;
        if (ok) {
            if (out->n_results) memcpy(all, out->results, out->n_results * sizeof *all);
            tg_straggler_keep(&all[out->n_results], res, k, a);
            out->results = all;
            out->n_results++;
        }
    }
    free(s);
    free(res);
    return ok;
}

bool tg_eval_ranks(const tg_model *m, bool straggler, tg_arena *a, tg_trace_result *out)
{
    tg_rank_result *r = NULL;
    ptrdiff_t n = find_ranks(m, &r, a);
    if (n <= 0) return n == 0;
    tg_idmap owner = {0};
    bool ok = owners_of(m, &owner);
    for (ptrdiff_t i = 0; ok && i < n; i++) ok = measure(m, &owner, &r[i]) && queries(m, &owner, &r[i], a);
    tg_idmap_free(&owner);
    if (!ok) return false;
    out->ranks = r;
    out->n_ranks = (size_t)n;
    return !straggler || compare(r, (size_t)n, a, out);
}
