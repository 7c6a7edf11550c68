/*
** Which NVTX ranges are the iterations (docs/iterations.md).
**
** Training jobs mark a step at more than one level: torch.profiler wraps
** each step in `ProfilerStep#N` and the loop's own `train_step` sits inside
** it; a framework's step range wraps a user's. Every range whose name
** matches the pattern is a candidate; per process, the iterations are:
**
**   1. on one thread: the main thread (tid == pid) when it holds
**      candidates, else the thread holding the most (ties: lowest tid);
**   2. the outermost candidates of that thread: a range contained in
**      another candidate of the thread (any name) is not an iteration;
**   3. each marked partial when the capture cut it: a range that never
**      closed, or the first (last) one when it touches the capture's
**      start (end) and is shorter than half the median of the series.
**
** So one marker level per process, whatever names match: the outermost,
** which is the one that spans the whole step. Every candidate is counted
** by (thread, marker, role) for `info` and `metrics`, a marker being the
** range name with each run of digits written N (`ProfilerStep#N`, `step
** N`, `iter_N`), so a step counter in the name is one marker.
**
** Cost: one regexec per distinct name, one sort of the candidates, linear
** sweeps after it.
*/
#include "model_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A candidate range. */
typedef struct cand {
    uint32_t nvtx;             /* index into t->nvtx */
    int32_t pid, tid;
    int32_t marker;            /* id in sel->names */
    int64_t start, end;        /* end: capture end when the range never closed */
    bool open;                 /* never closed */
    bool nested;               /* inside another candidate of its thread */
    int8_t role;               /* TG_MARKER_* once chosen */
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;   /* the container first */
    return (x->nvtx > y->nvtx) - (x->nvtx < y->nvtx);
}

static bool is_range(const tg_nvtx *r)
{
    return (r->event_type == 59 || r->event_type == 60) && r->name >= 0 &&
           r->start != TG_NULL_I64 && (r->end == TG_NULL_I64 || r->end >= r->start);
}

/* The marker of a range name: each run of digits becomes N. */
static int32_t marker_of(tg_strpool *names, const char *s, size_t len)
{
    char small[256] = "";
    char *buf = len < sizeof small ? small : malloc(len + 1);
    if (!buf) return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        bool digit = s[i] >= '0' && s[i] <= '9';
        if (!digit) buf[n++] = s[i];
        else if (i == 0 || !(s[i - 1] >= '0' && s[i - 1] <= '9')) buf[n++] = 'N';
    }
    int32_t id = tg_strpool_intern(names, buf, n);
    if (buf != small) free(buf);
    return id;
}

/* Candidates: every matching range, its marker interned. A name the
** matcher could not decide (a limit of docs/limits.md) stops it: *limit_len
** says its length. */
static bool collect(const tg_trace *t, const tg_regex *re, tg_iter_selection *sel, cand **out, size_t *n_out,
                    size_t *limit_len)
{
    int32_t n_strings = tg_strpool_count(t->strings);
    int32_t *marker = malloc((n_strings > 0 ? (size_t)n_strings : 1) * sizeof *marker);
    if (!marker) return false;
    for (int32_t i = 0; i < n_strings; i++) marker[i] = -2;   /* not tested yet */
    cand *c = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    int64_t capture_end = t->last_ns;
    uint64_t budget = TG_REGEX_STEP_BUDGET;   /* for all the trace's names */
    for (size_t i = 0; i < t->n_nvtx && ok; i++) {
        const tg_nvtx *r = &t->nvtx[i];
        if (!is_range(r) || r->name >= n_strings) continue;
        if (marker[r->name] == -2) {
            const char *s = tg_trace_str(t, r->name);
            size_t len = tg_strpool_len(t->strings, r->name);
            int hit = tg_regex_match(re, s, len, &budget);
            if (hit < 0) {
                *limit_len = len;
                ok = false;
                break;
            }
            if (!hit) {
                marker[r->name] = -1;
            } else if ((marker[r->name] = marker_of(sel->names, s, tg_strpool_len(t->strings, r->name))) < 0) {
                ok = false;                /* out of memory interning the marker */
                break;
            }
        }
        if (marker[r->name] < 0) continue;
        bool open = r->end == TG_NULL_I64;
        cand x = {.nvtx = (uint32_t)i, .pid = r->pid, .tid = r->tid, .marker = marker[r->name],
                  .start = r->start, .open = open,
                  .end = !open ? r->end : capture_end != TG_NULL_I64 && capture_end > r->start ? capture_end : r->start};
        ok = i <= UINT32_MAX && TG_PUSH(c, n, cap, x);
    }
    free(marker);
    if (!ok) {
        free(c);
        return false;
    }
    if (n > 1) qsort(c, n, sizeof *c, cmp_cand);
    *out = c;
    *n_out = n;
    return true;
}

