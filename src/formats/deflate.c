/* deflate.c -- HDF5's shuffle + deflate filter pipeline, done by us, so
 * that finalize can compress chunks on worker threads and hand them to
 * H5Dwrite_chunk.
 *
 * The bytes are exactly what HDF5's own filters would accept on reading:
 * the shuffle is HDF5's (byte plane j of every element together, planes in
 * order), the deflate output is a standard zlib stream (header, deflate
 * blocks, adler32), which H5Z's deflate filter reads with zlib's inflate.
 * Which encoder writes that stream is a measured choice (docs/benchmarks.md,
 * "Finalize"), made per chunk column:
 *
 *   - ISA-L's igzip level 1 (when built with it) compresses runs about ten
 *     times faster than zlib or libdeflate; on the columns that are nearly
 *     constant once shuffled (thread and parent ids, call ids of loops) its
 *     output is as small as theirs.  It is tried first, and kept when it
 *     brings the column to under 1/64 of its raw size.
 *   - Otherwise libdeflate (when built with it) at level 4: smaller than
 *     zlib's level 4 at about half its time.
 *   - Without either, zlib's compress2 at level 4, as HDF5 would.
 * A column that libdeflate had to take is sent straight to it for the next
 * 15 chunks (the ISA-L trial would only cost time), then tried again.
 * The caller may give a column to ISA-L whatever it holds
 * (sps__coder_fast_columns): the event writer does so with the durations,
 * whose noisy low bytes libdeflate packs only ~25 % smaller at ~8 x the
 * time, the larger half of finalize's compression (measured on this VM in
 * docs/benchmarks.md; the file stays within 1.1 x of what HDF5's own
 * zlib level 4 writes).
 *
 * A coder (sps__coder_t) is one thread's state: scratch buffers and the
 * encoders' own; coders share nothing, so each worker thread has one. */
#include "formats/formats.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#if defined(SPS_HAVE_LIBDEFLATE)
#  include <libdeflate.h>
#endif
#if defined(SPS_HAVE_ISAL)
#  include <isa-l/igzip_lib.h>
#endif
#if defined(__SSE2__)
#  include <emmintrin.h>
#endif
/* AVX2 for the shuffle, chosen at run time (x86-64, GCC or clang) */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__SSE2__)
#  define SPS__SHUFFLE_AVX2 1
#  include <immintrin.h>
#endif

#define LIBDEFLATE_LEVEL 4
#define ZLIB_LEVEL 4
#define RETRY_EVERY 16 /* chunks between ISA-L trials of a libdeflate column */

struct sps__coder {
    size_t cap;           /* bytes of one raw column of a chunk */
    unsigned char *plane; /* shuffled column, cap bytes */
    unsigned char *out;   /* one compressed column, bound bytes */
    size_t bound;
    unsigned skip[8];     /* per column: chunks left before the next trial */
    unsigned fast;        /* columns that always take ISA-L (bit k: column k) */
#if defined(SPS_HAVE_LIBDEFLATE)
    struct libdeflate_compressor *ld;
#endif
#if defined(SPS_HAVE_ISAL)
    unsigned char *isal_buf;
#endif
};

/* ------------------------------------------------------------------------ */
/* Shuffle (H5Z_filter_shuffle for 8-byte elements)                          */
/* ------------------------------------------------------------------------ */

/* The transpose's four rounds over vectors a[8] (b[8]: scratch), with the
 * byte interleaves lo and hi of one vector width: each round interleaves
 * the bytes of vector k with those of vector k + 4; after four, a[j]
 * holds byte plane j. */
#define SHUFFLE_ROUND(dst, src, lo, hi)                 \
    for (int k = 0; k < 4; k++) {                       \
        dst[2 * k] = lo(src[k], src[k + 4]);            \
        dst[2 * k + 1] = hi(src[k], src[k + 4]);        \
    }
#define SHUFFLE_ROUNDS(a, b, lo, hi)                    \
    SHUFFLE_ROUND(b, a, lo, hi) SHUFFLE_ROUND(a, b, lo, hi) \
    SHUFFLE_ROUND(b, a, lo, hi) SHUFFLE_ROUND(a, b, lo, hi)

/* Elements [i, n) of HDF5's shuffle of n 8-byte elements of in into out:
 * out[j*n + e] = byte j of element e.  SSE2 transposes 16 elements at a
 * time: four rounds of interleaving the bytes of vector k with those of
 * vector k + 4 turn 16 x 8 bytes into 8 x 16. */
