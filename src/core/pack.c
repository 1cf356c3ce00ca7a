/* pack.c -- the spill file's record format: a chunk of 8-byte records
 * (core.h, "records") packed to about a third of a byte per record for a
 * regular loop, and exact for any stream of 64-bit words.
 *
 * Why this codec and not zlib: the spill writer must keep up with a
 * thread that writes a record every ~9 ns, on a spare core, so packing
 * has to cost a few ns per record; deflate costs ~10x that.  What makes
 * records small is knowing what they are: a tag (region << 1 | end) that
 * repeats with the loop's period, and a timestamp whose deltas take few
 * values (this VM's TSC moves in steps of 26 ticks, so deltas are 1, 25
 * or 26 ticks), or at least stay close to the delta one period back.
 *
 * Layout (little-endian):
 *
 *   chunk:  header (SPS__PACK_HDR bytes: magic, n, bytes, flags, next),
 *           then the frames, SPS__PACK_FRAME records each (the last fewer)
 *   frame:  u32 h: bits 0..27 body bytes, bit 31 raw; then the body
 *   raw body:    the records as they are (when packing would not be smaller)
 *   packed body: the lead: words up to and including the first that is not
 *                a HI record, raw; u8 K and K u32 deltas (the palette, most
 *                frequent first); then groups of SPS__PACK_GROUP records
 *   group:  u8 width | 0x40 residual mode | 0x80 tag exceptions,
 *           u8 period - 1 (1..16),
 *           [u32 mask, one u32 tag per set bit: records whose tag is not
 *            the tag one period back],
 *           the records' codes, width bits each, LSB first,
 *           palette mode: a u32 delta for each code 2^width - 1 (escape)
 *
 * A record's delta is its low timestamp half minus the previous record's,
 * mod 2^32.  Palette mode codes it as an index into the palette; residual
 * mode codes zigzag(delta - delta one period back).  Before the lead's last
 * record the stream is taken to have alternated tags (tag ^ 1) and zero
 * deltas, which is what a loop of begin/end pairs predicts.  HI records go
 * through as ordinary words (an exception tag and an escaped delta).
 *
 * Worst case (random words): a frame is stored raw, so a chunk takes
 * 8 n + 4 per frame + SPS__PACK_HDR bytes, never more. */
#include "core/core.h"

#include <string.h>

#define G SPS__PACK_GROUP
#define PMAX 16   /* longest period tried */
#define PAL_MAX 3 /* palette entries: 2-bit codes, 3 = escape */
#define RAW_BIT 0x80000000u
#define BODY_MASK 0x0FFFFFFFu

/* Little-endian loads and stores (the bit packing counts bits from the
 * first byte up; a plain mov on x86 and arm64). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#  define LE32(v) __builtin_bswap32(v)
#  define LE64(v) __builtin_bswap64(v)
#else
#  define LE32(v) (v)
#  define LE64(v) (v)
#endif
static inline uint32_t ld32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return LE32(v);
}
static inline uint64_t ld64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return LE64(v);
}
static inline void st32(uint8_t *p, uint32_t v) {
    v = LE32(v);
    memcpy(p, &v, 4);
}
static inline void st64(uint8_t *p, uint64_t v) {
    v = LE64(v);
    memcpy(p, &v, 8);
}

static inline uint32_t zz(uint32_t r) { /* zigzag of r as int32 */
    return (r << 1) ^ (uint32_t)-(int32_t)(r >> 31);
}
static inline uint32_t unzz(uint32_t v) { return (v >> 1) ^ (uint32_t)-(int32_t)(v & 1u); }

static inline unsigned bit_width(uint32_t x) { return x ? 32u - (unsigned)__builtin_clz(x) : 0u; }

/* Bytes that k codes of w bits take. */
static inline size_t code_bytes(uint32_t k, unsigned w) { return ((size_t)k * w + 7) / 8; }

