/*
** A hand-built tg_run_result for the reporter tests: three traces (two
** readable, one not), rules that pass, fail, skip and error, evidence whose
** strings need escaping in every format, and baseline comparisons (a
** regression with a run-to-run band, an improvement without p-value).
** EXPECT_* give the counts every format must agree on.
*/
#ifndef TG_REPORT_RUN_FIXTURE_H
#define TG_REPORT_RUN_FIXTURE_H

#include <stdio.h>
#include "report/report.h"

#define EXPECT_TRACES 3
#define EXPECT_UNREADABLE 1
#define EXPECT_RESULTS 9
#define EXPECT_PASSED 3
#define EXPECT_FAILED 4
#define EXPECT_SKIPPED 1
#define EXPECT_ERRORS 1

/* The awkward string carried by an evidence field and a message. */
#define NASTY "cuMemcpy \"x\" 'q' <y> & z\n100% a:b,c|d \x01"

/* Builds the run into a new arena (run->arena; free it with
** tg_arena_free). */
void fixture_run(tg_run_result *run);

/* Render run in fmt into a malloc'd NUL-terminated string; asserts that
** the writer returned TG_OK. */
char *fixture_render(tg_format fmt, const tg_run_result *run, const tg_ruleset *rs,
                     const tg_report_opts *opts);

/* Occurrences of needle in hay. */
size_t fixture_count(const char *hay, const char *needle);
/* Lines of text that start with prefix. */
size_t fixture_count_lines(const char *text, const char *prefix);

#endif
