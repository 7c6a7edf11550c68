/*
** Fuzz target: PyTorch profiler (Kineto) JSON traces (docs/kineto.md). The
** input is written as a plain file and, gzip-compressed, as a second one;
** each goes through what `tracegate check` does to a trace (tg_trace_open
** sniffing it as JSON or gzip, the streaming reader, the model, the
** built-in rules, every report format, info, metrics). Oracle beyond
** survival: the plain and the gzip file load alike (both refused, or the
** same row counts); under a --max-memory limit (docs/limits.md) the plain
** file either loads having held no more than the limit or is refused with
** exit 3's status. Seeds: fuzz/kineto_seeds (2025 and 2021 spellings).
*/
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

static size_t rows_of(const tg_trace *t)
{
    return t ? t->n_kernels + t->n_memcpys + t->n_memsets + t->n_apis + t->n_nvtx + t->n_syncs + 1 : 0;
}

static size_t load_count(const char *path)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_trace *t = tg_trace_open(path, &diag);
    size_t n = rows_of(t);
    tg_trace_close(t);
    tg_diag_clear(&diag);
    return n;
}

/* The reader's meter under a limit from the input's last byte (1 to 256 KiB). */
static void load_limited(const char *path, int64_t limit)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_load_opts opts = {.max_memory = limit};
    tg_trace *t = tg_trace_open_with(path, &opts, &diag);
    if (t && t->read_bytes > limit) {
        fprintf(stderr, "fuzz-kineto: loaded holding %lld bytes under --max-memory %lld\n",
                (long long)t->read_bytes, (long long)limit);
        abort();
    }
    if (!t && diag.status != TG_ETRACE && diag.status != TG_EINTERNAL) {
        fprintf(stderr, "fuzz-kineto: refused under --max-memory with status %d\n", (int)diag.status);
        abort();
    }
    tg_trace_close(t);
    tg_diag_clear(&diag);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || (data[0] != '{' && data[0] != '[')) return 0;   /* the SQLite path is fuzz-trace-file's */
    const char *path = fz_scratch_write(data, size);
    size_t plain = load_count(path);
    load_limited(path, ((int64_t)data[size - 1] + 1) * 1024);
    fz_run_path(path, NULL);
    uLongf zlen = compressBound((uLong)size) + 32;
    unsigned char *z = malloc(zlen);
    if (!z) return 0;
    z_stream s = {0};
    if (deflateInit2(&s, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
        s.next_in = (unsigned char *)(uintptr_t)data;
        s.avail_in = (uInt)size;
        s.next_out = z;
        s.avail_out = (uInt)zlen;
        if (deflate(&s, Z_FINISH) == Z_STREAM_END) {
            path = fz_scratch_write(z, zlen - s.avail_out);
            if (load_count(path) != plain) {
                fprintf(stderr, "fuzz-kineto: the gzip file loads %zu rows, the plain one %zu\n",
                        load_count(path), plain);
                abort();
            }
        }
        deflateEnd(&s);
    }
    free(z);
    return 0;
}
