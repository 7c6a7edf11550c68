/*
** Change points of a series: E-divisive means (Matteson & James 2014, the
** method of Apache Otava and its predecessor hunter) with a permutation
** test, as docs/regressions.md "Change points" describes it.
**
** The series is cut into segments, one cut at a time. A segment's best
** split is the one with the largest energy statistic (alpha = 1)
**
**   q(tau) = m k / (m + k) * (2/(m k) sum |x_i - y_j| - sum_{i<l} |x_i - x_l| / C(m,2)
**                                                    - sum_{j<l} |y_j - y_l| / C(k,2))
**
** over splits leaving at least min_segment points on either side. The best
** split over all segments is tested: the points of every segment are
** permuted within it, and the split counts as a change point when the
** largest statistic of the permuted series reaches the observed one in at
** most a fraction p of R permutations (p-value (1 + #exceeding) / (1 + R)).
** An accepted cut makes two segments and the search goes on. This is ecp's
** e.divisive and Otava's permutation tester; the test's null distribution
** is that of the maximum over every segment's splits, so one test is one
** decision at level p however many segments there are.
**
** x against the whole rest of its segment misses a block of changed points
** with unchanged ones on both sides (a regression fixed later: the runs
** after it dilute y). ecp and Otava also maximise over where y ends, at
** O(n^2) per permutation; here, when the whole-rest statistic finds
** nothing more, the same search and test run once more with the statistic
** of the segment's windows: its halves, quarters, ... at either end, split
** as above. The search ends when neither finds a change point.
**
** Cost. Every permutation scores every split of a segment, so the score of
** all splits is one O(n log n) pass, not O(n^2) per split: with the points
** ranked once per segment (a permutation only reorders them), a Fenwick
** tree over ranks gives a_t = sum_{i<t} |x_t - x_i| as points are added in
** order; the left side's within-sum is the running sum of a_t, the cross
** term moves by D_t - 2 a_t (D_t: the sum of the point's distances to the
** whole segment, fixed under permutation), and the right's within-sum is
** the segment's total less both. A window has no fixed D_t: a forward pass
** gives its left within-sums, a backward one its right within-sums (the
** windows of a segment cost about 4 such passes together). The test stops
** as soon as its answer is settled (Besag & Clifford 1991): after the
** exceedance that makes p <= the level impossible, which under no change
** comes within a few permutations; and a permuted pass stops at the first
** split that reaches the observed statistic. Accepting a split takes all
** R permutations.
**
** Most of an accepted test's permutations fall far below the observed
** statistic, and an exact scan of each is the whole cost of `history show`
** and `check --history` over long histories (issue 30 item 8). So before
** scanning a permuted segment, the whole-rest test bounds its largest
** statistic from above at a fraction of a scan's cost (cp_bound, which
** says how: 8 counters per point, no tree); the scan runs only when the
** bound does not settle that the permutation stays below the observed
** one. The permutations drawn, their order and every decision are the
** same as with a scan of each: the bound only skips scans whose answer it
** proves. The searches of a workload's metrics run on every core
** (tg_changepoints_batch).
**
** Deterministic: the permutations come from splitmix64 seeded with
** opts.seed, so a series gets the same answer on every run.
*/
#include "changepoint.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/stats.h"

/* The two statistics of a segment: its splits against the whole rest, and
** the splits of its windows (the halves, quarters, ... at either end). */
enum { CP_WHOLE, CP_WINDOWS, CP_STATS };

/* One segment [lo, hi) of the (finite) series and its best splits. */
typedef struct cp_seg {
    size_t lo, hi;
    size_t best[CP_STATS];  /* the first point after its best split by each
                               statistic; 0: no split fits */
    double q[CP_STATS];     /* the statistic there */
    double total;           /* sum over pairs of the segment of |x_i - x_j| */
} cp_seg;

/* A node of the Fenwick tree: how many points of a range of ranks were
** added, and the sum of their values (one cache line holds both). */
typedef struct cp_node {
    double sum;
    size_t count;
} cp_node;

typedef struct cp_pair {
    double v;
    size_t i;
} cp_pair;

