/*
** The iteration source (docs/iterations.md) and the steady state built on it.
**
** Iterations are the NVTX ranges model_marker.c chooses among those whose
** name matches the iteration pattern (one marker level per process, see
** docs/iterations.md), numbered per process in start order. With more than
** 10 in a process, its first 5 are warmup; "steady" means inside an
** iteration that is neither warmup nor partial (cut by the capture's
** window). GPU work belongs to the iteration
** whose host range contains the start of its launching call (same process),
** and API calls to the one containing their own start.
**
** period: completion of an iteration (end of the last GPU op launched in
** it) minus the completion of the previous iteration of the same phase.
** Host ranges are never used (they are short while the launch queue fills
** and long when it blocks): an iteration that launched no GPU work the
** capture recorded has no completion, so it and the next one have no
** period, and a rule reading periods of a capture without GPU work reports
** missing data (eval.c). It is null for the first
** iteration of a process, for partial ones and the one after them, and
** for its first steady iteration: a period that
** spans the warmup/steady boundary would mix the two phases (the reference
** metrics, too, count periods between consecutive steady iterations only).
*/
#include "model_int.h"

#include <stdlib.h>
#include <string.h>


/* The chosen ranges as m->iterations (sorted by pid, start). */
static bool collect(tg_model *m)
{
    tg_trace *t = m->trace;
    const tg_iter_selection *sel = m->selection;
    size_t n = sel->n_picks;
    m->iterations = calloc(n ? n : 1, sizeof *m->iterations);
    if (!m->iterations) return false;
    for (size_t i = 0; i < n; i++) {
        const tg_iter_pick *p = &sel->picks[i];
        const tg_nvtx *r = &t->nvtx[p->nvtx];
        const char *marker = tg_iter_marker_name(sel, p->marker);
        int32_t marker_id = tg_strpool_intern(t->strings, marker, strlen(marker));
        if (marker_id < 0) return false;
        m->iterations[i] = (tg_iteration){
            .rowid = r->rowid, .name = r->name, .marker = marker_id, .pid = r->pid, .tid = r->tid,
            .start = p->start, .end = p->end, .duration = p->end - p->start, .partial = p->partial,
            .period = TG_NULL_I64, .gpu_end = TG_NULL_I64, .gpu_span = TG_NULL_I64,
        };
    }
    m->n_iterations = n;
    return true;
}

/* Number the iterations per process, mark warmup, build the pid slices. */
static bool slice(tg_model *m)
{
    tg_model_priv *p = tg_model_priv_of(m);
    size_t n = m->n_iterations, cap = 0;
    p->max_end = malloc((n ? n : 1) * sizeof *p->max_end);
    if (!p->max_end) return false;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && m->iterations[j].pid == m->iterations[i].pid) j++;
        tg_pid_slice s = {.pid = m->iterations[i].pid, .first = i, .count = j - i,
                          .first_steady_start = TG_NULL_I64};
        for (size_t k = i; k < j; k++) {
            tg_iteration *it = &m->iterations[k];
            it->index = (int32_t)(k - i);
            it->warmup = s.count >= TG_WARMUP_MIN_ITERATIONS && it->index < TG_WARMUP_COUNT;
            it->steady = !it->warmup && !it->partial;
            if (it->steady && s.first_steady_start == TG_NULL_I64) s.first_steady_start = it->start;
            p->max_end[k] = k > i && p->max_end[k - 1] > it->end ? p->max_end[k - 1] : it->end;
        }
        if (!TG_PUSH(p->slices, p->n_slices, cap, s)) return false;
        i = j;
    }
    return true;
}

/* Index into p->slices of process pid's slice, or -1. */
static int64_t slice_of(const tg_model_priv *p, int32_t pid)
{
    size_t lo = 0, hi = p->n_slices;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->slices[mid].pid < pid) lo = mid + 1; else hi = mid;
    }
    return lo < p->n_slices && p->slices[lo].pid == pid ? (int64_t)lo : -1;
}

/* The iteration of slice s containing t (see tg_model_finder_find).
** *a is the number of the slice's iterations starting at or before the
** previous t: rows come in start order, so it mostly moves a step or two,
** and only a long way triggers a binary search. */
#define CURSOR_STEPS 8

