/*
** Kernel families: the definition and its SQL and jq mirrors
** (model_family.h says the steps; docs/regressions.md, "Kernel families").
*/
#include "model_family.h"
#include "model_sql.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char anon[] = "(anonymous namespace)", unnamed[] = "<unnamed>";

/* The length of the name token (`(anonymous namespace)`, `<unnamed>`)
** starting at s[i], or 0. */
static size_t token_at(const char *s, size_t len, size_t i)
{
    if (s[i] == '(' && len - i >= sizeof anon - 1 && !memcmp(s + i, anon, sizeof anon - 1)) return sizeof anon - 1;
    if (s[i] == '<' && len - i >= sizeof unnamed - 1 && !memcmp(s + i, unnamed, sizeof unnamed - 1))
        return sizeof unnamed - 1;
    return 0;
}

/* Step 3: "triton_" REST "_" DIGITS (REST not empty) -> "triton_" REST. */
static size_t triton_len(const char *c, size_t n)
{
    static const char pre[] = "triton_";
    if (n <= sizeof pre - 1 || memcmp(c, pre, sizeof pre - 1) != 0) return n;
    size_t e = n;
    while (e > 0 && c[e - 1] >= '0' && c[e - 1] <= '9') e--;
    if (e == n || e == 0 || c[e - 1] != '_' || e - 1 <= sizeof pre - 1) return n;
    return e - 1;
}

void tg_kernel_family_span(const char *s, size_t len, size_t *from, size_t *n)
{
    size_t head = len;
    for (size_t i = 0; i < len; i++) {
        size_t k = token_at(s, len, i);
        if (k) i += k - 1;
        else if (s[i] == '<' || s[i] == '(') {
            head = i;
            break;
        }
    }
    size_t b = 0;
    for (size_t i = 0; i + 1 < head; i++)
        if (s[i] == ':' && s[i + 1] == ':') b = ++i + 1;
    for (size_t i = b; i < head; i++)
        if (s[i] == ' ') b = i + 1;
    if (b == head) {
        *from = 0;
        *n = len;
        return;
    }
    *from = b;
    *n = triton_len(s + b, head - b);
}

void tg_family_sql_put_rows(FILE *f, const char *select_sql)
{
    /* the tokens masked with as many characters, so that instr finds the
    ** first bracket that is one */
    fprintf(f, "SELECT *, CASE WHEN tg_lt = 0 AND tg_lp = 0 THEN name ELSE substr(name, 1, CASE WHEN tg_lt = 0 "
               "THEN tg_lp WHEN tg_lp = 0 THEN tg_lt ELSE min(tg_lt, tg_lp) END - 1) END AS head FROM "
               "(SELECT *, instr(tg_masked, '<') AS tg_lt, instr(tg_masked, '(') AS tg_lp FROM "
               "(SELECT *, replace(replace(name, '%s', '%.*s'), '%s', '%.*s') AS tg_masked FROM (%s)))",
            anon, (int)sizeof anon - 1, "_____________________________", unnamed, (int)sizeof unnamed - 1,
            "_____________________________", select_sql);
}

/* substr(X, -length('SEP' || F || TAIL)) = 'SEP' || F || TAIL, for each separator. */
static void put_suffix_tests(FILE *f, const char *x, const char *family, const char *tail)
{
    static const char *const seps[] = {" ", "::"};
    for (size_t i = 0; i < 2; i++) {
        char *lit = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&lit, &len);
        if (!m) return;
        fprintf(m, "%s%s%s", seps[i], family, tail);
        if (fclose(m) != 0) {
            free(lit);
            return;
        }
        fprintf(f, " OR substr(%s, -length(", x);
        tg_sql_put_string(f, lit);
        fputs(")) = ", f);
        tg_sql_put_string(f, lit);
        free(lit);
    }
}

void tg_family_sql_put_test(FILE *f, const char *alias, const char *family)
{
    char head[64], name[64], digits_off[96];
    snprintf(head, sizeof head, "%s.head", alias);
    snprintf(name, sizeof name, "%s.name", alias);
    snprintf(digits_off, sizeof digits_off, "rtrim(%s, '0123456789')", head);
    fprintf(f, "(%s = ", name);
    tg_sql_put_string(f, family);
    /* a short name holds no separator nor bracket; a family that does is
    ** a whole name (step 4), matched above */
    bool clean = *family && !strpbrk(family, " <(") && !strstr(family, "::");
    if (clean) {
        fprintf(f, " OR %s = ", head);
        tg_sql_put_string(f, family);
        put_suffix_tests(f, head, family, "");
    }
    size_t len = strlen(family);
    if (clean && len > 7 && !strncmp(family, "triton_", 7)) {
        fprintf(f, " OR (length(%s) < length(%s) AND (%s = ", digits_off, head, digits_off);
        size_t n = len + 2;
        char *lit = malloc(n);
        if (lit) {
            snprintf(lit, n, "%s_", family);
            tg_sql_put_string(f, lit);
            free(lit);
        }
        put_suffix_tests(f, digits_off, family, "_");
        fputs("))", f);
    }
    fputc(')', f);
}

const char tg_family_jq_def[] =
    "def tg_family: . as $n | (match(\"^(?:\\\\(anonymous namespace\\\\)|<unnamed>|[^<(])*\").string | "
    "split(\"::\") | (last // \"\") | split(\" \") | (last // \"\")) as $c | if $c == \"\" then $n "
    "elif ($c | test(\"^triton_[\\\\s\\\\S]+_[0-9]+\\\\z\")) then ($c | sub(\"_[0-9]+\\\\z\"; \"\")) else $c end; ";
