/*
** The words every layer shares, each list defined once and expanded into
** the enum, the names, the parsers and the hints (jq's opcode_list.h
** idea): rule severities with the level SARIF and GitHub Actions give
** them, the verdicts of a rule result and the status of a whole run
** (docs/formats.md).
*/
#ifndef TG_VOCAB_H
#define TG_VOCAB_H

#include <stdbool.h>
#include <stddef.h>

/* X(ID, name, sarif level, github command); ORDER: tg_severity, least
** severe first (--fail-on compares them). */
#define TG_SEVERITY_LIST(X)                  \
    X(INFO, "info", "note", "notice")        \
    X(WARNING, "warning", "warning", "warning") \
    X(ERROR, "error", "error", "error")

typedef enum tg_severity {
#define X(id, name, sarif, github) TG_SEV_##id,
    TG_SEVERITY_LIST(X)
#undef X
    TG_SEV_COUNT
} tg_severity;

/* X(ID, name, upper-case label). ORDER: tg_verdict. inconclusive: a
** regression rule whose change the baseline cannot tell from run-to-run
** noise (docs/regressions.md); it passes unless --inconclusive=fail. */
#define TG_VERDICT_LIST(X)                          \
    X(PASS, "pass", "PASS")                         \
    X(FAIL, "fail", "FAIL")                         \
    X(SKIP, "skip", "SKIP")                         \
    X(ERROR, "error", "ERROR")                      \
    X(INCONCLUSIVE, "inconclusive", "INCONCLUSIVE")

typedef enum tg_verdict {
#define X(id, name, upper) TG_V_##id,
    TG_VERDICT_LIST(X)
#undef X
    TG_V_COUNT
} tg_verdict;

/* X(ID, name, verdict, sentence): the overall status of a run, the same
** in every format (docs/formats.md, "Run status and exit status"): pass
** (exit 0), fail (1) or error (2, 3 or 4); the verdict it is labelled and
** painted as, and the sentence the HTML and Markdown reports say under
** it. ORDER: tg_run_state. */
#define TG_RUN_STATE_LIST(X)                      \
    X(PASS, "pass", TG_V_PASS, "The gate passed.") \
    X(FAIL, "fail", TG_V_FAIL, "The gate failed.") \
    X(ERROR, "error", TG_V_ERROR, "The check could not complete: see the errors below.")

typedef enum tg_run_state {
#define X(id, name, verdict, sentence) TG_RUN_##id,
    TG_RUN_STATE_LIST(X)
#undef X
    TG_RUN_COUNT
} tg_run_state;

/* X(ID, name): what a piece of GPU work or a host range is, as results,
** baselines' workloads and contributors name it. ORDER: the GPU kinds
** first (TG_WORK_GPU_COUNT of them: the model's ops), NVTX ranges last. */
#define TG_WORK_KIND_LIST(X) \
    X(KERNEL, "kernel")      \
    X(MEMCPY, "memcpy")      \
    X(MEMSET, "memset")      \
    X(NVTX, "nvtx")

typedef enum tg_work_kind {
#define X(id, name) TG_WORK_##id,
    TG_WORK_KIND_LIST(X)
#undef X
    TG_WORK_COUNT
} tg_work_kind;
enum { TG_WORK_GPU_COUNT = TG_WORK_NVTX };

/* X(ID, name, sources, doc): what a failing finding says about its cause
** (a rule's `cause:` key, docs/host.md), the rule sources it applies to,
** and what it names. ORDER: tg_cause_kind; NONE first. */
#define TG_CAUSE_LIST(X)                                                              \
    X(NONE, "none", "any", "nothing")                                                 \
    X(HOST, "host", "gap, device, iteration",                                         \
      "what the process's threads did during each cited row: OS runtime calls, "      \
      "long CUDA calls and NVTX ranges (a gap; a device's steady window; an iteration)") \
    X(CALL_SITE, "call_site", "api, memcpy, memset, kernel",                          \
      "where in the program the matching rows' CUDA calls are made, by call site")    \
    X(LAUNCH, "launch", "iteration",                                                  \
      "the kernels that ran shorter than the calls that launched them, by name")

typedef enum tg_cause_kind {
#define X(id, name, sources, doc) TG_CAUSE_##id,
    TG_CAUSE_LIST(X)
#undef X
    TG_CAUSE_COUNT
} tg_cause_kind;

/* Names; a value out of range reads as the most severe ("error"). */
const char *tg_severity_name(tg_severity s);
const char *tg_severity_sarif(tg_severity s);
const char *tg_severity_github(tg_severity s);
const char *tg_verdict_name(tg_verdict v);
const char *tg_verdict_upper(tg_verdict v);
const char *tg_run_state_name(tg_run_state s);       /* "error" out of range */
tg_verdict tg_run_state_verdict(tg_run_state s);     /* TG_V_PASS for "pass" */
const char *tg_run_state_sentence(tg_run_state s);   /* "The gate passed." */
const char *tg_work_kind_name(tg_work_kind k);   /* "?" out of range */
const char *tg_cause_name(tg_cause_kind k);      /* "none" out of range */
const char *tg_cause_sources(tg_cause_kind k);   /* "gap, device, iteration" */
const char *tg_cause_doc(tg_cause_kind k);

/* name -> value; false when s is not one of the names. */
bool tg_severity_parse(const char *s, tg_severity *out);
bool tg_verdict_parse(const char *s, tg_verdict *out);
bool tg_work_kind_parse(const char *s, tg_work_kind *out);
bool tg_cause_parse(const char *s, tg_cause_kind *out);

/* "a, b, c or d" from a NULL-terminated list of names, into buf. */
const char *tg_vocab_join(const char *const *names, char *buf, size_t size);

/* The closest of `n` names to `word`, or NULL: the "did you mean" of
** error messages (rule files, the command line: subcommands, options,
** rule ids, format names). Distance counts an insertion, a deletion, a
** substitution or a swap of two neighbours as one edit (so `chekc` is one
** edit from `check`), a difference of case as none; a name is offered
** within 2 edits, or a third of word's length when that is more; of
** equally close names the first listed. Failing that, the one name that
** starts with word (warn -> warning), if only one does. */
const char *tg_suggest(const char *word, const char *const *names, size_t n);

/* The names in order, NULL-terminated (hints: tg_suggest). */
extern const char *const tg_severity_names[TG_SEV_COUNT + 1];
extern const char *const tg_verdict_names[TG_V_COUNT + 1];
extern const char *const tg_work_kind_names[TG_WORK_COUNT + 1];
extern const char *const tg_cause_names[TG_CAUSE_COUNT + 1];

#endif