static void shuffle8_from(const unsigned char *in, unsigned char *out, size_t n, size_t i) {
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        const __m128i *p = (const __m128i *)(in + i * 8);
        __m128i a[8], b[8];
        for (int k = 0; k < 8; k++) a[k] = _mm_loadu_si128(p + k); /* 2 elements each */
        SHUFFLE_ROUNDS(a, b, _mm_unpacklo_epi8, _mm_unpackhi_epi8)
        /* after four rounds a[j] is byte plane j of the 16 elements */
        for (int j = 0; j < 8; j++)
            _mm_storeu_si128((__m128i *)(out + (size_t)j * n + i), a[j]);
    }
#endif
    for (; i < n; i++)
        for (int j = 0; j < 8; j++) out[(size_t)j * n + i] = in[i * 8 + (size_t)j];
}

#if defined(SPS__SHUFFLE_AVX2)
/* shuffle8_from(in, out, n, 0) with AVX2: the same four rounds on 256-bit
 * vectors, whose two 128-bit lanes hold two groups of 16 elements (AVX2
 * interleaves within a lane), so that each plane's 32 bytes come out
 * together: half the instructions.  A 10^8-call finalize's shuffling took
 * 0.63 s of CPU instead of 1.09 s (perf; docs/benchmarks.md), a third of
 * a chunk's compression before. */
__attribute__((target("avx2"))) static void shuffle8_avx2(const unsigned char *in,
                                                          unsigned char *out, size_t n) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m128i *p = (const __m128i *)(in + i * 8), *q = p + 8; /* the two groups */
        __m256i a[8], b[8];
        for (int k = 0; k < 8; k++)
            a[k] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(p + k)),
                                           _mm_loadu_si128(q + k), 1);
        SHUFFLE_ROUNDS(a, b, _mm256_unpacklo_epi8, _mm256_unpackhi_epi8)
        for (int j = 0; j < 8; j++)
            _mm256_storeu_si256((__m256i *)(out + (size_t)j * n + i), a[j]);
    }
    shuffle8_from(in, out, n, i);
}
#endif

/* HDF5's shuffle of n 8-byte elements of in into out, with AVX2 where the
 * CPU has it (asked once per call: a cached flag in libgcc's data). */
static void shuffle8(const unsigned char *in, unsigned char *out, size_t n) {
#if defined(SPS__SHUFFLE_AVX2)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        shuffle8_avx2(in, out, n);
        return;
    }
#endif
    shuffle8_from(in, out, n, 0);
}

/* ------------------------------------------------------------------------ */
/* Coders                                                                    */
/* ------------------------------------------------------------------------ */

sps__coder_t *sps__coder_new(size_t column_bytes) {
    sps__coder_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->cap = column_bytes;
    c->bound = (size_t)compressBound((uLong)column_bytes) + 64;
    c->plane = malloc(column_bytes ? column_bytes : 1);
    c->out = malloc(c->bound);
    int ok = c->plane && c->out;
#if defined(SPS_HAVE_LIBDEFLATE)
    c->ld = libdeflate_alloc_compressor(LIBDEFLATE_LEVEL);
    ok = ok && c->ld;
#endif
#if defined(SPS_HAVE_ISAL)
    c->isal_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
    ok = ok && c->isal_buf;
#endif
    if (!ok) {
        sps__coder_free(c);
        return NULL;
    }
    return c;
}

void sps__coder_free(sps__coder_t *c) {
    if (!c) return;
    free(c->plane);
    free(c->out);
#if defined(SPS_HAVE_LIBDEFLATE)
    if (c->ld) libdeflate_free_compressor(c->ld);
#endif
#if defined(SPS_HAVE_ISAL)
    free(c->isal_buf);
#endif
    free(c);
}

#if defined(SPS_HAVE_ISAL)
/* ISA-L level 1 of in[0..n) into c->out as a zlib stream; its size, or 0
 * when it did not fit. */
static size_t isal_zlib(sps__coder_t *c, const unsigned char *in, size_t n) {
    struct isal_zstream s;
    isal_deflate_stateless_init(&s);
    s.level = 1;
    s.level_buf = c->isal_buf;
    s.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    s.gzip_flag = IGZIP_ZLIB;
    s.end_of_stream = 1;
    s.flush = NO_FLUSH;
    s.next_in = (unsigned char *)in;
    s.avail_in = (uint32_t)n;
    s.next_out = c->out;
    s.avail_out = (uint32_t)c->bound;
    if (isal_deflate_stateless(&s) != COMP_OK || s.avail_in) return 0;
    return s.total_out;
}
#endif

