/*
** Shared code of the libFuzzer targets (fuzz/README.md): the built-in rule
** set loaded once, the full pipeline a CI gate runs on one export (trace ->
** model -> evaluation -> every report format, plus info and metrics), a
** scratch file the targets write their inputs to, and the small but
** realistic export every row-level mutation starts from.
**
** A target only has to survive: any crash, sanitizer report, leak or hang
** is a finding; what the engine answers (a verdict, exit status 3, ...) is
** not checked here but by tests/hostile.
*/
#ifndef TG_FUZZ_COMMON_H
#define TG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "report/report.h"
#include "rules/rules.h"
#include "trace/trace.h"

/* rules.d of the source tree, compiled once per process. */
const tg_ruleset *fz_builtin_rules(void);

/* Model, evaluate (rs, or the built-ins when NULL) and report one loaded
** trace; then info and metrics. Never fails: errors are the engine's
** business, crashes are ours. */
void fz_run_trace(tg_trace *t, const tg_ruleset *rs);

/* Render run in fmt into memory and hold it to the format's promises
** whatever the input held (docs/formats.md): text, github, markdown and
** JUnit log-safe (tests/unit/logsafe.h; github: every line one of
** tracegate's annotations), markdown within 1 MiB, JSON and SARIF
** parseable. abort()s, so libFuzzer keeps the input, when one breaks. */
void fz_report_checked(tg_format fmt, const tg_run_result *run, const tg_ruleset *rs, const tg_report_opts *ro);

/* Open path as an export and run fz_run_trace on it when it loads. */
void fz_run_path(const char *path, const tg_ruleset *rs);

/* A private scratch file (created once per process, removed at exit)
** whose content is replaced by data; returns its path. */
const char *fz_scratch_write(const uint8_t *data, size_t size);

/* SQL rows of a small export exercising every source: iterations with
** warm-up, sync and async copies, memsets, NCCL kernels, a long idle gap,
** synchronize calls, profiler overhead, two devices. malloc'd. */
char *fz_rows_sql(void);

#endif
