/*
** Reporters' front door (report.h): format names, the run's overall status
** and tally that every format states the same way, the verdict line, and
** the small helpers the fmt_*.c writers share (names, UTF-8 cleaning,
** hashing). Each format lives in its own fmt_*.c file.
*/
#include "report_int.h"
#include "../common/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const tg_format_names[TG_FMT_COUNT + 1] = {
#define X(id, name, label, writer) name,
    TG_FORMAT_LIST(X)
#undef X
    NULL,
};

const char *const tg_format_labels[TG_FMT_COUNT] = {
#define X(id, name, label, writer) label,
    TG_FORMAT_LIST(X)
#undef X
};

typedef tg_status (*report_writer)(const tg_run_result *run, const tg_ruleset *rs, const tg_report_opts *opts,
                                   FILE *out);

static const report_writer writers[TG_FMT_COUNT] = {
#define X(id, name, label, writer) writer,
    TG_FORMAT_LIST(X)
#undef X
};

bool tg_format_is_stream(tg_format f)
{
    return (unsigned)f < TG_FMT_COUNT && writers[f] != NULL;
}

int tg_format_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < TG_FMT_COUNT; i++)
        if (strcmp(name, tg_format_names[i]) == 0) return i;
    if (strcmp(name, "md") == 0) return TG_FMT_MARKDOWN;
    return -1;
}

const char *tg_format_name(tg_format f)
{
    return (unsigned)f < TG_FMT_COUNT ? tg_format_names[f] : "?";
}

/* ---------------------------------------------------------------- names */

const char *tg_report_value_label(const tg_named_value *v, char *buf, size_t size)
{
    /* only "_ns": a name ending in "_bytes" mostly names its argument
    ** (sum_bytes is sum(bytes)), and stripping it would lose what it is */
    const char *suffix = v->value.unit == TG_UNIT_NS ? "_ns" : NULL;
    size_t n = strlen(v->name), k = suffix ? strlen(suffix) : 0;
    if (!suffix || n <= k || strcmp(v->name + n - k, suffix) != 0 || n - k >= size) return v->name;
    memcpy(buf, v->name, n - k);
    buf[n - k] = 0;
    return buf;
}

/* "TABLE rowid N" and, when known, the row's own length: " (15 ms)". */
static void put_cited(FILE *out, const char *table, int64_t rowid, int64_t start, int64_t end,
                      tg_report_put_name put_name)
{
    put_name(out, table ? table : "?");
    fprintf(out, " rowid %lld", (long long)rowid);
    if (start != TG_NULL_I64 && end != TG_NULL_I64) {
        char buf[TG_FMT_BUF];
        fprintf(out, " (%s)", tg_fmt_num(buf, sizeof buf, (double)(end - start), TG_UNIT_NS));
    }
}

int64_t tg_report_origin(const tg_trace_result *t)
{
    if (!t) return TG_NULL_I64;
    if (t->coverage.set) return t->coverage.run_first;
    return t->read_origin_set ? t->read_origin : TG_NULL_I64;
}

/* A time as people read it: seconds from origin to the microsecond; the
** trace's own nanoseconds without one. */
static void put_time(FILE *out, int64_t at, int64_t origin)
{
    if (at == TG_NULL_I64) return;
    if (origin == TG_NULL_I64) fprintf(out, "%lld", (long long)at);
    else fprintf(out, "%.6f", (double)(at - origin) / 1e9);
}

static void put_span(FILE *out, int64_t start, int64_t end, int64_t origin)
{
    put_time(out, start, origin);
    fputs("..", out);
    put_time(out, end, origin);
    fputs(origin == TG_NULL_I64 ? " ns" : " s", out);
}

