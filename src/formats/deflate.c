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
 *     zlib's level 4 at about half its time.  With ISA-L too, libdeflate
 *     takes only the low byte planes that vary (the noise of a column of
 *     small numbers: start gaps of tens of ns), and ISA-L the high planes,
 *     nearly all zeros, in the same stream ("The split stream" below):
 *     libdeflate spent 70 % of its time on those zeros, inserting every
 *     byte of a run into its hash chains, for what ISA-L writes ten times
 *     faster in as few bytes.
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

#if defined(SPS_HAVE_LIBDEFLATE) && defined(SPS_HAVE_ISAL)
#  define SPS__SPLIT 1 /* the split stream: both encoders in one */
#  define SCAN_OUT 16384 /* bytes of the inflated low planes held at once */
#endif

#define SAME_MEMO 4 /* columns of one value remembered */

struct sps__coder {
    size_t cap;           /* bytes of one raw column of a chunk */
    unsigned char *plane; /* shuffled column, cap bytes */
    unsigned char *out;   /* one compressed column, bound bytes */
    size_t bound;
    unsigned skip[8];     /* per column: chunks left before the next trial */
    unsigned fast;        /* columns that always take ISA-L (bit k: column k) */
    int split;            /* the split stream allowed (sps__coder_split) */
    struct same {         /* streams of columns of one value, by (value, n) */
        int64_t value;
        size_t n, len;    /* n 0: unused */
        unsigned char *z;
    } same[SAME_MEMO];
    unsigned same_next;   /* the entry to replace next */
#if defined(SPS_HAVE_LIBDEFLATE)
    struct libdeflate_compressor *ld;
#endif
#if defined(SPS_HAVE_ISAL)
    unsigned char *isal_buf;
#endif
#if defined(SPS__SPLIT)
    z_stream scan;        /* inflates the low planes' stream to find its end */
    int scan_ok;          /* scan was initialized */
    unsigned char *low;   /* its output, SCAN_OUT bytes reused (inflate keeps
                             its own window; the bits are what count) */
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
    c->split = 1;
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
#if defined(SPS__SPLIT)
    c->low = malloc(SCAN_OUT);
    c->scan_ok = ok && c->low && inflateInit2(&c->scan, -15) == Z_OK;
    ok = ok && c->scan_ok;
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
#if defined(SPS__SPLIT)
    if (c->scan_ok) inflateEnd(&c->scan);
    free(c->low);
#endif
    for (int i = 0; i < SAME_MEMO; i++) free(c->same[i].z);
    free(c);
}

#if defined(SPS_HAVE_ISAL)
/* ISA-L level 1 of in[0..n) into out[0..room), in the wrapper gzip_flag
 * names (IGZIP_ZLIB; IGZIP_DEFLATE: raw, its last block final); its size,
 * or 0 when it did not fit. */
static size_t isal_level1(sps__coder_t *c, const unsigned char *in, size_t n,
                          unsigned char *out, size_t room, uint16_t gzip_flag) {
    /* zeroed: ISA-L's stateless deflate reads its hash table (in the
     * stream's internal state) before writing it -- its matches are
     * checked, so only which ones it finds depends on it -- and a stream
     * on the stack left the output bytes to whatever the stack held
     * (valgrind; 2 % apart between two builds).  Zeros make a chunk's
     * bytes a function of its data; the 80 KB cost ~3 us a column. */
    struct isal_zstream s;
    memset(&s, 0, sizeof s);
    isal_deflate_stateless_init(&s);
    s.level = 1;
    s.level_buf = c->isal_buf;
    s.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    s.gzip_flag = gzip_flag;
    s.end_of_stream = 1;
    s.flush = NO_FLUSH;
    s.next_in = (unsigned char *)in;
    s.avail_in = (uint32_t)n;
    s.next_out = out;
    s.avail_out = (uint32_t)room;
    if (isal_deflate_stateless(&s) != COMP_OK || s.avail_in) return 0;
    return s.total_out;
}

/* ISA-L level 1 of in[0..n) into c->out as a zlib stream; its size, or 0
 * when it did not fit. */
static size_t isal_zlib(sps__coder_t *c, const unsigned char *in, size_t n) {
    return isal_level1(c, in, n, c->out, c->bound, IGZIP_ZLIB);
}
#endif

