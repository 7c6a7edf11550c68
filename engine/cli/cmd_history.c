/*
** `tracegate history add|show|accept|report` and what `check --history`
** does with a history (docs/history.md): judge each trace against the
** baseline the history gives its workload, then append it as a run.
*/
#include "cli.h"
#include "inputs.h"
#include "outfile.h"
#include "../history/history.h"
#include "../report/json_read.h"
#include "tg_config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------- helpers */


/* A label is one line of printable text. */
static bool label_ok(const char *s)
{
    if (!*s || strlen(s) > 200) return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return false;
    return true;
}

static const char *db_of(const tg_cli_args *a)
{
    const char *db = tg_cli_value(a, TG_CLI_OPT_DB);
    if (!db) tg_cli_usage_error(a->cmd, "this command needs --db DB (an SQLite file or a postgresql:// URI)");
    return db;
}

/* What opening failed with, for the exit status: the diag's status. */
static int open_status(const char *db, tg_history_mode mode, tg_history **out)
{
    tg_diag diag;
    tg_diag_init(&diag);
    *out = tg_history_open(db, mode, &diag);
    int st = tg_cli_report_diag(&diag, *out ? TG_OK : TG_EUSAGE);
    tg_diag_clear(&diag);
    return *out ? TG_OK : st != TG_OK ? st : TG_EUSAGE;
}

/* ----------------------------------------------------- check --history */

struct tg_cli_history {
    const char *db;
    tg_history *h;
    tg_hist_run *runs;          /* one per trace of the run judged; label NULL: not recorded */
    size_t n;
    const char **notes;         /* one per trace judged: what judged it */
    size_t n_notes;
    tg_arena *arena;
};

const char *const *tg_cli_history_notes(const tg_cli_history *c, size_t *n)
{
    *n = c ? c->n_notes : 0;
    return c ? c->notes : NULL;
}

/* The sentence every format states for a trace judged against the
** history: which runs its baseline is, or why there is none. */
static const char *note_of(const tg_cli_history *c, const tg_trace_result *tr, const tg_hist_run *hr,
                           const tg_hist_choice *ch)
{
    const char *file = tr->file ? tr->file : "(unnamed trace)";
    const char *db = tg_history_name(c->h);
    if (!hr->workload)
        return tg_arena_printf(c->arena, "%s: its workload is new to %s (its kernels match none of the workloads "
                               "there); it is judged once the history holds %d of its runs", file, db,
                               TG_HISTORY_BASELINE_MIN);
    if (!ch->n_used)
        return tg_arena_printf(c->arena, "%s: %s holds %zu usable run%s of workload %s; a baseline needs %d",
                               file, db, ch->n_usable, ch->n_usable == 1 ? "" : "s", hr->workload,
                               TG_HISTORY_BASELINE_MIN);
    const char *l0 = ch->used[0]->label, *l1 = ch->used[ch->n_used - 1]->label;
    char since[512] = "";
    if (ch->since)
        snprintf(since, sizeof since, ", since the change accepted at %s (%s)", ch->since->label,
                 ch->since->reason ? ch->since->reason : "");
    char cut[256] = "";
    if (ch->cut_label)
        snprintf(cut, sizeof cut, ", before the change at %s that is not accepted", ch->cut_label);
    return tg_arena_printf(c->arena, "%s: judged against %zu run%s of workload %s in %s: %s%s%s%s%s", file,
                           ch->n_used, ch->n_used == 1 ? "" : "s", hr->workload, db, l0, ch->n_used > 1 ? " .. " : "",
                           ch->n_used > 1 ? l1 : "", since, cut);
}

int tg_cli_history_open(const char *db, bool record, tg_cli_history **out)
{
    *out = NULL;
    tg_cli_history *c = calloc(1, sizeof *c);
    if (!c || !(c->arena = tg_arena_new())) {
        free(c);
        return TG_EINTERNAL;
    }
    c->db = db;
    int st = open_status(db, record ? TG_HISTORY_WRITE : TG_HISTORY_READ, &c->h);
    if (st != TG_OK) {
        tg_arena_free(c->arena);
        free(c);
        return st;
    }
    *out = c;
    return TG_OK;
}

void tg_cli_history_close(tg_cli_history *c)
{
    if (!c) return;
    tg_history_close(c->h);
    tg_arena_free(c->arena);
    free(c);
}

