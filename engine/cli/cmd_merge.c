/*
** `tracegate merge`: combine the JSON results of separate `check` runs (one
** per rank or per node, spread over machines by a scheduler) into one
** verdict (docs/formats.md, "merge"): results given as files, directories
** of *.json files or a list (--files-from), read one at a time; the ranks
** of each job accounted for (two results for a rank, or disagreeing world
** sizes, are usage errors; a missing rank is an unreadable trace); then
** the cross-rank straggler check. Any report format can be written from
** the merged result; the exit status is that of `check`.
*/
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../report/json_read.h"
#include "outputs.h"
#include "../suppress/suppress.h"

/* ------------------------------------------------------------- inputs */

typedef struct paths {
    char **v;
    size_t n, cap;
} paths;

static bool add_path(paths *p, const char *path)
{
    char *copy = strdup(path);
    if (copy && TG_PUSH(p->v, p->n, p->cap, copy)) return true;
    free(copy);
    tg_cli_say("out of memory");
    return false;
}

static void paths_free(paths *p)
{
    for (size_t i = 0; i < p->n; i++) free(p->v[i]);
    free(p->v);
}

static int json_entry(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 5 && !strcmp(e->d_name + n - 5, ".json");
}

/* The *.json entries of dir, by name (not hidden ones: an interrupted
** report is a hidden .tracegate-* file). Each is a result, whatever it
** is: a dangling link, a FIFO or a directory named *.json is refused when
** read (json_read.c), never skipped -- a node's result that vanished
** would let the job pass (docs/formats.md, "merge"). */
static int add_dir(paths *p, const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, json_entry, alphasort);
    if (n < 0) {
        tg_cli_say("%s: cannot list the directory: %s", dir, strerror(errno));
        return TG_EUSAGE;
    }
    int st = TG_OK;
    size_t before = p->n;
    for (int i = 0; i < n; i++) {
        char *path = NULL;
        if (st == TG_OK && asprintf(&path, "%.*s/%s", tg_path_dir_len(dir), dir, names[i]->d_name) < 0) st = TG_EINTERNAL;
        else if (st == TG_OK && !add_path(p, path)) st = TG_EINTERNAL;
        free(path);
        free(names[i]);
    }
    free(names);
    if (st == TG_OK && p->n == before) {
        tg_cli_say("%s: the directory holds no *.json result", dir);
        st = TG_EUSAGE;
    }
    return st;
}

