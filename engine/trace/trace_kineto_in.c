/*
** The bytes of a Kineto trace: torch.profiler writes plain JSON
** (`prof.export_chrome_trace("x.json")`) and TensorBoard's plugin stores it
** gzip-compressed (`*.pt.trace.json.gz`). The file is recognised by its
** first bytes, not its name, and read in chunks: a gzip file is inflated
** as the parser asks for text (zlib, every member of a multi-member file),
** so memory holds one chunk of the file, never the file.
**
** A gzip stream that ends before its last member does is a truncated file
** (a copy cut short, a disk that filled up); corrupt deflate data is said
** as such. Each failure is one sentence in the loader (docs/kineto.md).
*/
#include "trace_kineto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define RAW_CHUNK ((size_t)1 << 18)

tg_kin_sniff tg_kin_sniff_bytes(const unsigned char *head, size_t n)
{
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return TG_KIN_GZIP;
    size_t i = 0;
    if (n >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) i = 3;   /* UTF-8 BOM */
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')) i++;
    return i < n && (head[i] == '{' || head[i] == '[') ? TG_KIN_JSON : TG_KIN_NOT_JSON;
}

bool tg_kin_input_open(tg_kin_input *in, const char *path, tg_loader *ld)
{
    *in = (tg_kin_input){.fd = open(path, O_RDONLY | O_CLOEXEC)};
    if (in->fd < 0) {
        tg_load_fail(ld, TG_ETRACE, "cannot open the trace: %s", strerror(errno));
        return false;
    }
    unsigned char head[2];
    ssize_t got = pread(in->fd, head, sizeof head, 0);
    in->gz = got == 2 && head[0] == 0x1f && head[1] == 0x8b;
    if (!in->gz) return true;
    z_stream *z = calloc(1, sizeof *z);
    in->raw = malloc(RAW_CHUNK);
    if (!z || !in->raw || inflateInit2(z, 16 + MAX_WBITS) != Z_OK) {
        free(z);
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return false;
    }
    in->z = z;
    in->raw_cap = RAW_CHUNK;
    return true;
}

/* Refill the compressed bytes; false at the end of the file or on failure. */
static bool refill(tg_kin_input *in, z_stream *z, tg_loader *ld)
{
    ssize_t got;
    do got = read(in->fd, in->raw, in->raw_cap);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        tg_load_fail(ld, TG_ETRACE, "read error: %s", strerror(errno));
        return false;
    }
    in->file_bytes += (uint64_t)got;
    z->next_in = in->raw;
    z->avail_in = (uInt)got;
    return got > 0;
}

static ssize_t read_gzip(tg_kin_input *in, unsigned char *buf, size_t cap, tg_loader *ld)
{
    z_stream *z = in->z;
    z->next_out = buf;
    z->avail_out = (uInt)cap;
    while (z->avail_out == cap && !in->gz_done) {
        if (z->avail_in == 0 && !refill(in, z, ld)) {
            if (ld->failed) return -1;
            tg_load_fail(ld, TG_ETRACE,
                         "the gzip stream is truncated (the file ends after %llu compressed bytes, "
                         "%llu bytes of JSON): the copy is incomplete",
                         (unsigned long long)in->file_bytes,
                         (unsigned long long)(in->bytes + (cap - z->avail_out)));
            return -1;
        }
        int rc = inflate(z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            /* another member may follow (concatenated gzip files) */
            if (z->avail_in == 0 && !refill(in, z, ld)) {
                if (ld->failed) return -1;
                in->gz_done = true;
            } else if (inflateReset(z) != Z_OK) {
                tg_load_fail(ld, TG_EINTERNAL, "out of memory");
                return -1;
            }
        } else if (rc == Z_MEM_ERROR) {
            tg_load_fail(ld, TG_EINTERNAL, "out of memory (inflating the gzip stream)");
            return -1;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            tg_load_fail(ld, TG_ETRACE, "the gzip data is corrupt (%s, after %llu bytes of JSON)",
                         z->msg ? z->msg : "inflate failed",
                         (unsigned long long)(in->bytes + (cap - z->avail_out)));
            return -1;
        }
    }
    size_t n = cap - z->avail_out;
    in->bytes += n;
    return (ssize_t)n;
}

ssize_t tg_kin_input_read(tg_kin_input *in, unsigned char *buf, size_t cap, tg_loader *ld)
{
    if (cap > UINT32_MAX / 2) cap = UINT32_MAX / 2;
    if (in->gz) return read_gzip(in, buf, cap, ld);
    ssize_t got;
    do got = read(in->fd, buf, cap);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        tg_load_fail(ld, TG_ETRACE, "read error: %s", strerror(errno));
        return -1;
    }
    in->bytes += (uint64_t)got;
    return got;
}

void tg_kin_input_close(tg_kin_input *in)
{
    if (in->z) {
        inflateEnd(in->z);
        free(in->z);
    }
    free(in->raw);
    if (in->fd >= 0) close(in->fd);
    *in = (tg_kin_input){.fd = -1};
}

int64_t tg_kin_input_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    unsigned char head[2], tail[4];
    bool gz = pread(fd, head, 2, 0) == 2 && head[0] == 0x1f && head[1] == 0x8b;
    int64_t size = (int64_t)st.st_size;
    if (gz && st.st_size >= 18 && pread(fd, tail, 4, st.st_size - 4) == 4) {
        uint64_t isize = (uint64_t)tail[0] | (uint64_t)tail[1] << 8 | (uint64_t)tail[2] << 16 |
                         (uint64_t)tail[3] << 24;
        int64_t floor4 = size * 4;     /* ISIZE wraps at 4 GiB: JSON compresses > 4x */
        size = (int64_t)isize > floor4 ? (int64_t)isize : floor4;
    }
    close(fd);
    return size;
}