/* Every regression rule of tr inconclusive: the history cannot judge yet. */
static bool too_few_runs(tg_trace_result *tr, const tg_hist_choice *ch, const char *db, tg_arena *a)
{
    char extra[512] = "";
    size_t l = 0;
    if (ch->cut_label)
        l += (size_t)snprintf(extra + l, sizeof extra - l,
                              "; the runs from %s on carry a change point no one accepted (tracegate history accept "
                              "--db DB --label %s --reason TEXT makes it the new normal)", ch->cut_label,
                              ch->cut_label);
    if (ch->n_other_metrics && l < sizeof extra)
        snprintf(extra + l, sizeof extra - l, "; %zu run%s of this workload measured the regression metrics "
                 "differently (another rule set) and %s left out", ch->n_other_metrics,
                 ch->n_other_metrics == 1 ? "" : "s", ch->n_other_metrics == 1 ? "is" : "are");
    for (size_t i = 0; i < tr->n_results; i++) {
        tg_rule_result *r = &tr->results[i];
        if (!r->regression || r->verdict == TG_V_ERROR || r->verdict == TG_V_SKIP) continue;
        r->verdict = TG_V_INCONCLUSIVE;
        r->baseline.inconclusive = true;
        r->message = tg_arena_printf(a, "inconclusive: %s holds %zu usable run%s of this workload and a baseline "
                                     "needs %d: %zu more run%s needed%s", db, ch->n_usable,
                                     ch->n_usable == 1 ? "" : "s", TG_HISTORY_BASELINE_MIN, ch->n_needed,
                                     ch->n_needed == 1 ? "" : "s", extra);
        if (!r->message) return false;
    }
    return true;
}

int tg_cli_history_judge(tg_cli_history *c, const tg_ruleset *rs, const tg_hist_meta *meta, tg_run_result *run,
                         bool allow_mismatch)
{
    c->runs = tg_arena_alloc(c->arena, (run->n_traces ? run->n_traces : 1) * sizeof *c->runs);
    c->notes = tg_arena_alloc(c->arena, (run->n_traces ? run->n_traces : 1) * sizeof *c->notes);
    if (!c->runs || !c->notes) return TG_EINTERNAL;
    c->n = run->n_traces;
    tg_diag diag;
    tg_diag_init(&diag);
    int st = TG_OK;
    for (size_t i = 0; i < run->n_traces && st == TG_OK; i++) {
        tg_trace_result *tr = &run->traces[i];
        tg_hist_run *hr = &c->runs[i];
        *hr = (tg_hist_run){0};
        if (tr->status != TG_OK) continue;   /* unreadable: neither judged nor recorded */
        tg_arena *ta = tr->arena ? tr->arena : run->arena;
        if (!tg_history_run_of(tr, rs, meta, c->arena, hr)) {
            st = TG_EINTERNAL;
            break;
        }
        if (!hr->workload) {
            tg_hist_run *latest = NULL;
            size_t n_latest = 0;
            st = tg_history_latest(c->h, c->arena, &latest, &n_latest, &diag);
            if (st != TG_OK) break;
            double min_match = tg_rules_param(rs, "gpu-time-regression", "min_workload_match",
                                              TG_BASELINE_DEFAULT_MIN_MATCH);
            hr->workload = tg_history_match(hr, latest, n_latest, min_match);
            for (size_t k = 0; hr->workload && k < n_latest; k++)
                if (!strcmp(latest[k].workload, hr->workload)) hr->workload_name = latest[k].workload_name;
        }
        tg_hist_run *runs = NULL;
        tg_hist_accept *acc = NULL;
        size_t n_runs = 0, n_acc = 0;
        if (hr->workload) {
            st = tg_history_load(c->h, hr->workload, TG_HIST_LOAD_SAMPLES | TG_HIST_LOAD_WORK | TG_HIST_LOAD_RECENT,
                                 c->arena, &runs, &n_runs, &diag);
            if (st == TG_OK) st = tg_history_accepts(c->h, c->arena, &acc, &n_acc, &diag);
            if (st != TG_OK) break;
        }
        tg_hist_choice ch;
        tg_baseline *b = tg_history_baseline(runs, n_runs, acc, n_acc, hr, rs, TG_VERSION, c->arena, &ch, &diag);
        hr->epoch = ch.since ? ch.since->run_id : 0;
        if (!b && ch.n_needed == 0) {
            st = TG_EINTERNAL;
            break;
        }
        if (!b) ch.n_used = 0;
        if (!(c->notes[c->n_notes++] = note_of(c, tr, hr, &ch))) {
            tg_baseline_free(b);
            st = TG_EINTERNAL;
            break;
        }
        if (!b) {
            if (!too_few_runs(tr, &ch, tg_history_name(c->h), ta)) st = TG_EINTERNAL;
            continue;
        }
        tg_run_result one = {.arena = run->arena, .traces = tr, .n_traces = 1};
        if (tg_baseline_apply(b, rs, &one, allow_mismatch, &diag) != TG_OK) st = TG_EUSAGE;
        tg_baseline_free(b);
    }
    int rst = tg_cli_report_diag(&diag, st);   /* the baseline's warnings: the outliers it left out */
    tg_diag_clear(&diag);
    return st != TG_OK ? (rst != TG_OK ? rst : st) : TG_OK;
}