/* The lines of list ('-': stdin), blank ones skipped. */
static int add_list(paths *p, const char *list)
{
    FILE *f = strcmp(list, "-") ? fopen(list, "r") : stdin;
    if (!f) {
        tg_cli_say("--files-from %s: %s", list, strerror(errno));
        return TG_EUSAGE;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int st = TG_OK;
    while (st == TG_OK && (len = getline(&line, &cap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (len > 0 && !add_path(p, line)) st = TG_EINTERNAL;
    }
    if (st == TG_OK && ferror(f)) {
        tg_cli_say("--files-from %s: %s", list, strerror(errno));
        st = TG_EUSAGE;
    }
    free(line);
    if (f != stdin) fclose(f);
    return st;
}

/* Every argument: a directory's results, or the file itself. */
static int add_arg(paths *p, const char *arg)
{
    struct stat sb;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) return add_dir(p, arg);
    return add_path(p, arg) ? TG_OK : TG_EINTERNAL;
}

/* ------------------------------------------------------------- merging */

typedef struct merge_args {
    const tg_cli_args *args;
    tg_cli_outputs out;
    double threshold;
    tg_severity severity;
    int64_t world_size;        /* --world-size, -1 */
    const char *files_from;    /* --files-from, NULL */
    bool allow_mixed;          /* --allow-mixed-rules */
    const char *note;          /* what every format says of mixed rules */
    const char *not_compared;  /* why ranks were not compared (tg_merge_stragglers) */
    const char *notes[2];
    paths inputs;
} merge_args;

/* The distinct rule ids of a run's results (malloc'd, borrowed strings). */
static const char **result_rule_ids(const tg_run_result *run, size_t *n)
{
    size_t cap = 1;
    for (size_t t = 0; t < run->n_traces; t++) cap += run->traces[t].n_results;
    const char **ids = calloc(cap, sizeof *ids);
    *n = 0;
    for (size_t t = 0; ids && t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const char *id = run->traces[t].results[i].rule;
            bool seen = !id;
            for (size_t k = 0; k < *n && !seen; k++) seen = !strcmp(ids[k], id);
            if (!seen) ids[(*n)++] = id;
        }
    return ids;
}

/* Read every input, account for the ranks, compare them, report. */
static int run_merge(merge_args *a)
{
    /* no report over a result it merges (engine/cli/outfile.h) */
    tg_cli_reads reads = {0};
    int st = TG_OK;
    for (size_t i = 0; i < a->inputs.n && st == TG_OK; i++)
        if (!tg_cli_reads_add(&reads, a->inputs.v[i], "result")) st = TG_EINTERNAL;
    /* the list is read too: `--files-from L -o json=L` would replace it */
    if (st == TG_OK && a->files_from && strcmp(a->files_from, "-") != 0 &&
        !tg_cli_reads_add(&reads, a->files_from, "--files-from list"))
        st = TG_EINTERNAL;
    for (size_t i = 0; st == TG_OK && i < a->args->n_values[TG_CLI_OPT_SUPPRESS]; i++)
        if (!tg_cli_reads_add(&reads, a->args->values[TG_CLI_OPT_SUPPRESS][i], "suppression file")) st = TG_EINTERNAL;
    if (st == TG_OK) st = tg_cli_outputs_check(&a->out, &reads);
    tg_cli_reads_free(&reads);
    if (st != TG_OK) return st;

    tg_run_result run = {.arena = tg_arena_new()};
    tg_merge *m = run.arena ? tg_merge_new(&run) : NULL;
    if (!m) {
        tg_arena_free(run.arena);
        return TG_EINTERNAL;
    }
    tg_diag diag;
    tg_diag_init(&diag);
    for (size_t i = 0; i < a->inputs.n && st == TG_OK; i++) st = tg_merge_read(m, a->inputs.v[i], &diag);
    /* one rule set judged them all, or --allow-mixed-rules says so */
    if (st == TG_OK) st = tg_merge_rules(m, &run, a->allow_mixed, &diag, &a->note, &a->out.rules_digest);
    if (a->note) a->notes[a->out.n_notes++] = a->note;
    a->out.notes = a->notes;
    tg_merge_free(m);
    if (st == TG_OK && run.n_traces == 0) {
        tg_diag_error(&diag, TG_EUSAGE, "the results hold no trace: a merge of nothing cannot pass");
        st = TG_EUSAGE;
    }
    if (st == TG_OK) st = tg_merge_ranks(&run, a->world_size, &diag);
    tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    tg_suppressions *suppressions = NULL;
    if (st == TG_OK) {
        tg_merge_stragglers(&run, a->threshold, a->severity, &a->not_compared);
        /* a comparison that could not be made is said, never left out */
        if (a->not_compared) a->notes[a->out.n_notes++] = a->not_compared;
        a->out.ranks_not_compared = a->not_compared;
        /* --suppress names the rules of the merged results */
        size_t n_ids = 0;
        const char **ids = result_rule_ids(&run, &n_ids);
        st = ids ? tg_cli_load_suppressions(a->args, ids, n_ids, false, &suppressions) : TG_EINTERNAL;
        free(ids);
    }
    if (st == TG_OK && tg_cli_apply_suppressions(suppressions, &run) != TG_OK) st = TG_EINTERNAL;
    if (st == TG_OK) {
        tg_report_opts gate = tg_cli_outputs_gate(&a->out);
        st = tg_cli_exit_status(&run, &gate, TG_OK);
        int wst = tg_cli_outputs_write(&a->out, &run, NULL);
        if (wst != TG_OK) st = wst;   /* exit 4 whatever the verdict */
    }
    tg_suppress_free(suppressions);
    tg_arena_free(run.arena);
    return st;
}

int tg_cmd_merge(const tg_cli_args *in)
{
    merge_args a = {.args = in, .threshold = tg_cli_ratio(in, TG_CLI_OPT_THRESHOLD, 0.10),
                    .severity = (tg_severity)tg_cli_choice(in, TG_CLI_OPT_STRAGGLER_SEVERITY, TG_SEV_WARNING),
                    .world_size = tg_cli_whole(in, TG_CLI_OPT_WORLD_SIZE, -1),
                    .allow_mixed = tg_cli_flag(in, TG_CLI_OPT_ALLOW_MIXED_RULES)};
    tg_cli_outputs_init(&a.out);
    int st = tg_cli_outputs_read(&a.out, in);
    const char *files_from = a.files_from = tg_cli_value(in, TG_CLI_OPT_FILES_FROM);
    for (size_t i = 0; i < in->n_operands && st == TG_OK; i++) st = add_arg(&a.inputs, in->operands[i]);
    if (st == TG_OK && files_from) st = add_list(&a.inputs, files_from);
    if (st == TG_OK && a.world_size > TG_MERGE_WORLD_MAX)
        st = tg_cli_usage_error(in->cmd, "--world-size %lld is more than the %lld ranks merge accepts "
                                "(docs/limits.md)", (long long)a.world_size, (long long)TG_MERGE_WORLD_MAX);
    if (st == TG_OK && a.inputs.n == 0)
        st = tg_cli_usage_error(in->cmd, "merge needs at least one RESULT.json, a DIR of them or --files-from");
    if (st == TG_OK) st = run_merge(&a);
    paths_free(&a.inputs);
    return st;
}
