/*
** The direct reader of a table: the rows of one rowid table stepped out of
** the database file's B-tree pages (the SQLite file format, sqlite.org's
** "Database File Format", sections 1.3 to 2.1), without SQLite's virtual
** machine. A plain scan through SQLite costs a few virtual-machine steps
** and one API call per cell; on the kernel and API tables, most of an
** export, that was most of the time check spent reading
** (docs/architecture.md, "Reading an export"; bench/README.md).
**
** It reads what SQLite's scan would return, in the same (rowid) order: a
** cell the record lacks reads as NULL, a NaN real as NULL. It takes only
** what it reads exactly as SQLite does; tg_btree_open returns NULL (the
** caller then prepares the SELECT as before) for anything else: a file
** that is not UTF-8, a column with REAL affinity (SQLite turns the
** integers stored in it back into reals), a primary-key column (it may be
** the rowid), a column with a default (rows older than the column take
** it), or a table with hidden columns (not every column is in the record).
**
** A page is checked before its cells are used: its number within the
** file, its type, its cell count (SQLite's bound), its payloads and
** overflow chains; the tree is at most TG_BT_MAX_DEPTH deep and no scan
** reads more pages than the file holds, so a damaged or hostile file ends
** in TG_BT_CORRUPT (SQLite's "database disk image is malformed"), never in
** a loop or a read out of bounds. Each record gets the checks SQLite's
** scan makes of it (decode_record), so that what SQLite refuses, the
** reader refuses (docs/limits.md); it refuses a little more, only where
** tg_btree_stricter says. A row whose payload is longer than
** TG_MAX_VALUE_BYTES ends in TG_BT_TOOBIG, as SQLite's length limit does,
** when the cell is well-formed, and in TG_BT_CORRUPT when its size is
** garbage (too_big). The checks are O(1) per cell and per value.
*/
#include "trace_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* SQLite's own limit on the depth of a B-tree (BTCURSOR_MAX_DEPTH). */
#define TG_BT_MAX_DEPTH 20

enum { PAGE_INTERIOR = 0x05, PAGE_LEAF = 0x0D };

typedef struct level {
    uint32_t page;
    int next, n;               /* the child to visit next; cells (n: the right-most pointer) */
    uint8_t *buf;
} level;

struct tg_btree {
    int fd;
    uint32_t page_size, usable, n_pages;
    uint32_t root;
    uint64_t pages_read;       /* against n_pages: a tree that loops is corrupt */
    level stack[TG_BT_MAX_DEPTH];
    int depth;                 /* interior pages on the stack */
    bool started, done;
    bool stricter;             /* the error is one SQLite's scan may read past (tg_btree_stricter) */
    uint8_t *leaf;             /* the leaf page whose cells are being read */
    uint32_t leaf_page;
    int leaf_next, leaf_n;
    int n;                     /* cells of a row: [0] the rowid, [1..n] the columns */
    int *pos;                  /* ORDER cells[1..n]: position in the record, -1 none */
    int max_pos;
    int8_t *want;              /* [0..max_pos]: the position is read */
    tg_cellv *vals;            /* [0..max_pos]: the decoded cells of the record */
    tg_cellv *cells;           /* [0..n] */
    uint8_t *payload;          /* a row that spills into overflow pages, assembled */
    size_t payload_cap;
    uint8_t *overflow;         /* an overflow page (allocated when one is met) */
    char *text;                /* the row's text and blob cells, each NUL-terminated */
    size_t text_cap;
};

static uint32_t get16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* A varint of at most 9 bytes that must end before `end`; false when it
** does not. */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    const uint8_t *s = *p;
    for (int i = 0; i < 8; i++) {
        if (s + i >= end) return false;
        v = v << 7 | (s[i] & 0x7F);
        if (!(s[i] & 0x80)) {
            *p = s + i + 1;
            *out = v;
            return true;
        }
    }
    if (s + 8 >= end) return false;
    *out = v << 8 | s[8];
    *p = s + 9;
    return true;
}

