/*
** The HTML report (fmt_html.c, html_chart.c) without a browser (the
** browser test is tests/html_browser_test.sh): one row per result in the
** findings table and the same verdict line as the text report; every
** string from a trace escaped (no raw '<y>', no control character), no
** script and nothing from outside; ids unique and every internal link
** resolving; with a timeline, the charts drawn and a drawn gap or
** iteration that a finding cites linking to that evidence row; values,
** evidence sentences and causes as the text report gives them.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run_fixture.h"
#include "html_check.h"
#include "logsafe.h"

static const tg_report_opts opts = {.fail_on = TG_SEV_ERROR, .tool_version = "9.9.9"};

/* Every id once, every link to one of them: more than one per result. */
static void check_links(const char *html)
{
    assert_true(tg_fixture_html_links(html) > EXPECT_RESULTS);
}

static void test_document(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    char *html = fixture_render(TG_FMT_HTML, &run, NULL, &opts);
    assert_true(strncmp(html, "<!DOCTYPE html>\n<html lang=\"en\">", 32) == 0);
    assert_non_null(strstr(html, "Content-Security-Policy\" content=\"default-src 'none'"));
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<img"));
    assert_null(strstr(html, "url("));
    /* the verdict line of every format */
    char line[512];
    tg_report_verdict_line(&run, &opts, line, sizeof line);
    assert_non_null(strstr(html, line));
    /* one summary row per result, one per unreadable trace */
    const char *tbody = strstr(html, "<tbody>"), *end = strstr(tbody, "</tbody>");
    size_t rows = 0;
    for (const char *p = tbody; (p = strstr(p, "<tr>")) && p < end; p++) rows++;
    assert_int_equal(rows, EXPECT_RESULTS + EXPECT_UNREADABLE);
    /* escaped, log-safe; the awkward string shown escaped */
    size_t at;
    const char *why = tg_logsafe_problem(html, strlen(html), false, &at);
    if (why) fail_msg("not log-safe at %zu: %s", at, why);
    assert_null(strstr(html, "<y>"));
    assert_non_null(strstr(html, "cuMemcpy &quot;x&quot; &#39;q&#39; &lt;y&gt; &amp; z\\n100% a:b,c|d \\x01"));
    /* a warning below --fail-on reads as a warning, an unreadable trace as such */
    assert_non_null(strstr(html, "<span class=\"badge warn\">FAIL</span>"));
    assert_non_null(strstr(html, "<span class=\"badge error\">UNREADABLE</span>"));
    /* values named and printed as the text report does: no "_ns" beside 1.2 s */
    assert_non_null(strstr(html, "<code>count</code> = 400, <code>sum_duration</code> = 1.2 s"));
    assert_null(strstr(html, "sum_duration_ns"));
    /* the evidence sentence of every human format, the row's span in ns */
    assert_non_null(strstr(html, "<tr id=\"t1-r1-e1\"><td>CUPTI_ACTIVITY_KIND_MEMCPY rowid 12: 1000..5000 ns (4 us)"
                                 "</td><td><code>bytes</code> = 16.8 MB"));
    /* the causes (docs/host.md), as text and markdown show them: call
    ** sites, what is unknown, the host's activity in each window, queries */
    assert_non_null(strstr(html, "<p><strong>Cause:</strong> 300 of the 400 copies were made from step(int) in "
                                 "train.so</p>"));
    assert_non_null(strstr(html, "<li>step(int) in train.so  300 rows, 900 ms (75%)  CUPTI_ACTIVITY_KIND_MEMCPY "
                                 "rowids 12, 40, ...</li>"));
    assert_non_null(strstr(html, "<li>unknown: 100 of the 400 copies have no recorded stack</li>"));
    assert_non_null(strstr(html, "<p class=\"meta\">evidence row 1: 1000..720001000 ns (720 ms), pid 1063; 700 ms "
                                 "of it in traced calls of the threads that launch GPU work</p>"));
    assert_non_null(strstr(html, "<li>osrt usleep  1 call, 700 ms (97%), thread cuMemcpy &quot;x&quot; &#39;q&#39; "
                                 "&lt;y&gt; &amp; z\\n100% a:b,c|d \\x01 (tid 1063, launches GPU work), from main in "
                                 "drvload  OSRT_API rowid 926</li>"));
    assert_int_equal(fixture_count(html, "<strong>Reproduce the cause</strong> (sqlite3 on the export)"), 2);
    /* no timeline in this result: said, not drawn */
    assert_non_null(strstr(html, "No charts: this result does not carry the trace's timeline"));
    check_links(html);
    free(html);
    tg_arena_free(run.arena);
}

