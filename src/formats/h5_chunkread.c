/* h5_chunkread.c -- an event column read chunk by chunk and decoded here,
 * not through H5Dread.
 *
 * Why: streaming a 10^7-span file through H5Dread spent 43 % of its time
 * in zlib (inflate, and its scalar adler32 alone 13 %) and another ~15 % in
 * HDF5's shuffle filter and the copies out of its chunk cache, which made
 * the viewer's index build (formats/viewidx.c) half as fast as the
 * finalize that wrote the file.  The writer already filters chunks itself
 * (deflate.c) and hands them to H5Dwrite_chunk; the reader now does the
 * reverse: H5Dread_chunk gives a chunk's stored bytes, libdeflate inflates
 * them (its adler32 is vectorised) and an SSE2 transpose unshuffles them
 * (sps__unfilter8).  Decoded chunks stay in a small LRU cache, so the
 * timeline reader's cursors (one per region row, each in its own part of
 * the column) do not decode a chunk once per block they read from it.
 *
 * Only a column exactly like the ones spanscope writes takes this path:
 * 1-D, 64-bit little-endian signed integers, chunked, filtered by shuffle
 * then deflate or by deflate alone, at most CHUNK_MAX elements a chunk, on
 * a little-endian host.  A chunk that cannot be had this way (a filter
 * skipped for it, not allocated, a stream that does not decode to a whole
 * chunk) makes the read answer 1, and the caller reads the range with
 * H5Dread as before: damaged data then fails with HDF5's own checks, as it
 * always did. */
#include "formats/h5_read.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS_MAX 16                    /* decoded chunks kept per column */
#define CACHE_BYTES ((size_t)32 << 20)  /* ... and at most this much of them */
#define CHUNK_MAX ((uint64_t)1 << 20)   /* elements: larger chunks go to H5Dread */

typedef struct slot {
    uint64_t k;      /* chunk index */
    uint64_t used;   /* the reader's clock at its last use; 0: empty */
    int64_t *elems;  /* ch elements */
} slot_t;

struct sps__h5cr {
    hid_t d;               /* the dataset (borrowed: the reader closes it) */
    int shuffled;          /* filters: shuffle then deflate (else deflate alone) */
    uint64_t ch;           /* elements per chunk */
    size_t nslots;
    uint64_t clock;
    slot_t slot[SLOTS_MAX];
    unsigned char *raw;    /* a chunk's stored bytes */
    size_t rawcap;
    unsigned char *plane;  /* ch * 8 bytes: inflated, still shuffled */
    void *dec;             /* libdeflate's decompressor (sps__unfilter8) */
};

/* Whether dcpl's filters are deflate alone (*shuffled 0) or shuffle then
 * deflate (*shuffled 1). */
static int filters_ours(hid_t dcpl, int *shuffled) {
    int n = H5Pget_nfilters(dcpl);
    if (n < 1 || n > 2) return 0;
    H5Z_filter_t f[2];
    for (int i = 0; i < n; i++) {
        unsigned flags = 0, cfg = 0;
        size_t ncd = 0;
        f[i] = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, NULL, 0, NULL, &cfg);
    }
    *shuffled = n == 2;
    return n == 1 ? f[0] == H5Z_FILTER_DEFLATE
                  : f[0] == H5Z_FILTER_SHUFFLE && f[1] == H5Z_FILTER_DEFLATE;
}

/* The chunk length of d when d is a column this file can decode, else 0. */
static uint64_t eligible(hid_t d, int *shuffled) {
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    (void)d;
    (void)shuffled;
    return 0;
#else
    hid_t sp = H5Dget_space(d), t = H5Dget_type(d), dcpl = H5Dget_create_plist(d);
    hsize_t ch = 0;
    int ok = sp >= 0 && t >= 0 && dcpl >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
             H5Tequal(t, H5T_STD_I64LE) > 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
             H5Pget_chunk(dcpl, 1, &ch) == 1 && ch > 0 && ch <= CHUNK_MAX &&
             filters_ours(dcpl, shuffled);
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    if (dcpl >= 0) H5Pclose(dcpl);
    return ok ? (uint64_t)ch : 0;
#endif
}

