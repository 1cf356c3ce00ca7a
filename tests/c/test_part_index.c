/* A rank's part index sent as a message (issue 37 part 3; docs/mpi.md,
 * "The collective finalize" step 6): rank 0 of a collective finalize reads
 * each laid-out part's index from the message its rank made
 * (sps__part_index_msg) instead of opening the part with libhdf5.
 *
 * Two sessions are recorded here as ranks 0 and 1, laid out as parts the
 * way mpi.c does it (sps__merge_ex with opts.part; rank 0's events fill
 * two whole chunks, so rank 1 starts on a chunk and no rows change hands),
 * and merged by copying their chunks twice: once reading both parts with
 * libhdf5, once from their messages.  The two merged files must hold the
 * same names, rows, statistics, events and /metadata.  A message that is
 * cut short, from another version, or with bytes flipped is refused (or,
 * where a flip happens to keep it well formed, read without harm), and the
 * merge then reads that part's file: the same file again.  A file that is
 * not a laid-out part makes no message. */
#include "testutil.h"
#include "sps_int.h"
#include "formats/h5_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAIRS0 16384 /* rank 0: 32 768 events, one whole chunk... */
#define PAIRS0_B 16384 /* ... and a second one */
#define PAIRS1 10001

/* Records pairs outer{inner} calls (and one "tail" call) as the given rank
 * of 2 into path. */
static void record(const char *path, int rank, int pairs) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.rank = rank;
    cfg.size = 2;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t o = sps_region("pi.outer"), in = sps_region("pi.inner");
    for (int k = 0; k < pairs; k++) {
        sps_begin(o);
        sps_begin(in);
        sps_end(in);
        sps_end(o);
    }
    if (rank == 1) { /* a region rank 0 does not have */
        sps_region_t t = sps_region("pi.only_rank1");
        sps_begin(t);
        sps_end(t);
    }
    assert_int_equal(sps_finalize_to(path), 0);
    sps_shutdown();
}

/* The inputs' plain files, their laid-out parts, and their messages. */
static char plain[2][1024], part[2][1024];
static void *msg[2];
static size_t msglen[2];

static int setup(void **state) {
    (void)state;
    uint64_t n[2], total;
    for (int r = 0; r < 2; r++) {
        snprintf(plain[r], sizeof plain[r], "%s", tu_path(r ? "pi_plain1.h5" : "pi_plain0.h5"));
        snprintf(part[r], sizeof part[r], "%s", tu_path(r ? "pi_part1.h5" : "pi_part0.h5"));
        record(plain[r], r, r ? PAIRS1 : PAIRS0 + PAIRS0_B);
        assert_int_equal(sps__part_events(plain[r], &n[r]), 0);
    }
    assert_int_equal(n[0], 2 * SPS__H5_CHUNK); /* rank 1 starts on a chunk */
    total = n[0] + n[1];
    for (int r = 0; r < 2; r++) {
        sps__merge_opts_t o = {.part = 1, .trusted = 1};
        o.plan.base = r ? n[0] : 0, o.plan.total = total, o.plan.tail = 0;
        const char *in = plain[r];
        assert_int_equal(sps__merge_ex(part[r], &in, 1, NULL, &o), 0);
        assert_int_equal(sps__part_index_msg(part[r], &msg[r], &msglen[r]), 0);
        assert_non_null(msg[r]);
        assert_true(msglen[r] > 16);
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    for (int r = 0; r < 2; r++) {
        free(msg[r]);
        unlink(plain[r]);
        unlink(part[r]);
    }
    return 0;
}

/* Merges the two parts into out (chunk copy, trusted), with the messages
 * m (NULL: none); *used: how many the merge read. */
static void merge(const char *out, const sps__msg_t *m, uint64_t *used) {
    const char *in[2] = {part[0], part[1]};
    sps__merge_opts_t o = {.trusted = 1, .index_msgs = m};
    assert_int_equal(sps__merge_ex(out, in, 2, stderr, &o), 0);
    assert_int_equal(o.copied, 1); /* the parts' chunks copied */
    assert_true(o.chunks_copied >= 2);
    *used = o.index_msgs_used;
}

static void same_i64(const int64_t *a, const int64_t *b, uint64_t n) {
    assert_true((a == NULL) == (b == NULL));
    if (a) assert_memory_equal(a, b, n * sizeof *a);
}

static void same_attr(const sps_meta_attr_t *a, const sps_meta_attr_t *b) {
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->n, b->n);
    for (size_t k = 0; k < a->n; k++) {
        if (a->kind == SPS_META_INT) assert_int_equal(a->ints[k], b->ints[k]);
        if (a->kind == SPS_META_FLOAT) assert_memory_equal(&a->floats[k], &b->floats[k], 8);
        if (a->kind == SPS_META_TEXT) assert_string_equal(a->texts[k], b->texts[k]);
    }
}