/* The fixture's first trace with a timeline: one GPU, a gap whose op
** before is the evidence row sync-memcpy cites (MEMCPY rowid 12), and
** iterations. */
static void add_timeline(tg_run_result *run)
{
    tg_arena *a = run->arena;
    tg_timeline *tl = tg_arena_alloc(a, sizeof *tl);
    tl->from = 0;
    tl->to = 1000000000;
    tl->n_bins = 10;
    tl->n_devices = 1;
    tl->devices = tg_arena_alloc(a, sizeof *tl->devices);
    tl->device_names = tg_arena_alloc(a, sizeof *tl->device_names);
    tl->device_names[0] = "GPU <0>";
    tl->busy = tg_arena_alloc(a, 10 * sizeof *tl->busy);
    for (size_t i = 0; i < 10; i++) tl->busy[i] = i == 5 ? 0 : 0.5;
    tl->steady_start = 100000000;
    tl->steady_end = 900000000;
    tl->has_iterations = true;
    tl->gaps = tg_arena_alloc(a, 2 * sizeof *tl->gaps);
    tl->gaps[0] = (tg_timeline_gap){0, 500000000, 600000000, "CUPTI_ACTIVITY_KIND_MEMCPY", 12};
    tl->gaps[1] = (tg_timeline_gap){0, 700000000, 750000000, "CUPTI_ACTIVITY_KIND_KERNEL", 99};
    tl->n_gaps = 2;
    tl->iter_pid = 1000;
    tl->iter_table = "NVTX_EVENTS";
    tl->n_iterations = 6;
    tl->iterations = tg_arena_alloc(a, 6 * sizeof *tl->iterations);
    for (int i = 0; i < 6; i++)
        tl->iterations[i] = (tg_iter_point){100 + i, i, i * 100000000LL, 90000000, i ? 100000000 : TG_NULL_I64,
                                            50000000, i >= 2};
    run->traces[0].timeline = tl;
}

static void test_charts_and_links(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    add_timeline(&run);
    static const int64_t periods_ms[] = {0, 500, 10, 40, 20, 30};   /* the steady ones from the third */
    for (int i = 1; i < 6; i++) run.traces[0].timeline->iterations[i].period = periods_ms[i] * 1000000;
    char *html = fixture_render(TG_FMT_HTML, &run, NULL, &opts);
    /* iterations: period and GPU time; the device timeline; rank1's
    ** regression has no contributors in the fixture */
    assert_non_null(strstr(html, "<figure id=\"t1-period\">"));
    assert_non_null(strstr(html, "<figure id=\"t1-gpu_time\">"));
    assert_non_null(strstr(html, "<figure id=\"t1-timeline\">"));
    assert_int_equal(fixture_count(html, "<svg role=\"img\" aria-labelledby="), 3);
    assert_int_equal(fixture_count(html, "<desc id="), 3);
    /* the cited gap links to sync-memcpy's evidence row rowid 12 (its first) */
    assert_non_null(strstr(html, "<a href=\"#t1-r1-e1\" aria-label=\"GPU 0 idle 100 ms from +500 ms, cited evidence\">"
                                 "<rect class=\"gap\""));
    assert_non_null(strstr(html, "<tr id=\"t1-r1-e1\">"));
    /* the other gap is drawn, not linked */
    assert_non_null(strstr(html, "<title>GPU 0 idle 50 ms from +700 ms</title>"));
    /* the median line and its description: the steady iterations' median
    ** (common/stats.c), an even count averaging the middle two */
    assert_non_null(strstr(html, "6 iterations of process 1000, 4 steady; median 25 ms over the steady ones"));
    /* warm-up iterations hollow, steady ones filled */
    assert_int_equal(fixture_count(html, "class=\"pt warm\""), 2 * 2 - 1);   /* the first has no period */
    assert_non_null(strstr(html, "GPU &lt;0&gt;"));
    check_links(html);
    free(html);
    tg_arena_free(run.arena);
}

/* The text of figure `id` of html, malloc'd. */
static char *figure(const char *html, const char *id)
{
    char open[96];
    snprintf(open, sizeof open, "<figure id=\"%s\">", id);
    const char *from = strstr(html, open);
    assert_non_null(from);
    const char *to = strstr(from, "</figure>");
    assert_non_null(to);
    return strndup(from, (size_t)(to - from));
}

