/*
** Private to engine/report: the helpers every format shares (names of
** severities and verdicts, the gate decision, UTF-8 cleaning, hashing)
** and one writer function per format, each in its own fmt_*.c file.
** report.c dispatches to the writers.
*/
#ifndef TG_REPORT_INT_H
#define TG_REPORT_INT_H

#include <jansson.h>
#include "report.h"
#include "../common/text.h"
#include "../trace/trace.h"

/* A tg_text_escape sink that writes to out with a backslash before each
** byte of `specials` (a quote in a quoted value, | in a table cell). */
typedef struct tg_backslash_sink {
    FILE *out;
    const char *specials;
} tg_backslash_sink;
void tg_report_backslash_sink(void *ctx, const char *s, size_t n);

/* A tg_text_escape sink that writes to out as it is, counting the
** characters written (a padded column, fmt_text.c) and keeping the last
** byte (a fenced block ends on a line of its own, fmt_markdown.c). */
typedef struct tg_file_sink {
    FILE *out;
    int chars;
    char last;
} tg_file_sink;
void tg_report_file_sink(void *ctx, const char *s, size_t n);

/* The file name part of a path. */
const char *tg_report_basename(const char *path);

/* A JSON string of s (cleaned when not valid UTF-8); json null for NULL. */
json_t *tg_report_json_str(const char *s);
/* A JSON number for a double; null when NaN or infinite. */
json_t *tg_report_json_num(double x);
/* The `coverage` object of a trace (docs/formats.md, "coverage"), as the
** JSON result and `info` both write it; NULL when out of memory (fmt_json.c). */
json_t *tg_report_coverage_json(const tg_coverage *cov);
/* {name: number|string|bool|null} of named values (fmt_json.c). */
json_t *tg_report_json_values(const tg_named_value *values, size_t n);
/* What changed against the baseline, as the JSON result and SARIF's
** properties both write it (docs/formats.md): an array of {name, kind,
** status, baseline_ns, ...}; NULL when out of memory (fmt_json.c). */
json_t *tg_report_json_contributors(const tg_contributor *contributors, size_t n);

/* The name a person reads for a duration printed in its unit: without
** the "_ns" that JSON keeps beside the raw number (sum_duration_ns=75 ms
** reads sum_duration=75 ms). Points into buf or at the name. */
const char *tg_report_value_label(const tg_named_value *v, char *buf, size_t size);

/* One evidence entry as a sentence, the same in every human format: a
** row "TABLE rowid 12: 1000..5000 ns (4 us)"; an interval that is not the
** cited row's own span says what it is and keeps the row's span apart:
** "idle 711 ms (S..E ns) after TABLE rowid 20 (15 ms), before TABLE rowid
** 21", "device window 843 ms (S..E ns), first op TABLE rowid 1 (1.2 us),
** last op TABLE rowid 3000". Table names (from the trace) go through
** put_name, which escapes them for the format. */
typedef void (*tg_report_put_name)(FILE *out, const char *name);
void tg_report_evidence_sentence(FILE *out, const tg_evidence *e, int64_t origin, tg_report_put_name put_name);

/* Where the times people read start (docs/formats.md, "Times"): the
** trace's first record (coverage.run_first, or a result's read back);
** TG_NULL_I64 when it is not known, and then times are the trace's own ns. */
int64_t tg_report_origin(const tg_trace_result *t);
/* Whether field f of e is said by its sentence already (the row after a
** gap, a device's last op). */
bool tg_report_evidence_said(const tg_evidence *e, const tg_named_value *f);

/* The format of a trace's result (engine/trace/trace.h,
** TG_TRACE_FORMAT_LIST): what its header calls it and where its reproduce
** queries run. A result that names no format was written before the name
** was recorded, of an export: nsys. */
const tg_trace_format_def *tg_report_format(const tg_trace_result *tr);
/* What a trace is, as every header says it: "nsys 2024.5.1, schema 3.11",
** "Kineto JSON, schema 1"; a part the trace does not record says so:
** "nsys (version not recorded), schema not recorded"; versions go through
** put_name. */
void tg_report_trace_kind(FILE *out, const tg_trace_result *tr, tg_report_put_name put_name);

/* The workload fingerprint of a comparison (docs/regressions.md), one
** sentence for every format: "this trace's kernels account for 99.7% of
** the baseline's GPU time"; NULL when it was not compared (NaN). */
const char *tg_report_workload_sentence(const tg_baseline_cmp *b, char *buf, size_t size);

/* A cause's item (docs/host.md) as every line-oriented format says it,
** without indent or line end: "osrt usleep  2 calls, 720 ms (33.3%),
** thread main (tid 7, launches GPU work), from main in app  OSRT_API
** rowids 1002, 1001"; names through put_name. */
void tg_report_cause_item(FILE *out, tg_cause_kind kind, const tg_cause_item *it, tg_report_put_name put_name);
/* A host cause's window: "evidence row 2: S..E ns (720 ms), pid 7; 719 ms
** of it in traced calls of the threads that launch GPU work". */
void tg_report_cause_window(FILE *out, const tg_cause_window *win, int64_t origin);

/* FNV-1a, for stable fingerprints. */
uint64_t tg_report_hash(uint64_t h, const void *data, size_t len);
#define TG_REPORT_HASH_SEED 1469598103934665603ULL

/* Dump a JSON document (2-space indent, keys in insertion order, reals
** with 15 significant digits, a final newline); TG_EINTERNAL on a write
** error. Steals doc. */
tg_status tg_report_json_dump(json_t *doc, FILE *out);

/* The writers. */
/* The writers of TG_FORMAT_LIST's rows (report.h), one signature: the
** rule set is NULL for a merge and read only by those that list rules. */
#define TG_REPORT_WRITER(name) \
    tg_status name(const tg_run_result *run, const tg_ruleset *rs, const tg_report_opts *opts, FILE *out)
TG_REPORT_WRITER(tg_report_text);
TG_REPORT_WRITER(tg_report_json);
TG_REPORT_WRITER(tg_report_junit);
TG_REPORT_WRITER(tg_report_sarif);
TG_REPORT_WRITER(tg_report_github);
TG_REPORT_WRITER(tg_report_markdown);
TG_REPORT_WRITER(tg_report_html);   /* fmt_html.c */
/* The markdown report in at most max_bytes (report.h, TG_REPORT_*_MAX):
** what does not fit is left out block by block, the findings that fail
** the run last, and a closing line counts it, naming limit (the words
** beside the constant) and the reports that hold it. */
tg_status tg_report_markdown_within(const tg_run_result *run, const tg_report_opts *opts, FILE *out,
                                    size_t max_bytes, const char *limit);

#endif
