/*
** The bytes of a Kineto trace: torch.profiler writes plain JSON
** (`prof.export_chrome_trace("x.json")`) and TensorBoard's plugin stores it
** gzip-compressed (`*.pt.trace.json.gz`). The file is recognised by its
** first bytes, not its name, and read in chunks: a gzip file is inflated
** as the parser asks for text (zlib, every member of a multi-member file),
** so memory holds one chunk of the file, never the file.
**
** Inflating costs about as much as parsing, so a second thread inflates
** while the parser reads (a ring of a few chunks); its failure reaches the
** reader as the sentence it wrote, when the reader gets that far.
**
** A gzip stream that ends before its last member does is a truncated file
** (a copy cut short, a disk that filled up); corrupt deflate data is said
** as such. Each failure is one sentence in the loader (docs/kineto.md).
*/
#include "trace_kineto.h"

#include <errno.h>
#include <pthread.h>
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

static bool pipe_start(tg_kin_input *in, const char *path);
static ssize_t read_plain(tg_kin_input *in, unsigned char *buf, size_t cap, tg_loader *ld);

bool tg_kin_input_open(tg_kin_input *in, const char *path, tg_loader *ld)
{
    /* the run's file, or none (trace_guard.c, docs/limits.md "One file per run") */
    int fd = tg_file_open(tg_load_file(ld), path);
    *in = (tg_kin_input){.fd = fd < 0 ? -1 : fd};
    if (fd == TG_FILE_CHANGED) {
        tg_load_changed(ld);
        return false;
    }
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
    pipe_start(in, path);      /* else inflated inline, as the reader asks */
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

/* ---------------------------------------------------------------- the inflating thread */

#define PIPE_SLOTS 4

struct tg_kin_pipe {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t filled, freed;
    unsigned char *slot[PIPE_SLOTS];
    ssize_t len[PIPE_SLOTS];   /* bytes, 0 at the end, -1 failed */
    size_t head, count;        /* next slot to read, slots filled */
    bool stop;                 /* the reader is gone */
    tg_loader ld;              /* the thread's own, for its one sentence */
    tg_diag diag;
    tg_kin_input *in;
};

static void *inflate_thread(void *arg)
{
    struct tg_kin_pipe *p = arg;
    size_t tail = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->count == PIPE_SLOTS && !p->stop) pthread_cond_wait(&p->freed, &p->mu);
        bool stop = p->stop;
        pthread_mutex_unlock(&p->mu);
        if (stop) return NULL;
        ssize_t n = read_gzip(p->in, p->slot[tail], RAW_CHUNK, &p->ld);
        pthread_mutex_lock(&p->mu);
        p->len[tail] = n;
        p->count++;
        pthread_cond_signal(&p->filled);
        pthread_mutex_unlock(&p->mu);
        if (n <= 0) return NULL;
        tail = (tail + 1) % PIPE_SLOTS;
    }
}

static void pipe_free(struct tg_kin_pipe *p)
{
    for (size_t i = 0; i < PIPE_SLOTS; i++) free(p->slot[i]);
    tg_diag_clear(&p->diag);
    free(p);
}

/* Start the thread; false (and inline inflation) when it cannot be. */
static bool pipe_start(tg_kin_input *in, const char *path)
{
    struct tg_kin_pipe *p = calloc(1, sizeof *p);
    if (!p) return false;
    for (size_t i = 0; i < PIPE_SLOTS; i++)
        if (!(p->slot[i] = malloc(RAW_CHUNK))) {
            pipe_free(p);
            return false;
        }
    tg_diag_init(&p->diag);
    p->ld = (tg_loader){.path = path, .diag = &p->diag};
    p->in = in;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->filled, NULL);
    pthread_cond_init(&p->freed, NULL);
    if (pthread_create(&p->thread, NULL, inflate_thread, p) != 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->filled);
        pthread_cond_destroy(&p->freed);
        pipe_free(p);
        return false;
    }
    in->pipe = p;
    return true;
}

static void pipe_stop(struct tg_kin_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->filled);
    pthread_cond_destroy(&p->freed);
    pipe_free(p);
}

/* The next inflated chunk (at most cap bytes: chunks are RAW_CHUNK). */
static ssize_t pipe_read(struct tg_kin_pipe *p, unsigned char *buf, size_t cap, tg_loader *ld)
{
    pthread_mutex_lock(&p->mu);
    while (p->count == 0) pthread_cond_wait(&p->filled, &p->mu);
    ssize_t n = p->len[p->head];
    pthread_mutex_unlock(&p->mu);
    if (n < 0) {
        /* the thread's sentence, as this reader's (it names the file) */
        const tg_diag_msg *m = p->diag.n ? &p->diag.msgs[0] : NULL;
        if (!ld->failed) {
            ld->failed = true;
            tg_diag_add(ld->diag, TG_DIAG_ERROR, p->diag.status ? p->diag.status : TG_ETRACE, (tg_pos){0}, NULL,
                        "%s", m ? m->text : "the gzip stream cannot be read");
        }
        return -1;
    }
    if (n == 0) return 0;      /* the end stays in its slot */
    if ((size_t)n > cap) n = (ssize_t)cap;   /* never: the reader asks for RAW_CHUNK */
    memcpy(buf, p->slot[p->head], (size_t)n);
    pthread_mutex_lock(&p->mu);
    p->head = (p->head + 1) % PIPE_SLOTS;
    p->count--;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
    return n;
}

ssize_t tg_kin_input_read(tg_kin_input *in, unsigned char *buf, size_t cap, tg_loader *ld)
{
    if (cap > UINT32_MAX / 2) cap = UINT32_MAX / 2;
    ssize_t n = in->pipe ? pipe_read(in->pipe, buf, cap, ld) : in->gz ? read_gzip(in, buf, cap, ld)
                                                                  : read_plain(in, buf, cap, ld);
    if (n > 0) in->delivered += (uint64_t)n;
    return n;
}

bool tg_kin_input_seek(tg_kin_input *in, uint64_t offset)
{
    if (in->gz || lseek(in->fd, (off_t)offset, SEEK_SET) < 0) return false;
    in->bytes = offset;
    return true;
}

static ssize_t read_plain(tg_kin_input *in, unsigned char *buf, size_t cap, tg_loader *ld)
{
    if (in->limit) {
        if (in->bytes >= in->limit) return 0;
        if (cap > in->limit - in->bytes) cap = (size_t)(in->limit - in->bytes);
    }
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
    if (in->pipe) pipe_stop(in->pipe);
    in->pipe = NULL;
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
        /* ISIZE is the last member's size mod 4 GiB: a lower bound at best
        ** (a 1-byte member appended hides the rest), so the compressed size
        ** times the most the traces we hold compress by stands beside it */
        int64_t floor = size > INT64_MAX / TG_KIN_GZIP_RATIO ? INT64_MAX : size * TG_KIN_GZIP_RATIO;
        size = (int64_t)isize > floor ? (int64_t)isize : floor;
    }
    close(fd);
    return size;
}
