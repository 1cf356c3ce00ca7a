/* fuzz_index_msg.c -- libFuzzer target: a rank's part index as a message
 * (src/formats/h5_index_msg.c, sps__h5r_index_get), the bytes rank 0 of a
 * collective finalize reads from another process instead of opening its
 * part (docs/mpi.md, "The collective finalize").  Beyond what ASan and
 * UBSan catch, it traps when the decoder breaks its contract: a reader
 * handed out with a row outside its names or events, a carried call
 * outside its events, a name or per-row string that is NULL, or a file
 * left open (a decoded reader is a released one); a refusal must leave
 * *out NULL.  Its seed is a real message (fuzz/corpus/index_msg), of this
 * build's layout (x86-64). */
#include "formats/h5_read.h"

#include <stdint.h>
#include <stddef.h>

static void check(const sps__h5r_t *r) {
    if (r->h_file != -1 || r->h_start != -1) __builtin_trap();
    for (size_t i = 0; i < r->nnames; i++)
        if (!r->names[i]) __builtin_trap();
    for (size_t i = 0; i < r->nrows; i++) {
        const sps__row_t *w = &r->rows[i];
        if (w->file_region >= r->nnames || w->offset > r->nevents ||
            w->count > r->nevents - w->offset)
            __builtin_trap();
        char **cols[] = {r->src_files, r->src_texts, r->tags, r->ev_meta};
        for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
            if (cols[k] && !cols[k][i]) __builtin_trap();
    }
    for (size_t i = 0; i < r->ncarried; i++)
        if (r->carried_event[i] < 0 || (uint64_t)r->carried_event[i] >= r->nevents)
            __builtin_trap();
    for (size_t i = 0; i < r->meta.nattrs; i++)
        if (!r->meta.attrs[i].name) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sps__h5r_t *r = (sps__h5r_t *)1;
    int rc = sps__h5r_index_get(&r, data, size);
    if (rc != 0) {
        if (r != NULL) __builtin_trap();
        return 0;
    }
    check(r);
    sps__h5r_free(r);
    return 0;
}