#if defined(SPS__SPLIT)
/* ------------------------------------------------------------------------ */
/* The split stream: libdeflate for the low planes, ISA-L for the rest       */
/* ------------------------------------------------------------------------ */

/* How many low byte planes of elems[0..n) vary: the fewest k such that at
 * most n/64 elements need more than k bytes (as unsigned numbers; the
 * first row of start gaps is an absolute time, a negative id 8 bytes).
 * The planes above k are nearly all zeros. */
static unsigned low_planes(const int64_t *elems, size_t n) {
    size_t need[9] = {0}; /* elements by significant bytes */
    for (size_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)elems[i];
        need[v ? (71 - (unsigned)__builtin_clzll(v)) / 8 : 0]++;
    }
    size_t above = 0; /* elements needing more than k bytes */
    unsigned k = 8;
    while (k > 0 && above + need[k] <= n / 64) above += need[k--];
    return k;
}

/* Where the raw deflate stream in[0..len) ends and where its last block
 * begins, in bits from in's first (deflate numbers bits from each byte's
 * least significant), found by inflating it block by block with zlib:
 * Z_BLOCK stops at the end of each block, before the final block's
 * padding is dropped, and data_type then holds the bits of the last byte
 * read that are not consumed (+ 64 after the final block, + 128 at a
 * block's end).  The inflated bytes are not kept: a small buffer is
 * reused (inflate keeps the 32 KiB window it refers back to).  0, or -1
 * when in is not one whole stream of at most c->cap bytes with nothing
 * after it. */
static int stream_ends(sps__coder_t *c, const unsigned char *in, size_t len,
                       uint64_t *last_block_bit, uint64_t *end_bit) {
    z_stream *z = &c->scan;
    if (inflateReset(z) != Z_OK) return -1;
    z->next_in = (unsigned char *)in;
    z->avail_in = (uInt)len;
    z->avail_out = 0;
    uint64_t block = 0, out = 0; /* where the block being read began; bytes out */
    for (;;) {
        if (!z->avail_out) { /* what came out is not needed: room again */
            z->next_out = c->low;
            z->avail_out = SCAN_OUT;
        }
        uInt room = z->avail_out;
        if (inflate(z, Z_BLOCK) != Z_OK) return -1;
        out += room - z->avail_out;
        if (out > c->cap) return -1; /* more than a column */
        int dt = z->data_type;
        if (!(dt & 128)) { /* stopped inside a block: out of input or room */
            if (!z->avail_in && z->avail_out) return -1;
            continue;
        }
        uint64_t bit = (uint64_t)(len - z->avail_in) * 8 - (uint64_t)(dt & 63);
        if (dt & 64) { /* the final block ended here */
            *last_block_bit = block;
            *end_bit = bit;
            break;
        }
        block = bit;
    }
    if (!z->avail_out) {
        z->next_out = c->low;
        z->avail_out = SCAN_OUT;
    }
    return inflate(z, Z_BLOCK) == Z_STREAM_END && !z->avail_in ? 0 : -1;
}

/* The zlib stream of the shuffled column in[0..k*n + (8-k)*n) (n elements,
 * k low planes) into c->out: a zlib header; the low planes as libdeflate
 * wrote them, the final-block bit of its last block cleared and an empty
 * stored block appended (three zero bits, zero bits to the byte, then
 * 00 00 FF FF, as zlib's Z_SYNC_FLUSH ends), so that what follows starts
 * on a byte; the high planes as ISA-L writes a raw stream (its last block
 * is final); the adler32 of all the bytes.  A reader sees one standard
 * stream.  Its size, or 0 (the caller then encodes it whole). */
