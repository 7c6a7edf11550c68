/*
** SARIF 2.1.0, for code-scanning views (GitHub code scanning, IDEs). The
** driver lists the rule set's rules (or, without one, the rules the
** results name); each failing finding is one SARIF result located at the
** rule's definition (the file and line of its YAML), since a trace has no
** source lines. Passes and skips are not SARIF results; unreadable traces
** and rule errors become tool execution notifications, which mark the
** invocation unsuccessful (a regression rule that passed outside the
** baseline's band is a note there, which does not). The fingerprint hashes the rule id and the
** trace's file name, so a finding keeps its identity across runs.
**
** The texts people read in those views (message.text, rule descriptions)
** go through tg_text_escape (engine/common/text.h) and its caps, like every
** human-facing format; ids, properties and locations keep the exact
** values, as JSON does.
*/
#include "report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One driver rule, from the rule set or from a result. */
typedef struct sarif_rule {
    const char *id, *title, *advice, *explain;
    tg_severity severity;
    const char *const *tags;
    size_t n_tags;
} sarif_rule;

/* The bases of relative artifact URIs (SARIF 3.4.4, uriBaseId): the
** working directory (a user's repository, where code scanning resolves
** them) and the built-in rules' folder. X(id, name). */
#define SARIF_BASE_LIST(X) \
    X(SRCROOT, "SRCROOT") \
    X(RULES, "TRACEGATE_RULES")

enum {
#define X(id, name) SARIF_BASE_##id,
    SARIF_BASE_LIST(X)
#undef X
    SARIF_BASE_COUNT
};

static const char *const sarif_base_names[SARIF_BASE_COUNT] = {
#define X(id, name) name,
    SARIF_BASE_LIST(X)
#undef X
};

typedef struct sarif_ctx {
    sarif_rule *rules;
    size_t n_rules, cap;
    bool ok;
    const char *base[SARIF_BASE_COUNT];   /* absolute folders; "" when unknown */
    bool base_used[SARIF_BASE_COUNT];
    char cwd[4096];
} sarif_ctx;

static void put(sarif_ctx *c, json_t *obj, const char *key, json_t *val)
{
    if (!obj) json_decref(val);
    if (!obj || !val || json_object_set_new(obj, key, val) != 0) c->ok = false;
}

static void append(sarif_ctx *c, json_t *arr, json_t *val)
{
    if (!arr) json_decref(val);
    if (!arr || !val || json_array_append_new(arr, val) != 0) c->ok = false;
}

/* {"text": s} with s escaped and capped for a reader. */
static json_t *text_obj(sarif_ctx *c, const char *s, size_t cap)
{
    json_t *o = json_object();
    char *clean = tg_text_dup(s ? s : "", cap, TG_TEXT_KEEP_NEWLINES);
    put(c, o, "text", clean ? json_string(clean) : NULL);
    free(clean);
    return o;
}

/* A piece of a composed message, escaped and capped. */
static void put_piece(FILE *m, const char *s, size_t cap)
{
    tg_text_fput(m, s, cap, TG_TEXT_KEEP_NEWLINES);
}

static long find_rule(const sarif_ctx *c, const char *id)
{
    for (size_t i = 0; i < c->n_rules; i++)
        if (id && c->rules[i].id && strcmp(c->rules[i].id, id) == 0) return (long)i;
    return -1;
}

static void add_rule(sarif_ctx *c, sarif_rule r)
{
    if (!TG_PUSH(c->rules, c->n_rules, c->cap, r)) c->ok = false;
}

/* The rule set's enabled rules first (in its order), then any rule a
** result names that is not among them. */
static void collect_rules(sarif_ctx *c, const tg_run_result *run, const tg_ruleset *rs)
{
    size_t n = rs ? tg_rules_count(rs) : 0;
    for (size_t i = 0; i < n; i++) {
        const tg_rule_info *ri = tg_rules_info(rs, i);
        if (!ri || !ri->enabled || find_rule(c, ri->id) >= 0) continue;
        add_rule(c, (sarif_rule){ri->id, ri->title, ri->advice, ri->explain, ri->severity,
                                 ri->tags, ri->n_tags});
    }
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            if (r->rule && find_rule(c, r->rule) < 0)
                add_rule(c, (sarif_rule){r->rule, r->title, r->advice, NULL, r->severity, NULL, 0});
        }
}