/* Did a regression rule of tr fail (and gate: not suppressed)? */
static bool regressed(const tg_trace_result *tr)
{
    for (size_t i = 0; i < tr->n_results; i++) {
        const tg_rule_result *r = &tr->results[i];
        if (r->regression && r->verdict == TG_V_FAIL && !r->suppressed) return true;
    }
    return false;
}

/* The runs' verdicts, then one append of them all. */
static int append_runs(tg_history *h, const char *db, tg_hist_run *runs, size_t n, bool replace)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_status st = tg_history_append(h, runs, n, replace, &diag);
    int rst = tg_cli_report_diag(&diag, st);
    tg_diag_clear(&diag);
    if (st != TG_OK) {
        tg_cli_say("nothing was added to %s", db);
        return rst != TG_OK ? rst : (int)st;
    }
    return TG_OK;
}

int tg_cli_history_record(tg_cli_history *c, const tg_run_result *run, const tg_report_opts *gate, bool replace)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n && i < run->n_traces; i++) {
        if (!c->runs[i].label) continue;
        const tg_trace_result *tr = &run->traces[i];
        tg_run_result one = {.arena = run->arena, .traces = (tg_trace_result *)tr, .n_traces = 1};
        c->runs[i].verdict = tg_run_status(&one, gate);
        c->runs[i].regressed = regressed(tr);
        /* the rules' verdicts as judged against the history, not as the
        ** run was kept before it was judged */
        for (size_t m = 0; m < c->runs[i].n_metrics; m++)
            for (size_t k = 0; k < tr->n_results; k++)
                if (tr->results[k].rule && !strcmp(tr->results[k].rule, c->runs[i].metrics[m].rule))
                    c->runs[i].metrics[m].verdict = tg_verdict_name(tr->results[k].verdict);
        c->runs[k++] = c->runs[i];
    }
    if (k == 0) return TG_OK;
    return append_runs(c->h, c->db, c->runs, k, replace);
}

/* ------------------------------------------------------- history add */

/* Is the file a JSON result of tracegate check (not a Kineto trace)? Its
** first key says so: {"tool": "tracegate", ...}. */
static bool is_result(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    const char *p = buf;
    while (isspace((unsigned char)*p)) p++;
    if (*p++ != '{') return false;
    while (isspace((unsigned char)*p)) p++;
    if (strncmp(p, "\"tool\"", 6)) return false;
    p += 6;
    while (isspace((unsigned char)*p) || *p == ':') p++;
    return !strncmp(p, "\"tracegate\"", 11);
}

/* A result's regression rules must be the rule set's, as it defines them
** now: otherwise its numbers are of another measure. */
static bool result_fits(const tg_trace_result *tr, const tg_ruleset *rs, const char *path)
{
    for (size_t i = 0; i < tr->n_results; i++) {
        const tg_rule_result *r = &tr->results[i];
        if (!r->regression || !r->metric) continue;
        long k = tg_rules_find(rs, r->rule);
        const tg_rule_info *ri = k >= 0 ? tg_rules_info(rs, (size_t)k) : NULL;
        if (!ri || !ri->regression || !ri->metric || strcmp(ri->metric, r->metric) ||
            (ri->regression > 0) != (r->regression > 0)) {
            tg_cli_say("%s: regression rule %s was judged with another definition than the rules given (%s%s); "
                       "check the trace again with these rules, or pass the rules it was checked with (--rules)",
                       path, r->rule, ri ? "metric " : "no such rule", ri ? ri->metric ? ri->metric : "none" : "");
            return false;
        }
    }
    return true;
}

