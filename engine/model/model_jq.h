/*
** The model as jq (docs/kineto.md, "Evidence and reproduce"): for a
** PyTorch profiler (Kineto) JSON trace, the counterpart of model_sql.h.
** One jq binding per view -- `(...) as $kernel | (...) as $device | ` --
** computed from the trace's traceEvents the way the Kineto reader and the
** model compute it: the events of each kind (kernel, gpu_memcpy, ...:
** trace_kineto_map.c), times from the text's microseconds to integer ns,
** the launch join (same correlation id, the first call in start order),
** a GPU op's process from its launching call, iterations by the start of
** the launching call, interval unions for busy time, their intersection
** for the NCCL overlap, the queue-time median, gaps per (process,
** device), periods from GPU completion. The evaluator (engine/eval/
** eval_jq.c) puts a rule's where and aggregates on top, so that
** `jq -c PROGRAM trace.json` prints every number a finding states.
**
** Each row of a view is an object whose keys are the fields of its source
** (fields.def), booleans as true/false, times in ns; keys starting with
** `_` are the view's own. What the JSON cannot say by itself comes from
** the model as literals: which ranges are the iterations (their event
** indices, docs/iterations.md) and which of them the capture cut.
**
** jq 1.6 reads numbers as doubles: a view's times are ns from a base (the
** capture's first microsecond), a timestamp's integer microseconds and its
** fraction scaled apart, so they are the file's ns exactly for any clock
** (an epoch-based one too) as long as the text itself is exact as a double
** (below 2^53 us whole, 2^43 us with three decimals). Times shown on the
** file's clock (tg_abs: timestamp fields, cited rows' start and end) are
** exact below 2^53 ns (104 days), to a few hundred ns above.
*/
#ifndef TG_MODEL_JQ_H
#define TG_MODEL_JQ_H

#include <stdio.h>

#include "source.h"

/* The jq text binding $<view> for each source whose bit (1u << src) is in
** `sources`, and the helper views and functions they read, in dependency
** order; each piece ends with "| ", so a caller appends its expression.
** `fields[src]` says which columns of that view the caller reads
** (tg_model_sql_field_bit); the device view leaves out the others (the
** NCCL unions, the queue median), as model_sql.c does. malloc'd; NULL for
** a trace that is not a Kineto trace, or out of memory. */
char *tg_model_jq_with(const tg_model *m, unsigned sources, const uint64_t *fields);

/* Whether field f is a key of its source's view. Those that are not
** (kernel.nvtx, nvtx.domain/depth/gpu_time/gpu_span, trace.schema_version,
** trace.nsys_version, the stacks and call sites, every field of the host
** sources) make a values program impossible: the evaluator says so. */
bool tg_model_jq_has_field(const tg_field_def *f);
bool tg_model_jq_has_source(tg_source_id src);

/* The base of the views' times, in microseconds on the file's clock:
** views hold ns since base * 1000 (tg_abs adds it back). */
int64_t tg_model_jq_base_us(const tg_model *m);

/* A string as a jq string literal ("it\"s"), written to f. */
void tg_jq_put_string(FILE *f, const char *s);

/* "def tg_base: ...; ": the jq function giving the base name of the API
** name it is applied to, by the rule of tg_model_base_name_len (model.h);
** the one jq form of it. */
void tg_jq_put_base_name(FILE *f);

#endif
