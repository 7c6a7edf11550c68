/*
** The traces of a run, shared by `check` and `baseline record`: each goes
** through the one pipeline of engine/check (tg_check_trace) into its slot
** of the run result. With --jobs N, N worker threads take traces from a
** shared counter; each trace has its own arena, so workers never share
** mutable state but the counter. The cores the workers leave go to each
** trace's own read (tg_load_opts.threads: the kernel table beside the
** others, the API table from a thread of its own).
*/
#include "cli.h"
#include "inputs.h"
#include "../suppress/suppress.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct pipeline {
    const tg_inputs *in;
    size_t n_traces;
    const tg_check_plan *plan;
    tg_run_result *run;
    tg_diag *diags;            /* one per trace, printed in order at the end */
    atomic_size_t next;
} pipeline;

/* An input that is not a trace (a report nsys could not export) is an
** unreadable trace with its sentence, like a text file in its place. */
static tg_status not_a_trace(pipeline *p, size_t i)
{
    tg_trace_result *out = &p->run->traces[i];
    out->arena = tg_arena_new();
    out->status = TG_ETRACE;
    if (!out->arena) return out->status = TG_EINTERNAL;
    out->file = tg_arena_strdup(out->arena, p->in->given[i]);
    out->error = tg_arena_strdup(out->arena, p->in->errors[i]);
    tg_diag_error(&p->diags[i], TG_ETRACE, "%s", p->in->errors[i]);
    return out->status;
}

static tg_status evaluate_one(pipeline *p, size_t i)
{
    if (!p->in->paths[i]) return not_a_trace(p, i);
    tg_trace_result *out = &p->run->traces[i];
    tg_status st = tg_check_trace(p->plan, p->in->paths[i], out, &p->diags[i]);
    /* an exported report is named as given; the export is in the cache */
    if (p->in->paths[i] != p->in->given[i] && out->arena)
        out->file = tg_arena_strdup(out->arena, p->in->given[i]);
    return st;
}

static void *worker(void *arg)
{
    pipeline *p = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n_traces) break;
        evaluate_one(p, i);
    }
    return NULL;
}

int tg_cli_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int tg_cli_evaluate(const tg_inputs *in, const tg_check_plan *plan, int jobs, tg_run_result *run)
{
    size_t n_traces = in->n;
    run->traces = tg_arena_alloc(run->arena, (n_traces ? n_traces : 1) * sizeof *run->traces);
    tg_diag *diags = calloc(n_traces ? n_traces : 1, sizeof *diags);
    if (!run->traces || !diags) {
        free(diags);
        tg_cli_say("out of memory");
        return TG_EINTERNAL;
    }
    run->n_traces = n_traces;
    if (jobs < 1) jobs = 1;
    if ((size_t)jobs > n_traces) jobs = (int)n_traces;
    /* the cores the traces in flight leave: each trace may read with them
    ** (tg_load_opts.threads; --jobs 1 on two cores reads with two) */
    tg_check_plan shared = *plan;
    shared.threads = tg_cli_cores() / jobs;
    pipeline p = {in, n_traces, &shared, run, diags, 0};

    pthread_t *threads = jobs > 1 ? calloc((size_t)jobs, sizeof *threads) : NULL;
    int started = 0;
    for (int j = 0; threads && j < jobs; j++)
        if (pthread_create(&threads[j], NULL, worker, &p) == 0) started++;
    worker(&p); /* the main thread works too (and alone when jobs == 1) */
    for (int j = 0; j < started; j++) pthread_join(threads[j], NULL);
    free(threads);

    int worst = TG_OK;
    for (size_t i = 0; i < n_traces; i++) {
        tg_cli_report_diag(&diags[i], TG_OK);
        tg_diag_clear(&diags[i]);
        int st = run->traces[i].status;
        if (st == TG_EINTERNAL || (st == TG_ETRACE && worst != TG_EINTERNAL)) worst = st;
        else if (st == TG_EUSAGE && worst == TG_OK) worst = st;   /* a bad pattern: not a pass */
    }
    free(diags);
    return worst;
}

void tg_cli_run_free(tg_run_result *run)
{
    for (size_t i = 0; i < run->n_traces; i++) tg_arena_free(run->traces[i].arena);
    tg_arena_free(run->arena);
    memset(run, 0, sizeof *run);
}

/* (cli.h) What judges a run, as check's JSON result and the history
** record it: one digest, whoever computes it. */
int tg_cli_rules_digest(const tg_ruleset *rs, const tg_suppressions *s, char out[8 + TG_SHA256_HEX])
{
    tg_sha256 h;
    tg_sha256_init(&h);
    tg_sha256_str(&h, "tracegate rule-set digest 1");
    if (!tg_rules_digest(rs, &h)) return TG_EINTERNAL;
    tg_suppress_digest(s, &h);
    char hex[TG_SHA256_HEX];
    tg_sha256_hex(&h, hex);
    snprintf(out, 8 + TG_SHA256_HEX, "sha256:%s", hex);
    return TG_OK;
}