typedef struct add_state {
    const char **paths;
    size_t n_paths;
    tg_ruleset *rs;
    tg_inputs in;
    tg_run_result traces;       /* the traces checked */
    tg_run_result results;      /* the results read */
    tg_arena *arena;
    tg_history *h;
    char digest[8 + TG_SHA256_HEX];
} add_state;

static void add_free(add_state *s)
{
    if (s->traces.arena) tg_cli_run_free(&s->traces);
    if (s->results.arena) tg_arena_free(s->results.arena);
    tg_inputs_free(&s->in);
    tg_rules_free(s->rs);
    free(s->paths);
    tg_history_close(s->h);
    tg_arena_free(s->arena);
}

static int load_rules_for(const tg_cli_args *a, add_state *s, tg_cli_sets *sets)
{
    size_t n = 0;
    const char **paths = tg_cli_rule_paths(a->values[TG_CLI_OPT_RULES], a->n_values[TG_CLI_OPT_RULES], &n);
    if (!paths) return TG_EUSAGE;
    s->paths = paths;
    tg_diag diag;
    tg_diag_init(&diag);
    s->rs = tg_rules_load(paths, n, sets->sets, sets->n, &diag);
    int st = tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    if (!s->rs) return st != TG_OK ? st : TG_EUSAGE;
    return tg_cli_rules_digest(s->rs, NULL, s->digest);
}

/* The traces of the operands checked, the results read; exit status. */
static int gather(const tg_cli_args *a, add_state *s, const tg_hist_meta *meta, tg_hist_run **out, size_t *n_out)
{
    const char **traces = malloc((a->n_operands ? a->n_operands : 1) * sizeof *traces);
    const char **results = malloc((a->n_operands ? a->n_operands : 1) * sizeof *results);
    size_t nt = 0, nr = 0;
    int st = traces && results ? TG_OK : TG_EINTERNAL;
    for (size_t i = 0; st == TG_OK && i < a->n_operands; i++) {
        if (is_result(a->operands[i])) results[nr++] = a->operands[i];
        else traces[nt++] = a->operands[i];
    }
    if (st == TG_OK && nt) st = tg_inputs_resolve(traces, nt, &s->in);
    if (st == TG_OK && nt) {
        if (!(s->traces.arena = tg_arena_new())) st = TG_EINTERNAL;
        tg_check_plan plan = tg_check_plan_for(s->rs);
        plan.eval = (tg_eval_opts){.missing = tg_cli_choice(a, TG_CLI_OPT_MISSING, 0) == 1 ? TG_MISSING_SKIP
                                                                                            : TG_MISSING_FAIL,
                                   .has_baseline = true};
        plan.iteration_pattern = tg_cli_value(a, TG_CLI_OPT_PATTERN);
        if (st == TG_OK) st = tg_cli_evaluate(&s->in, &plan, tg_cli_count(a, TG_CLI_OPT_JOBS, 1), &s->traces);
        if (st == TG_ETRACE) tg_cli_say("nothing was added: every trace must be readable");
    }
    if (st == TG_OK && nr) {
        if (!(s->results.arena = tg_arena_new())) st = TG_EINTERNAL;
        for (size_t i = 0; st == TG_OK && i < nr; i++) {
            tg_diag diag;
            tg_diag_init(&diag);
            size_t before = s->results.n_traces;
            st = tg_result_read_json(results[i], &s->results, &diag);
            st = tg_cli_report_diag(&diag, st);
            tg_diag_clear(&diag);
            for (size_t t = before; st == TG_OK && t < s->results.n_traces; t++) {
                const tg_trace_result *tr = &s->results.traces[t];
                if (tr->status != TG_OK) {
                    tg_cli_say("%s: its trace %s was unreadable; nothing was added", results[i],
                               tr->file ? tr->file : "(unnamed)");
                    st = TG_ETRACE;
                } else if (!result_fits(tr, s->rs, results[i])) {
                    st = TG_EUSAGE;
                }
            }
        }
    }
    size_t n = (st == TG_OK ? s->traces.n_traces + s->results.n_traces : 0);
    tg_hist_run *runs = n ? tg_arena_alloc(s->arena, n * sizeof *runs) : NULL;
    if (n && !runs) st = TG_EINTERNAL;
    tg_report_opts gate = {.fail_on = TG_SEV_ERROR};
    for (size_t i = 0; st == TG_OK && i < n; i++) {
        bool from_result = i >= s->traces.n_traces;
        tg_run_result *src = from_result ? &s->results : &s->traces;
        tg_trace_result *tr = &src->traces[from_result ? i - s->traces.n_traces : i];
        tg_run_result one = {.arena = src->arena, .traces = tr, .n_traces = 1};
        tg_hist_meta m = *meta;
        m.verdict = tg_run_status(&one, &gate);
        /* a result judged against a baseline says whether it regressed:
        ** such a run is no baseline */
        m.regressed = from_result && regressed(tr);
        if (!tg_history_run_of(tr, s->rs, &m, s->arena, &runs[i])) st = TG_EINTERNAL;
    }
    free(traces);
    free(results);
    *out = runs;
    *n_out = n;
    return st;
}