static int64_t find_in_slice(const tg_model *m, const tg_pid_slice *s, size_t *a, int64_t t)
{
    const tg_iteration *it = m->iterations + s->first;
    size_t at = *a, steps = 0;
    while (at < s->count && it[at].start <= t && steps++ < CURSOR_STEPS) at++;
    while (at > 0 && it[at - 1].start > t && steps++ < CURSOR_STEPS) at--;
    if ((at < s->count && it[at].start <= t) || (at > 0 && it[at - 1].start > t)) {
        size_t lo = 0, hi = s->count;      /* last iteration starting at or before t */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (it[mid].start <= t) lo = mid + 1; else hi = mid;
        }
        at = lo;
    }
    *a = at;
    /* walk back only while an earlier range can still contain t (nesting) */
    const int64_t *max_end = tg_model_cpriv_of(m)->max_end + s->first;
    for (size_t k = at; k-- > 0;) {
        if (max_end[k] < t) break;
        if (it[k].end >= t) return (int64_t)(s->first + k);
    }
    return -1;
}

const tg_iteration *tg_model_iteration_at(const tg_model *m, int32_t pid, int32_t index)
{
    const tg_model_priv *p = tg_model_cpriv_of(m);
    int64_t s = slice_of(p, pid);
    if (s < 0 || index < 0 || (size_t)index >= p->slices[s].count) return NULL;
    return &m->iterations[p->slices[s].first + (size_t)index];
}

bool tg_model_finder_init(tg_iter_finder *f, const tg_model *m)
{
    size_t n = tg_model_cpriv_of(m)->n_slices;
    *f = (tg_iter_finder){.m = m, .at = calloc(n ? n : 1, sizeof *f->at), .last_slice = -2};
    return f->at != NULL;
}

void tg_model_finder_free(tg_iter_finder *f)
{
    free(f->at);
    f->at = NULL;
}

int64_t tg_model_finder_find(tg_iter_finder *f, int32_t pid, int64_t t)
{
    const tg_model_priv *p = tg_model_cpriv_of(f->m);
    if (t == TG_NULL_I64 || p->n_slices == 0) return -1;
    if (f->last_slice == -2 || pid != f->last_pid) {
        f->last_pid = pid;
        f->last_slice = slice_of(p, pid);
    }
    if (f->last_slice < 0) return -1;
    return find_in_slice(f->m, &p->slices[f->last_slice], &f->at[f->last_slice], t);
}

void tg_model_attribute_op(tg_model *m, int64_t i, int64_t start, int64_t end, bool kernel)
{
    tg_iteration *it = &m->iterations[i];
    int64_t *gpu_first = tg_model_priv_of(m)->gpu_first;
    if (start != TG_NULL_I64 && end != TG_NULL_I64) {
        it->gpu_time = tg_add_sat(it->gpu_time, end - start);
        if (it->gpu_end == TG_NULL_I64 || end > it->gpu_end) it->gpu_end = end;
        if (gpu_first[i] == TG_NULL_I64 || start < gpu_first[i]) gpu_first[i] = start;
    }
    if (kernel) it->kernels++;
}

void tg_model_mark_row(const tg_model *m, int64_t i, int32_t *iteration, int8_t *steady)
{
    *iteration = i >= 0 ? m->iterations[i].index : -1;
    *steady = m->has_iterations ? (i >= 0 && m->iterations[i].steady) : 1;
}

void tg_model_reset_attribution(tg_model *m)
{
    tg_model_priv *p = tg_model_priv_of(m);
    for (size_t i = 0; i < m->n_iterations; i++) {
        tg_iteration *it = &m->iterations[i];
        it->gpu_end = it->gpu_span = TG_NULL_I64;
        it->gpu_time = 0;
        it->kernels = it->blocking_calls = it->launches_lost = 0;
        p->gpu_first[i] = TG_NULL_I64;
    }
    p->api_calls = p->blocking_calls = p->blocked_time = 0;
    memset(p->op_calls, 0, sizeof p->op_calls);
    memset(p->launch_calls, 0, sizeof p->launch_calls);
    memset(p->launch_unmatched, 0, sizeof p->launch_unmatched);
    memset(p->launch_pending, 0, sizeof p->launch_pending);
    p->api_first = p->api_last = TG_NULL_I64;
    p->unmatched_first = p->unmatched_last = TG_NULL_I64;
}