/* The escape code of a palette group of width w <= 2 (none when w is 0). */
static inline uint32_t esc_code(unsigned w) { return w ? (1u << w) - 1u : UINT32_MAX; }

static inline int is_hi(uint64_t w) { return (uint32_t)(w >> 32) == SPS__REC_HI_TAG; }

/* Lead length: the words up to and including the first non-HI one. */
static uint32_t lead_len(const uint64_t *rec, uint32_t m) {
    uint32_t l = 0;
    while (l < m && is_hi(rec[l])) l++;
    return l < m ? l + 1 : m;
}

/* ------------------------------------------------------------------------ */
/* The history window both sides keep                                        */
/* ------------------------------------------------------------------------ */

/* t[PMAX + j], d[PMAX + j]: tag and delta of the group's record j;
 * t[PMAX - q]: of the record q before the group. */
typedef struct win {
    uint32_t t[PMAX + G], d[PMAX + G];
} win_t;

/* The history before the first group: the lead's last tag, alternating
 * with its end flag flipped further back, and zero deltas. */
static void win_init(win_t *w, uint32_t last_tag) {
    for (unsigned q = 1; q <= PMAX; q++) {
        w->t[PMAX - q] = last_tag ^ ((q - 1) & 1u);
        w->d[PMAX - q] = 0;
    }
}

/* After a full group: its last PMAX records become the history. */
static void win_shift(win_t *w) {
    memcpy(w->t, w->t + G, PMAX * sizeof *w->t);
    memcpy(w->d, w->d + G, PMAX * sizeof *w->d);
}

/* ------------------------------------------------------------------------ */
/* Encoder                                                                   */
/* ------------------------------------------------------------------------ */

/* Appends k codes of w bits (each < 2^w) to o; returns the new end. */
static uint8_t *put_bits(uint8_t *o, const uint32_t *v, uint32_t k, unsigned w) {
    if (!w) return o;
    uint64_t acc = 0;
    unsigned n = 0;
    for (uint32_t j = 0; j < k; j++) {
        acc |= (uint64_t)v[j] << n;
        n += w;
        if (n >= 32) {
            st32(o, (uint32_t)acc);
            o += 4;
            acc >>= 32;
            n -= 32;
        }
    }
    for (; n > 0; n = n > 8 ? n - 8 : 0) {
        *o++ = (uint8_t)acc;
        acc >>= 8;
    }
    return o;
}

/* The palette of a frame: up to PAL_MAX deltas that occur at least twice in
 * a sample of at most 256 of them, most frequent first.  The sample is 4
 * runs of 64 consecutive deltas spread over the frame: a stride would
 * alias with the loop's period and miss a delta.  Returns K. */
static unsigned pick_palette(const uint64_t *rec, uint32_t l, uint32_t m, uint32_t *pal) {
    uint32_t val[16], cnt[16];
    unsigned nv = 0, runs = m - l <= 256 ? 1 : 4;
    for (uint32_t b = 0; b < runs; b++) {
        uint32_t i0 = l + (uint32_t)((uint64_t)(m - l) * b / runs);
        uint32_t i1 = runs == 1 ? m : i0 + 64;
        for (uint32_t i = i0; i < i1; i++) {
            uint32_t x = (uint32_t)rec[i] - (uint32_t)rec[i - 1];
            unsigned e = 0;
            while (e < nv && val[e] != x) e++;
            if (e < nv) cnt[e]++;
            else if (nv < 16) {
                val[nv] = x;
                cnt[nv++] = 1;
            }
        }
    }
    for (unsigned a = 1; a < nv; a++) /* insertion sort, by count down */
        for (unsigned b = a; b > 0 && cnt[b] > cnt[b - 1]; b--) {
            uint32_t tv = val[b], tc = cnt[b];
            val[b] = val[b - 1], cnt[b] = cnt[b - 1];
            val[b - 1] = tv, cnt[b - 1] = tc;
        }
    unsigned k = 0;
    while (k < nv && k < PAL_MAX && cnt[k] >= 2) pal[k] = val[k], k++;
    return k;
}

