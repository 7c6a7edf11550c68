/*
** The property every human-facing output of tracegate must have
** (docs/formats.md, "Text from traces"), checked independently of the
** escaper that provides it: shared by the hostile-input tests and the
** fuzz targets, which feed it text, github, markdown and JUnit output.
*/
#ifndef TG_LOGSAFE_H
#define TG_LOGSAFE_H

#include <stdbool.h>
#include <stddef.h>

/* NULL when text[0..len) is log-safe: valid UTF-8; no control character
** but LF, no DEL, C1 control, noncharacter, bidi control or line
** separator; no "##[" (GitHub's runner reads ##[command] anywhere in a
** line); and no line that starts with "::" after blanks, unless
** github_commands, where every line must instead be one of tracegate's
** own annotations (::error/::warning/::notice title=tracegate). Else a
** static phrase saying what is wrong; *at (when not NULL) gets its byte
** offset. */
const char *tg_logsafe_problem(const char *text, size_t len, bool github_commands, size_t *at);

#endif
