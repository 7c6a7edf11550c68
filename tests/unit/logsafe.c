/*
** tg_logsafe_problem (logsafe.h): a UTF-8 decoder of its own (RFC 3629, so
** that a bug in engine/common/text.c cannot hide itself), the character
** classes the escaping rule removes, and GitHub's runner's two ways of
** finding a command in a line: "::" after TrimStart's blanks at the
** start, "##[" anywhere.
*/
#include "logsafe.h"

#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), 0 if none;
** *cp gets its code point. */
static size_t decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (s[0] < 0x80) return *cp = s[0], 1;
    size_t k = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (!k || k > n || s[0] > 0xF4) return 0;
    uint32_t v = s[0] & (0xFF >> (k + 1));
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < least[k] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return k;
}

/* .NET's char.IsWhiteSpace, which TrimStart uses. */
static bool is_blank(uint32_t cp)
{
    return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
}

static bool forbidden(uint32_t cp)
{
    return (cp < 0x20 && cp != '\n') || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || (cp & 0xFFFE) == 0xFFFE ||
           (cp >= 0xFDD0 && cp <= 0xFDEF) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

static const char *line_problem(const char *line, size_t len, bool github_commands)
{
    if (github_commands) {
        static const char *const ours[] = {"::error title=tracegate", "::warning title=tracegate",
                                           "::notice title=tracegate"};
        bool ok = false;
        for (size_t i = 0; i < 3; i++) ok |= len >= strlen(ours[i]) && !memcmp(line, ours[i], strlen(ours[i]));
        if (!ok) return "a line is not one of tracegate's annotations";
    } else {
        const unsigned char *p = (const unsigned char *)line, *end = p + len;
        uint32_t cp;
        size_t k;
        while (p < end && (k = decode(p, (size_t)(end - p), &cp)) && is_blank(cp)) p += k;
        if (end - p >= 2 && p[0] == ':' && p[1] == ':') return "a line starts a workflow command (::)";
    }
    for (size_t i = 0; i + 3 <= len; i++)
        if (!memcmp(line + i, "##[", 3)) return "\"##[\" in a line (a legacy workflow command)";
    return NULL;
}

const char *tg_logsafe_problem(const char *text, size_t len, bool github_commands, size_t *at)
{
    const unsigned char *p = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = decode(p + i, len - i, &cp);
        if (!k || forbidden(cp)) {
            if (at) *at = i;
            return k ? "a control character, C1, noncharacter or bidi control" : "invalid UTF-8";
        }
        i += k;
    }
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
        const char *why = n ? line_problem(text + i, n, github_commands) : NULL;
        if (why) {
            if (at) *at = i;
            return why;
        }
        i += n + 1;
    }
    return NULL;
}
