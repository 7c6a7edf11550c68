/* Shared corpus-test helpers (corpus.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

const char *corpus_traces;
const char *corpus_binary;

bool corpus_init(const char *what)
{
    corpus_traces = getenv("TG_SHARED_TRACES");
    corpus_binary = getenv("TG_BINARY");
    struct stat st;
    if (!corpus_traces || stat(corpus_traces, &st) != 0 || !corpus_binary) {
        printf("SKIP: ../shared/traces is absent (TG_SHARED_TRACES=%s); %s not checked\n",
               corpus_traces ? corpus_traces : "(unset)", what);
        return false;
    }
    return true;
}

static void command(char *cmd, size_t size, const char *fmt, va_list ap, const char *redirect)
{
    char args[6144];
    vsnprintf(args, sizeof args, fmt, ap);
    snprintf(cmd, size, "'%s' %s %s", corpus_binary, args, redirect);
}

json_t *corpus_json(int *status, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    command(cmd, sizeof cmd, fmt, ap, "2>/dev/null");
    va_end(ap);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    /* Read to the end before parsing: closing the pipe while the command
    ** still writes (its final newline) would kill it with SIGPIPE. */
    char *out = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[65536];
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) {
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            out = realloc(out, cap);
            assert_non_null(out);
        }
        memcpy(out + len, chunk, n);
        len += n;
    }
    int st = pclose(p);
    json_error_t err;
    json_t *doc = out ? json_loadb(out, len, 0, &err) : NULL;
    if (!out) snprintf(err.text, sizeof err.text, "no output");
    free(out);
    if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (!doc) fail_msg("%s: output is not JSON: %s", cmd, err.text);
    return doc;
}

int corpus_run(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    command(cmd, sizeof cmd, fmt, ap, ">/dev/null 2>&1");
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

json_t *corpus_result(json_t *doc, const char *rule)
{
    json_t *results = json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *id = json_string_value(json_object_get(r, "rule"));
        if (id && strcmp(id, rule) == 0) return r;
    }
    return NULL;
}

const char *corpus_status(json_t *doc, const char *rule)
{
    json_t *r = corpus_result(doc, rule);
    const char *s = r ? json_string_value(json_object_get(r, "status")) : NULL;
    return s ? s : "(absent)";
}