/* ---------------------------------------------------------------- opening */

/* Whether SQLite would give a column of this declared type REAL affinity
** (the rules of sqlite.org's "Datatypes In SQLite", 3.1, in their order). */
static bool real_affinity(const char *type)
{
    if (!type) return false;
    if (strcasestr(type, "INT")) return false;
    if (strcasestr(type, "CHAR") || strcasestr(type, "CLOB") || strcasestr(type, "TEXT")) return false;
    if (strcasestr(type, "BLOB")) return false;
    return strcasestr(type, "REAL") || strcasestr(type, "FLOA") || strcasestr(type, "DOUB");
}

bool tg_btree_column_ok(const char *type, bool pk, bool has_default, bool hidden)
{
    return !real_affinity(type) && !pk && !has_default && !hidden;
}

tg_btree *tg_btree_open(const char *path, uint32_t root, const int *pos, int n)
{
    if (!path || root < 1 || n < 0) return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    uint8_t h[100];
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < 100 || pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h, "SQLite format 3", 16) != 0) {
        close(fd);
        return NULL;
    }
    uint32_t page_size = get16(h + 16) == 1 ? 65536 : get16(h + 16);
    uint32_t reserved = h[20];
    /* a page size SQLite accepts, UTF-8 text, a file it reads (read version 1 or 2) */
    bool ok = page_size >= 512 && page_size <= 65536 && (page_size & (page_size - 1)) == 0 &&
              page_size - reserved >= 480 && get32(h + 56) == 1 && (h[18] == 1 || h[18] == 2);
    /* the page count as SQLite takes it: the header's when it is valid, else the file's */
    uint32_t n_pages = get32(h + 28);
    if (n_pages == 0 || get32(h + 24) != get32(h + 92)) n_pages = (uint32_t)(size / (off_t)(ok ? page_size : 1));
    if (!ok || root > n_pages) {
        close(fd);
        return NULL;
    }
    tg_btree *b = calloc(1, sizeof *b);
    if (!b) {
        close(fd);
        return NULL;
    }
    b->fd = fd;
    b->page_size = page_size;
    b->usable = page_size - reserved;
    b->n_pages = n_pages;
    b->root = root;
    b->n = n;
    b->max_pos = -1;
    for (int i = 0; i < n; i++)
        if (pos[i] > b->max_pos) b->max_pos = pos[i];
    int slots = b->max_pos + 1;
    b->pos = malloc((size_t)(n ? n : 1) * sizeof *b->pos);
    b->want = calloc((size_t)(slots ? slots : 1), 1);
    b->vals = calloc((size_t)(slots ? slots : 1), sizeof *b->vals);
    b->cells = calloc((size_t)n + 1, sizeof *b->cells);
    b->leaf = malloc(page_size);
    ok = b->pos && b->want && b->vals && b->cells && b->leaf;
    for (int i = 0; ok && i < TG_BT_MAX_DEPTH; i++) ok = (b->stack[i].buf = malloc(page_size)) != NULL;
    if (!ok) {
        tg_btree_close(b);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        b->pos[i] = pos[i];
        if (pos[i] >= 0) b->want[pos[i]] = 1;
    }
    return b;
}

void tg_btree_close(tg_btree *b)
{
    if (!b) return;
    if (b->fd >= 0) close(b->fd);
    for (int i = 0; i < TG_BT_MAX_DEPTH; i++) free(b->stack[i].buf);
    free(b->pos);
    free(b->want);
    free(b->vals);
    free(b->cells);
    free(b->leaf);
    free(b->payload);
    free(b->overflow);
    free(b->text);
    free(b);
}

/* ---------------------------------------------------------------- pages */