void tg_report_evidence_sentence(FILE *out, const tg_evidence *e, int64_t origin, tg_report_put_name put_name)
{
    char len[TG_FMT_BUF] = "?";
    bool known = e->start != TG_NULL_I64 && e->end != TG_NULL_I64;
    if (known) tg_fmt_num(len, sizeof len, (double)(e->end - e->start), TG_UNIT_NS);
    if (e->interval == TG_INTERVAL_IDLE || e->interval == TG_INTERVAL_DEVICE) {
        bool idle = e->interval == TG_INTERVAL_IDLE;
        fprintf(out, "%s %s (", idle ? "idle" : "device window", len);
        put_span(out, e->start, e->end, origin);
        fputs(idle ? ") after " : "), first op ", out);
        put_cited(out, e->table, e->rowid, e->row_start, e->row_end, put_name);
        if (e->next_table) {
            fputs(idle ? ", before " : ", last op ", out);
            put_cited(out, e->next_table, e->next_rowid, TG_NULL_I64, TG_NULL_I64, put_name);
        }
        return;
    }
    put_cited(out, e->table, e->rowid, TG_NULL_I64, TG_NULL_I64, put_name);
    if (e->start == TG_NULL_I64 && e->end == TG_NULL_I64) return;
    fputs(": ", out);
    put_span(out, e->start, e->end, origin);
    if (known) fprintf(out, " (%s)", len);
}

bool tg_report_evidence_said(const tg_evidence *e, const tg_named_value *f)
{
    static const char *const said[] = {"next_table", "next_rowid", "last_table", "last_rowid"};
    if (e->interval == TG_INTERVAL_ROW) return false;
    for (size_t k = 0; k < sizeof said / sizeof *said; k++)
        if (!strcmp(f->name, said[k])) return true;
    return false;
}

/* ---------------------------------------------------------------- traces */

const tg_trace_format_def *tg_report_format(const tg_trace_result *tr)
{
    const tg_trace_format_def *f = tg_trace_format_of(tr->trace_format);
    return f ? f : &tg_trace_formats[TG_FORMAT_NSYS];   /* json_read refuses a name it does not know */
}

void tg_report_trace_kind(FILE *out, const tg_trace_result *tr, tg_report_put_name put_name)
{
    const tg_trace_format_def *f = tg_report_format(tr);
    fputs(f->label, out);
    if (f->versioned && tr->nsys_version) {
        fputc(' ', out);
        put_name(out, tr->nsys_version);
    } else if (f->versioned) {
        fputs(" (version not recorded)", out);
    }
    if (tr->schema_version) {
        fputs(", schema ", out);
        put_name(out, tr->schema_version);
    } else {
        fputs(", schema not recorded", out);
    }
}

const char *tg_report_workload_sentence(const tg_baseline_cmp *b, char *buf, size_t size)
{
    if (!b->present || isnan(b->workload_match)) return NULL;
    char share[TG_FMT_BUF];
    snprintf(buf, size, "this trace's kernels account for %s of the baseline's GPU time",
             tg_fmt_num(share, sizeof share, b->workload_match, TG_UNIT_RATIO));
    return buf;
}

/* ---------------------------------------------------------------- causes */

static void put_rowids(FILE *out, const tg_cause_item *it, tg_report_put_name put_name)
{
    if (!it->n_rowids) return;
    fputs("  ", out);
    put_name(out, it->table);
    fprintf(out, " rowid%s ", it->n_rowids > 1 ? "s" : "");
    for (size_t i = 0; i < it->n_rowids; i++) fprintf(out, "%s%lld", i ? ", " : "", (long long)it->rowids[i]);
    if (it->n_rowids < (size_t)it->count) fputs(", ...", out);
}