/* The encoder reads a group through a view v: v[j] is the group's record
 * j, v[-q] the record q before it (q <= PMAX + 1), real or, before the
 * lead's last record, virtual (see vhist). */
static inline uint32_t tag_of(uint64_t w) { return (uint32_t)(w >> 32); }
static inline uint32_t delta_at(const uint64_t *v, long j) {
    return (uint32_t)v[j] - (uint32_t)v[j - 1];
}

/* Tag exceptions of the group's k records under period p, as a mask. */
static uint32_t tag_mask(const uint64_t *v, uint32_t k, unsigned p) {
    uint32_t mask = 0;
    for (uint32_t j = 0; j < k; j++)
        mask |= (uint32_t)(tag_of(v[j]) != tag_of(v[(long)j - p])) << j;
    return mask;
}

static inline unsigned popcount32(uint32_t x) { /* no libgcc call without -mpopcnt */
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

/* The period with the fewest tag exceptions (the mask of *p's first): a
 * loop keeps its period, so this runs only where the stream changes. */
static uint32_t pick_period(const uint64_t *v, uint32_t k, unsigned *p, uint32_t mask) {
    unsigned nbest = popcount32(mask);
    for (unsigned q = 1; q <= PMAX && nbest > 0; q++) {
        uint32_t mk = tag_mask(v, k, q);
        if (popcount32(mk) < nbest) {
            mask = mk;
            nbest = popcount32(mk);
            *p = q;
        }
    }
    return mask;
}

/* What one group becomes: palette codes (width 0..2, escapes counted) or
 * residuals (width 0..32). */
typedef struct group_plan {
    int residual;
    unsigned width;
    size_t bytes;      /* codes and escapes */
    uint64_t codes2;   /* palette: the 2-bit codes, record j at bits 2j */
    uint32_t nonzero;  /* palette: records whose code is not 0 (a mask) */
    uint32_t escaped;  /* palette: records whose delta is in no entry (a mask) */
    uint32_t res[G];   /* residual mode's codes */
} group_plan_t;

/* Palette mode's best width for the codes scan_group found. */
static void plan_palette(uint32_t k, group_plan_t *g) {
    unsigned nz = popcount32(g->nonzero), ne = popcount32(g->escaped);
    size_t b1 = code_bytes(k, 1) + 4 * (size_t)nz, b2 = code_bytes(k, 2) + 4 * (size_t)ne;
    g->residual = 0;
    g->width = !nz ? 0 : b1 <= b2 ? 1 : 2;
    g->bytes = !nz ? 0 : b1 <= b2 ? b1 : b2;
}

/* Residual mode: zigzag(delta - delta one period back). */
static void plan_residual(const uint64_t *v, uint32_t k, unsigned p, group_plan_t *g) {
    uint32_t all = 0;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t r = zz(delta_at(v, j) - delta_at(v, (long)j - p));
        g->res[j] = r;
        all |= r;
    }
    g->residual = 1;
    g->width = bit_width(all);
    g->bytes = code_bytes(k, g->width);
}

/* Writes the group's codes and escapes. */
static uint8_t *put_codes(uint8_t *o, const uint64_t *v, uint32_t k, const group_plan_t *g) {
    if (g->residual) return put_bits(o, g->res, k, g->width);
    uint32_t esc = g->width == 1 ? g->nonzero : g->escaped;
    if (g->width == 1) {
        st32(o, g->nonzero); /* the codes are the mask itself */
        o += code_bytes(k, 1);
    } else if (g->width == 2) {
        st64(o, g->codes2);
        o += code_bytes(k, 2);
    }
    for (; esc; esc &= esc - 1) {
        st32(o, delta_at(v, __builtin_ctz(esc)));
        o += 4;
    }
    return o;
}