/* The search's state. Each segment owns the slice [lo, hi) of the arrays:
** rank[lo + i], the rank in the segment of the point at position i of its
** current order, and by rank r, value[lo + r], its value less the
** segment's minimum (so the sums are of distances, not of large offsets
** that cancel) and dist[lo + r], its distance sum D. Permutations shuffle
** the ranks only; x is never shuffled and restores a slice when its
** segment is cut. inv[j] = 1 / j spares the scan its divisions. */
typedef struct cp_state {
    const double *x;
    size_t n, min_seg;
    double *value, *dist, *inv;
    double *within;     /* a window's left within-sums (n + 1) */
    uint32_t *rank;
    cp_node *tree;      /* Fenwick tree over ranks, n + 1 nodes */
    cp_pair *pairs;     /* sorting scratch */
    cp_seg *segs;       /* in order; at most n / min_seg + 1 */
    size_t n_segs;
    uint64_t rng;
    tg_cp_work *work;
} cp_state;

/* Uniform in [0, bound), without modulo bias (Lemire 2019). */
static size_t cp_below(uint64_t *state, size_t bound)
{
    unsigned __int128 m = (unsigned __int128)tg_cp_random(state) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t threshold = -(uint64_t)bound % bound;
        while (low < threshold) {
            m = (unsigned __int128)tg_cp_random(state) * bound;
            low = (uint64_t)m;
        }
    }
    return (size_t)(m >> 64);
}