/* "sync-memcpy" -> "SyncMemcpy": SARIF wants an identifier-like name. */
static json_t *pascal_name(const char *id)
{
    size_t len = strlen(id);
    char *s = malloc(len + 1);
    if (!s) return NULL;
    size_t o = 0;
    bool up = true;
    for (const char *p = id; *p; p++) {
        if (*p == '-' || *p == '_' || *p == '.' || *p == ' ') {
            up = true;
            continue;
        }
        s[o++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
        up = false;
    }
    s[o] = 0;
    json_t *j = tg_report_json_str(s);
    free(s);
    return j;
}

static json_t *rule_json(sarif_ctx *c, const sarif_rule *r)
{
    json_t *o = json_object();
    put(c, o, "id", tg_report_json_str(r->id));
    put(c, o, "name", pascal_name(r->id));
    put(c, o, "shortDescription", text_obj(c, r->title ? r->title : r->id, TG_TEXT_CAP_TEXT));
    if (r->explain) put(c, o, "fullDescription", text_obj(c, r->explain, TG_TEXT_CAP_LONG));
    put(c, o, "help", text_obj(c, r->advice ? r->advice : r->title ? r->title : r->id, TG_TEXT_CAP_TEXT));
    json_t *conf = json_object();
    put(c, conf, "level", json_string(tg_severity_sarif(r->severity)));
    put(c, o, "defaultConfiguration", conf);
    json_t *props = json_object(), *tags = json_array();
    for (size_t i = 0; i < r->n_tags; i++) append(c, tags, tg_report_json_str(r->tags[i]));
    put(c, props, "tags", tags);
    put(c, o, "properties", props);
    return o;
}

/* path percent-encoded as a URI reference (reserved bytes escaped),
** after prefix ("" or "file://"). */
static json_t *encode_uri(const char *prefix, const char *path)
{
    size_t len = strlen(path);
    char *s = malloc(3 * len + strlen(prefix) + 2);
    if (!s) return NULL;
    size_t o = (size_t)sprintf(s, "%s", prefix);
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            s[o++] = (char)*p;
        else
            o += (size_t)sprintf(s + o, "%%%02X", *p);
    }
    s[o] = 0;
    json_t *j = json_string(s);
    free(s);
    return j;
}

/* The base path lies under, or -1. */
static int base_of(const sarif_ctx *c, const char *path)
{
    int best = -1;
    size_t best_len = 0;
    for (int b = 0; b < SARIF_BASE_COUNT; b++) {
        size_t n = strlen(c->base[b]);
        /* the longest base wins: the built-in rules inside the working
        ** directory (tracegate's own tree) are named from their folder */
        if (n > 1 && n > best_len && strncmp(path, c->base[b], n) == 0 && path[n] == '/') {
            best = b;
            best_len = n;
        }
    }
    return best;
}

/* An artifactLocation for a path: relative to the working directory
** (SRCROOT) or the built-in rules' folder (TRACEGATE_RULES) when it lies
** below one, with that uriBaseId; else a file:// URI. */
static json_t *artifact_json(sarif_ctx *c, const char *path)
{
    json_t *art = json_object();
    while (path[0] == '.' && path[1] == '/') path += 2;
    int b = path[0] == '/' ? base_of(c, path) : SARIF_BASE_SRCROOT;
    if (b < 0) {
        put(c, art, "uri", encode_uri("file://", path));
        return art;
    }
    if (path[0] == '/') path += strlen(c->base[b]) + 1;
    put(c, art, "uri", encode_uri("", path));
    put(c, art, "uriBaseId", json_string(sarif_base_names[b]));
    c->base_used[b] = true;
    return art;
}

