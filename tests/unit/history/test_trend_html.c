/*
** history report's page (engine/history/trend_html.c) without a browser
** (html_browser_history.sh opens it in headless Chromium): a view built by
** hand -- two workloads, values missing on some runs, bands missing on
** others, a series with no value at all, a regression not accepted
** explained by what changed, an accepted change point whose reason holds
** <script> and quotes, an accept where no change point was found, labels
** in UTF-8 with & < > and a control character -- written to memory.
**
** The page must be well-formed (every element closed: a checker here, and
** xmllint when installed, for the page is XML as well as HTML),
** self-contained (no "http://" or "https://" at all, no script, no
** outside reference, every link to an id of the page), escaped and
** log-safe, the same bytes twice, and say what a reader needs: the
** summary with regressions not accepted first, per series a chart with
** its band, failed runs and change-point markers, and each change point's
** label, medians, change, p and contributors; an accepted one's reason
** and time. A history of 1,000 runs x 20 metrics stays under a size bound.
**
** With --write DIR the program writes the pages instead (DIR/trend.html,
** the fixture; DIR/large.html, 1,000 x 20; DIR/expect.sh, what the
** fixture holds) for html_browser_history.sh.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history/history.h"
#include "logsafe.h"
#include "html_check.h"

/* -------------------------------------------------------------- views */

static const char *const rules[] = {"gpu-time-regression", "iteration-time-regression"};
static const char *const metrics[] = {"median(gpu_time)", "median(period)"};
static const char *const fields[] = {"gpu_time", "period"};

/* n runs of one workload, each with a record of every rule in rules[]
** (value NaN, verdict pass), ids from first_id. */
static tg_hist_run *make_runs(tg_arena *a, size_t n, size_t n_rules, int64_t first_id, const char *workload,
                              const char *name)
{
    tg_hist_run *r = tg_arena_alloc(a, n * sizeof *r);
    assert_non_null(r);
    for (size_t i = 0; i < n; i++) {
        r[i].id = first_id + (int64_t)i;
        r[i].label = tg_arena_printf(a, "%s-%zu", workload, i);
        r[i].time = tg_arena_printf(a, "2026-%02zu-%02zuT%02zu:00:00Z", 1 + i / (24 * 28), 1 + i / 24 % 28, i % 24);
        r[i].workload = workload;
        r[i].workload_name = name;
        r[i].gpu = "NVIDIA H200";
        r[i].format = "nsys-sqlite";
        r[i].marker = "step";
        r[i].verdict = "pass";
        r[i].n_metrics = n_rules;
        r[i].metrics = tg_arena_alloc(a, n_rules * sizeof *r[i].metrics);
        assert_non_null(r[i].metrics);
        for (size_t k = 0; k < n_rules; k++)
            r[i].metrics[k] = (tg_hist_metric){.rule = k < 2 ? rules[k] : tg_arena_printf(a, "metric-%02zu", k),
                                               .metric = metrics[k % 2], .samples_field = fields[k % 2],
                                               .unit = TG_UNIT_NS, .direction = 1, .value = NAN, .verdict = "pass"};
    }
    return r;
}

/* The series of rule k over runs: values and verdicts from the runs,
** bands all NaN (the caller fills them). */
static void make_series(tg_arena *a, tg_hist_series *s, tg_hist_run *runs, size_t n, size_t k)
{
    *s = (tg_hist_series){.workload = runs[0].workload, .workload_name = runs[0].workload_name,
                          .rule = runs[0].metrics[k].rule, .metric = runs[0].metrics[k].metric, .unit = TG_UNIT_NS,
                          .direction = 1, .n = n};
    s->runs = tg_arena_alloc(a, n * sizeof *s->runs);
    s->values = tg_arena_alloc(a, n * sizeof *s->values);
    s->band_lo = tg_arena_alloc(a, n * sizeof *s->band_lo);
    s->band_hi = tg_arena_alloc(a, n * sizeof *s->band_hi);
    assert_true(s->runs && s->values && s->band_lo && s->band_hi);
    for (size_t i = 0; i < n; i++) {
        s->runs[i] = &runs[i];
        s->values[i] = runs[i].metrics[k].value;
        s->band_lo[i] = s->band_hi[i] = NAN;
    }
}

static void set_band(tg_hist_series *s, size_t from, size_t to, double lo, double hi)
{
    for (size_t i = from; i < to && i < s->n; i++) s->band_lo[i] = lo, s->band_hi[i] = hi;
}

static tg_hist_change *make_changes(tg_arena *a, tg_hist_series *s, size_t n)
{
    s->changes = tg_arena_alloc(a, n * sizeof *s->changes);
    s->n_changes = n;
    assert_non_null(s->changes);
    return s->changes;
}

