/*
** Reporters: render a tg_run_result in the formats of docs/formats.md (text,
** json, junit, sarif, github, markdown, html). They only read the result and the
** rule set; they write to a FILE the CLI opened, and never exit.
*/
#ifndef TG_REPORT_H
#define TG_REPORT_H

#include <stdio.h>
#include "../eval/result.h"
#include "../rules/rules.h"

/* The output formats (docs/formats.md), one row each: X(ID, name, what the
** CLI calls its output, writer). The writer renders the whole run into a
** stream; sql has none: it is a folder of one reproduce file per finding,
** which the CLI writes file by file (tg_report_reproduce_file). */
#define TG_FORMAT_LIST(X) \
    X(TEXT, "text", "the text report", tg_report_text) \
    X(JSON, "json", "the json report", tg_report_json) \
    X(JUNIT, "junit", "the junit report", tg_report_junit) \
    X(SARIF, "sarif", "the sarif report", tg_report_sarif) \
    X(GITHUB, "github", "the github report", tg_report_github) \
    X(MARKDOWN, "markdown", "the markdown report", tg_report_markdown) \
    X(HTML, "html", "the html report", tg_report_html) \
    X(SQL, "sql", "the reproduce queries", NULL)

typedef enum tg_format {
#define X(id, name, label, writer) TG_FMT_##id,
    TG_FORMAT_LIST(X)
#undef X
    TG_FMT_COUNT
} tg_format;

/* The names in order, NULL-terminated (the CLI's choices and hints). */
extern const char *const tg_format_names[TG_FMT_COUNT + 1];
/* What each is called in messages ("the json report"). */
extern const char *const tg_format_labels[TG_FMT_COUNT];
/* True when the format is written as one stream (all but sql). */
bool tg_format_is_stream(tg_format f);

/* "text" -> TG_FMT_TEXT ("md" is markdown too); -1 when unknown. */
int tg_format_parse(const char *name);
const char *tg_format_name(tg_format f);

typedef struct tg_report_opts {
    bool color;                /* text: ANSI colours */
    bool quiet;                /* text: only failures and the verdict line */
    tg_severity fail_on;       /* for the overall verdict */
    bool fail_never;           /* --fail-on never */
    bool inconclusive_fail;    /* --inconclusive=fail: an inconclusive result fails the run */
    const char *tool_version;
    /* github: append the markdown summary to this file (the CLI passes
    ** $GITHUB_STEP_SUMMARY); NULL = no summary. */
    const char *step_summary_path;
    /* json: the identity of the rule set that judged the run ("sha256:" and
    ** 64 hex digits, docs/formats.md "Where a result comes from"); NULL:
    ** none (a merge of results judged by different sets writes none). */
    const char *rules_digest;
    /* Sentences about the whole run that every format states (merge:
    ** "results judged by different rule sets were merged, as
    ** --allow-mixed-rules allowed: ..."). */
    const char *const *notes;
    size_t n_notes;
    /* json: why merge could not compare ranks (also one of the notes);
    ** NULL: compared, or nothing to compare */
    const char *ranks_not_compared;
    /* sarif: the folder of the built-in rules, whose files are named
    ** relative to it (uriBaseId TRACEGATE_RULES), and where people read
    ** about the tool (informationUri); NULL: none */
    const char *builtin_rules_dir;
    const char *info_uri;
    /* text: print each reproduce query whole (--reproduce); else one line
    ** saying how to get it, naming its file in sql_dir when -o sql=DIR
    ** writes them there (tg_report_reproduce_name) */
    bool reproduce_inline;
    const char *sql_dir;
    /* markdown, github: the HTML and JSON reports written with it, that
    ** a markdown report cut to GitHub's size names for the rest; NULL:
    ** none (the report then says how to get one) */
    const char *html_path;
    const char *json_path;
} tg_report_opts;

/* The reproduce files of -o sql=DIR (docs/formats.md, "sql"): one per
** finding (a failing or inconclusive result) with a query, and one for its
** cause's query. tg_report_reproduce_name gives the file's name
** ("01-drv_sync_memcpy.sqlite-sync-memcpy.sql", ".cause.sql", ".jq" for a
** Kineto trace's jq), 0 when result i of trace t has no such query (else
** the name's length); tg_report_reproduce_file writes the file: a comment
** with the finding and the command that runs it, then the query. */
bool tg_report_is_finding(const tg_rule_result *r);
size_t tg_report_reproduce_name(const tg_run_result *run, size_t t, size_t i, bool cause, char *buf, size_t size);
tg_status tg_report_reproduce_file(const tg_run_result *run, size_t t, size_t i, bool cause, FILE *out);