static json_t *location_json(sarif_ctx *c, const char *path, int line)
{
    json_t *loc = json_object(), *phys = json_object();
    put(c, phys, "artifactLocation", artifact_json(c, path));
    if (line > 0) {
        json_t *region = json_object();
        put(c, region, "startLine", json_integer(line));
        put(c, phys, "region", region);
    }
    put(c, loc, "physicalLocation", phys);
    return loc;
}

/* run.originalUriBaseIds: each base a location used, as a file:// URI of
** its folder ending in '/' (SARIF 3.14.14). */
static json_t *bases_json(sarif_ctx *c)
{
    json_t *o = json_object();
    for (int b = 0; b < SARIF_BASE_COUNT; b++) {
        if (!c->base_used[b] || !c->base[b][0]) continue;
        char *dir = malloc(strlen(c->base[b]) + 2);
        if (!dir) { c->ok = false; continue; }
        sprintf(dir, "%s/", c->base[b]);
        json_t *u = json_object();
        put(c, u, "uri", encode_uri("file://", dir));
        put(c, o, sarif_base_names[b], u);
        free(dir);
    }
    return o;
}

static json_t *fingerprint(const char *rule, const char *trace_file)
{
    const char *base = tg_report_basename(trace_file);
    uint64_t h = tg_report_hash(TG_REPORT_HASH_SEED, rule, strlen(rule) + 1);
    h = tg_report_hash(h, base, strlen(base));
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    return json_string(hex);
}

static json_t *result_json(sarif_ctx *c, const tg_trace_result *t, const tg_rule_result *r,
                           const tg_report_opts *opts)
{
    json_t *o = json_object();
    long idx = find_rule(c, r->rule);
    put(c, o, "ruleId", tg_report_json_str(r->rule));
    put(c, o, "ruleIndex", json_integer(idx));
    if (r->verdict == TG_V_INCONCLUSIVE && !tg_report_gates(r, opts)) {
        /* SARIF: a result that needs a person to look ("review") has level none */
        put(c, o, "kind", json_string("review"));
        put(c, o, "level", json_string("none"));
    } else {
        put(c, o, "level", json_string(r->verdict == TG_V_INCONCLUSIVE ? "error" : tg_severity_sarif(r->severity)));
    }
    char *msg = NULL;
    size_t msg_len = 0;
    FILE *m = open_memstream(&msg, &msg_len);
    if (m) {
        put_piece(m, tg_report_basename(t->file), TG_TEXT_CAP_TEXT);
        fputs(": ", m);
        put_piece(m, r->message ? r->message : r->title ? r->title : "", TG_TEXT_CAP_TEXT);
        if (r->cause && r->cause->summary) {
            fputs("\nCause: ", m);
            put_piece(m, r->cause->summary, TG_TEXT_CAP_TEXT);
        }
        char workload[160];
        if (tg_report_workload_sentence(&r->baseline, workload, sizeof workload)) {
            fputs("\nWorkload: ", m);
            put_piece(m, workload, TG_TEXT_CAP_TEXT);
        }
        if (r->advice) {
            fputc('\n', m);
            put_piece(m, r->advice, TG_TEXT_CAP_TEXT);
        }
        fclose(m);
    }
    put(c, o, "message", text_obj(c, msg, TG_TEXT_NO_CAP));
    free(msg);
    json_t *locs = json_array();
    if (r->rule_file) append(c, locs, location_json(c, r->rule_file, r->rule_line));
    else if (t->file) append(c, locs, location_json(c, t->file, 0));
    put(c, o, "locations", locs);
    json_t *fp = json_object();
    put(c, fp, "tracegate/v1", fingerprint(r->rule, t->file ? t->file : ""));
    put(c, o, "partialFingerprints", fp);
    if (r->suppressed) {
        /* SARIF's own way: viewers show it as suppressed, with the reason */
        json_t *sups = json_array(), *sup = json_object();
        put(c, sup, "kind", json_string("external"));
        put(c, sup, "status", json_string("accepted"));
        char *why = tg_text_dup(r->suppressed, TG_TEXT_CAP_TEXT, TG_TEXT_KEEP_NEWLINES);
        put(c, sup, "justification", why ? json_string(why) : NULL);
        free(why);
        const char *colon = r->suppressed_at ? strrchr(r->suppressed_at, ':') : NULL;
        if (colon) {   /* "FILE:LINE" of the suppression */
            char *file = strndup(r->suppressed_at, (size_t)(colon - r->suppressed_at));
            if (file) put(c, sup, "location", location_json(c, file, atoi(colon + 1)));
            free(file);
        }
        append(c, sups, sup);
        put(c, o, "suppressions", sups);
    }
    json_t *props = json_object();
    put(c, props, "trace", tg_report_json_str(t->file));
    put(c, props, "status", json_string(tg_verdict_name(r->verdict)));
    put(c, props, "count", r->count == TG_NULL_I64 ? json_null() : json_integer(r->count));
    put(c, props, "values", tg_report_json_values(r->values, r->n_values));
    if (r->reproduce) put(c, props, "reproduce", tg_report_json_str(r->reproduce));
    if (r->cause) {
        /* a sentence for people, whose names a trace chose: capped like the
        ** message (docs/formats.md, "Caps"), so a 1 MB API name stays 4 KB */
        char *cause = tg_text_dup(r->cause->summary, TG_TEXT_CAP_TEXT, TG_TEXT_KEEP_NEWLINES);
        put(c, props, "cause", cause ? json_string(cause) : NULL);
        free(cause);
        if (r->cause->reproduce) put(c, props, "cause_reproduce", tg_report_json_str(r->cause->reproduce));
    }
    if (r->baseline.present) {
        put(c, props, "baseline", tg_report_json_num(r->baseline.value));
        put(c, props, "current", tg_report_json_num(r->baseline.current));
        put(c, props, "change", tg_report_json_num(r->baseline.change));
        put(c, props, "p_value", tg_report_json_num(r->baseline.p_value));
        if (!isnan(r->baseline.workload_match))
            put(c, props, "workload_match", tg_report_json_num(r->baseline.workload_match));
        /* what changed, as the JSON result has it (docs/formats.md) */
        put(c, props, "contributors",
            tg_report_json_contributors(r->baseline.contributors, r->baseline.n_contributors));
    }
    put(c, o, "properties", props);
    return o;
}