/* Read page pg into buf: 0, or TG_BT_CORRUPT (a number outside the file,
** more pages than the file holds) or TG_BT_IO. */
static int read_page(tg_btree *b, uint32_t pg, uint8_t *buf)
{
    if (pg < 1 || pg > b->n_pages || ++b->pages_read > b->n_pages) return TG_BT_CORRUPT;
    off_t at = (off_t)(pg - 1) * b->page_size;
    size_t got = 0;
    while (got < b->page_size) {
        ssize_t r = pread(b->fd, buf + got, b->page_size - got, at + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return TG_BT_IO;
        if (r == 0) {
            /* the file ends inside the page: what is missing reads as
            ** zeros, as SQLite reads it (a page of zeros is no B-tree page) */
            memset(buf + got, 0, b->page_size - got);
            break;
        }
        got += (size_t)r;
    }
    return 0;
}

/* The B-tree header of a page read (page 1's follows the file header):
** its type and cell count, checked against the page. */
static int page_header(const tg_btree *b, uint32_t pg, const uint8_t *buf, int *type, int *n, const uint8_t **ptrs)
{
    uint32_t at = pg == 1 ? 100 : 0;
    *type = buf[at];
    uint32_t head = *type == PAGE_INTERIOR ? 12 : *type == PAGE_LEAF ? 8 : 0;
    if (!head) return TG_BT_CORRUPT;
    *n = (int)get16(buf + at + 3);
    /* SQLite's bound on the cells of a page (MX_CELL in btreeInitPage:
    ** a cell takes at least 6 bytes, its pointer included) */
    if ((uint32_t)*n > (b->page_size - 8) / 6 || at + head + 2 * (uint32_t)*n > b->usable) return TG_BT_CORRUPT;
    *ptrs = buf + at + head;
    return 0;
}

/* Push the page pg of the tree, or make it the leaf being read. */
static int enter(tg_btree *b, uint32_t pg)
{
    uint8_t *buf = b->depth < TG_BT_MAX_DEPTH ? b->stack[b->depth].buf : NULL;
    if (!buf) return TG_BT_CORRUPT;            /* deeper than SQLite allows */
    int rc = read_page(b, pg, buf);
    if (rc) return rc;
    int type, n;
    const uint8_t *ptrs;
    if ((rc = page_header(b, pg, buf, &type, &n, &ptrs))) return rc;
    /* A page without cells is only an empty table's root leaf (or, as
    ** SQLite allows, page 1 as an interior root): SQLite finds any other
    ** malformed (getAndInitPage, moveToRoot). Skipping it instead would
    ** lose its rows without a word, e.g. of a page whose count was zeroed
    ** or of a file cut right after a page's first bytes (read_page). */
    if (n < 1 && (pg != b->root || (type == PAGE_INTERIOR && pg != 1))) return TG_BT_CORRUPT;
    if (type == PAGE_INTERIOR) {
        b->stack[b->depth++] = (level){.page = pg, .next = 0, .n = n, .buf = buf};
        return 0;
    }
    /* a leaf: swap its buffer with the leaf's */
    b->stack[b->depth].buf = b->leaf;
    b->leaf = buf;
    b->leaf_page = pg;
    b->leaf_next = 0;
    b->leaf_n = n;
    return 0;
}

/* The next leaf of the tree in key order: 1 found, 0 none left, < 0 an error. */
static int next_leaf(tg_btree *b)
{
    if (!b->started) {
        b->started = true;
        b->leaf_n = 0;
        int rc = enter(b, b->root);
        if (rc) return rc;
        if (b->depth == 0) return 1;           /* the root is the only leaf */
    }
    while (b->depth > 0) {
        level *l = &b->stack[b->depth - 1];
        if (l->next > l->n) {
            b->depth--;
            continue;
        }
        uint32_t child;
        if (l->next < l->n) {
            /* masked to the page, as SQLite takes a cell pointer (findCell) */
            uint32_t off = get16(l->buf + (l->page == 1 ? 100 : 0) + 12 + 2 * (uint32_t)l->next) & (b->page_size - 1);
            if (off + 4 > b->page_size) {      /* SQLite reads past the page: slack */
                b->stricter = true;
                return TG_BT_CORRUPT;
            }
            child = get32(l->buf + off);
        } else {
            child = get32(l->buf + (l->page == 1 ? 100 : 0) + 8);   /* the right-most pointer */
        }
        l->next++;
        int depth = b->depth, rc = enter(b, child);
        if (rc) return rc;
        if (b->depth == depth) return 1;       /* a leaf */
    }
    return 0;
}

/* ---------------------------------------------------------------- rows */

/* The bytes of a value of this serial type. */
static uint64_t serial_size(uint64_t type)
{
    static const uint8_t int_bytes[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
    return type < 12 ? int_bytes[type] : (type - 12) / 2;
}

/* A payload longer than TG_MAX_VALUE_BYTES, whose first `local` bytes
** are on the page at rec: TG_BT_TOOBIG when the cell is a well-formed one
** whose value really is that long, else TG_BT_CORRUPT. A damaged size
** varint (zeroed, or bytes of garbage) is damage, and must not read as a
** value nsys never writes (docs/limits.md): the overflow pages it needs
** must fit in the file, the first one be a page of the file, and the
** record header, when it lies on the page, account for exactly `size`
** bytes (SQLite's own rule for a record, decode_record). Only the error
** path pays for this. */
static int too_big(tg_btree *b, const uint8_t *rec, uint32_t local, uint64_t size)
{
    b->stricter = true;                        /* SQLite 3.40 reads such a cell's bytes on its page */
    if (rec + local + 4 > b->leaf + b->usable) return TG_BT_CORRUPT;
    uint32_t first = get32(rec + local);
    if ((size - local) / (b->usable - 4) >= b->n_pages || first < 1 || first > b->n_pages) return TG_BT_CORRUPT;
    const uint8_t *h = rec, *lend = rec + local;
    uint64_t hsize;
    if (!varint(&h, lend, &hsize) || hsize == 0 || hsize <= (uint64_t)(h - rec)) return TG_BT_CORRUPT;
    if (hsize > local) return hsize > 98307 ? TG_BT_CORRUPT : TG_BT_TOOBIG;
    const uint8_t *hend = rec + hsize;
    uint64_t body = hsize;
    while (h < hend) {
        uint64_t type;
        if (!varint(&h, hend, &type)) return TG_BT_CORRUPT;
        body += serial_size(type);
        if (body > size) return TG_BT_CORRUPT;
    }
    return body == size ? TG_BT_TOOBIG : TG_BT_CORRUPT;
}

/* The payload of the leaf cell at `off`: *p and *len, assembled from its
** overflow pages when it spills; *local, how many of its bytes lie on the
** page, and *lim, how far its record header's size may be read (past an
** empty payload, SQLite reads it from the page's next bytes). */
static int cell_payload(tg_btree *b, uint32_t off, uint64_t *rowid, const uint8_t **p, uint64_t *len, uint64_t *local_out,
                        const uint8_t **lim)
{
    /* SQLite reads a cell's varints and its bytes on the page up to the
    ** page's end (the reserved bytes too); past it, into its page cache's
    ** slack, which the reader refuses */
    const uint8_t *end = b->leaf + b->usable, *page_end = b->leaf + b->page_size, *c = b->leaf + off;
    uint64_t size;
    if (!varint(&c, page_end, &size) || !varint(&c, page_end, rowid)) {
        b->stricter = true;
        return TG_BT_CORRUPT;
    }
    uint32_t u = b->usable, max_local = u - 35;
    if (size <= max_local) {
        /* A payload that runs past the page is SQLite's too, up to the
        ** page's end (fetchPayload): it is malformed only when a value
        ** read lies past it (decode_record). */
        uint64_t room = (uint64_t)(page_end - c);
        *p = c;
        *len = size;
        *local_out = size < room ? size : room;
        *lim = page_end;
        return 0;
    }
    uint32_t min_local = (u - 12) * 32 / 255 - 23;
    uint32_t local = min_local + (uint32_t)((size - min_local) % (u - 4));
    if (local > max_local) local = min_local;
    if (size > TG_MAX_VALUE_BYTES) return too_big(b, c, local, size);
    if (c + local + 4 > end) {
        /* its bytes on the page run past it: as a local payload that
        ** does, SQLite reads what lies on the page, and any value read
        ** past it is malformed (decode_record); the overflow pages are
        ** never read */
        uint64_t room = (uint64_t)(page_end - c);
        *p = c;
        *len = size;
        *local_out = local < room ? local : room;
        *lim = page_end;
        return 0;
    }
    if (b->payload_cap < size) {
        uint8_t *grown = realloc(b->payload, size);
        if (!grown) return TG_BT_NOMEM;
        b->payload = grown;
        b->payload_cap = size;
    }
    memcpy(b->payload, c, local);
    uint64_t have = local;
    uint32_t next = get32(c + local);
    if (!b->overflow && !(b->overflow = malloc(b->page_size))) return TG_BT_NOMEM;
    uint8_t *page = b->overflow;
    /* the reader takes a row's whole payload; SQLite's scan reads the
    ** overflow pages only as far as the values it reads, so a chain
    ** damaged past them (or under a record of no columns) it reads on */
    while (have < size) {
        b->stricter = true;
        if (next == 0) return TG_BT_CORRUPT;
        int rc = read_page(b, next, page);
        if (rc) return rc;
        b->stricter = false;
        uint64_t take = size - have < u - 4 ? size - have : u - 4;
        memcpy(b->payload + have, page + 4, take);
        have += take;
        next = get32(page);
    }
    *p = b->payload;
    *len = size;
    *local_out = local;
    *lim = b->payload + size;
    return 0;
}

/* Decode the record of one row into b->vals (the positions wanted), with
** the checks SQLite's OP_Column makes of a record (sqlite.org's "Database
** File Format", 2.1; vdbe.c), so that what SQLite's scan of the same
** columns finds malformed, the reader does too:
**  - a header size of 0 is a record of no columns: every cell NULL;
**  - a header that does not lie on the page is at most 98307 bytes and no
**    longer than the payload;
**  - at least one serial type is read, and each within the header;
**  - no value ends past the payload, and when the whole header was read
**    the values end exactly at the payload's end.
** An empty payload is no exception: SQLite reads the header's size from
** the page's bytes after the cell (lim), so it is a record of no columns
** only when that byte is 0, else malformed. SQLite reads the serial types
** only up to the last column it is asked for; so does this. */
static int decode_record(tg_btree *b, const uint8_t *rec, uint64_t len, uint64_t local, const uint8_t *lim)
{
    int k = 0;
    if (b->max_pos < 0) return 0;              /* no column read, nothing checked (as SQLite) */
    const uint8_t *h = rec;
    uint64_t hsize;
    if (!varint(&h, lim, &hsize)) {
        b->stricter = true;                    /* as in cell_payload */
        return TG_BT_CORRUPT;
    }
    if (hsize != 0) {
        /* a header past the page's bytes: SQLite reads it with the
        ** payload's bounds checked (accessPayload), so a payload that
        ** runs off its page is malformed there */
        uint64_t avail = (uint64_t)(lim - rec) < len ? (uint64_t)(lim - rec) : len;   /* bytes at rec */
        if (hsize > local && (hsize > 98307 || hsize > len || avail < len)) return TG_BT_CORRUPT;
        const uint8_t *hend = rec + hsize;
        uint64_t at = hsize;                   /* where the next value starts */
        if (h >= hend) return TG_BT_CORRUPT;   /* no serial type in the header */
        do {
            uint64_t type;
            if (!varint(&h, hend, &type)) return TG_BT_CORRUPT;
            uint64_t size = serial_size(type);
            if (size > len - at) return TG_BT_CORRUPT;
            if (b->want[k]) {
                tg_cellv *v = &b->vals[k];
                const uint8_t *body = rec + at;
                if (at > avail || size > avail - at) {
                    if (size) return TG_BT_CORRUPT;   /* a value past the page's end */
                    body = rec;                /* nothing is read of it */
                }
                if (type == 0 || type == 10 || type == 11) {
                    v->type = SQLITE_NULL;
                } else if (type <= 6) {
                    uint64_t u = 0;
                    for (uint64_t i = 0; i < size; i++) u = u << 8 | body[i];
                    unsigned shift = (unsigned)(64 - 8 * size);
                    v->type = SQLITE_INTEGER;
                    v->i = (int64_t)(u << shift) >> shift;    /* sign-extended */
                } else if (type == 7) {
                    uint64_t u = 0;
                    for (int i = 0; i < 8; i++) u = u << 8 | body[i];
                    double d;
                    memcpy(&d, &u, sizeof d);
                    v->type = d != d ? SQLITE_NULL : SQLITE_FLOAT;   /* SQLite reads a NaN as NULL */
                    v->d = d;
                } else if (type <= 9) {
                    v->type = SQLITE_INTEGER;
                    v->i = (int64_t)type - 8;
                } else {
                    v->type = type & 1 ? SQLITE_TEXT : SQLITE_BLOB;
                    v->p = (const char *)body;
                    v->n = (int)size;
                }
            }
            at += size;
            k++;
        } while (k <= b->max_pos && h < hend);
        if (h >= hend && at != len) return TG_BT_CORRUPT;   /* values short of the payload's end */
    }
    for (; k <= b->max_pos; k++)
        if (b->want[k]) b->vals[k].type = SQLITE_NULL;   /* the record ends before the column */
    return 0;
}

/* Copy the row's text and blob cells (`bytes` with their terminators) to
** b->text, each NUL-terminated as SQLite hands text out. */
static int terminate_text(tg_btree *b, size_t bytes)
{
    if (b->text_cap < bytes) {
        char *grown = realloc(b->text, bytes);
        if (!grown) return TG_BT_NOMEM;
        b->text = grown;
        b->text_cap = bytes;
    }
    char *at = b->text;
    for (int i = 1; i <= b->n; i++) {
        tg_cellv *c = &b->cells[i];
        if (c->type != SQLITE_TEXT && c->type != SQLITE_BLOB) continue;
        memcpy(at, c->p, (size_t)c->n);
        at[c->n] = 0;
        c->p = at;
        at += c->n + 1;
    }
    return 0;
}

int tg_btree_next(tg_btree *b)
{
    if (b->done) return 0;
    while (b->leaf_next >= b->leaf_n) {
        int rc = next_leaf(b);
        if (rc <= 0) {
            b->done = true;
            return rc;
        }
    }
    uint32_t off = get16(b->leaf + (b->leaf_page == 1 ? 100 : 0) + 8 + 2 * (uint32_t)b->leaf_next++) & (b->page_size - 1);
    uint64_t rowid, len, local;
    const uint8_t *rec, *lim;
    int rc = cell_payload(b, off, &rowid, &rec, &len, &local, &lim);
    if (!rc) rc = decode_record(b, rec, len, local, lim);
    if (rc) {
        b->done = true;
        return rc;
    }
    b->cells[0] = (tg_cellv){.type = SQLITE_INTEGER, .i = (int64_t)rowid};
    size_t text = 0;
    for (int i = 0; i < b->n; i++) {
        tg_cellv *c = &b->cells[i + 1];
        *c = b->pos[i] < 0 ? (tg_cellv){.type = SQLITE_NULL} : b->vals[b->pos[i]];
        if (c->type == SQLITE_TEXT || c->type == SQLITE_BLOB) text += (size_t)c->n + 1;
    }
    if (text && (rc = terminate_text(b, text))) {
        b->done = true;
        return rc;
    }
    return 1;
}

bool tg_btree_stricter(const tg_btree *b)
{
    return b->stricter;
}

const tg_cellv *tg_btree_cells(const tg_btree *b)
{
    return b->cells;
}