void tg_report_cause_item(FILE *out, tg_cause_kind kind, const tg_cause_item *it, tg_report_put_name put_name)
{
    char t[TG_FMT_BUF], sh[TG_FMT_BUF], l[TG_FMT_BUF];
    if (kind == TG_CAUSE_HOST) fprintf(out, "%s ", it->source);
    put_name(out, it->name ? it->name : "?");
    if (kind == TG_CAUSE_CALL_SITE && it->module) {
        fputs(" in ", out);
        put_name(out, it->module);
    }
    tg_fmt_num(t, sizeof t, it->time, TG_UNIT_NS);
    tg_fmt_num(sh, sizeof sh, it->share, TG_UNIT_RATIO);
    if (kind == TG_CAUSE_LAUNCH) {
        tg_fmt_num(l, sizeof l, it->launch_time, TG_UNIT_NS);
        fprintf(out, "  %lld kernel%s, %s (launch calls %s), %s of the short ones", (long long)it->count,
                it->count == 1 ? "" : "s", t, l, sh);
        return;
    }
    const char *noun = kind == TG_CAUSE_HOST && !strcmp(it->source, "nvtx") ? "range" : kind == TG_CAUSE_HOST ? "call"
                                                                                                       : "row";
    fprintf(out, "  %lld %s%s, %s (%s)", (long long)it->count, noun, it->count == 1 ? "" : "s", t, sh);
    if (kind == TG_CAUSE_HOST) {
        fputs(", thread ", out);
        if (it->thread) {
            put_name(out, it->thread);
            fputc(' ', out);
        }
        fprintf(out, "(tid %lld%s)", (long long)it->tid, it->launch_thread ? ", launches GPU work" : "");
        if (it->call_site) {
            fputs(", from ", out);
            put_name(out, it->call_site);
            if (it->call_module) {
                fputs(" in ", out);
                put_name(out, it->call_module);
            }
        }
    }
    put_rowids(out, it, put_name);
}

void tg_report_cause_window(FILE *out, const tg_cause_window *win, int64_t origin)
{
    char d[TG_FMT_BUF], a[TG_FMT_BUF];
    tg_fmt_num(d, sizeof d, (double)(win->end - win->start), TG_UNIT_NS);
    tg_fmt_num(a, sizeof a, (double)win->accounted, TG_UNIT_NS);
    fprintf(out, "evidence row %zu: ", win->evidence + 1);
    put_span(out, win->start, win->end, origin);
    fprintf(out, " (%s), pid %lld; %s of it in traced calls of the threads that launch GPU work", d,
            (long long)win->pid, a);
}

void tg_report_backslash_sink(void *ctx, const char *s, size_t n)
{
    const tg_backslash_sink *k = ctx;
    for (size_t i = 0; i < n; i++) {
        if (s[i] && strchr(k->specials, s[i])) fputc('\\', k->out);
        fputc(s[i], k->out);
    }
}

void tg_report_file_sink(void *ctx, const char *s, size_t n)
{
    tg_file_sink *k = ctx;
    fwrite(s, 1, n, k->out);
    for (size_t i = 0; i < n; i++) k->chars += ((unsigned char)s[i] & 0xC0) != 0x80;
    if (n) k->last = s[n - 1];
}

const char *tg_report_basename(const char *path)
{
    if (!path) return "";
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* ---------------------------------------------------------------- verdict */

static const tg_report_opts default_opts = {.fail_on = TG_SEV_ERROR};

bool tg_report_gates(const tg_rule_result *r, const tg_report_opts *opts)
{
    if (!opts) opts = &default_opts;
    if (opts->fail_never || r->suppressed) return false;
    if (r->verdict == TG_V_INCONCLUSIVE) return opts->inconclusive_fail;
    if (r->verdict != TG_V_FAIL) return false;
    if (r->regression != 0 || r->baseline.regression) return true;
    return r->severity >= opts->fail_on;
}

tg_status tg_report_error_class(const tg_rule_result *r)
{
    if (r->error_status != TG_OK) return r->error_status;
    return r->missing_data ? TG_ETRACE : TG_EINTERNAL;
}

/* An error of exit class st, counted where its class says. */
static void count_error(tg_report_tally *out, tg_status st)
{
    if (st == TG_ETRACE) out->lacking++;
    else if (st == TG_EUSAGE) out->usage_errors++;
    else out->internal_errors++;
}

void tg_report_tally_run(const tg_run_result *run, const tg_report_opts *opts,
                         tg_report_tally *out)
{
    memset(out, 0, sizeof *out);
    if (!run) return;
    out->traces = run->n_traces;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        if (tr->status != TG_OK) {
            out->traces_unreadable++;
            count_error(out, tr->status);
        }
        for (size_t i = 0; i < tr->n_results; i++) {
            const tg_rule_result *r = &tr->results[i];
            out->results++;
            if (r->suppressed && (r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE)) {
                out->suppressed++;   /* a finding accepted: counted apart, never gating */
                continue;
            }
            switch (r->verdict) {
            case TG_V_PASS: out->passed++; break;
            case TG_V_FAIL:
                out->failed++;
                out->failed_by_severity[(unsigned)r->severity < 3 ? r->severity : TG_SEV_ERROR]++;
                if (tg_report_gates(r, opts)) out->gating++;
                if (r->baseline.present && r->baseline.regression)
                    out->failed_regressions[(unsigned)r->severity < 3 ? r->severity : TG_SEV_ERROR]++;
                break;
            case TG_V_SKIP: out->skipped++; break;
            case TG_V_INCONCLUSIVE:
                out->inconclusive++;
                if (tg_report_gates(r, opts)) out->gating++;
                break;
            default:
                out->errors++;
                if (r->missing_data || tg_report_error_class(r) == TG_ETRACE) out->missing_data++;
                count_error(out, tg_report_error_class(r));
                break;
            }
            if (r->baseline.present && r->baseline.regression) out->regressions++;
            if (r->baseline.present && r->baseline.improvement) out->improvements++;
        }
    }
}