#define REASON "<script>alert(\"x\")</script> it's the new cuDNN & fine"
#define REASON_HTML "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; it&#39;s the new cuDNN &amp; fine"
#define NAME_A "sgemm_kernel<é> & co"
#define LABEL_CP "fix & <tune> \xe2\x9c\x93 \"q\""            /* ✓ */
#define LABEL_CP_HTML "fix &amp; &lt;tune&gt; \xe2\x9c\x93 &quot;q&quot;"
#define LABEL_ACC "r\xc3\xa9sum\xc3\xa9-18 <&>"               /* résumé */
#define LABEL_ACC_HTML "r\xc3\xa9sum\xc3\xa9-18 &lt;&amp;&gt;"
#define KERNEL "sgemm<128, \"tn\"> & co"
#define KERNEL_HTML "sgemm&lt;128, &quot;tn&quot;&gt; &amp; co"

/* The fixture: workload A (24 runs, both rules: iteration-time with a
** regression at run 12 not accepted, explained; gpu-time with a change
** point at run 18, accepted, where iteration-time has none), workload B
** (6 runs: gpu-time with an improvement at run 3; iteration-time without
** any value), an accept of B at run 1 where no change point was found.
** Indices from 0. */
static void fixture(tg_arena *a, tg_hist_view *v)
{
    const size_t na = 24, nb = 6;
    tg_hist_run *ra = make_runs(a, na, 2, 1, "w0123456789ab", NAME_A);
    tg_hist_run *rb = make_runs(a, nb, 2, 25, "wfedcba987654", "conv2d_fprop");
    ra[12].label = LABEL_CP;
    ra[3].label = "bad\x1b[31mlabel";
    ra[18].label = LABEL_ACC;
    ra[7].branch = "feature/<x>&y";
    for (size_t i = 0; i < na; i++) {
        double wiggle = (double)(i % 3) * 0.05e6;
        ra[i].metrics[0].value = i == 5 ? NAN : 10e6 + (i >= 18) * 1e6 + wiggle;
        ra[i].metrics[1].value = 20e6 + (i >= 12) * 4e6 + wiggle;
        if (i >= 18 && i <= 20) ra[i].metrics[0].verdict = "fail";
        if (i == 5) ra[i].metrics[0].verdict = "inconclusive";
        if (i == 12 || i == 13 || i == 14) ra[i].metrics[1].verdict = "fail", ra[i].verdict = "fail";
    }
    for (size_t i = 0; i < nb; i++) rb[i].metrics[0].value = i >= 3 ? 4e6 : 5e6;

    tg_hist_accept *acc = tg_arena_alloc(a, 2 * sizeof *acc);
    acc[0] = (tg_hist_accept){"w0123456789ab", LABEL_ACC, 19, REASON, "2026-01-02T09:30:00Z"};
    acc[1] = (tg_hist_accept){"wfedcba987654", "wfedcba987654-1", 26, "new driver 550 & \"cuDNN\"", "2026-01-03T10:00:00Z"};

    *v = (tg_hist_view){.n_series = 4, .accepts = acc, .n_accepts = 2, .n_runs = na + nb};
    v->series = tg_arena_alloc(a, 4 * sizeof *v->series);
    make_series(a, &v->series[0], ra, na, 0);
    make_series(a, &v->series[1], ra, na, 1);
    make_series(a, &v->series[2], rb, nb, 0);
    make_series(a, &v->series[3], rb, nb, 1);
    /* bands: none before 3 runs; gpu-time: none on 15 and 16, nor after
    ** its accepted change point until 3 runs of the new normal */
    set_band(&v->series[0], 3, 15, 9.6e6, 10.4e6);
    set_band(&v->series[0], 17, 21, 9.6e6, 10.4e6);
    set_band(&v->series[0], 23, na, 10.6e6, 11.4e6);
    set_band(&v->series[1], 3, 12, 19e6, 21e6);
    set_band(&v->series[1], 12, na, 19.5e6, 21.5e6);
    set_band(&v->series[2], 3, nb, 4.5e6, 5.5e6);

    tg_hist_change *c0 = make_changes(a, &v->series[0], 1);
    c0[0] = (tg_hist_change){.index = 18, .label = LABEL_ACC, .before = 10.05e6, .after = 11.05e6, .change = 0.0995,
                             .p = 0.0005, .regression = true, .accepted = &acc[0]};
    c0[0].cmp.busy_then = 9.8e6;
    c0[0].cmp.busy_now = 10.8e6;
    c0[0].cmp.contributors = tg_arena_alloc(a, sizeof(tg_contributor));
    c0[0].cmp.contributors[0] = (tg_contributor){.name = "dgrad_kernel", .kind = TG_WORK_KERNEL,
                                                 .status = TG_CONTRIB_GREW, .then_time = 2e6, .now_time = 3e6,
                                                 .delta = 1e6, .share = 1};
    c0[0].cmp.n_contributors = 1;

    tg_hist_change *c1 = make_changes(a, &v->series[1], 1);
    c1[0] = (tg_hist_change){.index = 12, .label = LABEL_CP, .before = 20.05e6, .after = 24.05e6, .change = 0.1995,
                             .p = 0.001, .regression = true};
    c1[0].cmp.busy_then = 9.8e6;
    c1[0].cmp.busy_now = 10.8e6;
    tg_contributor *x = tg_arena_alloc(a, 4 * sizeof *x);
    x[0] = (tg_contributor){.name = KERNEL, .kind = TG_WORK_KERNEL, .status = TG_CONTRIB_GREW, .then_time = 6e6,
                            .now_time = 6.8e6, .delta = 0.8e6, .share = 0.8};
    x[1] = (tg_contributor){.name = "flash_attn_fwd", .kind = TG_WORK_KERNEL, .status = TG_CONTRIB_NEW,
                            .then_time = 0, .now_time = 0.3e6, .delta = 0.3e6, .share = 0.3};
    x[2] = (tg_contributor){.name = "step & <fwd>", .kind = TG_WORK_NVTX, .status = TG_CONTRIB_GREW,
                            .then_time = 15e6, .now_time = 19e6, .delta = 4e6, .share = NAN};
    x[3] = (tg_contributor){.name = "old_copy", .kind = TG_WORK_MEMCPY, .status = TG_CONTRIB_GONE,
                            .then_time = 0.1e6, .now_time = 0, .delta = -0.1e6, .share = -0.1};
    c1[0].cmp.contributors = x;
    c1[0].cmp.n_contributors = 4;

    tg_hist_change *c2 = make_changes(a, &v->series[2], 1);
    c2[0] = (tg_hist_change){.index = 3, .label = "wfedcba987654-3", .before = 5e6, .after = 4e6, .change = -0.2,
                             .p = 0.0007, .improvement = true};
}