sps__h5cr_t *sps__h5cr_new(int64_t dataset) {
    int shuffled = 0;
    uint64_t ch = dataset >= 0 ? eligible((hid_t)dataset, &shuffled) : 0;
    if (!ch) return NULL;
    sps__h5cr_t *c = calloc(1, sizeof *c);
    if (!c || !(c->plane = malloc((size_t)ch * 8))) {
        free(c);
        return NULL;
    }
    c->d = (hid_t)dataset;
    c->shuffled = shuffled;
    c->ch = ch;
    size_t fit = CACHE_BYTES / ((size_t)ch * 8);
    c->nslots = fit < 2 ? 2 : fit > SLOTS_MAX ? SLOTS_MAX : fit;
    return c;
}

void sps__h5cr_free(sps__h5cr_t *c) {
    if (!c) return;
    for (size_t i = 0; i < c->nslots; i++) free(c->slot[i].elems);
    free(c->raw);
    free(c->plane);
    sps__unfilter8_free(c->dec);
    free(c);
}

/* Reads and decodes chunk k into s.  0, 1 (not this way: read with
 * H5Dread) or SPS_ENOMEM. */
static int chunk_load(sps__h5cr_t *c, uint64_t k, slot_t *s) {
    hsize_t off = (hsize_t)(k * c->ch), stored = 0;
    size_t raw_max = (size_t)c->ch * 16 + 4096; /* deflate grows data by < 1 % */
    if (H5Dget_chunk_storage_size(c->d, &off, &stored) < 0 || stored == 0 || stored > raw_max)
        return 1;
    if (stored > c->rawcap) {
        unsigned char *p = realloc(c->raw, (size_t)stored);
        if (!p) return SPS_ENOMEM;
        c->raw = p;
        c->rawcap = (size_t)stored;
    }
    uint32_t skipped = 0;
    if (H5Dread_chunk(c->d, H5P_DEFAULT, &off, &skipped, c->raw) < 0 || skipped) return 1;
    if (!s->elems && !(s->elems = malloc((size_t)c->ch * 8))) return SPS_ENOMEM;
    s->used = 0; /* empty until decoded */
    int rc = sps__unfilter8(&c->dec, c->raw, (size_t)stored, c->shuffled, c->plane,
                            s->elems, (size_t)c->ch);
    if (rc) return rc == SPS_ENOMEM ? rc : 1;
    s->k = k;
    return 0;
}

/* The decoded chunk k (from the cache or loaded into its least recently
 * used slot) in *out.  0, 1 or SPS_ENOMEM as chunk_load. */
static int chunk_get(sps__h5cr_t *c, uint64_t k, const int64_t **out) {
    slot_t *lru = &c->slot[0];
    for (size_t i = 0; i < c->nslots; i++) {
        slot_t *s = &c->slot[i];
        if (s->used && s->k == k) {
            s->used = ++c->clock;
            *out = s->elems;
            return 0;
        }
        if (s->used < lru->used) lru = s;
    }
    int rc = chunk_load(c, k, lru);
    if (rc) return rc;
    lru->used = ++c->clock;
    *out = lru->elems;
    return 0;
}

int sps__h5cr_read(sps__h5cr_t *c, uint64_t first, size_t n, int64_t *out) {
    while (n) {
        uint64_t k = first / c->ch, at = first % c->ch;
        size_t take = c->ch - at < n ? (size_t)(c->ch - at) : n;
        const int64_t *e;
        int rc = chunk_get(c, k, &e);
        if (rc) return rc;
        memcpy(out, e + at, take * sizeof *out);
        out += take;
        first += take;
        n -= take;
    }
    return 0;
}