/* The merged files at a and b hold the same spans, index and metadata. */
static void same_file(const char *a, const char *b) {
    sps__h5r_t *x = NULL, *y = NULL;
    assert_int_equal(sps__h5r_open(&x, a), 0);
    assert_int_equal(sps__h5r_open(&y, b), 0);
    assert_int_equal(x->nnames, y->nnames);
    for (size_t i = 0; i < x->nnames; i++) assert_string_equal(x->names[i], y->names[i]);
    assert_int_equal(x->nrows, y->nrows);
    for (size_t i = 0; i < x->nrows; i++) {
        const sps__row_t *r = &x->rows[i], *s = &y->rows[i];
        assert_int_equal(r->file_region, s->file_region);
        assert_int_equal(r->rank, s->rank);
        assert_int_equal(r->offset, s->offset);
        assert_int_equal(r->count, s->count);
        assert_int_equal(r->exclusive_total, s->exclusive_total);
    }
    assert_int_equal(x->nevents, y->nevents);
    same_i64(x->start, y->start, x->nevents);
    same_i64(x->dur, y->dur, x->nevents);
    same_i64(x->call_ids, y->call_ids, x->nevents);
    same_i64(x->parent_ids, y->parent_ids, x->nevents);
    same_i64(x->thread_ids, y->thread_ids, x->nevents);
    assert_int_equal(x->meta.nattrs, y->meta.nattrs);
    for (size_t i = 0; i < x->meta.nattrs; i++) same_attr(&x->meta.attrs[i], &y->meta.attrs[i]);
    sps__h5r_free(x);
    sps__h5r_free(y);
}

/* Both messages read: the same file as from the parts' files. */
static void test_messages_give_the_same_file(void **state) {
    (void)state;
    const char *by_file = tu_path("pi_by_file.h5"), *by_msg = tu_path("pi_by_msg.h5");
    uint64_t used = 9;
    merge(by_file, NULL, &used);
    assert_int_equal(used, 0);
    sps__msg_t m[2] = {{msg[0], msglen[0]}, {msg[1], msglen[1]}};
    merge(by_msg, m, &used);
    assert_int_equal(used, 2);
    same_file(by_file, by_msg);
    /* and with one message only (rank 0's part read from its file) */
    m[0].len = 0;
    merge(by_msg, m, &used);
    assert_int_equal(used, 1);
    same_file(by_file, by_msg);
    unlink(by_file);
    unlink(by_msg);
}

/* A message cut short, of another version, or with a byte flipped: each
 * refused (the file read instead, the same file made) or, where the flip
 * leaves a well-formed message, read without harm. */
static void test_a_broken_message_has_the_file_read(void **state) {
    (void)state;
    const char *by_file = tu_path("pi_ref.h5"), *out = tu_path("pi_broken.h5");
    uint64_t used;
    merge(by_file, NULL, &used);
    unsigned char *bad = malloc(msglen[1]);
    assert_non_null(bad);
    /* cut short: anywhere in the index, and in what follows it */
    size_t cuts[] = {0, 7, 8, 20, msglen[1] / 2, msglen[1] - 1};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        sps__msg_t m[2] = {{NULL, 0}, {msg[1], cuts[k]}};
        merge(out, m, &used);
        assert_int_equal(used, 0);
        same_file(by_file, out);
    }
    /* another version: the index's header follows the length (u64) */
    memcpy(bad, msg[1], msglen[1]);
    bad[8 + 4] ^= 0x40;
    sps__msg_t m[2] = {{NULL, 0}, {bad, msglen[1]}};
    merge(out, m, &used);
    assert_int_equal(used, 0);
    same_file(by_file, out);
    free(bad);
    unlink(by_file);
    unlink(out);
}

/* The index alone, every prefix refused and every single-byte flip either
 * refused or read into a reader that frees cleanly (ASan watches). */
static void test_index_decoder_on_damaged_bytes(void **state) {
    (void)state;
    const unsigned char *p = msg[1];
    uint64_t ilen;
    memcpy(&ilen, p, sizeof ilen);
    assert_true(ilen > 0 && ilen < msglen[1]);
    const unsigned char *idx = p + sizeof ilen;
    sps__h5r_t *r = NULL;
    assert_int_equal(sps__h5r_index_get(&r, idx, (size_t)ilen), 0);
    assert_true(r->nrows >= 3 && r->nevents > 0);
    assert_int_equal(r->h_file, -1); /* released: nothing open */
    sps__h5r_free(r);
    for (size_t len = 0; len < ilen; len++) {
        r = (sps__h5r_t *)1;
        assert_int_equal(sps__h5r_index_get(&r, idx, len), SPS_EFORMAT);
        assert_null(r);
    }
    unsigned char *bad = malloc((size_t)ilen);
    assert_non_null(bad);
    int refused = 0;
    for (size_t at = 0; at < ilen; at++) {
        memcpy(bad, idx, (size_t)ilen);
        bad[at] ^= (unsigned char)(0x5a + at);
        int rc = sps__h5r_index_get(&r, bad, (size_t)ilen);
        assert_true(rc == 0 || rc == SPS_EFORMAT || rc == SPS_ENOMEM);
        if (rc == 0) {
            for (size_t i = 0; i < r->nrows; i++) assert_true(r->rows[i].file_region < r->nnames);
            sps__h5r_free(r);
        } else {
            refused++;
        }
    }
    assert_true(refused > 0);
    free(bad);
}

/* Misuse: a file that is not there is an error; a plain file (no
 * /part_plan: not laid out) makes no message, and neither does a part with
 * what the message does not carry -- checked here through its contract:
 * *msg NULL and *len 0 whenever no message is made. */
static void test_no_message_for_what_it_cannot_carry(void **state) {
    (void)state;
    void *m = (void *)1;
    size_t len = 7;
    assert_int_not_equal(sps__part_index_msg(tu_path("pi_missing.h5"), &m, &len), 0);
    assert_null(m);
    assert_int_equal(len, 0);
    m = (void *)1, len = 7;
    assert_int_equal(sps__part_index_msg(plain[0], &m, &len), 0); /* not laid out */
    assert_null(m);
    assert_int_equal(len, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages_give_the_same_file),
        cmocka_unit_test(test_a_broken_message_has_the_file_read),
        cmocka_unit_test(test_index_decoder_on_damaged_bytes),
        cmocka_unit_test(test_no_message_for_what_it_cannot_carry),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