/* Bits 0, 2, 4, ... of x, packed into 32 bits. */
static inline uint32_t even_bits(uint64_t x) {
    x &= 0x5555555555555555ull;
    x = (x | x >> 1) & 0x3333333333333333ull;
    x = (x | x >> 2) & 0x0F0F0F0F0F0F0F0Full;
    x = (x | x >> 4) & 0x00FF00FF00FF00FFull;
    x = (x | x >> 8) & 0x0000FFFF0000FFFFull;
    return (uint32_t)(x | x >> 16);
}

/* Codes the group's deltas against the palette and finds its tag
 * exceptions under period p, in one pass without branches (this loop is
 * the encoder's cost).  pal: PAL_MAX distinct entries, then their number. */
static uint32_t scan_group(const uint64_t *v, uint32_t k, unsigned p,
                           const uint32_t *pal, group_plan_t *g) {
    uint32_t lo = (uint32_t)v[-1], mis = 0;
    uint32_t v0 = pal[PAL_MAX] > 0, v1 = pal[PAL_MAX] > 1, v2 = pal[PAL_MAX] > 2;
    uint32_t p0 = pal[0], p1 = pal[1], p2 = pal[2];
    uint64_t codes = 0;
    const uint64_t *back = v - p;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t x = (uint32_t)v[j], d = x - lo;
        lo = x;
        uint32_t e0 = (d == p0) & v0, e1 = (d == p1) & v1, e2 = (d == p2) & v2;
        uint64_t c = 3u - 3u * e0 - 2u * e1 - e2;
        /* filled from the top, by constant shifts (no shift by %cl) */
        mis = mis >> 1 | (uint32_t)(tag_of(v[j]) != tag_of(back[j])) << 31;
        codes = codes >> 2 | c << 62;
    }
    if (k < G) { /* a short last group: down to bit 0 */
        mis >>= G - k;
        codes >>= 2 * (G - k);
    }
    g->codes2 = codes;
    g->nonzero = even_bits(codes | codes >> 1);
    g->escaped = even_bits(codes & codes >> 1);
    return mis;
}

/* Writes one group of k records (v[0, k)) to o; returns the end. */
static uint8_t *put_group(uint8_t *o, const uint64_t *v, uint32_t k, unsigned *p,
                          const uint32_t *pal) {
    group_plan_t g;
    uint32_t mask = scan_group(v, k, *p, pal, &g);
    if (mask) mask = pick_period(v, k, p, mask);
    plan_palette(k, &g);
    if (g.bytes > code_bytes(k, 2)) { /* the palette is not enough */
        group_plan_t r;
        plan_residual(v, k, *p, &r);
        if (r.bytes < g.bytes) g = r;
    }
    *o++ = (uint8_t)(g.width | (g.residual ? 0x40u : 0) | (mask ? 0x80u : 0));
    *o++ = (uint8_t)(*p - 1);
    if (mask) {
        st32(o, mask);
        o += 4;
        for (uint32_t m = mask; m; m &= m - 1) {
            st32(o, tag_of(v[__builtin_ctz(m)]));
            o += 4;
        }
    }
    return put_codes(o, v, k, &g);
}

/* The view of the first group of a frame (records l, l+1, ... of rec):
 * PMAX + 1 records of history before it, the lead's last (rec[l - 1]) and,
 * before that, records with the same low half (delta 0) whose tags
 * alternate (tag ^ 1): what the decoder's window starts with. */
#define VH (PMAX + 1)
static const uint64_t *vhist(uint64_t *vh, const uint64_t *rec, uint32_t l, uint32_t k) {
    uint64_t last = rec[l - 1];
    for (unsigned q = 1; q <= VH; q++) vh[VH - q] = last ^ ((uint64_t)((q - 1) & 1u) << 32);
    memcpy(vh + VH, rec + l, k * sizeof *vh);
    return vh + VH;
}

/* Packs the groups of records [l, m) after the lead; returns the end of
 * the body, or NULL as soon as it grows past limit (then raw is smaller). */
