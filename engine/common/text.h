/*
** Text for people: the one escaping rule of every human-facing output
** (docs/formats.md, "Text from traces"). Kernel, API, GPU and NVTX names,
** nsys versions, file names and the messages built from them are bytes a
** profiled program, an export or a CI job chose; printed raw they can
** drive a terminal (ESC and C1 sequences: clear the screen, set the
** title, plant a hyperlink), forge lines in a CI log (a newline followed
** by `::error ...`, GitHub's `##[command]` anywhere in a line), make a
** JUnit file ill-formed (U+FFFE) or swell a report to megabytes (a 1 MB
** name). tg_text_escape turns any byte string into text that can do none
** of that, and cuts it at a cap with a visible ellipsis and the full
** length. The formats (text, markdown, github, junit, sarif message
** texts, info, metrics, explain, stderr) run every value through it and
** then apply their own syntax (entities, backslashes, %XX) to what it
** emits. JSON and SARIF properties keep the exact value: they are the
** machine contract.
**
** Nothing here prints: the escaped text goes to a sink the caller gives.
**
** Text for SQLite has its one rule here too: a string literal or an
** identifier, its quote doubled (tg_sql_put_string), for every query the
** project writes, the reproduce SQL and its own reading queries alike.
*/
#ifndef TG_TEXT_H
#define TG_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"

/* Caps, in bytes of escaped text (docs/formats.md, "Caps"). */
#define TG_TEXT_CAP_NAME 1024    /* a name or string value: kernel, API, GPU, version, field */
#define TG_TEXT_CAP_TEXT 4096    /* a sentence: message, advice, error, path, diagnostic */
#define TG_TEXT_CAP_LONG 65536   /* the reproduce SQL, a rule's own text in explain */
#define TG_TEXT_NO_CAP SIZE_MAX

/* Flags. */
enum {
    /* A line feed stays a line feed: for formats that encode it themselves
    ** (markdown <br>, github %0A, XML text). Without it LF is shown as \n. */
    TG_TEXT_KEEP_NEWLINES = 1u,
};

/* Receives escaped text in pieces (never a piece that splits a character). */
typedef void (*tg_text_sink)(void *ctx, const char *s, size_t n);

/* Escape the len bytes at s and pass the result to sink:
**   - valid UTF-8 that is printable passes unchanged;
**   - tab, CR, LF (without TG_TEXT_KEEP_NEWLINES) become \t \r \n, other
**     C0 controls and DEL \xNN; each byte of invalid UTF-8 (overlong forms,
**     encoded surrogates, stray continuation bytes) \xNN;
**   - C1 controls (U+0080..U+009F), noncharacters (U+FDD0..U+FDEF and
**     U+xxFFFE/U+xxFFFF), bidirectional controls and the line and
**     paragraph separators become \uXXXX (\UXXXXXXXX above U+FFFF);
**   - a '#' right after a '#' becomes \x23 (no "##[" for CI runners that
**     read commands anywhere in a line), and where the value (or one of
**     its kept lines) would start with "::" after blanks, the first ':'
**     becomes \x3a (no line can start a workflow command);
**   - once the escaped text would pass cap bytes it stops at a character
**     boundary and ends with "…(N bytes)", N being len.
** A backslash in the value is not doubled: the escaped form is for
** reading; the JSON report holds the exact bytes. Returns the number of
** bytes passed to sink. s may be NULL (nothing is emitted). */
size_t tg_text_escape(const char *s, size_t len, size_t cap, unsigned flags, tg_text_sink sink, void *ctx);

/* tg_text_escape of a NUL-terminated string written to out. */
void tg_text_fput(FILE *out, const char *s, size_t cap, unsigned flags);

/* tg_text_escape of a NUL-terminated string into a malloc'd string; NULL
** when out of memory (s NULL gives ""). */
char *tg_text_dup(const char *s, size_t cap, unsigned flags);

/* tg_utf8_seq (common.h): the length of a valid UTF-8 sequence. */

/* Does s end with suffix? (A file name's suffix: ".nsys-rep", ".yaml".) */
bool tg_ends_with(const char *s, const char *suffix);

/* Text for SQLite: s as an SQL string literal ('it''s') and as an identifier
** ("end"), written to f; tg_sql_string: the literal as a malloc'd string
** (NULL out of memory). SQL's one escape, the quote doubled; the one SQL
** quoter of the project (s NULL is the empty literal). */
void tg_sql_put_string(FILE *f, const char *s);
void tg_sql_put_ident(FILE *f, const char *s);
char *tg_sql_string(const char *s);

#endif