/* The general encoder (libdeflate, else zlib) of in[0..n) into c->out; its
 * size, or 0 on failure. */
static size_t strong_zlib(sps__coder_t *c, const unsigned char *in, size_t n) {
#if defined(SPS_HAVE_LIBDEFLATE)
    return libdeflate_zlib_compress(c->ld, in, n, c->out, c->bound);
#else
    uLongf len = (uLongf)c->bound;
    return compress2(c->out, &len, in, (uLong)n, ZLIB_LEVEL) == Z_OK ? (size_t)len : 0;
#endif
}

int sps__coder_column(sps__coder_t *c, int column, const int64_t *elems,
                      size_t n, unsigned char **out, size_t *out_bytes) {
    size_t bytes = n * 8, len = 0;
    *out = NULL;
    *out_bytes = 0;
    if (bytes > c->cap) return SPS_EINVAL;
    unsigned *skip = &c->skip[column & 7];
    shuffle8((const unsigned char *)elems, c->plane, n);
#if defined(SPS_HAVE_ISAL)
    if (c->fast >> (column & 7) & 1) {
        len = isal_zlib(c, c->plane, bytes);
    } else if (*skip == 0) {
        len = isal_zlib(c, c->plane, bytes);
        if (len && len > bytes / 64) len = 0; /* not a run: the strong one */
        if (!len) *skip = RETRY_EVERY - 1;
    } else {
        (*skip)--;
    }
#else
    (void)skip;
#endif
    if (!len) len = strong_zlib(c, c->plane, bytes);
    if (!len) return SPS_ENOMEM;
    unsigned char *copy = malloc(len);
    if (!copy) return SPS_ENOMEM;
    memcpy(copy, c->out, len);
    *out = copy;
    *out_bytes = len;
    return 0;
}

void sps__coder_fast_columns(sps__coder_t *c, unsigned mask) { c->fast = mask & 0xFFu; }

/* The inverse of shuffle8. */
static void unshuffle8(const unsigned char *in, unsigned char *out, size_t n) {
    for (size_t j = 0; j < 8; j++)
        for (size_t i = 0; i < n; i++) out[i * 8 + j] = in[j * n + i];
}

int sps__coder_park(sps__coder_t *c, const int64_t *elems, size_t n,
                    unsigned char **out, size_t *out_bytes) {
    size_t bytes = n * 8, len = 0;
    *out = NULL;
    *out_bytes = 0;
    if (bytes > c->cap) return SPS_EINVAL;
    shuffle8((const unsigned char *)elems, c->plane, n);
#if defined(SPS_HAVE_ISAL)
    len = isal_zlib(c, c->plane, bytes);
#endif
    if (!len) { /* zlib's fastest: parking is rare without ISA-L too */
        uLongf l = (uLongf)c->bound;
        if (compress2(c->out, &l, c->plane, (uLong)bytes, 1) == Z_OK) len = (size_t)l;
    }
    if (!len || !(*out = malloc(len))) return SPS_ENOMEM;
    memcpy(*out, c->out, len);
    *out_bytes = len;
    return 0;
}

int sps__coder_unpark(sps__coder_t *c, const unsigned char *in, size_t in_bytes,
                      int64_t *elems, size_t n) {
    size_t bytes = n * 8;
    if (bytes > c->cap) return SPS_EINVAL;
#if defined(SPS_HAVE_LIBDEFLATE)
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t got = 0;
    int ok = d && libdeflate_zlib_decompress(d, in, in_bytes, c->plane, bytes, &got) ==
                      LIBDEFLATE_SUCCESS && got == bytes;
    if (d) libdeflate_free_decompressor(d);
#else
    uLongf got = (uLongf)bytes;
    int ok = uncompress(c->plane, &got, in, (uLong)in_bytes) == Z_OK && got == bytes;
#endif
    if (!ok) return SPS_EFORMAT;
    unshuffle8(c->plane, (unsigned char *)elems, n);
    return 0;
}

const char *sps__coder_name(void) {
#if defined(SPS_HAVE_ISAL) && defined(SPS_HAVE_LIBDEFLATE)
    return "isa-l level 1 for runs, libdeflate level 4 otherwise";
#elif defined(SPS_HAVE_LIBDEFLATE)
    return "libdeflate level 4";
#elif defined(SPS_HAVE_ISAL)
    return "isa-l level 1 for runs, zlib level 4 otherwise";
#else
    return "zlib level 4";
#endif
}
