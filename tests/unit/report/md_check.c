/*
** Markdown well-formedness and length as GitHub sees them (md_check.h).
** Fences follow CommonMark (a closing fence has at least the opening's
** backticks and nothing else); tables GitHub's extension (a table goes on
** until a blank line, so a paragraph right after one would become a row).
*/
#include "md_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static size_t backticks(const char *line)
{
    size_t n = 0;
    while (line[n] == '`') n++;
    return n;
}

/* Unescaped | in one line. */
static size_t bars(const char *line, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) n++;
    return n;
}

static bool separator(const char *line, size_t len)
{
    if (len == 0 || line[0] != '|') return false;
    for (size_t i = 0; i < len; i++)
        if (!strchr("|-: ", line[i])) return false;
    return true;
}

const char *md_problem(const char *md)
{
    static char why[160];
    size_t fence = 0, lineno = 0, header_bars = 0, fence_line = 0;
    enum { TEXT, HEADER, ROWS } table = TEXT;
    for (const char *p = md; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        if (fence) {
            size_t n = backticks(p);
            if (n >= fence && n == len) fence = 0;
        } else if (table == HEADER) {
            if (!separator(p, len) || bars(p, len) != header_bars) {
                snprintf(why, sizeof why, "line %zu: a table header without its separator row", lineno);
                return why;
            }
            table = ROWS;
        } else if (table == ROWS && len && p[0] == '|') {
            if (bars(p, len) != header_bars) {
                snprintf(why, sizeof why, "line %zu: a table row with %zu cell bars, its header %zu", lineno,
                         bars(p, len), header_bars);
                return why;
            }
        } else if (table == ROWS && len) {
            snprintf(why, sizeof why, "line %zu: text right after a table (it would become a row)", lineno);
            return why;
        } else if (len && p[0] == '|') {
            table = HEADER;
            header_bars = bars(p, len);
        } else {
            table = TEXT;
            if (backticks(p) >= 3) {
                fence = backticks(p);
                fence_line = lineno;
            }
        }
        p += len + (nl != NULL);
    }
    if (fence) {
        snprintf(why, sizeof why, "the code fence of line %zu is never closed", fence_line);
        return why;
    }
    if (table == HEADER) return "the text ends in a table header";
    return NULL;
}

size_t md_utf16_units(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p & 0xC0) == 0x80) continue;   /* continuation byte */
        n += *p >= 0xF0 ? 2 : 1;
    }
    return n;
}
