/*
** Shared building blocks of libtracegate: status codes, the arena that owns
** every allocation of a loaded trace or a compiled rule set, the diagnostic
** context that collects errors (first one kept, all of them reported), the
** string pool that interns names, and growable arrays.
**
** Nothing here prints or exits: the library reports through tg_diag and the
** CLI (engine/cli) alone decides what reaches stderr and which exit status.
*/
#ifndef TG_COMMON_H
#define TG_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "vocab.h"

/* Exit statuses (docs/formats.md, "Run status and exit status"); library
** calls return them too. */
typedef enum tg_status {
    TG_OK = 0,
    TG_FAIL = 1,        /* the gate failed */
    TG_EUSAGE = 2,      /* usage, rule or baseline error */
    TG_ETRACE = 3,      /* trace unreadable or lacking needed data */
    TG_EINTERNAL = 4    /* internal error (out of memory, bug) */
} tg_status;

/* Null sentinels: every int64 field uses TG_NULL_I64 for "no value". */
#define TG_NULL_I64 INT64_MIN
#define TG_NO_STR   (-1)          /* string id meaning null */

/* a + b, clamped to the int64 range (never to the null sentinel): sums of
** durations that a hostile export could make overflow. */
static inline int64_t tg_add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN + 1;
    return r == TG_NULL_I64 ? INT64_MIN + 1 : r;
}

/* ----------------------------------------------------------- invariants */

/* An internal invariant that does not hold is a bug, and a bug must never
** read as a pass: TG_ASSERT(cond) and TG_UNREACHABLE() record the first
** failure (thread-safe) with its place, and the CLI ends such a run with
** exit 4 naming it (tg_invariant_failure), whatever the verdicts. Builds
** without NDEBUG (the default, the test suites, the fuzzers) also abort on
** the spot so that the place is found at once. */
#define TG_ASSERT(cond) ((cond) ? (void)0 : tg_invariant_failed(#cond, __FILE__, __LINE__))
#define TG_UNREACHABLE() tg_invariant_failed("unreachable code reached", __FILE__, __LINE__)
void tg_invariant_failed(const char *what, const char *file, int line);
/* "FILE:LINE: WHAT" of the first failure, or NULL. */
const char *tg_invariant_failure(void);
/* Whether a failure aborts (default: unless NDEBUG); tests turn it off. */
void tg_invariant_set_abort(bool on);

/* ---------------------------------------------------------------- sizes */

/* "512MiB", "2GiB", "1.5GB", "800M", "1000000": bytes (KB/MB/GB/TB are
** powers of 1000, KiB/MiB/GiB/TiB and K/M/G/T powers of 1024). False when
** s is not a positive size. */
bool tg_parse_size(const char *s, int64_t *bytes);
/* "512 MiB", "1.5 GiB", "900 bytes": a byte count for messages. */
void tg_format_size(int64_t bytes, char *buf, size_t size);

/* ---------------------------------------------------------------- hashing */

/* A fresh random seed (getrandom; the clock and an address when that
** fails) for a hash table keyed by values an input chose: under a fixed
** hash, keys crafted to share a slot make every probe walk them all, and
** the table quadratic (docs/limits.md). Nothing reads a table in slot
** order, so the seed changes no result, only which inputs are slow: none
** an input can pick. */
uint64_t tg_hash_seed(void);

/* A hash of n bytes from seed (0, or tg_hash_seed for a table keyed by
** input): FNV-1a over 8-byte words (a word per step: 8x the bytewise
** loop's speed on the 38 KiB documents a merge fingerprints), the tail by
** bytes, then tg_hash_mix. Not cryptographic: compare the bytes on a match. */
uint64_t tg_hash_bytes(uint64_t seed, const void *s, size_t n);

/* MurmurHash3's 64-bit finalizer: every input bit reaches every output bit. */
static inline uint64_t tg_hash_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* ---------------------------------------------------------------- regex */

/* Regular expressions from input (rules, --iteration-pattern) are measured
** before they are compiled (regex_check.c): NULL when the pattern is
** within the limits, else why not, as a phrase completing "the pattern ...". */
const char *tg_regex_refuse(const char *pattern);

/* The matcher (regex.c; docs/limits.md): POSIX ERE as glibc reads it,
** matched in time linear in the subject. Compile: NULL with why (a phrase
** completing "the pattern ...") when refused or invalid. Match: 1 when s
** (len bytes) holds a match, 0 when not, -1 when a limit of the matcher
** was hit -- its state lists could not be allocated, or the match would
** take more than the *budget steps left (charged what it took): never to
** be read as "no match". Thread-safe on one tg_regex. */
typedef struct tg_regex tg_regex;
tg_regex *tg_regex_compile(const char *pattern, char *why, size_t why_size);
int tg_regex_match(const tg_regex *re, const char *s, size_t len, uint64_t *budget);
/* The steps one rule's `matches` tests may take on one trace, and the
** iteration pattern on one trace's NVTX names (docs/limits.md). */
#define TG_REGEX_STEP_BUDGET ((uint64_t)1 << 28)
void tg_regex_free(tg_regex *re);