/* A history of n runs x m metrics of one workload: a step of +5% at
** n / 2 in every metric, a band on every run from the third, a failed run
** in 20, one change point per series with 5 contributors. */
static void large(tg_arena *a, tg_hist_view *v, size_t n, size_t m)
{
    tg_hist_run *r = make_runs(a, n, m, 1, "w00112233aabb", "big_model_step");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < m; k++) {
            r[i].metrics[k].value = (10e6 + 1e5 * (double)k) * (i >= n / 2 ? 1.05 : 1) * (1 + 0.002 * (double)((i * 7 + k) % 5));
            if (i % 20 == 7) r[i].metrics[k].verdict = "fail";
        }
    *v = (tg_hist_view){.n_series = m, .n_runs = n};
    v->series = tg_arena_alloc(a, m * sizeof *v->series);
    for (size_t k = 0; k < m; k++) {
        tg_hist_series *s = &v->series[k];
        make_series(a, s, r, n, k);
        for (size_t i = 3; i < n; i++) set_band(s, i, i + 1, s->values[i - 1] * 0.97, s->values[i - 1] * 1.03);
        tg_hist_change *c = make_changes(a, s, 1);
        c[0] = (tg_hist_change){.index = n / 2, .label = r[n / 2].label, .before = s->values[0],
                                .after = s->values[n / 2], .change = 0.05, .p = 0.0005, .regression = true};
        c[0].cmp.contributors = tg_arena_alloc(a, 5 * sizeof(tg_contributor));
        for (size_t j = 0; j < 5; j++)
            c[0].cmp.contributors[j] = (tg_contributor){.name = tg_arena_printf(a, "kernel_%zu_%zu", k, j),
                                                        .kind = TG_WORK_KERNEL, .status = TG_CONTRIB_GREW,
                                                        .then_time = 1e6, .now_time = 1.1e6, .delta = 1e5, .share = 0.2};
        c[0].cmp.n_contributors = 5;
    }
}

static const char *kind_of_change(const tg_hist_change *c)
{
    return c->accepted ? "accepted" : c->regression ? "regression" : c->improvement ? "improvement" : "change";
}

/* The page of v in memory (malloc'd), its length in *len. */
static char *render(const tg_hist_view *v, const char *title, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    assert_int_equal(tg_history_write_html(f, v, title), TG_OK);
    assert_int_equal(fclose(f), 0);
    if (len) *len = n;
    return buf;
}