int tg_cli_history_meta(const tg_cli_args *a, size_t n_runs, tg_hist_meta *meta, char time_buf[32])
{
    *meta = (tg_hist_meta){.label = tg_cli_value(a, TG_CLI_OPT_LABEL), .branch = tg_cli_value(a, TG_CLI_OPT_BRANCH),
                           .workload = tg_cli_value(a, TG_CLI_OPT_WORKLOAD), .tool_version = TG_VERSION};
    const char *t = tg_cli_value(a, TG_CLI_OPT_TIME);
    if (meta->label && !label_ok(meta->label))
        return tg_cli_usage_error(a->cmd, "--label wants one line of text (at most 200 bytes), not '%s'",
                                  meta->label);
    if (meta->workload && !label_ok(meta->workload))
        return tg_cli_usage_error(a->cmd, "--workload wants one line of text (at most 200 bytes), not '%s'",
                                  meta->workload);
    if (n_runs > 1 && (meta->label || t))
        return tg_cli_usage_error(a->cmd, "--label and --time name one run: give one trace with them, or leave "
                                  "them out (the labels are then the traces' file names)");
    if (t) {
        if (!tg_history_time(t, time_buf))
            return tg_cli_usage_error(a->cmd, "--time wants an ISO 8601 time such as 2026-12-07T03:00:00Z or "
                                      "2026-12-07, not '%s'", t);
        meta->time = time_buf;
    }
    return TG_OK;
}

int tg_cmd_history_add(const tg_cli_args *a)
{
    const char *db = db_of(a);
    if (!db) return TG_EUSAGE;
    char time_buf[32];
    tg_hist_meta meta;
    int st = tg_cli_history_meta(a, a->n_operands, &meta, time_buf);
    if (st != TG_OK) return st;
    add_state s = {0};
    tg_cli_sets sets = {0};
    if (!(s.arena = tg_arena_new())) return TG_EINTERNAL;
    st = tg_cli_param_sets(a, &sets);
    if (st == TG_OK) st = load_rules_for(a, &s, &sets);
    /* the history is opened before any trace is read: a bad --db is said at once */
    if (st == TG_OK) st = open_status(db, TG_HISTORY_WRITE, &s.h);
    meta.rules_digest = s.digest;
    tg_hist_run *runs = NULL;
    size_t n = 0;
    if (st == TG_OK) st = gather(a, &s, &meta, &runs, &n);
    if (st == TG_OK) st = append_runs(s.h, db, runs, n, tg_cli_flag(a, TG_CLI_OPT_REPLACE));
    for (size_t i = 0; st == TG_OK && i < n; i++)
        printf("added %s to workload %s (%s)\n", runs[i].label, runs[i].workload ? runs[i].workload : "?",
               runs[i].workload_name ? runs[i].workload_name : "?");
    add_free(&s);
    tg_cli_sets_free(&sets);
    return tg_cli_finish_output(NULL, "history add", st);
}

/* ------------------------------------------------- show, accept, report */