static int cp_pair_cmp(const void *a, const void *b)
{
    const cp_pair *p = a, *q = b;
    if (p->v != q->v) return p->v < q->v ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

static bool cp_splittable(const cp_state *s, const cp_seg *g)
{
    return g->hi - g->lo >= 2 * s->min_seg;
}

/* Add the point of rank r (value v) to the tree of a segment of len, and
** return the sum of its distances to the points added before it (count of
** them, their sum). */
static double cp_add(cp_node *tree, size_t len, size_t r, double v, size_t count, double sum)
{
    size_t below = 0;
    double sum_below = 0;
    for (size_t k = r; k > 0; k &= k - 1) {
        below += tree[k].count;
        sum_below += tree[k].sum;
    }
    for (size_t k = r + 1; k <= len; k += k & -k) {
        tree[k].count++;
        tree[k].sum += v;
    }
    return v * (double)below - sum_below + (sum - sum_below) - v * (double)(count - below);
}

/* The largest statistic over the splits of g in the slice's current order,
** and where (*at, the first point after the split); stops at the first split
** reaching stop_at. Ties keep the first split. */
static double cp_scan(cp_state *s, const cp_seg *g, double stop_at, size_t *at)
{
    size_t len = g->hi - g->lo, m = s->min_seg;
    const double *value = s->value + g->lo, *dist = s->dist + g->lo, *inv = s->inv;
    const uint32_t *rank = s->rank + g->lo;
    cp_node *tree = s->tree;
    memset(tree, 0, (len + 1) * sizeof *tree);
    /* q is compared without its factor 2 / len */
    double scale = 2.0 / (double)len, stop = stop_at / scale;
    double within_left = 0, cross = 0, sum = 0, best = -INFINITY;
    size_t best_at = 0;
    if (s->work) s->work->scans++;
    for (size_t t = 0; t + m < len; t++) {
        size_t r = rank[t];
        double v = value[r], a = cp_add(tree, len, r, v, t, sum);
        sum += v;
        within_left += a;
        cross += dist[r] - 2 * a;
        size_t left = t + 1, right = len - left;
        if (left < m) continue;
        double within_right = g->total - within_left - cross;
        /* inv[0] = 0: a side of one point has no pairs */
        double q = cross - (double)right * within_left * inv[left - 1] - (double)left * within_right * inv[right - 1];
        if (q > best) {
            best = q;
            best_at = g->lo + left;
            if (q >= stop) break;
        }
    }
    *at = best_at;
    return best * scale;
}

/* The largest statistic over the splits of the window [a, b) of g (offsets
** into its slice, current order), as cp_scan; where in *at. The window has
** no fixed distance sums, so it takes two passes: forward for the left
** side's within-sums, backward for the right side's, the statistic being
** scored as the backward pass reaches each split. */
static double cp_scan_window(cp_state *s, const cp_seg *g, size_t a, size_t b, double stop, size_t *at)
{
    size_t len = g->hi - g->lo, w = b - a, m = s->min_seg;
    const double *value = s->value + g->lo, *inv = s->inv;
    const uint32_t *rank = s->rank + g->lo;
    double *within = s->within, sum = 0;
    memset(s->tree, 0, (len + 1) * sizeof *s->tree);
    within[0] = 0;
    for (size_t t = a; t < b; t++) {
        double v = value[rank[t]];
        within[t - a + 1] = within[t - a] + cp_add(s->tree, len, rank[t], v, t - a, sum);
        sum += v;
    }
    double total = within[w], right_within = 0, best = -INFINITY;
    size_t best_at = 0;
    memset(s->tree, 0, (len + 1) * sizeof *s->tree);
    sum = 0;
    for (size_t t = b; t-- > a + m;) {
        double v = value[rank[t]];
        right_within += cp_add(s->tree, len, rank[t], v, b - 1 - t, sum);
        sum += v;
        size_t left = t - a, right = b - t;
        if (right < m || left < m) continue;
        double cross = total - within[left] - right_within;
        double q = cross - (double)right * within[left] * inv[left - 1] - (double)left * right_within * inv[right - 1];
        q *= 2.0 / (double)w;
        if (q > best) {
            best = q;
            best_at = g->lo + t;
            if (q >= stop) break;
        }
    }
    *at = best_at;
    return best;
}

/* The largest statistic over the windows of g: [0, L) and [len - L, len)
** for L = len / 2, len / 4, ... while a window holds two minimum segments.
** Scored where a regression that was later fixed dilutes the whole rest
** (docs/regressions.md, "Change points"). */
static double cp_scan_windows(cp_state *s, const cp_seg *g, double stop, size_t *at)
{
    size_t len = g->hi - g->lo, where;
    double best = -INFINITY;
    *at = 0;
    if (s->work) s->work->scans++;
    for (size_t w = len / 2; w >= 2 * s->min_seg && best < stop; w /= 2)
        for (int end = 0; end < 2 && best < stop; end++) {
            double q = end ? cp_scan_window(s, g, len - w, len, stop, &where)
                           : cp_scan_window(s, g, 0, w, stop, &where);
            if (q > best) best = q, *at = where;
        }
    return best;
}

static double cp_stat(cp_state *s, const cp_seg *g, int stat, double stop, size_t *at)
{
    return stat == CP_WHOLE ? cp_scan(s, g, stop, at) : cp_scan_windows(s, g, stop, at);
}

/* Fill g's slice from x in series order (ranks, distance sums, the total)
** and find its best splits. */
static void cp_prepare(cp_state *s, cp_seg *g)
{
    size_t len = g->hi - g->lo;
    for (int k = 0; k < CP_STATS; k++) g->best[k] = 0, g->q[k] = -INFINITY;
    g->total = 0;
    if (len == 0) return;
    for (size_t i = 0; i < len; i++) s->pairs[i] = (cp_pair){s->x[g->lo + i], i};
    qsort(s->pairs, len, sizeof *s->pairs, cp_pair_cmp);
    double lowest = s->pairs[0].v, all = 0;
    for (size_t j = 0; j < len; j++) all += s->pairs[j].v - lowest;
    double before = 0;   /* sum of the sorted values below rank j */
    for (size_t j = 0; j < len; j++) {
        double vj = s->pairs[j].v - lowest;
        s->rank[g->lo + s->pairs[j].i] = (uint32_t)j;
        s->value[g->lo + j] = vj;
        s->dist[g->lo + j] = vj * (double)j - before + (all - before - vj) - vj * (double)(len - 1 - j);
        g->total += vj * ((double)j * 2 - (double)(len - 1));
        before += vj;
    }
    /* A constant segment has no change, and its statistic is 0 at every split. */
    if (!cp_splittable(s, g) || s->pairs[len - 1].v == lowest) return;
    for (int k = 0; k < CP_STATS; k++) g->q[k] = cp_stat(s, g, k, INFINITY, &g->best[k]);
}

static void cp_shuffle(cp_state *s, const cp_seg *g)
{
    uint32_t *rank = s->rank + g->lo;
    for (size_t i = g->hi - g->lo; i > 1; i--) {
        size_t b = cp_below(&s->rng, i);
        uint32_t r = rank[i - 1];
        rank[i - 1] = rank[b];
        rank[b] = r;
    }
}

/* Thresholds (ranks) of the bound's walks; a multiple of 4 lanes. 16
** settle more permutations of a change near the noise, 8 do clear ones at
** half the cost: on the bench history (bench/history-scale) history show
** took 0.45 s with 16 and 0.37 s with 8. */
#define CP_BOUND_LEVELS 8
/* Longest segment the walks' int32 arithmetic takes (len^2 < 2^31). */
#define CP_BOUND_MAX_LEN 46340
/* Four int32 lanes (GCC's and Clang's vector extension): the walks of four
** thresholds in one SSE2 register. */
typedef int32_t cp_lanes __attribute__((vector_size(16)));

/* Does no split of g, in the slice's current order, reach the statistic
** `reach`? True only when an upper bound of every split's statistic proves
** it; false when the bound cannot tell (then a scan must).
**
** Why it holds. The statistic q is (m k / len) times the energy distance of
** the two sides with U-statistic within-terms; that is at most the
** V-statistic distance, which in one dimension is 2 * integral (F - G)^2 dt
** for the sides' empirical distribution functions F and G. With
** S(t) = (number of the first m points <= t) - m H(t), H the segment's
** own distribution function, F - G = len S / (m k), so
**
**   q(m) <= 2 len / (m k) * sum_r w_r S_m(r)^2
**
** over the gaps r between consecutive sorted values (width w_r, where
** H = (r + 1) / len). S is walked, for every m at once, at 8 rank
** thresholds b_j only (integers len * S, so the walk is exact); between two
** thresholds |S_m(r)| <= max(A_j, A_j+1) + mu (b_j+1 - b_j) / len, where
** A_j is the walk's largest |S| at b_j over all m and mu = min(m, k) (the
** counts are monotone in r, H linear); and |S| <= mu always. The right
** side's factor is bounded over ranges of mu. A margin of 1e-6 of `reach`
** covers the rounding of the scan this stands in for. */
static bool cp_bound(const cp_state *s, const cp_seg *g, double reach)
{
    size_t len = g->hi - g->lo;
    if (len > CP_BOUND_MAX_LEN || len < 2 * s->min_seg || !(reach > 0)) return false;
    const uint32_t *rank = s->rank + g->lo;
    const double *value = s->value + g->lo;
    enum { L = CP_BOUND_LEVELS, V = CP_BOUND_LEVELS / 4 };
    int32_t n = (int32_t)len;
    cp_lanes thr[V], down[V], d[V], hi[V], lo[V];
    size_t b[L + 2];     /* the thresholds with the ends: b[0] = 0, b[L + 1] = len - 1 */
    b[0] = 0;
    b[L + 1] = len - 1;
    for (int j = 0; j < L; j++) {
        b[j + 1] = (size_t)(j + 1) * (len - 1) / (L + 1);
        thr[j / 4][j % 4] = (int32_t)b[j + 1];
        down[j / 4][j % 4] = (int32_t)b[j + 1] + 1;
    }
    for (int v = 0; v < V; v++) d[v] = hi[v] = lo[v] = (cp_lanes){0};
    /* len * S_m(b_j) for m = 1 .. len, and its extremes: 8 lanes, no
    ** branch (a comparison of lanes gives -1 where true, 0 where not) */
    for (size_t t = 0; t < len; t++) {
        int32_t r = (int32_t)rank[t];
        for (int v = 0; v < V; v++) {
            d[v] += ((thr[v] >= r) & n) - down[v];
            cp_lanes up = d[v] > hi[v], dn = d[v] < lo[v];
            hi[v] = (d[v] & up) | (hi[v] & ~up);
            lo[v] = (d[v] & dn) | (lo[v] & ~dn);
        }
    }
    /* A at each threshold: |S(0)| <= 1 (one point has rank 0), S(len - 1) = 0 */
    double a[L + 2], y[L + 1], w[L + 1], delta[L + 1];
    a[0] = 1;
    a[L + 1] = 0;
    for (int j = 0; j < L; j++) {
        int32_t h = hi[j / 4][j % 4], l = -lo[j / 4][j % 4];
        a[j + 1] = (double)(h > l ? h : l) / (double)len;
    }
    for (int j = 0; j <= L; j++) {
        y[j] = fmax(a[j], a[j + 1]);
        w[j] = value[b[j + 1]] - value[b[j]];
        delta[j] = (double)(b[j + 1] - b[j]) / (double)len;
    }
    double limit = reach * (1 - 1e-6), flen = (double)len;
    /* mu in [mu0, mu1]: 2 len / (mu k) is largest at mu0, the squares at mu1 */
    for (size_t mu0 = s->min_seg, mu1; mu0 <= len / 2; mu0 = mu1 + 1) {
        mu1 = mu0 + mu0 / 4;
        if (mu1 > len / 2) mu1 = len / 2;
        double sum = 0, m1 = (double)mu1;
        for (int j = 0; j <= L; j++) {
            double sj = y[j] + m1 * delta[j];
            if (sj > m1) sj = m1;
            sum += w[j] * sj * sj;
        }
        if (2 * flen / ((double)mu0 * (flen - (double)mu0)) * sum >= limit) return false;
    }
    return true;
}

/* The permutation test of the best split of segment c by statistic stat:
** true when at most `limit` of R permutations reach it, with *p. Stops at
** the exceedance that settles a rejection. */
static bool cp_test(cp_state *s, size_t c, int stat, size_t R, size_t limit, double *p)
{
    /* Permuted statistics equal to the observed one in exact arithmetic
    ** (ties) may differ from it in the last bits: they count as reaching. */
    double observed = s->segs[c].q[stat], reach = observed - 1e-9 * fabs(observed);
    size_t exceed = 0, bounds = 0, bounded = 0;
    if (s->work) s->work->tests++;
    for (size_t r = 0; r < R; r++) {
        if (s->work) s->work->permutations++;
        bool hit = false;
        for (size_t k = 0; k < s->n_segs && !hit; k++) {
            /* the candidate's segment first: the likeliest to reach */
            size_t gi = k == 0 ? c : (k - 1 < c ? k - 1 : k);
            cp_seg *g = &s->segs[gi];
            if (!g->best[stat]) continue;   /* too short, or constant: never reaches */
            size_t at;
            cp_shuffle(s, g);
            /* The whole-rest statistic is bounded first (cp_bound) while the
            ** bound keeps settling permutations: a test where it rarely
            ** does (a change barely above the noise) stops trying after 16
            ** tries, so it costs such a test at most a few scans' time. */
            if (stat == CP_WHOLE && (bounds < 16 || 2 * bounded >= bounds)) {
                bounds++;
                if (cp_bound(s, g, reach)) {
                    bounded++;
                    if (s->work) s->work->bounded++;
                    continue;
                }
            }
            hit = cp_stat(s, g, stat, reach, &at) >= reach;
        }
        if (hit && ++exceed > limit) return false;
    }
    *p = (double)(exceed + 1) / (double)(R + 1);
    return true;
}

/* Cut segment c before point at. */
static void cp_cut(cp_state *s, size_t c, size_t at)
{
    cp_seg old = s->segs[c];
    memmove(&s->segs[c + 2], &s->segs[c + 1], (s->n_segs - c - 1) * sizeof *s->segs);
    s->n_segs++;
    s->segs[c] = (cp_seg){.lo = old.lo, .hi = at};
    s->segs[c + 1] = (cp_seg){.lo = at, .hi = old.hi};
    cp_prepare(s, &s->segs[c]);
    cp_prepare(s, &s->segs[c + 1]);
}

/* The segment with the largest statistic stat among those that split, or
** n_segs. */
static size_t cp_candidate(const cp_state *s, int stat)
{
    size_t c = s->n_segs;
    for (size_t i = 0; i < s->n_segs; i++)
        if (s->segs[i].best[stat] && (c == s->n_segs || s->segs[i].q[stat] > s->segs[c].q[stat])) c = i;
    return c;
}

/* The options in force: zeros and values out of range take the defaults;
** p below 1e-6 is raised to it (a test would need millions of permutations). */
static void cp_resolve(const tg_cp_opts *opts, double *p, size_t *min_seg, size_t *R, size_t *limit, uint64_t *seed)
{
    tg_cp_opts d = TG_CP_OPTS_DEFAULT, o = opts ? *opts : d;
    *p = o.p > 0 && o.p < 1 ? fmax(o.p, 1e-6) : d.p;
    *min_seg = o.min_segment ? o.min_segment : d.min_segment;
    /* Enough permutations that p is reachable: (1 + 0) / (1 + R) <= p;
    ** by default twice that, so that one exceedance is allowed. */
    size_t reachable = (size_t)ceil(1 / *p - 1e-9) - 1;
    *R = o.permutations ? o.permutations : (size_t)ceil(2 / *p - 1e-9) - 1;
    if (*R < reachable) *R = reachable;
    *limit = (size_t)floor(*p * (double)(*R + 1) + 1e-9) - 1;
    *seed = o.seed;
}

static void cp_free(cp_state *s)
{
    free(s->value);
    free(s->dist);
    free(s->inv);
    free(s->within);
    free(s->rank);
    free(s->tree);
    free(s->pairs);
    free(s->segs);
}

/* The median of x[lo, hi), through scratch. */
static double cp_median(const double *x, size_t lo, size_t hi, double *scratch)
{
    memcpy(scratch, x + lo, (hi - lo) * sizeof *x);
    tg_stats_sort(scratch, hi - lo);
    return tg_stats_percentile_sorted(scratch, hi - lo, 0.5);
}

/* The change points of the finite series x[0, n) (indices into it), medians
** included. */
static bool cp_run(const double *x, size_t n, const tg_cp_opts *opts, tg_cp **out, size_t *n_out, tg_cp_work *work)
{
    double p;
    size_t min_seg, R, limit;
    cp_state s = {.x = x, .n = n, .work = work};
    cp_resolve(opts, &p, &min_seg, &R, &limit, &s.rng);
    s.min_seg = min_seg;
    if (work) work->permutations_max = R;
    if (n < 2 * min_seg) return true;
    size_t max_segs = n / min_seg + 1;
    if (n > UINT32_MAX) return false;   /* ranks are 32 bits: 4 billion runs */
    s.value = malloc(n * sizeof *s.value);
    s.dist = malloc(n * sizeof *s.dist);
    s.inv = malloc(n * sizeof *s.inv);
    s.within = malloc((n + 1) * sizeof *s.within);
    s.rank = malloc(n * sizeof *s.rank);
    s.tree = malloc((n + 1) * sizeof *s.tree);
    s.pairs = malloc(n * sizeof *s.pairs);
    s.segs = malloc(max_segs * sizeof *s.segs);
    tg_cp *cps = malloc((max_segs - 1) * sizeof *cps);
    if (!s.value || !s.dist || !s.inv || !s.within || !s.rank || !s.tree || !s.pairs || !s.segs || !cps) {
        cp_free(&s);
        free(cps);
        return false;
    }
    s.inv[0] = 0;
    for (size_t j = 1; j < n; j++) s.inv[j] = 1 / (double)j;
    s.segs[0] = (cp_seg){.lo = 0, .hi = n};
    s.n_segs = 1;
    cp_prepare(&s, &s.segs[0]);
    size_t found = 0;
    /* The whole-rest statistic first; its windows when it finds nothing
    ** more; the search ends when neither does. */
    for (bool cut = true; cut;) {
        cut = false;
        for (int stat = 0; stat < CP_STATS && !cut; stat++) {
            size_t c = cp_candidate(&s, stat);
            double pv;
            if (c == s.n_segs || !(s.segs[c].q[stat] > 0) || !cp_test(&s, c, stat, R, limit, &pv)) continue;
            size_t at = s.segs[c].best[stat];
            cps[found++] = (tg_cp){.index = at, .p = pv};
            cp_cut(&s, c, at);
            cut = true;
        }
    }
    /* Segments are in order: the cut points are their starts after the first. */
    for (size_t i = 0; i < found; i++) {
        for (size_t k = 1; k < s.n_segs; k++)
            if (s.segs[k].lo == cps[i].index) {
                cps[i].before = cp_median(x, s.segs[k - 1].lo, s.segs[k - 1].hi, s.value);
                cps[i].after = cp_median(x, s.segs[k].lo, s.segs[k].hi, s.value);
            }
    }
    cp_free(&s);
    if (found == 0) {
        free(cps);
        return true;
    }
    for (size_t i = 1; i < found; i++)   /* insertion sort by index: few of them */
        for (size_t j = i; j > 0 && cps[j - 1].index > cps[j].index; j--) {
            tg_cp t = cps[j];
            cps[j] = cps[j - 1];
            cps[j - 1] = t;
        }
    *out = cps;
    *n_out = found;
    return true;
}

bool tg_changepoints_counted(const double *x, size_t n, const tg_cp_opts *opts, tg_cp **out, size_t *n_out,
                             tg_cp_work *work)
{
    *out = NULL;
    *n_out = 0;
    if (work) memset(work, 0, sizeof *work);
    /* The caller passes finite values (history.h); a non-finite one is left
    ** out rather than poisoning every sum, and indices map back to x. */
    size_t n_finite = 0;
    for (size_t i = 0; i < n; i++) n_finite += isfinite(x[i]) != 0;
    if (n_finite == n) return cp_run(x, n, opts, out, n_out, work);
    double *finite = malloc((n_finite ? n_finite : 1) * sizeof *finite);
    size_t *where = malloc((n_finite ? n_finite : 1) * sizeof *where);
    bool ok = finite && where;
    if (ok) {
        for (size_t i = 0, k = 0; i < n; i++)
            if (isfinite(x[i])) finite[k] = x[i], where[k++] = i;
        ok = cp_run(finite, n_finite, opts, out, n_out, work);
        for (size_t i = 0; ok && i < *n_out; i++) (*out)[i].index = where[(*out)[i].index];
    }
    free(finite);
    free(where);
    return ok;
}

bool tg_changepoints(const double *x, size_t n, const tg_cp_opts *opts, tg_cp **out, size_t *n_out)
{
    return tg_changepoints_counted(x, n, opts, out, n_out, NULL);
}

/* ------------------------------------------------------------ batches */

/* The 20 metrics of a workload are 20 independent searches: `history
** show` and `check --history` run them on every core (issue 30 item 8),
** workers taking the next job from a shared counter, as the check's
** pipeline takes traces (engine/cli/pipeline.c). */
typedef struct cp_batch {
    tg_cp_job *jobs;
    size_t n;
    const tg_cp_opts *opts;
    atomic_size_t next;
} cp_batch;

static void *cp_worker(void *arg)
{
    cp_batch *b = arg;
    for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
        tg_cp_job *j = &b->jobs[i];
        j->ok = tg_changepoints(j->x, j->n, b->opts, &j->cps, &j->n_cps);
    }
    return NULL;
}

static int cp_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

bool tg_changepoints_batch(tg_cp_job *jobs, size_t n, const tg_cp_opts *opts, int threads)
{
    if (threads <= 0) threads = cp_cores();
    if ((size_t)threads > n) threads = n ? (int)n : 1;
    if (threads > 64) threads = 64;
    cp_batch b = {.jobs = jobs, .n = n, .opts = opts};
    atomic_init(&b.next, 0);
    for (size_t i = 0; i < n; i++) jobs[i].cps = NULL, jobs[i].n_cps = 0, jobs[i].ok = false;
    pthread_t th[64];
    int started = 0;
    for (int t = 1; t < threads; t++)   /* a thread that does not start leaves its share to the others */
        if (pthread_create(&th[started], NULL, cp_worker, &b) == 0) started++;
    cp_worker(&b);   /* this thread works too (alone with one core) */
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    bool ok = true;
    for (size_t i = 0; i < n; i++) ok = ok && jobs[i].ok;
    return ok;
}