/* ----------------------------------------------------------- checks */

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* Every element closed in order (void elements of HTML may stand alone),
** every '&' an entity XML knows. */
static void check_structure(const char *html)
{
    static const char *const void_tags[] = {"meta", "link", "br", "hr", "img", "input", "col", "wbr"};
    char stack[64][16];
    size_t depth = 0;
    const char *doctype = "<!DOCTYPE html>\n";
    assert_memory_equal(html, doctype, strlen(doctype));
    for (const char *p = html + strlen(doctype); (p = strchr(p, '<')); p++) {
        bool closing = p[1] == '/';
        const char *s = p + 1 + closing;
        size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789");
        if (n == 0 || n >= sizeof stack[0]) fail_msg("not a tag at %td: %.40s", p - html, p);
        const char *end = strchr(s, '>');
        assert_non_null(end);
        if (closing) {
            if (!depth || strlen(stack[depth - 1]) != n || strncmp(stack[depth - 1], s, n))
                fail_msg("</%.*s> closes <%s> at %td", (int)n, s, depth ? stack[depth - 1] : "nothing", p - html);
            depth--;
            continue;
        }
        if (end[-1] == '/') continue;
        bool is_void = false;
        for (size_t k = 0; k < sizeof void_tags / sizeof *void_tags; k++)
            is_void |= strlen(void_tags[k]) == n && !strncmp(void_tags[k], s, n);
        if (is_void) continue;
        assert_true(depth < sizeof stack / sizeof *stack);
        memcpy(stack[depth], s, n);
        stack[depth++][n] = '\0';
    }
    if (depth) fail_msg("<%s> never closed", stack[depth - 1]);
    for (const char *p = html; (p = strchr(p, '&')); p++) {
        static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#"};
        bool ok = false;
        for (size_t k = 0; k < 5 && !ok; k++) ok = !strncmp(p, named[k], strlen(named[k]));
        if (ok && p[1] == '#') ok = strspn(p + 2, "0123456789") > 0 && p[2 + strspn(p + 2, "0123456789")] == ';';
        if (!ok) fail_msg("a bare '&' at %td: %.20s", p - html, p);
    }
}

/* The page is XML too: xmllint (libxml2-utils) parses it without a word. */
static void check_xmllint(const char *html, size_t len)
{
    if (access("/usr/bin/xmllint", X_OK) != 0) {
        fprintf(stderr, "note: /usr/bin/xmllint absent; the structure is checked by this test's own parser only\n");
        return;
    }
    char path[] = "/tmp/tg-trend-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(html, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/xmllint --noout --nonet '%s' 2>&1", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char said[2048];
    size_t n = fread(said, 1, sizeof said - 1, p);
    said[n] = '\0';
    int st = pclose(p);
    unlink(path);
    if (st != 0 || n) fail_msg("xmllint: %s", said);
}

/* Nothing from outside: no URL of any scheme, no script, every reference
** an id of the page, every id once. */
static void check_self_contained(const char *html)
{
    assert_null(strstr(html, "http://"));
    assert_null(strstr(html, "https://"));
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<link"));
    assert_null(strstr(html, "<img"));
    assert_null(strstr(html, " src="));
    assert_null(strstr(html, "url("));
    assert_null(strstr(html, "@import"));
    assert_true(tg_fixture_html_links(html) > 0);
}

/* The text between the first occurrence of from and the next of to. */
static char *between(const char *html, const char *from, const char *to)
{
    const char *s = strstr(html, from);
    assert_non_null(s);
    const char *e = strstr(s, to);
    assert_non_null(e);
    return strndup(s, (size_t)(e - s));
}

/* ------------------------------------------------------------- tests */

#define TITLE "nightly <main> & \"co\""
#define TITLE_HTML "nightly &lt;main&gt; &amp; &quot;co&quot;"

/* The fixture's page, for each test. */
typedef struct page {
    tg_arena *arena;
    tg_hist_view v;
    char *html;
    size_t len;
} page;

static int setup(void **state)
{
    page *p = calloc(1, sizeof *p);
    if (!p || !(p->arena = tg_arena_new())) return -1;
    fixture(p->arena, &p->v);
    p->html = render(&p->v, TITLE, &p->len);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    page *p = *state;
    free(p->html);
    tg_arena_free(p->arena);
    free(p);
    return 0;
}

static void test_well_formed_and_self_contained(void **state)
{
    const page *pg = *state;
    const char *html = pg->html;
    assert_int_equal(strlen(html), pg->len);
    assert_non_null(strstr(html, "<html lang=\"en\">"));
    assert_non_null(strstr(html, "Content-Security-Policy\" content=\"default-src 'none'"));
    check_structure(html);
    check_xmllint(html, pg->len);
    check_self_contained(html);
    /* an empty history is a page too */
    tg_hist_view empty = {.n_runs = 0};
    size_t len;
    char *none = render(&empty, NULL, &len);
    check_structure(none);
    check_xmllint(none, len);
    assert_non_null(strstr(none, "<title>tracegate: history</title>"));
    assert_non_null(strstr(none, "No regression metric to draw in 0 runs"));
    free(none);
}