static size_t split_zlib(sps__coder_t *c, const unsigned char *in, size_t n, unsigned k) {
    size_t lo = (size_t)k * n, hi = 8 * n - lo, room = c->bound - 6;
    unsigned char *o = c->out;
    o[0] = 0x78; /* deflate, 32 KiB window */
    o[1] = 0x9C; /* default level; 0x789C is a multiple of 31 */
    size_t alen = libdeflate_deflate_compress(c->ld, in, lo, o + 2, room - 5);
    uint64_t last = 0, end = 0;
    if (!alen || stream_ends(c, o + 2, alen, &last, &end)) return 0;
    o[2 + last / 8] &= (unsigned char)~(1u << (last % 8)); /* not final */
    /* the stored block's header (3 zero bits) at bit end, zeros to the byte:
     * byte end/8 keeps its bits below end, the next (if the 3 bits reach
     * it) is zero; tail is the bytes of low planes and header */
    size_t e = (size_t)(end / 8), tail = (size_t)((end + 3 + 7) / 8);
    o[2 + e] = end % 8 ? (unsigned char)(o[2 + e] & ((1u << (end % 8)) - 1)) : 0;
    if (tail > e + 1) o[2 + e + 1] = 0;
    size_t at = 2 + tail;
    if (at + 4 > room) return 0;
    memcpy(o + at, "\x00\x00\xff\xff", 4); /* LEN 0, NLEN */
    at += 4;
    size_t blen = isal_level1(c, in + lo, hi, o + at, room - at, IGZIP_DEFLATE);
    if (!blen) return 0;
    at += blen;
    uint32_t adler = libdeflate_adler32(1, in, lo + hi);
    for (int b = 3; b >= 0; b--) o[at++] = (unsigned char)(adler >> (8 * b)); /* big-endian */
    return at;
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

/* 1 when e[0..n) are all e[0] (n > 0); stops at the first other value. */
static int one_value(const int64_t *e, size_t n) {
    int64_t v = e[0];
    size_t i = 1;
    for (; i + 4 <= n; i += 4) /* four at a time: the compiler's vectors */
        if ((e[i] ^ v) | (e[i + 1] ^ v) | (e[i + 2] ^ v) | (e[i + 3] ^ v)) return 0;
    for (; i < n; i++)
        if (e[i] != v) return 0;
    return 1;
}

/* A column of n copies of one value (a one-thread program's thread ids, a
 * top-level region's parent ids: most chunks of such columns) compresses
 * to the same stream every time: the coder remembers the last few.  The
 * memo's stream for (value, n), or NULL. */
static const struct same *same_find(const sps__coder_t *c, int64_t value, size_t n) {
    for (int i = 0; i < SAME_MEMO; i++)
        if (c->same[i].n == n && c->same[i].value == value) return &c->same[i];
    return NULL;
}

/* Remembers z[0..len), the stream of n copies of value (best effort: out
 * of memory, nothing is remembered). */
static void same_keep(sps__coder_t *c, int64_t value, size_t n, const unsigned char *z,
                      size_t len) {
    unsigned char *copy = malloc(len);
    if (!copy) return;
    memcpy(copy, z, len);
    struct same *m = &c->same[c->same_next++ % SAME_MEMO];
    free(m->z);
    *m = (struct same){value, n, len, copy};
}

int sps__coder_column(sps__coder_t *c, int column, const int64_t *elems,
                      size_t n, unsigned char **out, size_t *out_bytes) {
    size_t bytes = n * 8, len = 0;
    *out = NULL;
    *out_bytes = 0;
    if (bytes > c->cap) return SPS_EINVAL;
    int same = n > 0 && one_value(elems, n);
    const struct same *m = same ? same_find(c, elems[0], n) : NULL;
    if (m) {
        if (!(*out = malloc(m->len))) return SPS_ENOMEM;
        memcpy(*out, m->z, m->len);
        *out_bytes = m->len;
        return 0;
    }
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
#if defined(SPS__SPLIT)
    if (!len && c->split) {
        unsigned k = low_planes(elems, n);
        if (k > 0 && k < 8) len = split_zlib(c, c->plane, n, k);
    }
#endif
    if (!len) len = strong_zlib(c, c->plane, bytes);
    if (!len) return SPS_ENOMEM;
    unsigned char *copy = malloc(len);
    if (!copy) return SPS_ENOMEM;
    memcpy(copy, c->out, len);
    if (same) same_keep(c, elems[0], n, copy, len);
    *out = copy;
    *out_bytes = len;
    return 0;
}

void sps__coder_fast_columns(sps__coder_t *c, unsigned mask) { c->fast = mask & 0xFFu; }

int sps__coder_split(sps__coder_t *c, int on) {
    c->split = on != 0;
#if defined(SPS__SPLIT)
    return 1;
#else
    return 0;
#endif
}

/* The inverse of shuffle8. */
/* HDF5's unshuffle of n 8-byte elements: byte plane j (n bytes at
 * in + j*n) back into byte j of each element.  With SSE2, 16 elements at a
 * time by an 8 x 16 byte transpose (three rounds of unpacks): the scalar
 * loop cost a reader as much as libdeflate's inflate of the same chunk. */
static void unshuffle8(const unsigned char *in, unsigned char *out, size_t n) {
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        __m128i a[8], b[8], c[8];
        for (int j = 0; j < 8; j++) a[j] = _mm_loadu_si128((const __m128i *)(in + j * n + i));
        for (int j = 0; j < 8; j += 2) {
            b[j] = _mm_unpacklo_epi8(a[j], a[j + 1]);     /* elements 0-7, bytes j, j+1 */
            b[j + 1] = _mm_unpackhi_epi8(a[j], a[j + 1]); /* elements 8-15 */
        }
        for (int h = 0; h < 2; h++) { /* h: bytes 0-3 or 4-7 */
            __m128i *p = b + 4 * h, *q = c + 4 * h;
            q[0] = _mm_unpacklo_epi16(p[0], p[2]); /* elements 0-3 */
            q[1] = _mm_unpackhi_epi16(p[0], p[2]); /* 4-7 */
            q[2] = _mm_unpacklo_epi16(p[1], p[3]); /* 8-11 */
            q[3] = _mm_unpackhi_epi16(p[1], p[3]); /* 12-15 */
        }
        unsigned char *o = out + i * 8;
        for (int k = 0; k < 4; k++) { /* elements 4k .. 4k+3, whole */
            _mm_storeu_si128((__m128i *)(o + 32 * k), _mm_unpacklo_epi32(c[k], c[k + 4]));
            _mm_storeu_si128((__m128i *)(o + 32 * k + 16), _mm_unpackhi_epi32(c[k], c[k + 4]));
        }
    }
#endif
    for (size_t j = 0; j < 8; j++)
        for (size_t e = i; e < n; e++) out[e * 8 + j] = in[j * n + e];
}