/* The width of the n-th (from 0) bar of class cls in fig. */
static double bar_width(const char *fig, const char *cls, int n)
{
    char open[48];
    snprintf(open, sizeof open, "<rect class=\"%s\"", cls);
    const char *p = fig;
    for (int k = 0; k <= n; k++) {
        p = strstr(p, open);
        assert_non_null(p);
        p += strlen(open);
    }
    const char *w = strstr(p, "width=\"");
    assert_non_null(w);
    return strtod(w + 7, NULL);
}

/* Every chart's axes have a title and ticks in one unit: the iterations'
** from 0 ms, never "0 ns" under ms values; the what-changed charts of
** one trace share one scale (the same ticks, bars of one length per ms)
** and a name longer than the label room is cut with an ellipsis, never
** a "(N bytes)" marker, and given whole on hover (<title>). */
static void test_axes_scale_and_labels(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    add_timeline(&run);
    static const char long_name[] = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>";
    tg_baseline_cmp *b1 = &run.traces[1].results[1].baseline, *b2 = &run.traces[1].results[2].baseline;
    b1->contributors = tg_arena_alloc(run.arena, 2 * sizeof *b1->contributors);
    b1->contributors[0] = (tg_contributor){.name = long_name, .kind = TG_WORK_KERNEL, .status = TG_CONTRIB_GREW,
                                           .then_time = 1e6, .now_time = 2.5e6, .delta = 1.5e6, .share = NAN};
    b1->contributors[1] = (tg_contributor){.name = "step", .kind = TG_WORK_NVTX, .status = TG_CONTRIB_SHRANK,
                                           .then_time = 2e6, .now_time = 1.6e6, .delta = -0.4e6, .share = NAN};
    b1->n_contributors = 2;
    b2->contributors = tg_arena_alloc(run.arena, sizeof *b2->contributors);
    b2->contributors[0] = (tg_contributor){.name = "fused_adam", .kind = TG_WORK_KERNEL, .status = TG_CONTRIB_NEW,
                                           .then_time = 0, .now_time = 6e6, .delta = 6e6, .share = NAN};
    b2->n_contributors = 1;
    char *html = fixture_render(TG_FMT_HTML, &run, NULL, &opts);

    char *period = figure(html, "t1-period");
    assert_non_null(strstr(period, "<text class=\"axis-title y\""));
    assert_non_null(strstr(period, ">Period of the iteration (ms)</text>"));
    assert_non_null(strstr(period, "<text class=\"axis-title x\""));
    assert_non_null(strstr(period, "text-anchor=\"end\">0 ms</text>"));
    free(period);
    char *timeline = figure(html, "t1-timeline");
    assert_non_null(strstr(timeline, ">time from the first GPU operation ("));
    assert_non_null(strstr(timeline, ">each GPU: busy share of each time slice (%)</text>"));
    free(timeline);
    assert_null(strstr(html, " ns</text>"));   /* no tick in ns on these ms- and s-scaled axes */

    char *a = figure(html, "t2-r2-changed"), *c = figure(html, "t2-r3-changed");
    /* one scale: the same ticks (-2 ms to +6 ms), a bar as long per ms */
    const char *ta = strstr(a, "<text class=\"tick x\""), *tc = strstr(c, "<text class=\"tick x\"");
    assert_non_null(ta);
    assert_non_null(tc);
    assert_non_null(strstr(a, ">+6 ms</text>"));
    assert_non_null(strstr(c, ">+6 ms</text>"));
    assert_non_null(strstr(c, ">-2 ms</text>"));
    assert_float_equal(bar_width(c, "grew", 0) / bar_width(a, "grew", 0), 6.0 / 1.5, 0.01);
    assert_float_equal(bar_width(a, "shrank", 0) / bar_width(a, "grew", 0), 0.4 / 1.5, 0.01);
    assert_non_null(strstr(a, ">change per steady iteration (ms)</text>"));
    /* the long name cut to 36 characters, whole on hover; the short one whole */
    char want[256];
    snprintf(want, sizeof want, ">%.35s&#8230;<title>void at::native::vectorized_elementwise_kernel&lt;4, "
                                "at::native::AddFunctor&lt;float&gt;&gt;</title></text>", long_name);
    assert_non_null(strstr(a, want));
    assert_non_null(strstr(a, ">step</text>"));
    assert_null(strstr(a, "bytes)"));
    free(a);
    free(c);
    /* identifiers in table cells: short ones stay whole (nowrap), long ones may break */
    assert_non_null(strstr(html, "<td><code class=\"long\">void at::native::"));
    assert_non_null(strstr(html, "<td><code>fused_adam</code></td>"));
    free(html);
    tg_arena_free(run.arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_document),
        cmocka_unit_test(test_charts_and_links),
        cmocka_unit_test(test_axes_scale_and_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