tg_status tg_report_exit_status(const tg_run_result *run, const tg_report_opts *opts)
{
    tg_report_tally t;
    tg_report_tally_run(run, opts, &t);
    if (t.internal_errors) return TG_EINTERNAL;
    if (t.usage_errors) return TG_EUSAGE;
    if (t.gating) return TG_FAIL;
    if (t.lacking) return TG_ETRACE;
    return TG_OK;
}

tg_run_state tg_report_run_state(const tg_run_result *run, const tg_report_opts *opts)
{
    tg_status st = tg_report_exit_status(run, opts);
    return st == TG_OK ? TG_RUN_PASS : st == TG_FAIL ? TG_RUN_FAIL : TG_RUN_ERROR;
}

const char *tg_run_status(const tg_run_result *run, const tg_report_opts *opts)
{
    return tg_run_state_name(tg_report_run_state(run, opts));
}

/* Append "N thing(s)" to buf when n > 0, separated by ", ". */
static void add_part(char *buf, size_t size, size_t n, const char *one, const char *many)
{
    if (n == 0) return;
    size_t len = strlen(buf);
    if (len >= size) return;
    snprintf(buf + len, size - len, "%s%zu %s", len ? ", " : "", n, n == 1 ? one : many);
}

char *tg_report_verdict_line(const tg_run_result *run, const tg_report_opts *opts,
                             char *buf, size_t size)
{
    tg_report_tally t;
    tg_report_tally_run(run, opts, &t);
    char parts[320] = "";
    /* findings by severity first, then what could not be judged: "error"
    ** names a severity only, never a rule that could not be evaluated; a
    ** failing regression is said once, as a regression */
    add_part(parts, sizeof parts, t.failed_by_severity[TG_SEV_ERROR] - t.failed_regressions[TG_SEV_ERROR],
             "error finding", "error findings");
    add_part(parts, sizeof parts, t.failed_by_severity[TG_SEV_WARNING] - t.failed_regressions[TG_SEV_WARNING],
             "warning finding", "warning findings");
    add_part(parts, sizeof parts, t.failed_by_severity[TG_SEV_INFO] - t.failed_regressions[TG_SEV_INFO],
             "info finding", "info findings");
    add_part(parts, sizeof parts, t.regressions, "regression", "regressions");
    add_part(parts, sizeof parts, t.inconclusive, "inconclusive", "inconclusive");
    add_part(parts, sizeof parts, t.traces_unreadable, "unreadable trace", "unreadable traces");
    add_part(parts, sizeof parts, t.missing_data, "rule lacking data", "rules lacking data");
    add_part(parts, sizeof parts, t.errors - t.missing_data, "rule not evaluated", "rules not evaluated");
    add_part(parts, sizeof parts, t.suppressed, "suppressed", "suppressed");
    add_part(parts, sizeof parts, t.skipped, "skipped", "skipped");
    if (!parts[0])
        snprintf(parts, sizeof parts, "%zu %s passed", t.passed, t.passed == 1 ? "rule" : "rules");
    snprintf(buf, size, "%s \xe2\x80\x94 %s in %zu %s",
             tg_verdict_upper(tg_run_state_verdict(tg_report_run_state(run, opts))),
             parts, t.traces, t.traces == 1 ? "trace" : "traces");
    return buf;
}

