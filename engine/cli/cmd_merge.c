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
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../report/json_read.h"
#include "outputs.h"

static void merge_usage(FILE *f)
{
    fprintf(f,
        "usage: tracegate merge [options] RESULT.json|DIR...\n"
        "  (a DIR stands for the *.json files in it)\n"
        "  --files-from FILE          also merge the results listed in FILE, one per\n"
        "                             line ('-': standard input)\n"
        "  --world-size W             the job has W ranks: each needs a result\n"
        "  --format FORMAT            text (default), json, junit, sarif, github, markdown\n"
        "  -o FORMAT=FILE             also write FORMAT to FILE (repeatable)\n"
        "  --fail-on LEVEL            error (default), warning, info or never\n"
        "  --inconclusive MODE        pass (default) or fail\n"
        "  --straggler-threshold X    a rank whose p50 iteration period exceeds the median\n"
        "                             rank by more than X fails rank-straggler (default 10%%)\n"
        "  --straggler-severity S     error, warning (default) or info\n"
        "  --color WHEN, --quiet      as for check\n");
}

/* "10%", "0.1" -> 0.1 */
static bool parse_ratio(const char *s, double *out)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s) return false;
    if (*end == '%') {
        x /= 100;
        end++;
    }
    if (*end || !isfinite(x) || x < 0) return false;
    *out = x;
    return true;
}

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

/* The *.json files of dir, by name (not its subdirectories, nor hidden
** files: an interrupted report is a hidden .tracegate-* file). */
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
        struct stat sb;
        if (st == TG_OK && asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0) st = TG_EINTERNAL;
        else if (st == TG_OK && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && !add_path(p, path)) st = TG_EINTERNAL;
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
    tg_cli_outputs out;
    double threshold;
    tg_severity severity;
    int64_t world_size;        /* --world-size, -1 */
    paths inputs;
} merge_args;

/* Read every input, account for the ranks, compare them, report. */
static int run_merge(merge_args *a)
{
    /* no report over a result it merges (engine/cli/outfile.h) */
    tg_cli_reads reads = {0};
    int st = TG_OK;
    for (size_t i = 0; i < a->inputs.n && st == TG_OK; i++)
        if (!tg_cli_reads_add(&reads, a->inputs.v[i], "result")) st = TG_EINTERNAL;
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
    tg_merge_free(m);
    if (st == TG_OK && run.n_traces == 0) {
        tg_diag_error(&diag, TG_EUSAGE, "the results hold no trace: a merge of nothing cannot pass");
        st = TG_EUSAGE;
    }
    if (st == TG_OK) st = tg_merge_ranks(&run, a->world_size, &diag);
    tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    if (st == TG_OK) {
        tg_merge_stragglers(&run, a->threshold, a->severity);
        tg_report_opts gate = tg_cli_outputs_gate(&a->out);
        st = tg_cli_exit_status(&run, &gate, TG_OK);
        int wst = tg_cli_outputs_write(&a->out, &run, NULL);
        if (wst != TG_OK) st = wst;   /* exit 4 whatever the verdict */
    }
    tg_arena_free(run.arena);
    return st;
}

int tg_cmd_merge(int argc, char **argv)
{
    enum { O_FORMAT = 256, O_FAIL_ON, O_INCONCLUSIVE, O_THRESHOLD, O_SEVERITY, O_COLOR, O_QUIET, O_HELP,
           O_FILES_FROM, O_WORLD_SIZE };
    static const struct option opts[] = {
        {"format", required_argument, 0, O_FORMAT},     {"fail-on", required_argument, 0, O_FAIL_ON},
        {"straggler-threshold", required_argument, 0, O_THRESHOLD},
        {"straggler-severity", required_argument, 0, O_SEVERITY},
        {"color", required_argument, 0, O_COLOR},       {"quiet", no_argument, 0, O_QUIET},
        {"help", no_argument, 0, O_HELP},               {"inconclusive", required_argument, 0, O_INCONCLUSIVE},
        {"files-from", required_argument, 0, O_FILES_FROM}, {"world-size", required_argument, 0, O_WORLD_SIZE},
        {0, 0, 0, 0}};
    merge_args a = {.threshold = 0.10, .severity = TG_SEV_WARNING, .world_size = -1};
    tg_cli_outputs_init(&a.out);
    const char *files_from = NULL;
    optind = 1;
    opterr = 0;
    int c, bad = 0;
    while (!bad && (c = getopt_long(argc, argv, "o:q", opts, NULL)) != -1) {
        switch (c) {
        case O_FORMAT: bad = tg_cli_outputs_option(&a.out, "format", optarg) < 0; break;
        case 'o': bad = tg_cli_outputs_option(&a.out, "o", optarg) < 0; break;
        case O_FAIL_ON: bad = tg_cli_outputs_option(&a.out, "fail-on", optarg) < 0; break;
        case O_INCONCLUSIVE: bad = tg_cli_outputs_option(&a.out, "inconclusive", optarg) < 0; break;
        case O_COLOR: bad = tg_cli_outputs_option(&a.out, "color", optarg) < 0; break;
        case 'q':
        case O_QUIET: a.out.quiet = true; break;
        case O_FILES_FROM: files_from = optarg; break;
        case O_WORLD_SIZE: {
            char *end;
            long long w = strtoll(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || w < 1 || w > INT32_MAX) {
                tg_cli_say("--world-size wants the number of ranks: 1 or more, not '%s'", optarg);
                bad = 1;
            }
            a.world_size = w;
            break;
        }
        case O_THRESHOLD:
            if (!parse_ratio(optarg, &a.threshold)) {
                tg_cli_say("--straggler-threshold wants a ratio like 10%% or 0.1, not '%s'", optarg);
                bad = 1;
            }
            break;
        case O_SEVERITY:
            if (!strcmp(optarg, "error")) a.severity = TG_SEV_ERROR;
            else if (!strcmp(optarg, "warning")) a.severity = TG_SEV_WARNING;
            else if (!strcmp(optarg, "info")) a.severity = TG_SEV_INFO;
            else {
                tg_cli_say("--straggler-severity wants error, warning or info, not '%s'", optarg);
                bad = 1;
            }
            break;
        case O_HELP: merge_usage(stdout); return TG_OK;
        default: {
            char why[128];
            tg_cli_say("%s (see 'tracegate merge --help')",
                    tg_cli_option_error("o:q", argv, why, sizeof why));
            bad = 1;
        }
        }
    }
    if (bad) return TG_EUSAGE;
    int st = TG_OK;
    for (int i = optind; i < argc && st == TG_OK; i++) st = add_arg(&a.inputs, argv[i]);
    if (st == TG_OK && files_from) st = add_list(&a.inputs, files_from);
    if (st == TG_OK && a.inputs.n == 0) {
        tg_cli_say("merge needs at least one RESULT.json (see 'tracegate merge --help')");
        st = TG_EUSAGE;
    }
    if (st == TG_OK) st = run_merge(&a);
    paths_free(&a.inputs);
    return st;
}
