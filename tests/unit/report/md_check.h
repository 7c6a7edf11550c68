/*
** Checks on the markdown reports, for the unit and corpus tests: is the
** text well-formed as GitHub reads it (every code fence closed, every
** table whole), and how long is it as GitHub counts a comment.
*/
#ifndef TG_TEST_MD_CHECK_H
#define TG_TEST_MD_CHECK_H

#include <stddef.h>

/* NULL when md is well-formed: every fence (a line of 3 or more
** backticks) closed by a line of at least as many; every table (a line
** opening with |) a header, a separator row, rows with the header's
** number of cells, then a blank line or the end. Else a sentence naming
** the line (a static buffer). */
const char *md_problem(const char *md);

/* UTF-16 code units of UTF-8 text: a code point above U+FFFF counts
** two, as GitHub's 65,536-character limit may count them. */
size_t md_utf16_units(const char *s);

#endif
