/*
** Reading a JSON result of `tracegate check --format json` back into a
** tg_run_result (see json_read.c), and the cross-rank straggler check that
** `tracegate merge` runs over the merged traces.
*/
#ifndef TG_JSON_READ_H
#define TG_JSON_READ_H

#include <jansson.h>
#include "../eval/result.h"

/* A merge in progress (docs/formats.md, "merge"): results read one file
** at a time into run (run->arena holds them; each JSON document is freed
** once converted, so memory is bounded by the merged result, not by the
** files), repeated strings stored once, run->traces grown by doubling.
** What a merge adds -- entries for missing ranks, rank-straggler results
** -- is not read back: every merge recomputes it. */
#define TG_MERGE_RULE_STRAGGLER TG_STRAGGLER_RULE
typedef struct tg_merge tg_merge;

tg_merge *tg_merge_new(tg_run_result *run);
/* Append the traces of the JSON result at path (each trace's `source` is
** path). TG_EUSAGE with a diag when the file is not a result. */
tg_status tg_merge_read(tg_merge *m, const char *path, tg_diag *diag);
void tg_merge_free(tg_merge *m);   /* the run keeps what was read */

/* The documents read (those that gave traces): the tracegate version and
** rules_digest each records (NULL when absent: a result of an older
** tracegate, or a merge of mixed rule sets), and its traces
** run->traces[first .. first + n). */
size_t tg_merge_n_docs(const tg_merge *m);
void tg_merge_doc(const tg_merge *m, size_t i, const char **version, const char **digest, size_t *first, size_t *n);

/* Results of one merge must be judged alike (docs/formats.md, "merge"):
** the documents read by m are sorted by what judged them (version and
** rules_digest; a document without a digest is a side of its own). One
** side: TG_OK, *digest its rules_digest (the merged result records it).
** More: one sentence naming the ranks (as runs) of each side; without
** allow it is an error (TG_EUSAGE), with allow a warning and *note (in
** run->arena) the sentence every format states; *digest NULL. */
tg_status tg_merge_rules(const tg_merge *m, const tg_run_result *run, bool allow, tg_diag *diag, const char **note,
                         const char **digest);

/* One file, as tg_merge_read on a merge of its own. */
tg_status tg_result_read_json(const char *path, tg_run_result *run, tg_diag *diag);

/* The ranks of the merged results, per job (results without a job id
** are one job): TG_EUSAGE with a diag for two results of one rank, a rank
** outside its world, or results (or world_size, -1 without) that disagree
** on the world size; when the world size is known, one unreadable-trace
** entry per job names its ranks without a result (appended to run); when
** it is not, the same entry names the ranks missing below the highest one
** present, and without such a gap a warning says the world size is
** unknown. */
tg_status tg_merge_ranks(tg_run_result *run, int64_t world_size, tg_diag *diag);

/* The largest world size merge accepts (docs/limits.md): --world-size
** above it is a usage error; a result claiming more is not trusted (a
** warning, the world size then unknown). Missing ranks are kept as runs
** (tg_trace_result.missing_ranks), so a merge's work and output are
** bounded by the results given whatever the world size. */
#define TG_MERGE_WORLD_MAX ((int64_t)1 << 20)

/* Cross-rank straggler rule, per job: every trace with a p50 steady
** iteration period (its workload's, else iteration-time-regression's
** metric) is compared with the median over the job's traces; one more
** than `threshold` (0.1 = 10%) above it gets a failing `rank-straggler`
** finding, the others a passing one, each with its GPU and idle time per
** iteration beside the median rank's; the slowest rank's names what moved
** against the median rank (baseline.contributors). Needs two traces with
** iterations in a job; returns how many traces were compared. Where a
** job's ranks (two or more) could not be compared, *why (when given) is
** set to one sentence per such job saying why ("ranks not compared: each
** of the 8 ranks has no steady iteration; ..."), in run's arena; else
** NULL. */
size_t tg_merge_stragglers(tg_run_result *run, double threshold, tg_severity severity, const char **why);

#endif