static uint8_t *put_groups(uint8_t *o, const uint8_t *limit, const uint64_t *rec,
                           uint32_t l, uint32_t m) {
    uint32_t pal[PAL_MAX + 1];
    unsigned npal = pick_palette(rec, l, m, pal);
    *o++ = (uint8_t)npal;
    for (unsigned e = 0; e < npal; e++) st32(o, pal[e]), o += 4;
    for (unsigned e = npal; e < PAL_MAX; e++) pal[e] = 0; /* masked: scan_group */
    pal[PAL_MAX] = npal;
    uint64_t vh[VH + G];
    unsigned p = 2; /* a begin/end loop */
    for (uint32_t i = l; i < m; i += G) {
        uint32_t k = m - i < G ? m - i : G;
        o = put_group(o, i == l ? vhist(vh, rec, l, k) : rec + i, k, &p, pal);
        if (o > limit) return NULL;
    }
    return o;
}

/* Packs frame rec[0, m) at o (frame header included); returns its bytes.
 * o must have room for 8 m + SPS__PACK_SLACK bytes. */
static size_t put_frame(uint8_t *o, const uint64_t *rec, uint32_t m) {
    uint8_t *b = o + 4;
    uint32_t l = lead_len(rec, m);
    for (uint32_t i = 0; i < l; i++) st64(b + 8 * i, rec[i]);
    uint8_t *e = b + 8 * (size_t)l;
    if (l < m) e = put_groups(e, b + 8 * (size_t)m, rec, l, m);
    if (!e || e - b >= 8 * (ptrdiff_t)m) { /* raw is no larger */
        memcpy(b, rec, 8 * (size_t)m);
        st32(o, (uint32_t)(8 * m) | RAW_BIT);
        return 4 + 8 * (size_t)m;
    }
    st32(o, (uint32_t)(e - b));
    return (size_t)(e - o);
}

size_t sps__pack_bound(uint32_t n) {
    size_t frames = (size_t)n / SPS__PACK_FRAME + 1;
    return SPS__PACK_HDR + 8 * (size_t)n + 4 * frames + SPS__PACK_SLACK;
}

size_t sps__pack(const uint64_t *rec, uint32_t n, uint8_t *out) {
    size_t pos = SPS__PACK_HDR;
    for (uint32_t i = 0; i < n; i += SPS__PACK_FRAME) {
        uint32_t m = n - i < SPS__PACK_FRAME ? n - i : SPS__PACK_FRAME;
        pos += put_frame(out + pos, rec + i, m);
    }
    sps__pack_hdr_t h = {SPS__PACK_MAGIC, n, (uint32_t)(pos - SPS__PACK_HDR), 0, 0};
    sps__pack_hdr_put(out, &h);
    return pos;
}

/* ------------------------------------------------------------------------ */
/* Chunk header                                                              */
/* ------------------------------------------------------------------------ */

void sps__pack_hdr_put(uint8_t *out, const sps__pack_hdr_t *h) {
    st32(out, h->magic);
    st32(out + 4, h->n);
    st32(out + 8, h->bytes);
    st32(out + 12, h->flags);
    st64(out + SPS__PACK_HDR_NEXT, (uint64_t)h->next);
}

int sps__pack_hdr_get(const uint8_t *in, sps__pack_hdr_t *h) {
    h->magic = ld32(in);
    h->n = ld32(in + 4);
    h->bytes = ld32(in + 8);
    h->flags = ld32(in + 12);
    h->next = (int64_t)ld64(in + SPS__PACK_HDR_NEXT);
    return h->magic == SPS__PACK_MAGIC && h->flags == 0 && h->n > 0 && h->next >= 0
        ? 0 : SPS_EIO;
}

/* ------------------------------------------------------------------------ */
/* Decoder                                                                   */
/* ------------------------------------------------------------------------ */

/* k codes of w bits from p, which has 8 readable bytes past them. */
static void get_bits(const uint8_t *p, uint32_t *v, uint32_t k, unsigned w) {
    if (!w) {
        memset(v, 0, k * sizeof *v);
        return;
    }
    uint64_t mask = (1ull << w) - 1;
    size_t bit = 0;
    for (uint32_t j = 0; j < k; j++, bit += w)
        v[j] = (uint32_t)((ld64(p + (bit >> 3)) >> (bit & 7)) & mask);
}