/* The thread of process slice c[a..b) whose ranges are the iterations:
** the main thread when it has candidates, else the one with the most. */
static void choose_thread(const cand *c, size_t a, size_t b, int32_t *tid, size_t *ta, size_t *tb)
{
    size_t best_a = a, best_n = 0;
    bool best_main = false;
    for (size_t i = a; i < b;) {
        size_t j = i;
        while (j < b && c[j].tid == c[i].tid) j++;
        bool main_thread = c[i].tid == c[i].pid;
        if (main_thread || (!best_main && j - i > best_n)) {
            best_a = i;
            best_n = j - i;
            best_main = main_thread;
        }
        i = j;
    }
    *tid = c[best_a].tid;
    *ta = best_a;
    *tb = best_a + best_n;
}

/* Mark every candidate of thread slice c[a..b) that lies inside an earlier
** one (sorted by start, the longer first on ties). */
static void mark_nested(cand *c, size_t a, size_t b)
{
    int64_t max_end = TG_NULL_I64;
    for (size_t i = a; i < b; i++) {
        c[i].nested = max_end != TG_NULL_I64 && c[i].end <= max_end;
        if (max_end == TG_NULL_I64 || c[i].end > max_end) max_end = c[i].end;
    }
}

static int cmp_role(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->role != y->role) return x->role - y->role;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return (x->marker > y->marker) - (x->marker < y->marker);
}

static int cmp_count(const void *a, const void *b)
{
    const tg_marker_count *x = a, *y = b;
    if (x->role != y->role) return x->role - y->role;
    if (x->ranges != y->ranges) return x->ranges > y->ranges ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return (x->marker > y->marker) - (x->marker < y->marker);
}

