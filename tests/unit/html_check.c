/* tests/unit/html_check.h */
#include "html_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

size_t tg_fixture_html_links(const char *html)
{
    size_t n_ids = 0, cap = 64;
    char **ids = malloc(cap * sizeof *ids);
    assert_non_null(ids);
    for (const char *p = html; (p = strstr(p, " id=\"")); p++) {
        const char *s = p + 5, *e = strchr(s, '"');
        char *id = strndup(s, (size_t)(e - s));
        for (size_t i = 0; i < n_ids; i++)
            if (!strcmp(ids[i], id)) fail_msg("id '%s' twice", id);
        if (n_ids == cap) ids = realloc(ids, (cap *= 2) * sizeof *ids);
        assert_non_null(ids);
        ids[n_ids++] = id;
    }
    size_t links = 0;
    for (const char *p = html; (p = strstr(p, "href=\"")); p++) {
        const char *s = p + 6, *e = strchr(s, '"');
        if (*s != '#') fail_msg("an outside link: %.*s", (int)(e - s), s);
        bool found = false;
        for (size_t i = 0; i < n_ids && !found; i++)
            found = strlen(ids[i]) == (size_t)(e - s - 1) && !strncmp(ids[i], s + 1, (size_t)(e - s - 1));
        if (!found) fail_msg("link to a missing id: %.*s", (int)(e - s), s);
        links++;
    }
    for (size_t i = 0; i < n_ids; i++) free(ids[i]);
    free(ids);
    return links;
}