/* Codes of one group from in[0, avail): copies them into a padded buffer
 * when fewer than 8 bytes follow them, so get_bits never reads past avail. */
static void get_codes(const uint8_t *in, size_t avail, uint32_t *v, uint32_t k, unsigned w) {
    size_t nb = code_bytes(k, w);
    if (avail >= nb + 8) {
        get_bits(in, v, k, w);
        return;
    }
    uint8_t tmp[4 * G + 8] = {0};
    memcpy(tmp, in, nb);
    get_bits(tmp, v, k, w);
}

typedef struct frame_dec {
    const uint8_t *in, *end;
    uint32_t pal[8]; /* zero past K: a stray code stays in bounds */
    win_t w;
    uint32_t lo;
} frame_dec_t;

/* The common group: palette codes (width w <= 2) and no tag exception, so
 * the tags repeat the history's last period (read from the history only:
 * no chain through the stores of this group).  in: after the header. */
static int get_palette_group(frame_dec_t *f, uint64_t *out, uint32_t k, unsigned w,
                             unsigned p) {
    size_t nb = code_bytes(k, w);
    if ((size_t)(f->end - f->in) < nb) return SPS_EIO;
    uint64_t bits = 0;
    for (size_t b = 0; b < nb; b++) bits |= (uint64_t)f->in[b] << (8 * b);
    f->in += nb;
    uint64_t live = k < G ? (1ull << (w * k)) - 1 : ~0ull;
    uint32_t nesc = w == 1 ? popcount32((uint32_t)bits)
                  : w == 2 ? popcount32(even_bits(bits & bits >> 1 & live)) : 0;
    const uint8_t *esc = f->in;
    f->in += 4 * (size_t)nesc;
    if (f->in > f->end) return SPS_EIO;
    win_t *wn = &f->w;
    uint32_t lo = f->lo, ec = esc_code(w), cm = (1u << w) - 1u;
    const uint32_t *th = wn->t + PMAX - p;
    for (uint32_t j = 0, q = 0; j < k; j++) {
        uint32_t c = (uint32_t)bits & cm, tag = th[q], d;
        bits >>= w;
        q = q + 1 == p ? 0 : q + 1;
        if (SPS__UNLIKELY(c == ec)) d = ld32(esc), esc += 4;
        else d = f->pal[c];
        lo += d;
        wn->t[PMAX + j] = tag;
        wn->d[PMAX + j] = d;
        out[j] = (uint64_t)tag << 32 | lo;
    }
    f->lo = lo;
    win_shift(wn);
    return 0;
}

