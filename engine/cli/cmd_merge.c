/*
** `tracegate merge`: combine the JSON results of separate `check` runs (one
** per rank, spread over machines by a scheduler) into one verdict, and run
** the cross-rank straggler check over them. Any report format can be
** written from the merged result; the exit status is that of `check`.
*/
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../report/json_read.h"
#include "outputs.h"

static void merge_usage(FILE *f)
{
    fprintf(f,
        "usage: tracegate merge [options] RESULT.json...\n"
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

int tg_cmd_merge(int argc, char **argv)
{
    enum { O_FORMAT = 256, O_FAIL_ON, O_INCONCLUSIVE, O_THRESHOLD, O_SEVERITY, O_COLOR, O_QUIET, O_HELP };
    static const struct option opts[] = {
        {"format", required_argument, 0, O_FORMAT},     {"fail-on", required_argument, 0, O_FAIL_ON},
        {"straggler-threshold", required_argument, 0, O_THRESHOLD},
        {"straggler-severity", required_argument, 0, O_SEVERITY},
        {"color", required_argument, 0, O_COLOR},       {"quiet", no_argument, 0, O_QUIET},
        {"help", no_argument, 0, O_HELP},               {"inconclusive", required_argument, 0, O_INCONCLUSIVE},
        {0, 0, 0, 0}};
    tg_cli_outputs out;
    tg_cli_outputs_init(&out);
    double threshold = 0.10;
    tg_severity severity = TG_SEV_WARNING;
    optind = 1;
    opterr = 0;
    int c, bad = 0;
    while (!bad && (c = getopt_long(argc, argv, "o:q", opts, NULL)) != -1) {
        switch (c) {
        case O_FORMAT: bad = tg_cli_outputs_option(&out, "format", optarg) < 0; break;
        case 'o': bad = tg_cli_outputs_option(&out, "o", optarg) < 0; break;
        case O_FAIL_ON: bad = tg_cli_outputs_option(&out, "fail-on", optarg) < 0; break;
        case O_INCONCLUSIVE: bad = tg_cli_outputs_option(&out, "inconclusive", optarg) < 0; break;
        case O_COLOR: bad = tg_cli_outputs_option(&out, "color", optarg) < 0; break;
        case 'q':
        case O_QUIET: out.quiet = true; break;
        case O_THRESHOLD:
            if (!parse_ratio(optarg, &threshold)) {
                tg_cli_say("--straggler-threshold wants a ratio like 10%% or 0.1, not '%s'", optarg);
                bad = 1;
            }
            break;
        case O_SEVERITY:
            if (!strcmp(optarg, "error")) severity = TG_SEV_ERROR;
            else if (!strcmp(optarg, "warning")) severity = TG_SEV_WARNING;
            else if (!strcmp(optarg, "info")) severity = TG_SEV_INFO;
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
    if (optind >= argc) {
        tg_cli_say("merge needs at least one RESULT.json (see 'tracegate merge --help')");
        return TG_EUSAGE;
    }

    /* no report over a result it merges (engine/cli/outfile.h) */
    tg_cli_reads reads = {0};
    int st = TG_OK;
    for (int i = optind; i < argc && st == TG_OK; i++)
        if (!tg_cli_reads_add(&reads, argv[i], "result")) st = TG_EINTERNAL;
    if (st == TG_OK) st = tg_cli_outputs_check(&out, &reads);
    tg_cli_reads_free(&reads);
    if (st != TG_OK) return st;

    tg_run_result run = {.arena = tg_arena_new()};
    if (!run.arena) return TG_EINTERNAL;
    tg_diag diag;
    tg_diag_init(&diag);
    for (int i = optind; i < argc && st == TG_OK; i++) st = tg_result_read_json(argv[i], &run, &diag);
    tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    if (st == TG_OK) {
        tg_merge_stragglers(&run, threshold, severity);
        tg_report_opts gate = tg_cli_outputs_gate(&out);
        st = tg_cli_exit_status(&run, &gate, TG_OK);
        int wst = tg_cli_outputs_write(&out, &run, NULL);
        if (wst != TG_OK) st = wst;   /* exit 4 whatever the verdict */
    }
    tg_arena_free(run.arena);
    return st;
}