/* True when this result makes the run fail under opts: a FAIL at or
** above opts->fail_on, a FAIL of a regression rule whatever its severity,
** or (opts->inconclusive_fail) an INCONCLUSIVE result; never with
** opts->fail_never. opts may be NULL (fail_on error). */
bool tg_report_gates(const tg_rule_result *r, const tg_report_opts *opts);

/* The exit class of an ERROR result: TG_ETRACE (the trace lacks what the
** rule needs), TG_EUSAGE (the trace does not fit the baseline) or
** TG_EINTERNAL. */
tg_status tg_report_error_class(const tg_rule_result *r);

/* The exit status of a run (docs/formats.md, "Run status and
** exit status"); when several apply the first of these wins:
**   4 an internal error (a trace or rule that failed for that reason),
**   2 a trace that does not fit the baseline (or a bad pattern),
**   1 a result that gates (tg_report_gates),
**   3 a trace unreadable or lacking data a rule needs,
**   0 otherwise.
** A real finding thus fails the gate (1) even when another trace could not
** be read; the report still lists what was not checked. */
tg_status tg_report_exit_status(const tg_run_result *run, const tg_report_opts *opts);

/* Overall status of a run, the same in every format: pass (exit 0),
** fail (1) or error (2, 3 or 4), from tg_report_exit_status; and its name
** ("pass", "fail", "error": TG_RUN_STATE_LIST, common/vocab.h). */
tg_run_state tg_report_run_state(const tg_run_result *run, const tg_report_opts *opts);
const char *tg_run_status(const tg_run_result *run, const tg_report_opts *opts);

/* What a run contains, counted the same way by every format. */
typedef struct tg_report_tally {
    size_t traces, traces_unreadable;
    size_t results;                /* rule results over all traces */
    size_t passed, failed, skipped, errors, inconclusive;
    size_t missing_data;           /* ERROR results: the capture lacks their data */
    size_t suppressed;             /* findings a suppression accepts (in no other count) */
    size_t failed_by_severity[3];  /* FAIL results, indexed by tg_severity */
    size_t gating;                 /* results that make the run fail */
    size_t regressions, improvements;  /* baseline comparisons */
    size_t failed_regressions[3];  /* FAIL results that are regressions, by severity (in failed_by_severity too) */
    /* errors (rule results and traces) by exit class */
    size_t lacking, usage_errors, internal_errors;
} tg_report_tally;

void tg_report_tally_run(const tg_run_result *run, const tg_report_opts *opts,
                         tg_report_tally *out);

/* One line saying the verdict and what it rests on, without a newline:
** "FAIL — 2 errors, 1 warning in 3 traces". Returns buf. */
char *tg_report_verdict_line(const tg_run_result *run, const tg_report_opts *opts,
                             char *buf, size_t size);

/* The JSON result lists each missing rank of a merge (missing_ranks)
** while there are at most this many; missing_rank_runs and
** missing_rank_count always say them (docs/formats.md, "merge"). */
#define TG_MISSING_RANKS_LISTED 1024

/* GitHub's limits, the markdown report's budget for each place it goes
** (docs/formats.md, "markdown"): a pull-request comment (-o markdown,
** -f markdown) takes 65,536 characters, the API refusing a longer one;
** the job summary file (-f github) 1 MiB, the runner dropping a larger
** one whole. Both are counted in UTF-8 bytes: the runner compares the
** file's size, and a comment's characters, as code points or UTF-16
** code units, are never more than its UTF-8 bytes. Each comes with the
** words the report uses when it had to leave something out. */
#define TG_REPORT_COMMENT_MAX ((size_t)65536)
#define TG_REPORT_COMMENT_LIMIT "the 65,536 characters of a GitHub comment"
#define TG_REPORT_SUMMARY_MAX ((size_t)1 << 20)
#define TG_REPORT_SUMMARY_LIMIT "the 1 MiB of a GitHub job summary (what earlier steps wrote counts)"

/* Write the run in one format. rs may be NULL (rules then described from the
** results alone). Returns TG_OK or TG_EINTERNAL (write error). */
tg_status tg_report_write(tg_format fmt, const tg_run_result *run, const tg_ruleset *rs,
                          const tg_report_opts *opts, FILE *out);

#endif