/* Decodes one group of k records into out.  0 or SPS_EIO. */
static int get_group(frame_dec_t *f, uint64_t *out, uint32_t k) {
    if (f->end - f->in < 2) return SPS_EIO;
    unsigned h0 = f->in[0], h1 = f->in[1], w = h0 & 63u, p = (h1 & 15u) + 1;
    int residual = (h0 & 0x40u) != 0;
    f->in += 2;
    if (h1 >> 4 || w > (residual ? 32u : 2u)) return SPS_EIO;
    if (!residual && !(h0 & 0x80u)) return get_palette_group(f, out, k, w, p);
    uint32_t mask = 0;
    const uint8_t *tags = f->in;
    if (h0 & 0x80u) {
        if (f->end - f->in < 4) return SPS_EIO;
        mask = ld32(f->in);
        if (k < 32 && mask >> k) return SPS_EIO;
        tags = f->in + 4;
        f->in = tags + 4 * (size_t)popcount32(mask);
        if (f->in > f->end) return SPS_EIO;
    }
    size_t nb = code_bytes(k, w);
    if ((size_t)(f->end - f->in) < nb) return SPS_EIO;
    uint32_t v[G];
    get_codes(f->in, (size_t)(f->end - f->in), v, k, w);
    f->in += nb;
    const uint8_t *esc = f->in;
    uint32_t ec = residual ? UINT32_MAX : esc_code(w), nesc = 0;
    if (!residual) {
        for (uint32_t j = 0; j < k; j++) nesc += v[j] == ec;
        f->in += 4 * (size_t)nesc;
        if (f->in > f->end) return SPS_EIO;
    }
    win_t *wn = &f->w;
    uint32_t lo = f->lo;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t tag = wn->t[PMAX + j - p], d;
        if (SPS__UNLIKELY(mask >> j & 1u)) tag = ld32(tags), tags += 4;
        if (residual) d = unzz(v[j]) + wn->d[PMAX + j - p];
        else if (SPS__UNLIKELY(v[j] == ec)) d = ld32(esc), esc += 4;
        else d = f->pal[v[j]];
        lo += d;
        wn->t[PMAX + j] = tag;
        wn->d[PMAX + j] = d;
        out[j] = (uint64_t)tag << 32 | lo;
    }
    f->lo = lo;
    win_shift(wn);
    return 0;
}

/* Decodes the packed body [in, end) of a frame of m records. */
static int get_packed(const uint8_t *in, const uint8_t *end, uint64_t *out, uint32_t m) {
    uint32_t l = 0;
    do {
        if (end - in < 8) return SPS_EIO;
        out[l] = ld64(in);
        in += 8;
    } while (is_hi(out[l++]) && l < m);
    if (l == m) return in == end ? 0 : SPS_EIO;
    frame_dec_t f = {in + 1, end, {0}, {{0}, {0}}, (uint32_t)out[l - 1]};
    if (in >= end || in[0] > PAL_MAX || end - f.in < 4 * (ptrdiff_t)in[0]) return SPS_EIO;
    for (unsigned e = 0; e < in[0]; e++) f.pal[e] = ld32(f.in), f.in += 4;
    win_init(&f.w, (uint32_t)(out[l - 1] >> 32));
    for (uint32_t i = l; i < m; i += G) {
        int rc = get_group(&f, out + i, m - i < G ? m - i : G);
        if (rc) return rc;
    }
    return f.in == end ? 0 : SPS_EIO;
}

size_t sps__pack_frame_bytes(const uint8_t *in) { return 4 + (ld32(in) & BODY_MASK); }

int sps__unpack_frame(const uint8_t *in, size_t avail, uint32_t m, uint64_t *out,
                      size_t *used) {
    if (avail < 4 || m == 0 || m > SPS__PACK_FRAME) return SPS_EIO;
    uint32_t h = ld32(in), body = h & BODY_MASK;
    if ((h & ~(BODY_MASK | RAW_BIT)) || body > avail - 4) return SPS_EIO;
    *used = 4 + (size_t)body;
    if (h & RAW_BIT) {
        if (body != 8 * m) return SPS_EIO;
        memcpy(out, in + 4, body);
        return 0;
    }
    return get_packed(in + 4, in + 4 + body, out, m);
}

int sps__unpack(const uint8_t *in, size_t len, uint64_t *out, uint32_t n) {
    sps__pack_hdr_t h;
    if (len < SPS__PACK_HDR || sps__pack_hdr_get(in, &h) || h.n != n ||
        h.bytes > len - SPS__PACK_HDR)
        return SPS_EIO;
    size_t pos = SPS__PACK_HDR, end = SPS__PACK_HDR + (size_t)h.bytes;
    for (uint32_t i = 0; i < n; i += SPS__PACK_FRAME) {
        uint32_t m = n - i < SPS__PACK_FRAME ? n - i : SPS__PACK_FRAME;
        size_t used;
        int rc = sps__unpack_frame(in + pos, end - pos, m, out + i, &used);
        if (rc) return rc;
        pos += used;
    }
    return pos == end ? 0 : SPS_EIO;
}