/* The iteration of every NVTX row (its own start, its own process). */
static bool nvtx_iterations(tg_model *m)
{
    tg_trace *t = m->trace;
    tg_iter_finder f;
    if (!tg_model_finder_init(&f, m)) return false;
    for (size_t i = 0; i < t->n_nvtx; i++) {
        tg_nvtx *r = &t->nvtx[i];
        int64_t it = tg_model_finder_find(&f, r->pid, r->start);
        r->iteration = it >= 0 ? m->iterations[it].index : -1;
    }
    tg_model_finder_free(&f);
    return true;
}

static void periods_and_window(tg_model *m)
{
    const tg_model_priv *p = tg_model_cpriv_of(m);
    for (size_t s = 0; s < p->n_slices; s++) {
        const tg_iteration *prev = NULL;
        for (size_t k = 0; k < p->slices[s].count; k++) {
            tg_iteration *it = &m->iterations[p->slices[s].first + k];
            if (prev && prev->warmup == it->warmup && !prev->partial && !it->partial &&
                it->gpu_end != TG_NULL_I64 && prev->gpu_end != TG_NULL_I64)
                it->period = it->gpu_end - prev->gpu_end;
            prev = it;
        }
    }
    const tg_trace *t = m->trace;
    m->steady_start = t->first_ns != TG_NULL_I64 ? t->first_ns : 0;
    m->steady_end = t->last_ns != TG_NULL_I64 ? t->last_ns : m->steady_start;
    bool any = false;
    for (size_t i = 0; i < m->n_iterations; i++) {
        const tg_iteration *it = &m->iterations[i];
        if (!it->steady) continue;
        if (!any || it->start < m->steady_start) m->steady_start = it->start;
        if (!any || it->end > m->steady_end) m->steady_end = it->end;
        any = true;
    }
}

tg_regex *tg_model_compile_pattern(const char *pattern, tg_diag *diag)
{
    char why[256];
    tg_regex *re = tg_regex_compile(pattern, why, sizeof why);
    if (!re)
        tg_diag_error(diag, TG_EUSAGE, "%s iteration pattern \"%.80s%s\" %s",
                      tg_regex_refuse(pattern) ? "the" : "invalid", pattern, strlen(pattern) > 80 ? "..." : "", why);
    return re;
}

bool tg_model_pattern_ok(const char *pattern, tg_diag *diag)
{
    tg_regex *re = tg_model_compile_pattern(pattern ? pattern : TG_DEFAULT_ITERATION_PATTERN, diag);
    bool ok = re != NULL;
    tg_regex_free(re);
    return ok;
}

bool tg_model_build_iterations(tg_model *m, const tg_model_params *params, tg_diag *diag)
{
    m->selection = tg_model_select_iterations(m->trace, params->iteration_pattern, diag);
    if (!m->selection) return false;
    bool ok = collect(m);
    if (ok) {
        m->has_iterations = m->n_iterations > 0;
        tg_model_priv *p = tg_model_priv_of(m);
        p->gpu_first = malloc((m->n_iterations ? m->n_iterations : 1) * sizeof *p->gpu_first);
        ok = p->gpu_first && slice(m) && nvtx_iterations(m);
        if (ok) tg_model_reset_attribution(m);
    }
    if (!ok) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while building the trace model");
        return false;
    }
    return true;
}

bool tg_model_finish_iterations(tg_model *m)
{
    const int64_t *gpu_first = tg_model_priv_of(m)->gpu_first;
    for (size_t i = 0; i < m->n_iterations; i++)
        if (gpu_first[i] != TG_NULL_I64) m->iterations[i].gpu_span = m->iterations[i].gpu_end - gpu_first[i];
    periods_and_window(m);
    return true;
}

void tg_model_free_iterations(tg_model *m)
{
    tg_model_priv *p = tg_model_priv_of(m);
    free(m->iterations);
    tg_iter_selection_free(m->selection);
    m->selection = NULL;
    free(p->slices);
    free(p->max_end);
    free(p->gpu_first);
    m->iterations = NULL;
    p->slices = NULL;
    p->max_end = NULL;
    p->gpu_first = NULL;
}

int64_t tg_model_first_steady_start(const tg_model *m, int32_t pid)
{
    const tg_model_priv *p = tg_model_cpriv_of(m);
    size_t lo = 0, hi = p->n_slices;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->slices[mid].pid < pid) lo = mid + 1; else hi = mid;
    }
    if (lo < p->n_slices && p->slices[lo].pid == pid && p->slices[lo].first_steady_start != TG_NULL_I64)
        return p->slices[lo].first_steady_start;
    return m->has_iterations ? m->steady_start : TG_NULL_I64;
}