/* The whole history as a view, in arena. */
static int view_of(tg_history *h, tg_arena *arena, tg_hist_view *v)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_hist_run *runs = NULL;
    tg_hist_accept *acc = NULL;
    size_t n = 0, n_acc = 0;
    tg_status st = tg_history_load(h, NULL, TG_HIST_LOAD_WORK, arena, &runs, &n, &diag);
    if (st == TG_OK) st = tg_history_accepts(h, arena, &acc, &n_acc, &diag);
    int rst = tg_cli_report_diag(&diag, st);
    tg_diag_clear(&diag);
    if (st != TG_OK) return rst != TG_OK ? rst : (int)st;
    tg_cp_opts opts = TG_CP_OPTS_DEFAULT;
    return tg_history_view(runs, n, acc, n_acc, &opts, arena, v) ? TG_OK : TG_EINTERNAL;
}

int tg_cmd_history_show(const tg_cli_args *a)
{
    const char *db = db_of(a);
    if (!db) return TG_EUSAGE;
    bool json = tg_cli_choice(a, TG_CLI_OPT_FORMAT_DOC, 0) == 1;
    tg_history *h = NULL;
    int st = open_status(db, TG_HISTORY_READ, &h);
    tg_arena *arena = st == TG_OK ? tg_arena_new() : NULL;
    if (st == TG_OK && !arena) st = TG_EINTERNAL;
    tg_hist_view v;
    if (st == TG_OK) st = view_of(h, arena, &v);
    if (st == TG_OK) st = json ? tg_history_write_json(stdout, &v) : tg_history_write_text(stdout, &v);
    tg_arena_free(arena);
    tg_history_close(h);
    return tg_cli_finish_output(NULL, "history show", st);
}

int tg_cmd_history_accept(const tg_cli_args *a)
{
    const char *db = db_of(a);
    if (!db) return TG_EUSAGE;
    const char *label = tg_cli_value(a, TG_CLI_OPT_LABEL), *reason = tg_cli_value(a, TG_CLI_OPT_REASON);
    if (!label) return tg_cli_usage_error(a->cmd, "history accept needs --label L: the run whose change to accept");
    if (!reason || !*reason)
        return tg_cli_usage_error(a->cmd, "history accept needs --reason TEXT: why the change is the new normal");
    /* a history that does not exist is not made by accepting in it */
    tg_history *h = NULL;
    int st = open_status(db, TG_HISTORY_READ, &h);
    tg_history_close(h);
    h = NULL;
    if (st == TG_OK) st = open_status(db, TG_HISTORY_WRITE, &h);
    tg_arena *arena = tg_arena_new();
    char when[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (st == TG_OK) {
        tg_diag diag;
        tg_diag_init(&diag);
        tg_status ast = tg_history_accept(h, label, reason, when, &diag);
        st = tg_cli_report_diag(&diag, ast);
        tg_diag_clear(&diag);
        if (ast != TG_OK && st == TG_OK) st = ast;
    }
    if (st == TG_OK) printf("accepted the change at %s: later baselines start there\n", label);
    tg_arena_free(arena);
    tg_history_close(h);
    return tg_cli_finish_output(NULL, "history accept", st);
}

int tg_cmd_history_report(const tg_cli_args *a)
{
    const char *db = db_of(a);
    if (!db) return TG_EUSAGE;
    const char *out = tg_cli_value(a, TG_CLI_OPT_OUTPUT_PAGE);
    if (!out) return tg_cli_usage_error(a->cmd, "history report needs -o FILE (or -o - for standard output)");
    /* the page must not land on the history it is drawn from */
    tg_cli_reads reads = {0};
    int st = tg_cli_reads_add(&reads, db, "history") ? TG_OK : TG_EINTERNAL;
    tg_cli_output o = {out, "the page"};
    if (st == TG_OK) st = tg_cli_outputs_refused(&reads, &o, 1);
    tg_cli_reads_free(&reads);
    tg_history *h = NULL;
    if (st == TG_OK) st = open_status(db, TG_HISTORY_READ, &h);
    tg_arena *arena = st == TG_OK ? tg_arena_new() : NULL;
    if (st == TG_OK && !arena) st = TG_EINTERNAL;
    tg_hist_view v;
    if (st == TG_OK) st = view_of(h, arena, &v);
    if (st == TG_OK) {
        tg_cli_outfile of;
        st = tg_cli_outfile_open(&of, out, "the page");
        if (st == TG_OK) {
            bool produced = tg_history_write_html(of.f, &v, "tracegate history") == TG_OK;
            st = tg_cli_outfile_close(&of, produced || of.err);
        }
    }
    tg_arena_free(arena);
    tg_history_close(h);
    return tg_cli_finish_output(NULL, "history report", st);
}