static void test_escaped(void **state)
{
    const page *pg = *state;
    const char *html = pg->html;
    size_t at;
    const char *why = tg_logsafe_problem(html, pg->len, false, &at);
    if (why) fail_msg("not log-safe at %zu: %s", at, why);
    assert_non_null(strstr(html, "<title>tracegate: " TITLE_HTML "</title>"));
    /* the reason, every time it is shown, escaped; never raw */
    assert_null(strstr(html, "<script>"));
    assert_null(strstr(html, "alert(\"x\")"));
    assert_true(count(html, REASON_HTML) >= 2);   /* the summary's table, the change point, the marker */
    assert_non_null(strstr(html, "new driver 550 &amp; &quot;cuDNN&quot;"));
    /* labels: UTF-8 as it is, the HTML specials as entities, a control
    ** character as \x1b (tg_text_escape) */
    assert_null(strstr(html, LABEL_CP));
    assert_true(count(html, LABEL_CP_HTML) >= 3);
    assert_non_null(strstr(html, LABEL_ACC_HTML));
    assert_null(strstr(html, LABEL_ACC));
    assert_null(strstr(html, "\x1b"));
    assert_non_null(strstr(html, "bad\\x1b[31mlabel"));
    assert_non_null(strstr(html, "branch feature/&lt;x&gt;&amp;y"));
    /* names: the workload's, a kernel's, an NVTX range's */
    assert_non_null(strstr(html, "sgemm_kernel&lt;\xc3\xa9&gt; &amp; co"));
    assert_null(strstr(html, NAME_A));
    assert_non_null(strstr(html, "<code>" KERNEL_HTML "</code>"));
    assert_non_null(strstr(html, "<code>step &amp; &lt;fwd&gt;</code>"));
    /* a label under a chart is cut at a character boundary (never inside
    ** the 3 bytes of ✓, which begin at byte 13 of 14) */
    assert_non_null(strstr(html, ">fix &amp; &lt;tune&gt; &#8230;<title>"));
}

static void test_deterministic(void **state)
{
    const page *pg = *state;
    size_t len;
    char *again = render(&pg->v, TITLE, &len);
    assert_int_equal(len, pg->len);
    assert_memory_equal(again, pg->html, len);
    free(again);
}

static void test_summary(void **state)
{
    const page *pg = *state;
    const char *html = pg->html;
    assert_non_null(strstr(html, "<p class=\"verdict fail\" role=\"status\">1 regression not accepted</p>"));
    assert_non_null(strstr(html, "2 workloads &#183; 30 runs &#183; 3 change points (1 regression not accepted, 1 "
                                 "improvement, 1 accepted) &#183; 2026-01-01T00:00:00Z to 2026-01-01T23:00:00Z"));
    /* the change points: the regression not accepted (series 2), then the
    ** improvement (series 3), then the accepted one (series 1) */
    char *table = between(html, "<caption class=\"meta\">Change points", "</table>");
    const char *reg = strstr(table, "href=\"#s2-c1\""), *imp = strstr(table, "href=\"#s3-c1\""),
               *acc = strstr(table, "href=\"#s1-c1\"");
    assert_true(reg && imp && acc && reg < imp && imp < acc);
    assert_non_null(strstr(table, "<span class=\"badge fail\">REGRESSION</span> <span class=\"badge suppressed\">"
                                  "ACCEPTED</span>"));
    assert_non_null(strstr(table, "<td class=\"num\">20.1 ms &#8594; 24.1 ms</td><td class=\"num\">+20%</td>"
                                  "<td class=\"num\">0.001</td>"));
    free(table);
    /* the workloads, linked to their sections */
    table = between(html, "<caption class=\"meta\">The workloads", "</table>");
    assert_non_null(strstr(table, "<a href=\"#w1\">sgemm_kernel&lt;\xc3\xa9&gt; &amp; co</a>"));
    assert_non_null(strstr(table, "<a href=\"#w2\">conv2d_fprop</a></td><td><code>wfedcba987654</code></td><td>"
                                  "NVIDIA H200</td><td class=\"num\">6</td><td class=\"num\">2</td>"
                                  "<td class=\"num\">1</td>"));
    free(table);
    /* the accepts, in order, with their reason and time */
    table = between(html, "<caption class=\"meta\">Change points accepted", "</table>");
    assert_non_null(strstr(table, "<tr id=\"a1\"><td><code>w0123456789ab</code></td><td><code>" LABEL_ACC_HTML
                                  "</code></td><td>2026-01-02T09:30:00Z</td><td>" REASON_HTML "</td></tr>"));
    assert_non_null(strstr(table, "<tr id=\"a2\">"));
    free(table);
}