/* Count the candidates of process slice c[a..b) by (role, thread, marker)
** into sel->counts: the iterations' markers first, then the nested ones,
** then other threads', each by decreasing count. Reorders c[a..b). */
static bool count_roles(tg_iter_selection *sel, size_t *cap, cand *c, size_t a, size_t b)
{
    qsort(c + a, b - a, sizeof *c, cmp_role);
    size_t first = sel->n_counts;
    for (size_t i = a; i < b;) {
        size_t j = i;
        while (j < b && cmp_role(&c[i], &c[j]) == 0) j++;
        tg_marker_count mc = {.pid = c[i].pid, .tid = c[i].tid, .marker = c[i].marker,
                              .role = c[i].role, .ranges = (int64_t)(j - i)};
        if (!TG_PUSH(sel->counts, sel->n_counts, *cap, mc)) return false;
        i = j;
    }
    qsort(sel->counts + first, sel->n_counts - first, sizeof *sel->counts, cmp_count);
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Partial iterations of one series (picks[a..b), in start order): the
** open ones, and a first or last one that touches the capture's edge and
** is shorter than half the median duration of the closed ones. */
static bool mark_partial(const tg_trace *t, tg_iter_pick *p, size_t a, size_t b)
{
    size_t n = 0;
    for (size_t i = a; i < b; i++) n += !p[i].open;
    if (n >= 3) {
        int64_t *d = malloc(n * sizeof *d);
        if (!d) return false;
        n = 0;
        for (size_t i = a; i < b; i++)
            if (!p[i].open) d[n++] = p[i].end - p[i].start;
        qsort(d, n, sizeof *d, cmp_i64);
        int64_t half_median = d[n / 2] / 2;
        free(d);
        const tg_iter_pick *first = &p[a], *last = &p[b - 1];
        if (t->first_ns != TG_NULL_I64 && first->start <= t->first_ns &&
            first->end - first->start < half_median)
            p[a].partial = 1;
        if (t->last_ns != TG_NULL_I64 && last->end >= t->last_ns && last->end - last->start < half_median)
            p[b - 1].partial = 1;
    }
    for (size_t i = a; i < b; i++)
        if (p[i].open) p[i].partial = 1;
    return true;
}

/* Choose the series of process slice c[a..b). */
static bool choose(const tg_trace *t, tg_iter_selection *sel, cand *c, size_t a, size_t b,
                   size_t *cap_counts, size_t *cap_picks, size_t *cap_series)
{
    int32_t tid;
    size_t ta, tb;
    choose_thread(c, a, b, &tid, &ta, &tb);
    mark_nested(c, ta, tb);
    tg_iter_series s = {.pid = c[a].pid, .tid = tid, .main_thread = tid == c[a].pid,
                        .first_count = sel->n_counts};
    size_t first_pick = sel->n_picks;
    for (size_t i = a; i < b; i++) {
        c[i].role = i < ta || i >= tb ? TG_MARKER_OTHER_THREAD
                  : c[i].nested ? TG_MARKER_NESTED : TG_MARKER_ITERATIONS;
        if (c[i].role != TG_MARKER_ITERATIONS) continue;
        tg_iter_pick p = {.nvtx = c[i].nvtx, .marker = c[i].marker, .start = c[i].start,
                          .end = c[i].end, .open = c[i].open};
        if (!TG_PUSH(sel->picks, sel->n_picks, *cap_picks, p)) return false;
    }
    if (!count_roles(sel, cap_counts, c, a, b)) return false;
    s.n_counts = sel->n_counts - s.first_count;
    s.iterations = (int64_t)(sel->n_picks - first_pick);
    if (!mark_partial(t, sel->picks, first_pick, sel->n_picks)) return false;
    for (size_t i = first_pick; i < sel->n_picks; i++) s.partial += sel->picks[i].partial;
    return TG_PUSH(sel->series, sel->n_series, *cap_series, s);
}

void tg_iter_selection_free(tg_iter_selection *sel)
{
    if (!sel) return;
    free(sel->pattern);
    tg_strpool_free(sel->names);
    free(sel->counts);
    free(sel->series);
    free(sel->picks);
    free(sel);
}

tg_iter_selection *tg_model_select_iterations(const tg_trace *t, const char *pattern, tg_diag *diag)
{
    if (!pattern) pattern = TG_DEFAULT_ITERATION_PATTERN;
    tg_regex *re = tg_model_compile_pattern(pattern, diag);
    if (!re) return NULL;
    tg_iter_selection *sel = calloc(1, sizeof *sel);
    cand *c = NULL;
    size_t n = 0, cap_counts = 0, cap_picks = 0, cap_series = 0, limit_len = SIZE_MAX;
    bool ok = sel && (sel->pattern = strdup(pattern)) && (sel->names = tg_strpool_new()) &&
              collect(t, re, sel, &c, &n, &limit_len);
    tg_regex_free(re);
    if (limit_len != SIZE_MAX) {
        free(c);
        tg_iter_selection_free(sel);
        tg_diag_error(diag, TG_EINTERNAL, "the iteration pattern \"%.80s%s\" hit a limit of the matcher on an "
                      "NVTX range name of %zu bytes (docs/limits.md), so the iterations cannot be found",
                      pattern, strlen(pattern) > 80 ? "..." : "", limit_len);
        return NULL;
    }
    for (size_t a = 0; ok && a < n;) {
        size_t b = a;
        while (b < n && c[b].pid == c[a].pid) b++;
        ok = choose(t, sel, c, a, b, &cap_counts, &cap_picks, &cap_series);
        a = b;
    }
    free(c);
    if (!ok) {
        tg_iter_selection_free(sel);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while finding the iterations");
        return NULL;
    }
    return sel;
}

const char *tg_iter_marker_name(const tg_iter_selection *sel, int32_t marker)
{
    return tg_strpool_get(sel->names, marker);
}

bool tg_iter_selection_has_marker(const tg_iter_selection *sel, const char *name)
{
    if (!sel) return false;
    tg_strpool *scratch = tg_strpool_new();
    if (!scratch) return false;
    int32_t id = marker_of(scratch, name, strlen(name));
    const char *marker = tg_strpool_get(scratch, id);
    bool found = marker && tg_strpool_find(sel->names, marker, strlen(marker)) >= 0;
    tg_strpool_free(scratch);
    return found;
}

const char *tg_marker_role_name(int role)
{
    static const char *const names[] = {
#define X(id, name, doc) name,
        TG_MARKER_ROLES(X)
#undef X
    };
    return role >= 0 && (size_t)role < sizeof names / sizeof *names ? names[role] : "unknown";
}

/* Distinct markers of the iterations of every process, sorted, joined by
** ", ". malloc'd; "" without iterations; NULL when out of memory. */
char *tg_iter_selection_markers(const tg_iter_selection *sel)
{
    size_t n = 0, len = 1;
    if (!sel) return calloc(1, 1);
    const char **names = malloc((sel->n_counts ? sel->n_counts : 1) * sizeof *names);
    if (!names) return NULL;
    for (size_t i = 0; i < sel->n_counts; i++) {
        if (sel->counts[i].role != TG_MARKER_ITERATIONS) continue;
        const char *s = tg_iter_marker_name(sel, sel->counts[i].marker);
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++) seen = strcmp(names[k], s) == 0;
        if (seen) continue;
        names[n++] = s;
        len += strlen(s) + 2;
    }
    for (size_t i = 1; i < n; i++)      /* insertion sort: a handful of names */
        for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
            const char *x = names[k];
            names[k] = names[k - 1];
            names[k - 1] = x;
        }
    size_t shown = n > TG_MARKERS_LISTED ? TG_MARKERS_LISTED : n;
    char *out = malloc(len + 48);
    if (out) {
        out[0] = 0;
        for (size_t i = 0; i < shown; i++) {
            if (i) strcat(out, ", ");
            strcat(out, names[i]);
        }
        if (shown < n) sprintf(out + strlen(out), " and %zu more", n - shown);
    }
    free(names);
    return out;
}