/* Unreadable traces and rule errors: the tool could not do its job there. */
static json_t *invocation_json(sarif_ctx *c, const tg_run_result *run)
{
    json_t *inv = json_object(), *notes = json_array();
    bool success = true;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        if (tr->status != TG_OK) {
            success = false;
            json_t *n = json_object(), *locs = json_array();
            put(c, n, "level", json_string("error"));
            char *text = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&text, &len);
            if (m) {
                put_piece(m, tr->file ? tr->file : "?", TG_TEXT_CAP_TEXT);
                fputs(": ", m);
                put_piece(m, tr->error ? tr->error : "unreadable", TG_TEXT_CAP_TEXT);
                fclose(m);
            }
            put(c, n, "message", text_obj(c, text, TG_TEXT_NO_CAP));
            free(text);
            if (tr->file) append(c, locs, location_json(c, tr->file, 0));
            put(c, n, "locations", locs);
            append(c, notes, n);
        }
        for (size_t i = 0; i < tr->n_results; i++) {
            const tg_rule_result *r = &tr->results[i];
            /* a regression rule that passed outside the band (below the
            ** gate, an improvement) is a note (docs/regressions.md) */
            bool notice = r->verdict == TG_V_PASS && r->regression && r->baseline.present && r->baseline.outside_band;
            if (r->verdict != TG_V_ERROR && !notice) continue;
            if (!notice) success = false;
            json_t *n = json_object(), *ref = json_object();
            put(c, n, "level", json_string(notice ? "note" : "error"));
            char *text = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&text, &len);
            if (m) {
                put_piece(m, tg_report_basename(tr->file), TG_TEXT_CAP_TEXT);
                fputs(": rule ", m);
                put_piece(m, r->rule ? r->rule : "?", TG_TEXT_CAP_NAME);
                fputs(": ", m);
                put_piece(m, r->message ? r->message : "error", TG_TEXT_CAP_TEXT);
                fclose(m);
            }
            put(c, n, "message", text_obj(c, text, TG_TEXT_NO_CAP));
            free(text);
            put(c, ref, "id", tg_report_json_str(r->rule));
            put(c, ref, "index", json_integer(find_rule(c, r->rule)));
            put(c, n, "associatedRule", ref);
            append(c, notes, n);
        }
    }
    /* suppressions to review (unused, expired, exceeded): warnings at
    ** their line, which leave the execution successful */
    for (size_t i = 0; i < run->n_suppressions; i++) {
        char sentence[512];
        const tg_suppression_use *u = &run->suppressions[i];
        if (!tg_suppression_sentence(u, sentence, sizeof sentence)[0]) continue;
        json_t *n = json_object(), *locs = json_array();
        put(c, n, "level", json_string("warning"));
        put(c, n, "message", text_obj(c, sentence, TG_TEXT_CAP_TEXT));
        append(c, locs, location_json(c, u->file ? u->file : "?", u->line));
        put(c, n, "locations", locs);
        append(c, notes, n);
    }
    put(c, inv, "executionSuccessful", json_boolean(success));
    put(c, inv, "toolExecutionNotifications", notes);
    return inv;
}