/* See formats.h. */
int sps__unfilter8(void **dec, const unsigned char *in, size_t in_bytes, int shuffled,
                   unsigned char *plane, int64_t *elems, size_t n) {
    size_t bytes = n * 8;
    unsigned char *to = shuffled ? plane : (unsigned char *)elems;
#if defined(SPS_HAVE_LIBDEFLATE)
    if (!*dec && !(*dec = libdeflate_alloc_decompressor())) return SPS_ENOMEM;
    size_t got = 0;
    int ok = libdeflate_zlib_decompress(*dec, in, in_bytes, to, bytes, &got) ==
                 LIBDEFLATE_SUCCESS && got == bytes;
#else
    (void)dec;
    uLongf got = (uLongf)bytes;
    int ok = uncompress(to, &got, in, (uLong)in_bytes) == Z_OK && got == bytes;
#endif
    if (!ok) return SPS_EFORMAT;
    if (shuffled) unshuffle8(plane, (unsigned char *)elems, n);
    return 0;
}

/* See formats.h. */
void sps__unfilter8_free(void *dec) {
#if defined(SPS_HAVE_LIBDEFLATE)
    if (dec) libdeflate_free_decompressor(dec);
#else
    (void)dec;
#endif
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
    if (n * 8 > c->cap) return SPS_EINVAL;
    void *dec = NULL;
    int rc = sps__unfilter8(&dec, in, in_bytes, 1, c->plane, elems, n);
    sps__unfilter8_free(dec);
    return rc;
}

const char *sps__coder_name(void) {
#if defined(SPS_HAVE_ISAL) && defined(SPS_HAVE_LIBDEFLATE)
    return "isa-l level 1 for runs, libdeflate level 4 for the varying low byte planes "
           "and isa-l level 1 for the rest otherwise";
#elif defined(SPS_HAVE_LIBDEFLATE)
    return "libdeflate level 4";
#elif defined(SPS_HAVE_ISAL)
    return "isa-l level 1 for runs, zlib level 4 otherwise";
#else
    return "zlib level 4";
#endif
}