uint64_t tg_report_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* ---------------------------------------------------------------- dispatch */

tg_status tg_report_write(tg_format fmt, const tg_run_result *run, const tg_ruleset *rs,
                          const tg_report_opts *opts, FILE *out)
{
    if (!run || !out) return TG_EINTERNAL;
    if (!opts) opts = &default_opts;
    if (!tg_format_is_stream(fmt)) return TG_EINTERNAL;
    tg_status st = writers[fmt](run, rs, opts, out);
    if (st == TG_OK && (fflush(out) != 0 || ferror(out))) st = TG_EINTERNAL;
    return st;
}

/* ---------------------------------------------------------------- reproduce files */

bool tg_report_is_finding(const tg_rule_result *r)
{
    return r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE;
}

static const char *reproduce_query(const tg_rule_result *r, bool cause)
{
    if (!tg_report_is_finding(r)) return NULL;
    return cause ? (r->cause ? r->cause->reproduce : NULL) : r->reproduce;
}

/* s into buf at o with every byte but [A-Za-z0-9._-] as '_': a name
** that is one file in the folder, whatever the trace or rule is called. */
static size_t put_safe(char *buf, size_t size, size_t o, const char *s)
{
    for (; s && *s && o + 1 < size; s++)
        buf[o++] = ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                    strchr("._-", *s)) ? *s : '_';
    buf[o] = 0;
    return o;
}

size_t tg_report_reproduce_name(const tg_run_result *run, size_t t, size_t i, bool cause, char *buf, size_t size)
{
    if (!size) return 0;
    buf[0] = 0;
    if (t >= run->n_traces || i >= run->traces[t].n_results) return 0;
    const tg_trace_result *tr = &run->traces[t];
    const tg_rule_result *r = &tr->results[i];
    if (!reproduce_query(r, cause)) return 0;
    /* the trace's position first: two traces of one name stay apart */
    int n = snprintf(buf, size, "%02zu-", t + 1);
    if (n < 0 || (size_t)n >= size) return 0;
    size_t o = put_safe(buf, size, (size_t)n, tg_report_basename(tr->file));
    o = put_safe(buf, size, o, "-");
    o = put_safe(buf, size, o, r->rule ? r->rule : "rule");
    n = snprintf(buf + o, size - o, "%s.%s", cause ? ".cause" : "", tg_query_lang_names[tg_report_format(tr)->query]);
    return n < 0 || (size_t)n >= size - o ? 0 : o + (size_t)n;
}

tg_status tg_report_reproduce_file(const tg_run_result *run, size_t t, size_t i, bool cause, FILE *out)
{
    const tg_trace_result *tr = &run->traces[t];
    const tg_rule_result *r = &tr->results[i];
    const char *q = reproduce_query(r, cause);
    if (!q) return TG_EINTERNAL;
    const tg_trace_format_def *f = tg_report_format(tr);
    const char *c = f->query == TG_QUERY_SQL ? "--" : "#";
    /* the comment lines: escaped like every name a trace chose, so that a
    ** file or rule name cannot end the comment and add a statement */
    fprintf(out, "%s tracegate %s: ", c, cause ? "cause of" : "finding");
    tg_text_fput(out, r->rule ? r->rule : "?", TG_TEXT_CAP_NAME, 0);
    fprintf(out, " (%s) on ", tg_verdict_name(r->verdict));
    tg_text_fput(out, tr->file ? tr->file : "?", TG_TEXT_CAP_TEXT, 0);
    fprintf(out, "\n%s ", c);
    tg_text_fput(out, r->message ? r->message : r->title ? r->title : "", TG_TEXT_CAP_TEXT, 0);
    fprintf(out, "\n%s run with %s: %s\n", c, f->reproduce_with,
            f->query == TG_QUERY_SQL ? "sqlite3 -readonly TRACE < THIS_FILE" : "jq -f THIS_FILE TRACE (gzip -dc a .json.gz first)");
    fputs(q, out);
    fputc('\n', out);
    return ferror(out) ? TG_EINTERNAL : TG_OK;
}
