/*
** Helpers shared by the corpus tests that drive the built binary over
** ../shared/traces: finding the traces and the binary (or skipping with a
** message), running `tracegate ARGS` and parsing its JSON, finding a rule's
** result in it.
*/
#ifndef TG_CORPUS_H
#define TG_CORPUS_H

#include <jansson.h>
#include <stdbool.h>

extern const char *corpus_traces;   /* $TG_SHARED_TRACES */
extern const char *corpus_binary;   /* $TG_BINARY */

/* False (after printing "SKIP: ...what...") when ../shared/traces or the
** binary is absent; main then returns 77. */
bool corpus_init(const char *what);

/* Run `tracegate ARGS` (printf-style; stderr discarded) and parse stdout as
** JSON (the test fails when it is not). *status gets the exit status. */
json_t *corpus_json(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Exit status of `tracegate ARGS` (output discarded). */
int corpus_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The result of rule in the first trace of doc, or NULL. */
json_t *corpus_result(json_t *doc, const char *rule);
/* Its status ("pass", "fail", ...), or "(absent)". */
const char *corpus_status(json_t *doc, const char *rule);

#endif