/* The same pattern in the syntax of another engine, for the reproduce
** queries (docs/evidence.md): SQLITE, the regexp() of the sqlite3 shell
** (ext/misc/regexp.c), ONIGURUMA, jq's test(). Classes become explicit
** ASCII ranges ([[:alpha:]] -> [A-Za-z]), escapes what ERE reads them as
** (\d is the letter d), anchors the engine's own; a negated class and `.`
** then match one UTF-8 character of a non-ASCII name where tracegate
** matches one byte. malloc'd; NULL with why (a phrase completing "the
** pattern ...") when the pattern is invalid or the engine cannot say it
** (\B, \< and \> in SQLite; a class holding some non-ASCII bytes only). */
typedef enum tg_regex_dialect { TG_REGEX_SQLITE, TG_REGEX_ONIGURUMA } tg_regex_dialect;
char *tg_regex_translate(const char *pattern, tg_regex_dialect d, char *why, size_t why_size);

/* ---------------------------------------------------------------- arena */

typedef struct tg_arena tg_arena;

tg_arena *tg_arena_new(void);
void tg_arena_free(tg_arena *a);
/* Aborts never: returns NULL when memory is exhausted. Zeroed memory. */
void *tg_arena_alloc(tg_arena *a, size_t size);
char *tg_arena_strdup(tg_arena *a, const char *s);
char *tg_arena_strndup(tg_arena *a, const char *s, size_t n);
char *tg_arena_printf(tg_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------- UTF-8 */

/* Length of the valid UTF-8 sequence at s (n bytes left, n > 0), 0 when
** s[0] does not start one (overlong forms, surrogates and code points
** above U+10FFFF are invalid). utf8.c */
size_t tg_utf8_seq(const unsigned char *s, size_t n);
bool tg_utf8_valid(const char *s, size_t len);
/* A copy of s in which each byte that does not start a valid sequence is
** U+FFFD: in arena, or malloc'd when arena is NULL. NULL for NULL, or when
** out of memory. */
char *tg_utf8_clean(tg_arena *arena, const char *s);

/* Two optional strings are the same: both NULL, or equal. */
static inline bool tg_same_str(const char *a, const char *b)
{
    return a == b || (a && b && __builtin_strcmp(a, b) == 0);
}

/* ---------------------------------------------------------------- diag */

typedef enum tg_diag_level { TG_DIAG_NOTE, TG_DIAG_WARNING, TG_DIAG_ERROR } tg_diag_level;

/* A source position: file, 1-based line and column. line 0 = no position. */
typedef struct tg_pos {
    const char *file;
    int line;
    int col;
} tg_pos;

typedef struct tg_diag_msg {
    tg_diag_level level;
    tg_pos pos;        /* pos.file is the message's own copy */
    char *text;        /* one sentence, no trailing newline */
    char *line_text;   /* the offending source line, or NULL */
} tg_diag_msg;

typedef struct tg_diag {
    tg_diag_msg *msgs;
    size_t n, cap;
    int n_errors;
    tg_status status;  /* status of the first error (TG_OK if none) */
} tg_diag;

void tg_diag_init(tg_diag *d);
void tg_diag_clear(tg_diag *d);
/* Record an error/warning; `status` is the exit status an error implies. */
void tg_diag_add(tg_diag *d, tg_diag_level level, tg_status status, tg_pos pos,
                 const char *line_text, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void tg_diag_vadd(tg_diag *d, tg_diag_level level, tg_status status, tg_pos pos,
                  const char *line_text, const char *fmt, va_list ap);
#define tg_diag_error(d, st, ...) tg_diag_add((d), TG_DIAG_ERROR, (st), (tg_pos){0}, NULL, __VA_ARGS__)
/* Format one message like a compiler: "file:line:col: error: text\n  line\n  ^". */
char *tg_diag_format(const tg_diag_msg *m, bool color);

/* ---------------------------------------------------------------- strings */

/* Interned strings: equal strings get equal ids (0, 1, 2, ...). */
typedef struct tg_strpool tg_strpool;

tg_strpool *tg_strpool_new(void);
void tg_strpool_free(tg_strpool *p);
/* Returns the id, or -1 when out of memory. */
int32_t tg_strpool_intern(tg_strpool *p, const char *s, size_t len);
/* Id of s if interned, else -1 (does not add). */
int32_t tg_strpool_find(const tg_strpool *p, const char *s, size_t len);
const char *tg_strpool_get(const tg_strpool *p, int32_t id); /* NULL for -1 */
size_t tg_strpool_len(const tg_strpool *p, int32_t id);
int32_t tg_strpool_count(const tg_strpool *p);

/* ---------------------------------------------------------------- vectors */

/* Grow *items (element size esz) so that it holds at least need elements.
** Returns false when out of memory (the old buffer stays valid). */
bool tg_grow(void **items, size_t *cap, size_t need, size_t esz);
#define TG_PUSH(arr, n, cap, val) \
    (((n) < (cap) || tg_grow((void **)&(arr), &(cap), (n) + 1, sizeof *(arr))) \
         ? ((arr)[(n)++] = (val), true) : false)

/* The length of a folder's path without its trailing slashes ("/" keeps
** its one), for joining "%.*s/%s": a folder given as "dup/" then names
** "dup/r1.json", not "dup//r1.json". */
int tg_path_dir_len(const char *dir);

#endif
