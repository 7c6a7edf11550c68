/* The shared vocabulary of vocab.h, expanded from its lists. */
#include "vocab.h"

#include <stdio.h>
#include <string.h>

const char *const tg_severity_names[TG_SEV_COUNT + 1] = {
#define X(id, name, sarif, github) name,
    TG_SEVERITY_LIST(X)
#undef X
    NULL};

static const char *const severity_sarif[TG_SEV_COUNT] = {
#define X(id, name, sarif, github) sarif,
    TG_SEVERITY_LIST(X)
#undef X
};

static const char *const severity_github[TG_SEV_COUNT] = {
#define X(id, name, sarif, github) github,
    TG_SEVERITY_LIST(X)
#undef X
};

const char *const tg_verdict_names[TG_V_COUNT + 1] = {
#define X(id, name, upper) name,
    TG_VERDICT_LIST(X)
#undef X
    NULL};

static const char *const verdict_upper[TG_V_COUNT] = {
#define X(id, name, upper) upper,
    TG_VERDICT_LIST(X)
#undef X
};

static const char *const run_state_names[TG_RUN_COUNT] = {
#define X(id, name, verdict, sentence) name,
    TG_RUN_STATE_LIST(X)
#undef X
};

static const tg_verdict run_state_verdict[TG_RUN_COUNT] = {
#define X(id, name, verdict, sentence) verdict,
    TG_RUN_STATE_LIST(X)
#undef X
};

static const char *const run_state_sentence[TG_RUN_COUNT] = {
#define X(id, name, verdict, sentence) sentence,
    TG_RUN_STATE_LIST(X)
#undef X
};

static tg_severity sev_in_range(tg_severity s) { return (unsigned)s < TG_SEV_COUNT ? s : TG_SEV_ERROR; }
static tg_verdict verdict_in_range(tg_verdict v) { return (unsigned)v < TG_V_COUNT ? v : TG_V_ERROR; }
static tg_run_state run_state_in_range(tg_run_state s) { return (unsigned)s < TG_RUN_COUNT ? s : TG_RUN_ERROR; }

const char *tg_severity_name(tg_severity s) { return tg_severity_names[sev_in_range(s)]; }
const char *tg_severity_sarif(tg_severity s) { return severity_sarif[sev_in_range(s)]; }
const char *tg_severity_github(tg_severity s) { return severity_github[sev_in_range(s)]; }
const char *tg_verdict_name(tg_verdict v) { return tg_verdict_names[verdict_in_range(v)]; }
const char *tg_verdict_upper(tg_verdict v) { return verdict_upper[verdict_in_range(v)]; }
const char *tg_run_state_name(tg_run_state s) { return run_state_names[run_state_in_range(s)]; }
tg_verdict tg_run_state_verdict(tg_run_state s) { return run_state_verdict[run_state_in_range(s)]; }
const char *tg_run_state_sentence(tg_run_state s) { return run_state_sentence[run_state_in_range(s)]; }

const char *tg_vocab_join(const char *const *names, char *buf, size_t size)
{
    size_t n = 0, len = 0;
    while (names[n]) n++;
    if (size) buf[0] = 0;
    for (size_t i = 0; i < n && len < size; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        int w = snprintf(buf + len, size - len, "%s%s", sep, names[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
    return buf;
}

bool tg_severity_parse(const char *s, tg_severity *out)
{
    for (int i = 0; s && i < TG_SEV_COUNT; i++)
        if (!strcmp(s, tg_severity_names[i])) return *out = (tg_severity)i, true;
    return false;
}

bool tg_verdict_parse(const char *s, tg_verdict *out)
{
    for (int i = 0; s && i < TG_V_COUNT; i++)
        if (!strcmp(s, tg_verdict_names[i])) return *out = (tg_verdict)i, true;
    return false;
}

const char *const tg_work_kind_names[TG_WORK_COUNT + 1] = {
#define X(id, name) name,
    TG_WORK_KIND_LIST(X)
#undef X
    NULL};

const char *tg_work_kind_name(tg_work_kind k)
{
    return (unsigned)k < TG_WORK_COUNT ? tg_work_kind_names[k] : "?";
}

bool tg_work_kind_parse(const char *s, tg_work_kind *out)
{
    for (int i = 0; s && i < TG_WORK_COUNT; i++)
        if (!strcmp(s, tg_work_kind_names[i])) return *out = (tg_work_kind)i, true;
    return false;
}

/* ----------------------------------------------------------- suggestions */

static bool same_letter(char a, char b)
{
    /* case differences are free: KB vs kb, Duration vs duration */
    return a == b || ((a | 0x20) == (b | 0x20) && ((a | 0x20) >= 'a' && (a | 0x20) <= 'z'));
}

/* Optimal string alignment distance (Damerau-Levenshtein without
** repeated edits of one substring); words over 64 bytes are never close. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return (size_t)-1;
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = same_letter(a[i - 1], b[j - 1]) ? 0 : 1;
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && same_letter(a[i - 1], b[j - 2]) && same_letter(a[i - 2], b[j - 1]) &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *tg_suggest(const char *word, const char *const *names, size_t n)
{
    if (!word) return NULL;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    size_t len = strlen(word);
    size_t limit = len <= 3 ? 1 : (len / 3 > 2 ? len / 3 : 2);
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || strcmp(names[i], word) == 0) continue;
        size_t d = edit_distance(word, names[i]);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    if (best_d <= limit) return best;
    /* a word that begins exactly one name: warn -> warning, --form -> --format */
    const char *only = NULL;
    for (size_t i = 0; len >= 2 && i < n; i++) {
        if (!names[i] || strncmp(names[i], word, len) != 0 || !names[i][len]) continue;
        if (only && strcmp(only, names[i])) return NULL;
        only = names[i];
    }
    return only;
}

/* ---------------------------------------------------------------- causes */

const char *const tg_cause_names[TG_CAUSE_COUNT + 1] = {
#define X(id, name, sources, doc) name,
    TG_CAUSE_LIST(X)
#undef X
    NULL};

static const char *const cause_sources[TG_CAUSE_COUNT] = {
#define X(id, name, sources, doc) sources,
    TG_CAUSE_LIST(X)
#undef X
};

static const char *const cause_docs[TG_CAUSE_COUNT] = {
#define X(id, name, sources, doc) doc,
    TG_CAUSE_LIST(X)
#undef X
};

static tg_cause_kind cause_in_range(tg_cause_kind k) { return (unsigned)k < TG_CAUSE_COUNT ? k : TG_CAUSE_NONE; }

const char *tg_cause_name(tg_cause_kind k) { return tg_cause_names[cause_in_range(k)]; }
const char *tg_cause_sources(tg_cause_kind k) { return cause_sources[cause_in_range(k)]; }
const char *tg_cause_doc(tg_cause_kind k) { return cause_docs[cause_in_range(k)]; }

bool tg_cause_parse(const char *s, tg_cause_kind *out)
{
    for (int i = 0; s && i < TG_CAUSE_COUNT; i++)
        if (!strcmp(s, tg_cause_names[i])) return *out = (tg_cause_kind)i, true;
    return false;
}
