/*
** How the iterations were found, as `info` and `metrics` report it
** (docs/iterations.md): per process, the thread and the markers whose
** ranges are the iterations, and the other matching ranges with what they
** became (nested, another thread's). Built as JSON once; the text of both
** commands is rendered from that same document.
*/
#ifndef TG_ITERDOC_H
#define TG_ITERDOC_H

#include <jansson.h>
#include <stdio.h>
#include "../model/model.h"

/* Listed at most per document / per process; the rest are counted in
** more_processes / more_markers. */
#define TG_ITERDOC_MAX_PROCESSES 256
#define TG_ITERDOC_MAX_MARKERS 32

/* {"pattern": P, "processes": [{"pid", "tid", "main_thread", "iterations",
**  "partial", "markers": [{"marker", "tid", "role", "ranges"}],
**  "more_markers"}], "more_processes"}. NULL when out of memory. */
json_t *tg_iterdoc_json(const tg_iter_selection *sel);

/* The document as text lines, each starting with `indent`; `label` heads
** the first line, e.g. "  iterations: ". */
void tg_iterdoc_text(FILE *f, const json_t *doc, const char *label, const char *indent);

#endif