TG_REPORT_WRITER(tg_report_sarif)
{
    sarif_ctx c = {.ok = true};
    if (!getcwd(c.cwd, sizeof c.cwd)) c.cwd[0] = 0;
    c.base[SARIF_BASE_SRCROOT] = c.cwd;
    c.base[SARIF_BASE_RULES] = opts->builtin_rules_dir ? opts->builtin_rules_dir : "";
    collect_rules(&c, run, rs);

    json_t *doc = json_object();
    put(&c, doc, "$schema", json_string("https://json.schemastore.org/sarif-2.1.0.json"));
    put(&c, doc, "version", json_string("2.1.0"));
    json_t *runs = json_array(), *sarif_run = json_object();
    json_t *tool = json_object(), *driver = json_object();
    put(&c, driver, "name", json_string("tracegate"));
    put(&c, driver, "version", tg_report_json_str(opts->tool_version ? opts->tool_version : ""));
    if (opts->info_uri) put(&c, driver, "informationUri", json_string(opts->info_uri));
    json_t *rules = json_array();
    for (size_t i = 0; i < c.n_rules; i++) append(&c, rules, rule_json(&c, &c.rules[i]));
    put(&c, driver, "rules", rules);
    put(&c, tool, "driver", driver);
    put(&c, sarif_run, "tool", tool);
    json_t *invocations = json_array();
    append(&c, invocations, invocation_json(&c, run));
    put(&c, sarif_run, "invocations", invocations);
    json_t *results = json_array();
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            if ((r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE) && r->rule)
                append(&c, results, result_json(&c, &run->traces[t], r, opts));
        }
    put(&c, sarif_run, "results", results);
    /* after the results: the bases their locations used */
    put(&c, sarif_run, "originalUriBaseIds", bases_json(&c));
    json_t *props = json_object();
    put(&c, props, "status", json_string(tg_run_status(run, opts)));
    if (opts->n_notes) {   /* about the whole run (merge) */
        json_t *notes = json_array();
        for (size_t i = 0; i < opts->n_notes; i++) append(&c, notes, tg_report_json_str(opts->notes[i]));
        put(&c, props, "notes", notes);
    }
    put(&c, sarif_run, "properties", props);
    append(&c, runs, sarif_run);
    put(&c, doc, "runs", runs);
    free(c.rules);
    if (!c.ok) {
        json_decref(doc);
        return TG_EINTERNAL;
    }
    return tg_report_json_dump(doc, out);
}