static void test_charts(void **state)
{
    const page *pg = *state;
    const char *html = pg->html;
    /* a chart per series with a value; the one without says so */
    assert_int_equal(count(html, "<svg role=\"img\""), 3);
    assert_int_equal(count(html, "<figure id=\"s"), 4);
    assert_int_equal(count(html, "No chart: no run has a value of this metric."), 1);
    /* series 1: a point per run with a value (23), the failed ones red,
    ** the band in three stretches, the accepted change point's marker */
    char *s1 = between(html, "<figure id=\"s1\">", "</svg>");
    assert_int_equal(count(s1, "<circle class=\"pt"), 23);
    assert_int_equal(count(s1, "<circle class=\"pt fail\""), 3);
    assert_null(strstr(s1, "<title>run 6:"));   /* no value, not drawn */
    char *band = between(s1, "<path class=\"band\" d=\"", "\">");
    assert_int_equal(count(band, "Z"), 3);
    free(band);
    assert_int_equal(count(s1, "<path class=\"band\""), 1);
    assert_int_equal(count(s1, "<line class=\"cpl"), 1);
    assert_non_null(strstr(s1, "<a href=\"#s1-c1\"><title>change point at run 19, " LABEL_ACC_HTML ": 10.1 ms to 11.1 "
                               "ms (+9.95%), regression, accepted; the link leads to its explanation</title><line "
                               "class=\"cpl accepted\""));
    assert_non_null(strstr(s1, "<title>run 19: " LABEL_ACC_HTML " (2026-01-01T18:00:00Z): 11 ms, fail; band 9.6 ms to "
                               "10.4 ms</title>"));
    /* the value breaks at the missing run: two strokes */
    char *line = between(s1, "<path class=\"series\" d=\"", "/>");
    assert_int_equal(count(line, "M"), 2);
    free(line);
    /* the value axis from near the values, not 0, with labels that differ */
    assert_null(strstr(s1, ">0 ns</text>"));
    free(s1);
    /* series 2: the regression's marker links to its explanation; the
    ** workload's accept where this series has no change point is marked */
    char *s2 = between(html, "<figure id=\"s2\">", "</svg>");
    assert_non_null(strstr(s2, "<title>run 13: " LABEL_CP_HTML " (2026-01-01T12:00:00Z): 24 ms, fail; band 19.5 ms to "
                               "21.5 ms</title>"));
    assert_non_null(strstr(s2, "<a href=\"#a1\"><title>accepted as the new normal at run 19, " LABEL_ACC_HTML ": "
                               REASON_HTML "</title><line class=\"cpl accepted\""));
    assert_non_null(strstr(s2, "<a href=\"#s2-c1\"><title>change point at run 13, " LABEL_CP_HTML ": 20.1 ms to 24.1 "
                               "ms (+20%), regression; the link leads to its explanation</title><line class=\"cpl "
                               "regression\""));
    assert_int_equal(count(s2, "<line class=\"cpl"), 2);
    free(s2);
    /* series 3: the improvement, and workload B's accept where no change
    ** point was found, linking to the accept */
    char *s3 = between(html, "<figure id=\"s3\">", "</svg>");
    assert_int_equal(count(s3, "<line class=\"cpl improvement\""), 1);
    assert_non_null(strstr(s3, "<a href=\"#a2\"><title>accepted as the new normal at run 2, wfedcba987654-1: new driver "
                               "550 &amp; &quot;cuDNN&quot;</title><line class=\"cpl accepted\""));
    free(s3);
    /* the description says it in words */
    assert_non_null(strstr(html, "<desc id=\"s2-desc\">24 runs from w0123456789ab-0 (2026-01-01T00:00:00Z) to "
                                 "w0123456789ab-23 (2026-01-01T23:00:00Z); the latest value 24.1 ms, at "
                                 "w0123456789ab-23; 3 runs failed the rule; 21 runs were judged against a band; 1 "
                                 "change point: at " LABEL_CP_HTML " 20.1 ms to 24.1 ms (+20%), regression.</desc>"));
}

