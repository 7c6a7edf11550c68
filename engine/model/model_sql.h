/*
** The model as SQL (docs/evidence.md): for an nsys export, one view per
** rule source -- kernel, memcpy, memset, api, nvtx, iteration, gap,
** device, trace -- written over the export's own tables, each column one
** field of fields.def computed the way the model computes it: the launch
** join (same process, same correlation id, the inner of a call recorded
** twice), iterations by the start of the launching call, interval unions
** for busy time, their intersection for the NCCL overlap, the queue-time
** median, gaps per (process, device), periods from GPU completion. The
** evaluator (engine/eval/eval_sql.c) puts a rule's where and aggregates on
** top, so that `sqlite3 -readonly EXPORT` prints every number a finding
** states.
**
** What the export cannot say by itself comes from the model as literals,
** each explained by a comment in the SQL: which NVTX ranges are the
** iterations (their rowids: the marker choice of docs/iterations.md has no
** SQL form) and which of them the capture cut.
**
** The views need SQLite 3.35 (window functions, AS MATERIALIZED, math
** functions: Debian 12 has 3.40); `matches` needs a regexp() function
** (the sqlite3 shell has one since 3.36).
*/
#ifndef TG_MODEL_SQL_H
#define TG_MODEL_SQL_H

#include <stdio.h>

#include "source.h"
#include "../common/text.h"

/* "WITH view AS (...), ..." defining the view of source src and the
** helper views it reads, in dependency order; a caller appends
** " SELECT ... FROM src". `fields` says which of its columns the caller
** reads (bit tg_model_sql_field_bit(f)); the device and trace views leave
** out the others, and what only they need (the NCCL unions, the launch
** join, the gaps), since those cost seconds on big exports. malloc'd;
** NULL for a trace that is not an nsys export (Kineto), or out of memory. */
char *tg_model_sql_with(const tg_model *m, tg_source_id src, uint64_t fields);
uint64_t tg_model_sql_field_bit(const tg_field_def *f);

/* Whether a source has a view: not the host side (osrt, cudnn, cublas),
** whose findings cite their rows only. */
bool tg_model_sql_has_source(tg_source_id src);

/* Whether field f is a column of its source's view. Those that are not
** (kernel.nvtx, nvtx.domain, nvtx.depth, nvtx.gpu_time, nvtx.gpu_span,
** iteration.marker, trace.schema_version, trace.nsys_version, the
** callchain, call_site and call_module of every source, every field of a
** source without a view) make a values query impossible; the evaluator
** then says so in the SQL. */
bool tg_model_sql_has_field(const tg_field_def *f);

/* The view of a source: its name in the SQL ("kernel", "device", ...). */
const char *tg_model_sql_view(tg_source_id src);

/* tg_sql_put_string and tg_sql_put_ident, the one SQL quoter: text.h. */

/* " AND eventType NOT IN (33, 39, ...)": of NVTX_EVENTS the ranges and
** marks, not the definition rows nsys stores beside them (trace.h,
** TG_NVTX_DEFINITION_TYPES), written to f. */
void tg_sql_put_nvtx_ranges_only(FILE *f);

/* The base name of the API name in column `col` (an SQL expression), by
** the rule of tg_model_base_name_len (model.h): the one SQL form of it, plain
** SQLite, exact. tg_sql_base_name: the same as a malloc'd string (NULL out
** of memory). */
void tg_sql_put_base_name(FILE *f, const char *col);
char *tg_sql_base_name(const char *col);

/* The name of the NVTX_EVENTS row under `prefix` ("" or "n."), as the
** reader takes it (trace_nvtx.c): textId's string, else text; the columns
** trace t's table lacks left out (NULL when it has neither). The one SQL
** form of the rule; tg_sql_nvtx_name: as a malloc'd string. */
void tg_sql_put_nvtx_name(FILE *f, const tg_trace *t, const char *prefix);
char *tg_sql_nvtx_name(const tg_trace *t, const char *prefix);

/* The API table of trace t with each call once, written to f: the table
** itself, or, where the export records calls twice (old nsys), a subquery
** of its rows less the outer twins, by the rule of tg_model_twin_inner
** (model_int.h), with the table's columns and rowid. */
void tg_sql_put_api_calls(FILE *f, const tg_trace *t);

#endif
