/*
** Checks of HTML pages the unit tests share (test_html.c, the check
** report; test_trend_html.c, the history's page). cmocka assertions: for
** the test library only (the fuzzers link fixture.c, not this).
*/
#ifndef TG_TEST_HTML_CHECK_H
#define TG_TEST_HTML_CHECK_H

#include <stddef.h>

/* An HTML page's links (docs/formats.md, the HTML report): every id="..."
** once, every href="#..." to one of them and none elsewhere (a failed
** assertion names the first that is not); the number of links. */
size_t tg_fixture_html_links(const char *html);

#endif