static void test_change_explained(void **state)
{
    const page *pg = *state;
    const char *html = pg->html;
    char *c = between(html, "<article class=\"change regression\" id=\"s2-c1\"", "</article>");
    assert_non_null(strstr(c, "<span class=\"badge fail\">REGRESSION</span> at <code>" LABEL_CP_HTML "</code></h4>"));
    assert_non_null(strstr(c, "The first run after the change: run 13 of 24, " LABEL_CP_HTML " (2026-01-01T12:00:00Z)"));
    assert_non_null(strstr(c, "<p>Median 20.1 ms &#8594; 24.1 ms (+20%), p = 0.001: a regression.</p>"));
    /* a period: the change split into GPU busy time and waiting */
    assert_non_null(strstr(c, "<p>GPU busy per iteration 9.8 ms &#8594; 10.8 ms; the rest of the change (+3 ms) is time "
                              "the GPU waited (host work, syncs, data loading).</p>"));
    /* the contributors as check names them */
    assert_non_null(strstr(c, "<tr><td><code>" KERNEL_HTML "</code></td><td>kernel</td><td>grew</td><td class=\"num\">"
                              "6 ms &#8594; 6.8 ms</td><td class=\"num\">+800 us</td><td class=\"num\">80%</td></tr>"));
    assert_non_null(strstr(c, "<tr><td><code>flash_attn_fwd</code></td><td>kernel</td><td>new</td><td class=\"num\">"
                              "0 ns &#8594; 300 us</td><td class=\"num\">+300 us</td><td class=\"num\">30%</td></tr>"));
    assert_non_null(strstr(c, "<td>nvtx</td><td>grew</td><td class=\"num\">15 ms &#8594; 19 ms</td><td class=\"num\">"
                              "+4 ms</td><td class=\"num\">n/a</td></tr>"));
    assert_non_null(strstr(c, "<tr><td><code>old_copy</code></td><td>memcpy</td><td>gone</td><td class=\"num\">100 us "
                              "&#8594; 0 ns</td><td class=\"num\">-100 us</td><td class=\"num\">-10%</td></tr>"));
    assert_null(strstr(c, "Accepted"));
    free(c);
    /* the accepted one: its reason and time; GPU time is no period, so
    ** no waiting split */
    c = between(html, "<article class=\"change accepted\" id=\"s1-c1\"", "</article>");
    assert_non_null(strstr(c, "<p>Median 10.1 ms &#8594; 11.1 ms (+9.95%), p = 0.0005: a regression.</p>"));
    assert_non_null(strstr(c, "<p>GPU busy per iteration 9.8 ms &#8594; 10.8 ms.</p>"));
    assert_non_null(strstr(c, "<p><strong>Accepted</strong> as the new normal at 2026-01-02T09:30:00Z: " REASON_HTML
                              "</p>"));
    free(c);
    c = between(html, "<article class=\"change improvement\" id=\"s3-c1\"", "</article>");
    assert_non_null(strstr(c, "<p>Median 5 ms &#8594; 4 ms (-20%), p = 0.0007: an improvement.</p>"));
    assert_non_null(strstr(c, "No contributor: the work of the runs on either side was not recorded"));
    free(c);
    /* the runs as a table: a missing value as n/a, a missing band empty */
    assert_non_null(strstr(html, "<tr><td class=\"num\">6</td><td><code>w0123456789ab-5</code></td><td>"
                                 "2026-01-01T05:00:00Z</td><td></td><td class=\"num\">n/a</td><td class=\"num\">9.6 ms "
                                 "&#8211; 10.4 ms</td><td>inconclusive</td></tr>"));
    assert_non_null(strstr(html, "<tr><td class=\"num\">16</td><td><code>w0123456789ab-15</code></td><td>"
                                 "2026-01-01T15:00:00Z</td><td></td><td class=\"num\">10 ms</td><td class=\"num\"></td>"
                                 "<td>pass</td></tr>"));
}

/* The bound: 1,000 runs x 20 metrics, each with a change point and its
** contributors, under 3 MB (measured: see the note this test prints), and
** the drawing per chart bounded (paths and HITS_MAX tooltips, not one
** element per run). */
#define LARGE_RUNS 1000
#define LARGE_METRICS 20
#define LARGE_BOUND (3u << 20)

static void test_large(void **state)
{
    (void)state;
    tg_arena *a = tg_arena_new();
    tg_hist_view v;
    large(a, &v, LARGE_RUNS, LARGE_METRICS);
    size_t len;
    char *html = render(&v, "large", &len);
    fprintf(stderr, "note: %d runs x %d metrics: %zu bytes (bound %u)\n", LARGE_RUNS, LARGE_METRICS, len, LARGE_BOUND);
    assert_true(len < LARGE_BOUND);
    assert_int_equal(count(html, "<svg role=\"img\""), LARGE_METRICS);
    assert_int_equal(count(html, "<circle"), 0);
    assert_int_equal(count(html, "<path class=\"dots fail dense\""), LARGE_METRICS);
    assert_true(count(html, "<rect class=\"hit\"") <= 150 * LARGE_METRICS);
    assert_int_equal(count(html, "<line class=\"cpl regression\""), LARGE_METRICS);
    /* the summary names the latest runs, not all: 40 rows per series */
    assert_int_equal(count(html, "<tr><td class=\"num\">"), 40 * LARGE_METRICS);
    check_structure(html);
    check_xmllint(html, len);
    check_self_contained(html);
    free(html);
    tg_arena_free(a);
}

/* The page of what tg_history_view (history_view.c) makes of 30 runs
** whose step period grows 10% at run 20, with their work recorded: every
** change point it finds is marked and explained, with the contributors it
** attributed, and the page is as well-formed and self-contained. */
static void test_real_view(void **state)
{
    (void)state;
    enum { N = 30, STEP = 20 };
    tg_arena *a = tg_arena_new();
    tg_hist_run *r = make_runs(a, N, 2, 1, "w5555aaaa5555", "sgemm<&>");
    for (size_t i = 0; i < N; i++) {
        double wiggle = 1 + 0.002 * (double)((i * 7) % 5), slow = i >= STEP ? 1.1 : 1;
        double gemm = 6e6 * (i >= STEP ? 1.2 : 1) * wiggle, attn = 3e6 * wiggle;
        r[i].metrics[0].value = gemm + attn;
        r[i].metrics[1].value = 10e6 * slow * wiggle;
        tg_workload *w = tg_arena_alloc(a, sizeof *w);
        tg_work_entry *ops = tg_arena_alloc(a, 2 * sizeof *ops);
        ops[0] = (tg_work_entry){.name = "sgemm<&>", .kind = TG_WORK_KERNEL, .count = 100, .total = gemm * 100,
                                 .time = gemm, .launches = 1};
        ops[1] = (tg_work_entry){.name = "attn", .kind = TG_WORK_KERNEL, .count = 100, .total = attn * 100,
                                 .time = attn, .launches = 1};
        *w = (tg_workload){.steady_iterations = 100, .gpu_time = gemm + attn, .period = r[i].metrics[1].value,
                           .idle = r[i].metrics[1].value - gemm - attn, .total = (gemm + attn) * 100, .ops = ops,
                           .n_ops = 2};
        r[i].work = w;
    }
    tg_hist_view v;
    tg_cp_opts opts = TG_CP_OPTS_DEFAULT;
    assert_true(tg_history_view(r, N, NULL, 0, &opts, a, &v));
    assert_int_equal(v.n_series, 2);
    size_t len;
    char *html = render(&v, "real view", &len);
    check_structure(html);
    check_xmllint(html, len);
    check_self_contained(html);
    size_t found = 0;
    char want[160];
    for (size_t j = 0; j < v.n_series; j++)
        for (size_t c = 0; c < v.series[j].n_changes; c++) {
            const tg_hist_change *x = &v.series[j].changes[c];
            found++;
            snprintf(want, sizeof want, "<a href=\"#s%zu-c%zu\"><title>change point at run %zu, %s:", j + 1, c + 1,
                     x->index + 1, x->label);
            assert_non_null(strstr(html, want));
            snprintf(want, sizeof want, "<article class=\"change %s\" id=\"s%zu-c%zu\"", kind_of_change(x), j + 1,
                     c + 1);
            assert_non_null(strstr(html, want));
            for (size_t k = 0; k < x->cmp.n_contributors; k++) {
                snprintf(want, sizeof want, "<tr><td><code>%s</code></td>",
                         !strcmp(x->cmp.contributors[k].name, "sgemm<&>") ? "sgemm&lt;&amp;&gt;"
                                                                           : x->cmp.contributors[k].name);
                assert_non_null(strstr(html, want));
            }
        }
    /* the period's step: one change point, at run 20, a regression */
    const tg_hist_series *period = &v.series[1];
    assert_string_equal(period->rule, "iteration-time-regression");
    if (period->n_changes != 1 || period->changes[0].index != STEP)
        fail_msg("tg_history_view found %zu change points in the period (want 1 at %d)", period->n_changes, STEP);
    assert_true(period->changes[0].regression);
    assert_true(found >= 1);
    assert_non_null(strstr(html, "<p class=\"verdict fail\" role=\"status\">"));
    free(html);
    tg_arena_free(a);
}

/* ------------------------------------------------------- --write DIR */

static int write_page(const char *dir, const char *name, const tg_hist_view *v, const char *title)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "test_trend_html: cannot write %s\n", path);
        return 1;
    }
    tg_status st = tg_history_write_html(f, v, title);
    return fclose(f) != 0 || st != TG_OK;
}

/* The pages for the browser test, and what the fixture holds. */
static int write_pages(const char *dir)
{
    tg_arena *a = tg_arena_new();
    tg_hist_view v, big;
    fixture(a, &v);
    large(a, &big, LARGE_RUNS, LARGE_METRICS);
    int bad = write_page(dir, "trend.html", &v, TITLE) |
              write_page(dir, "large.html", &big, "1,000 runs x 20 metrics");
    size_t charts = 0, changes = 0;
    for (size_t j = 0; j < v.n_series; j++) {
        bool value = false;
        for (size_t i = 0; i < v.series[j].n; i++) value |= isfinite(v.series[j].values[i]);
        charts += value;
        changes += v.series[j].n_changes;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/expect.sh", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        /* accepted markers: series 1's accepted change point, workload A's
        ** accept on series 2 and B's on series 3 (test_charts) */
        fprintf(f, "series=%zu\ncharts=%zu\nchanges=%zu\naccepted=3\nlarge_charts=%d\nlarge_changes=%d\n", v.n_series,
                charts, changes, LARGE_METRICS, LARGE_METRICS);
        fprintf(f, "explain='%s'\nkernel='%s'\n", "Median 20.1 ms \xe2\x86\x92 24.1 ms (+20%), p = 0.001: a regression.",
                "sgemm<128, \"tn\"> & co");
        bad |= fclose(f) != 0;
    } else
        bad = 1;
    tg_arena_free(a);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) return write_pages(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_well_formed_and_self_contained, setup, teardown),
        cmocka_unit_test_setup_teardown(test_escaped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deterministic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_charts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_change_explained, setup, teardown),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_real_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
