/* h5_guard.c -- the isolated check that comes before libhdf5 reads an
 * untrusted file in the caller's process (h5_read.h: sps__h5_guard).
 *
 * libhdf5 1.10 trusts parts of the files it parses: a corrupt global heap
 * (the variable-length strings) makes H5HG_read copy from or into wild
 * memory, a corrupt attribute message crashes H5Aiterate, and some files
 * make it loop.  Nothing can be validated before libhdf5 parses the file,
 * so a forked child parses it first: it walks the global heap collections
 * as libhdf5 will (gcol_bad), opens the file, follows every
 * hard link from the root group, reads every attribute and every variable-length or small
 * dataset, walks the chunk index of the large ones (each chunk inside the
 * file), then closes the library (so that a heap it corrupted is touched
 * by free) -- under a time limit and a memory cap.  Only a file whose
 * check ended normally is handed to libhdf5 here; one that crashed,
 * hung or ran out of memory there is refused with SPS_EFORMAT.  The large
 * numeric datasets are not decompressed in the child: their chunk index
 * is what libhdf5 trusts, and the deflate filter checks its own input.
 *
 * Verdicts are kept per file (device, inode, size, modification and
 * change times), so reading a file again costs nothing more. */
#include "formats/h5_read.h"
#include "util/util.h"

#include <hdf5.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Datasets at most this big in the file are read whole in the child. */
#define GUARD_SMALL_BYTES ((hsize_t)64 << 10)
/* Elements read per slab (bounds the child's buffers), and the most a
 * dataset may have to be read whole. */
#define GUARD_SLAB 65536
#define GUARD_WHOLE ((hsize_t)1 << 20)
/* The child's memory cap beyond its size at the fork: libhdf5's caches
 * and our slabs need far less; an absurd allocation meets the cap. */
#define GUARD_MEM_BYTES ((size_t)1 << 30)
/* Verdicts kept. */
#define GUARD_CACHE 64

/* What the child walks: the file's size bounds every chunk. */
typedef struct walk {
    haddr_t fsize;
    int again; /* the second walk: attributes and variable-length data only */
} walk_t;

/* Bytes of canary after every variable-length buffer the child's reads
 * allocate, and their value. */
#define GUARD_CANARY 64
#define GUARD_CANARY_BYTE 0xcd

/* The dataset transfer list whose variable-length buffers carry canaries
 * (vlen_alloc/vlen_release); H5P_DEFAULT until made. */
static hid_t g_dxpl = H5P_DEFAULT;

/* libhdf5 allocates each variable-length element's buffer here, with the
 * size the element's length gives; libhdf5 1.10 then copies the global
 * heap object into it with the size the heap gives (H5HG_read), which a
 * corrupt file makes larger: the canary behind the buffer shows it. */
static void *vlen_alloc(size_t size, void *info) {
    (void)info;
    if (size > SIZE_MAX - sizeof(size_t) - GUARD_CANARY) return NULL;
    unsigned char *p = malloc(sizeof(size_t) + size + GUARD_CANARY);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    memset(p + sizeof size + size, GUARD_CANARY_BYTE, GUARD_CANARY);
    return p + sizeof size;
}

/* Frees a buffer of vlen_alloc's; a broken canary ends the child with
 * status 4 (the file made libhdf5 write past a buffer). */
static void vlen_release(void *mem, void *info) {
    (void)info;
    if (!mem) return;
    unsigned char *p = (unsigned char *)mem - sizeof(size_t);
    size_t size;
    memcpy(&size, p, sizeof size);
    for (size_t i = 0; i < GUARD_CANARY; i++)
        if (p[sizeof size + size + i] != GUARD_CANARY_BYTE) _exit(4);
    free(p);
}

/* Frees what libhdf5 allocated for the variable-length parts of the
 * elements of buf (memory type mt) that space selects. */
static void vlen_free(hid_t mt, hid_t space, void *buf) {
    if (H5Tdetect_class(mt, H5T_VLEN) > 0 ||
        (H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) > 0))
        H5Dvlen_reclaim(mt, space, g_dxpl, buf);
}

/* H5Ewalk's callback: flags an allocation that failed. */
static herr_t oom_cb(unsigned n, const H5E_error2_t *e, void *flag) {
    (void)n;
    if (e->min_num == H5E_CANTALLOC || e->min_num == H5E_NOSPACE) *(int *)flag = 1;
    return 0;
}

/* After a read that failed: when libhdf5 could not allocate (the child's
 * memory cap), the caller's process would allocate that much for real --
 * a 30 KB file can make libhdf5 ask for 14 GB to convert one attribute --
 * so the child ends with status 5 and the file is refused. */
static void oom_exit_if(void) {
    int flag = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, oom_cb, &flag);
    if (flag) _exit(5);
    H5Eclear2(H5E_DEFAULT);
}

/* Non-zero when datatype t is laid out within itself: every member of a
 * compound (at any depth: compounds, arrays and variable-length
 * sequences of them) ends inside its element.  libhdf5 1.10 converts a
 * compound member by member with the offsets the file gives, so a
 * corrupt offset makes H5T__conv_struct_opt copy from outside the
 * buffer -- in the caller, with its own buffers, and not always in the
 * child: the layout is checked instead, the same everywhere. */
static int type_ok(hid_t t, int depth) {
    if (t < 0 || depth > 32) return t >= 0 ? 0 : 1;
    H5T_class_t c = H5Tget_class(t);
    int ok = 1;
    if (c == H5T_COMPOUND) {
        size_t size = H5Tget_size(t);
        int n = H5Tget_nmembers(t);
        for (int i = 0; ok && i < n; i++) {
            size_t off = H5Tget_member_offset(t, (unsigned)i);
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            size_t msz = m >= 0 ? H5Tget_size(m) : 0;
            ok = m >= 0 && off <= size && msz <= size - off && type_ok(m, depth + 1);
            if (m >= 0) H5Tclose(m);
        }
    } else if (c == H5T_ARRAY || c == H5T_VLEN) {
        hid_t b = H5Tget_super(t);
        ok = b >= 0 && type_ok(b, depth + 1);
        if (b >= 0) H5Tclose(b);
    }
    return ok;
}

/* Ends the child with status 6 unless type t is laid out within itself. */
static void type_check(hid_t t) {
    if (!type_ok(t, 0)) _exit(6);
}

/* Reads attribute name of loc whole (attributes are small: at most 64 KiB
 * in an object header). */
static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *info,
                      void *op) {
    (void)info, (void)op;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return 0;
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    if (t >= 0) type_check(t);
    hid_t mt = t >= 0 ? H5Tget_native_type(t, H5T_DIR_ASCEND) : -1;
    hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    size_t sz = mt >= 0 ? H5Tget_size(mt) : 0;
    if (n > 0 && sz > 0 && (hsize_t)n <= (1u << 24) / sz) {
        void *buf = calloc((size_t)n, sz);
        if (buf && H5Aread(a, mt, buf) >= 0) {
            /* H5Aread allocates with the library's malloc: reclaim it so */
            if (H5Tdetect_class(mt, H5T_VLEN) > 0 ||
                (H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) > 0))
                H5Dvlen_reclaim(mt, s, H5P_DEFAULT, buf);
        } else if (buf) {
            oom_exit_if();
        }
        free(buf);
    }
    if (mt >= 0) H5Tclose(mt);
    if (t >= 0) H5Tclose(t);
    if (s >= 0) H5Sclose(s);
    H5Aclose(a);
    return 0;
}

/* Reads 1-D dataset d (n elements of memory type mt, sz bytes each) in
 * slabs of GUARD_SLAB elements. */
static void dset_read_slabs(hid_t d, hid_t mt, size_t sz, hsize_t n) {
    hid_t fs = H5Dget_space(d);
    void *buf = calloc(GUARD_SLAB, sz);
    for (hsize_t at = 0; fs >= 0 && buf && at < n; at += GUARD_SLAB) {
        hsize_t cnt = n - at < GUARD_SLAB ? n - at : GUARD_SLAB;
        hid_t ms = H5Screate_simple(1, &cnt, NULL);
        int ok = ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL,
                                                &cnt, NULL) >= 0 &&
                 H5Dread(d, mt, ms, fs, g_dxpl, buf) >= 0;
        if (ok) vlen_free(mt, ms, buf);
        if (ms >= 0) H5Sclose(ms);
        if (!ok) {
            oom_exit_if();
            break;
        }
    }
    free(buf);
    if (fs >= 0) H5Sclose(fs);
}

/* Walks the chunk index of chunked dataset d: every chunk must lie inside
 * the file (libhdf5 would read it from wherever the index says). */
static void dset_chunks(hid_t d, const walk_t *w) {
    hsize_t nchunks = 0;
    if (H5Dget_num_chunks(d, H5S_ALL, &nchunks) < 0) return;
    for (hsize_t i = 0; i < nchunks; i++) {
        hsize_t off[H5S_MAX_RANK];
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info(d, H5S_ALL, i, off, &mask, &addr, &size) < 0) return;
        if (addr != HADDR_UNDEF && (addr > w->fsize || size > w->fsize - addr))
            _exit(3); /* a chunk outside the file: refuse */
    }
}

/* Checks dataset d: its attributes, then its data (read whole when
 * variable-length or small, else its chunk index). */
static void dset_check(hid_t d, const walk_t *w) {
    H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, attr_cb, NULL);
    hid_t t = H5Dget_type(d), s = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
    if (t >= 0) type_check(t);
    hid_t mt = t >= 0 ? H5Tget_native_type(t, H5T_DIR_ASCEND) : -1;
    int rank = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
    hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    size_t sz = mt >= 0 ? H5Tget_size(mt) : 0;
    int vlen = mt >= 0 && (H5Tdetect_class(mt, H5T_VLEN) > 0 ||
                           (H5Tget_class(mt) == H5T_STRING &&
                            H5Tis_variable_str(mt) > 0));
    hsize_t stored = H5Dget_storage_size(d);
    double claimed = (double)(n > 0 ? n : 0) * (double)(sz ? sz : 1);
    if (w->again && !vlen) {
        /* the second handle's walk: what libhdf5 parses through its
         * shared state (headers, attributes, the global heap) */
    } else if (!vlen && claimed > (double)w->fsize * SPS__H5_RATIO_MAX + 65536.0) {
        /* more than the file could hold even compressed: the reader
         * refuses it unread, and reading its fill values here would only
         * cost time (2^30 of them: minutes under a sanitizer) */
        if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED) dset_chunks(d, w);
    } else if (n > 0 && sz > 0 && rank == 1 && (hsize_t)n > GUARD_WHOLE &&
               (vlen || stored <= GUARD_SMALL_BYTES)) {
        dset_read_slabs(d, mt, sz, (hsize_t)n);
    } else if (n > 0 && sz > 0 && (hsize_t)n <= GUARD_WHOLE &&
               (vlen || stored <= GUARD_SMALL_BYTES)) {
        /* whole, as the readers read it: a selection of part of it can
         * fail on a corrupt file before the conversion the readers meet */
        void *buf = calloc((size_t)n, sz);
        if (buf && H5Dread(d, mt, H5S_ALL, H5S_ALL, g_dxpl, buf) >= 0)
            vlen_free(mt, s, buf);
        else if (buf)
            oom_exit_if();
        free(buf);
    } else if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED) {
        dset_chunks(d, w); /* not read here: its chunk index, at least */
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    if (mt >= 0) H5Tclose(mt);
    if (t >= 0) H5Tclose(t);
    if (s >= 0) H5Sclose(s);
}

/* The deepest group nesting walked, and the most objects visited. */
#define GUARD_DEPTH 64
#define GUARD_OBJECTS 1000000

/* The objects already visited (their header addresses): a group linked
 * from two places, or from inside itself, is walked once. */
typedef struct seen {
    haddr_t *addr;
    size_t n, cap;
} seen_t;

/* Non-zero when addr was seen; else records it (0).  Past GUARD_OBJECTS,
 * or out of memory, reports everything as seen (the walk ends). */
static int seen_add(seen_t *s, haddr_t addr) {
    for (size_t i = 0; i < s->n; i++)
        if (s->addr[i] == addr) return 1;
    if (s->n >= GUARD_OBJECTS || sps__grow((void **)&s->addr, &s->cap, s->n,
                                           sizeof *s->addr))
        return 1;
    s->addr[s->n++] = addr;
    return 0;
}

typedef struct visit {
    const walk_t *w;
    seen_t *seen;
    int depth;
} visit_t;

static void group_walk(hid_t g, const walk_t *w, seen_t *seen, int depth);

/* H5Literate's callback: the object behind each hard link of a group,
 * checked (a group walked in turn).  A link libhdf5 cannot follow is
 * skipped, not the end of the walk: the readers open objects by path, so
 * every one they may reach is checked even when a sibling is broken. */
static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info, void *op) {
    visit_t *v = op;
    if (info->type != H5L_TYPE_HARD) return 0;
    H5O_info_t oi;
    if (H5Oget_info_by_name2(g, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
        seen_add(v->seen, oi.addr))
        return 0;
    hid_t o = H5Oopen(g, name, H5P_DEFAULT);
    if (o < 0) return 0;
    if (oi.type == H5O_TYPE_DATASET)
        dset_check(o, v->w);
    else if (oi.type == H5O_TYPE_GROUP && v->depth < GUARD_DEPTH)
        group_walk(o, v->w, v->seen, v->depth + 1);
    H5Oclose(o);
    return 0;
}

/* Checks group g: its attributes, then every object it links to. */
static void group_walk(hid_t g, const walk_t *w, seen_t *seen, int depth) {
    H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, attr_cb, NULL);
    visit_t v = {w, seen, depth};
    hsize_t at = 0;
    /* an iteration that fails on one link resumes after it; a group whose
     * link table cannot be read at all is refused: the readers open
     * objects in it by name, and libhdf5 can still find objects by name
     * there that no listing reaches (tests/data/hostile/group-unlisted.h5:
     * a string dataset whose global heap crashed H5HG_read) */
    while (H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, &at, link_cb, &v) < 0) {
        H5G_info_t gi;
        if (H5Gget_info(g, &gi) < 0) _exit(7);
        if (++at >= gi.nlinks) break;
    }
}

/* ---- the global heap collections --------------------------------------- */

/* The w-byte little-endian number at off in the n bytes at p; bytes past
 * n read as zeros. */
static uint64_t le_at(const unsigned char *p, size_t n, uint64_t off, unsigned w) {
    uint64_t v = 0;
    for (unsigned i = w; i-- > 0;)
        v = v << 8 | (off + i < n ? p[off + i] : 0);
    return v;
}

/* Non-zero when the global heap collection at p (n bytes of the file from
 * there; zeros beyond) does not tile into objects as libhdf5 1.10's
 * H5HG__cache_heap_deserialize walks them: an object that needs 0 bytes
 * (index 0, size 0) makes that walk loop forever, and one that runs past
 * the collection's end leaves libhdf5 an object beyond its buffer, which
 * H5HG_read later copies (tests/data/hostile/attr-vlen-heap.h5).  A
 * collection libhdf5 writes tiles exactly: objects, then the free space
 * (index 0) or a tail too short for an object header.  len_size is the
 * file's size of lengths (the superblock's; 8 by default). */
static int gcol_bad(const unsigned char *p, size_t n, unsigned len_size) {
    if (le_at(p, n, 4, 1) != 1) return 0; /* libhdf5 refuses other versions */
    uint64_t size = le_at(p, n, 8, len_size);
    uint64_t hdr = 8 + len_size, at = hdr; /* H5HG_SIZEOF_HDR, _OBJHDR */
    while (at < size) {
        if (size - at < hdr) return 0; /* the tail: free space */
        unsigned idx = (unsigned)le_at(p, n, at, 2);
        uint64_t obj = le_at(p, n, at + 8, len_size);
        if (idx > 0 && obj > size - at - hdr) return 1;
        uint64_t need = idx > 0 ? hdr + ((obj + 7) & ~(uint64_t)7) : obj;
        if (need == 0 || need > size - at) return 1;
        at += need; /* past the file, zeros: an object of index 0, size 0 */
    }
    return 0;
}

/* Non-zero when some global heap collection of the file at path (every
 * "GCOL" signature in it: a superset of those its strings point to) is
 * bad for gcol_bad. */
static int gcols_bad(const char *path, hid_t f) {
    size_t len_size = 8;
    hid_t fcpl = H5Fget_create_plist(f);
    if (fcpl >= 0) {
        if (H5Pget_sizes(fcpl, NULL, &len_size) < 0 || len_size < 2 || len_size > 8)
            len_size = 8;
        H5Pclose(fcpl);
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 16) {
        if (fd >= 0) close(fd);
        return 0;
    }
    size_t n = (size_t)st.st_size;
    const unsigned char *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return 0;
    int bad = 0;
    for (const unsigned char *p = m; !bad && (p = memmem(p, n - (size_t)(p - m), "GCOL", 4));
         p++)
        bad = gcol_bad(p, n - (size_t)(p - m), (unsigned)len_size);
    munmap((void *)m, n);
    return bad;
}

/* The child: parses everything of the file libhdf5 trusts, then closes
 * the library and trims the heap (free checks what a wild write broke).
 * Exits 0 when it got through (libhdf5's clean errors included: the
 * reader in the caller reports those); 3 for a chunk outside the file, 4
 * for a write past a variable-length buffer, 5 for an allocation the
 * memory cap refused, 6 for a compound type whose member lies outside
 * its element, 7 for a group whose links cannot be listed, 8 for a global
 * heap collection that does not tile into objects (gcol_bad). */
static int walk_child(void *arg) {
    const char *path = arg;
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    walk_t w = {(haddr_t)st.st_size, 0};
    /* Fresh and freed memory filled with a pattern: a read through a
     * pointer libhdf5 took from beyond an array (a heap object index past
     * the collection's end) finds no valid address there. */
    mallopt(M_PERTURB, 0xa5);
    /* ... and libhdf5's own free lists emptied and kept empty: a block they
     * recycle still holds what the caller's earlier reads left in it (an
     * H5A_t whose object location points at a real file), so a corrupt
     * attribute message that libhdf5 decodes half-way and then closes
     * (H5A__close -> H5O_close on the location it never set) crashed the
     * check in a fresh process and passed it in one that had read other
     * files -- then crashed the caller.  From malloc, such a block holds
     * the pattern, and the check crashes whatever the caller did before. */
    H5garbage_collect();
    H5set_free_list_limits(0, 0, 0, 0, 0, 0);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (dxpl >= 0 && H5Pset_vlen_mem_manager(dxpl, vlen_alloc, NULL, vlen_release,
                                             NULL) >= 0)
        g_dxpl = dxpl;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (fapl >= 0) H5Pclose(fapl);
    if (f < 0) return 0;
    if (gcols_bad(path, f)) _exit(8);
    seen_t seen = {0};
    group_walk(f, &w, &seen, 0);
    /* again through a second handle while the first is open: libhdf5
     * shares the file's state between them, and some corrupt files parse
     * once but crash the second open (a reader and a metadata read of
     * one file, or one file given twice to a comparison) */
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    hid_t f2 = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (fapl >= 0) H5Pclose(fapl);
    if (f2 >= 0) {
        seen.n = 0;
        w.again = 1;
        group_walk(f2, &w, &seen, 0);
        H5Fclose(f2);
    }
    free(seen.addr);
    H5Fclose(f);
    H5close();
    malloc_trim(0);
    return 0;
}

int sps__h5_walk(const char *path) {
    return walk_child((void *)path);
}

/* ---- the check in a fresh process ------------------------------------- */

/* A forked child inherits the caller's heap, and what malloc and libhdf5's
 * free lists recycle there still holds what the caller read before: a
 * structure libhdf5 leaves half-initialised (a corrupt attribute message)
 * crashed the check in a fresh process and passed it in one that had read
 * other files -- then crashed the caller (tests/data/hostile/
 * attr-close-primed.h5).  So the child execs the command-line tool's
 * hidden `spanscope __h5check PATH` (sps__h5_walk in a process that
 * starts from nothing: the verdict is the file's alone), keeping the time
 * limit (alarm), the memory cap and the signal dispositions across exec.
 * Where no tool is found it walks in the fork, as before. */
#define CHECK_CMD "__h5check"

#if defined(__SANITIZE_THREAD__)
#define CHECK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHECK_TSAN 1
#endif
#endif

static char g_checker[PATH_MAX];
static pthread_once_t g_checker_once = PTHREAD_ONCE_INIT;

/* Sets g_checker to path when it is an executable file. */
static int checker_try(const char *dir, const char *rel) {
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/%s", dir, rel) >= (int)sizeof p) return 0;
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || access(p, X_OK) != 0) return 0;
    memcpy(g_checker, p, strlen(p) + 1);
    return 1;
}

/* The tool, found once: $SPANSCOPE_H5CHECK (a path; "0": none), else next
 * to the library or executable this code is linked into -- bin/spanscope
 * (the wheel), spanscope (the build tree, the tool itself), then
 * SPS_LIB_TO_BIN/spanscope (an install: lib/ -> bin/). */
static void checker_find(void) {
#ifdef CHECK_TSAN
    /* ThreadSanitizer's runtime will not start under the memory cap (it
     * re-execs itself without one): a TSan build walks in the fork */
    return;
#endif
    const char *env = getenv("SPANSCOPE_H5CHECK");
    if (env && *env) {
        if (strcmp(env, "0") && strlen(env) < sizeof g_checker && access(env, X_OK) == 0)
            memcpy(g_checker, env, strlen(env) + 1);
        return;
    }
    Dl_info info;
    char self[PATH_MAX];
    if (!dladdr((void *)&sps__h5_walk, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, self))
        return;
    char *slash = strrchr(self, '/');
    if (!slash) return;
    *slash = '\0';
#ifndef SPS_LIB_TO_BIN
#define SPS_LIB_TO_BIN "../bin"
#endif
    if (!checker_try(self, "bin/spanscope") && !checker_try(self, "spanscope"))
        checker_try(self, SPS_LIB_TO_BIN "/spanscope");
}

/* The two heaps the fresh process walks the file in.  libhdf5 1.10 reads
 * memory it never set on some corrupt files (an attribute table whose
 * unset entries H5A__attr_release_table closes; a global heap object index
 * past the collection's array in H5HG_read), and whether that crashes
 * depends on what the heap holds there: such a file crashed the check in
 * one heap, passed it in another, and crashed the caller (offline run 9: 8
 * in 44 000 files).  The clean copy closes that class (the caller never
 * parses the file); where no copy is made the walk runs a second time,
 * with glibc's per-thread cache and fast bins off, where every allocation
 * comes through the path that M_PERTURB fills (of run 9's eight, the
 * first walk refuses six and the second one more). */
#define CHECK_TUNABLES "glibc.malloc.tcache_count=0:glibc.malloc.mxfast=0"

typedef struct check {
    const char *path;
    int tunables; /* the second walk */
    const char *copy; /* non-NULL: after the walk, write the clean copy there */
} check_t;

/* A sanitizer's runtime in the tool would catch its crash, or an
 * allocation the memory cap refuses, and exit 1: its handlers off there
 * and NULL from a refused allocation, as in the fork. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHECK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CHECK_SANITIZED 1
#endif
#endif
#define CHECK_SAN_OPTIONS \
    "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0:" \
    "allocator_may_return_null=1"

/* Appends value to variable name (NAME=...) in env (k entries, room for
 * one more); 0 or -1 (out of memory). */
static int env_add(char **env, size_t *k, const char *name, const char *value) {
    size_t nl = strlen(name);
    const char *old = "";
    size_t at = *k;
    for (size_t i = 0; i < *k; i++)
        if (!strncmp(env[i], name, nl) && env[i][nl] == '=') {
            old = env[i] + nl + 1;
            at = i;
            break;
        }
    size_t len = nl + strlen(old) + strlen(value) + 3;
    char *v = malloc(len);
    if (!v) return -1;
    snprintf(v, len, "%s=%s%s%s", name, old, *old ? ":" : "", value);
    env[at] = v;
    if (at == *k) ++*k;
    return 0;
}

/* The caller's environment for the tool (malloc'd, for the child's exec;
 * NULL when out of memory): with CHECK_TUNABLES in GLIBC_TUNABLES for the
 * second walk, and a sanitizer's signal handlers off in a sanitized build;
 * LD_PRELOAD and SPANSCOPE_RUN left out. */
static char **checker_env(int tunables) {
    extern char **environ;
    size_t n = 0;
    while (environ[n]) n++;
    char **env = malloc((n + 4) * sizeof *env);
    if (!env) return NULL;
    /* without LD_PRELOAD and SPANSCOPE_RUN: a checker is no process of
     * the program's (`spanscope run` preloads a library that would set a
     * session up in it, --follow one that would join the tree) */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "SPANSCOPE_RUN=", 14))
            env[k++] = environ[i];
    int rc = tunables ? env_add(env, &k, "GLIBC_TUNABLES", CHECK_TUNABLES) : 0;
#ifdef CHECK_SANITIZED
    rc |= env_add(env, &k, "ASAN_OPTIONS", CHECK_SAN_OPTIONS);
    rc |= env_add(env, &k, "TSAN_OPTIONS", CHECK_SAN_OPTIONS);
#endif
    env[k] = NULL;
    if (rc) {
        free(env);
        return NULL;
    }
    return env;
}

int sps__h5_guard_fresh(void) {
    pthread_once(&g_checker_once, checker_find);
    return g_checker[0] != '\0';
}

/* The forked child's work: exec the tool, or walk (and copy) here when
 * that fails. */
static int check_child(void *arg) {
    const check_t *c = arg;
    if (g_checker[0]) {
        char **env = checker_env(c->tunables);
        char *argv[] = {"spanscope", CHECK_CMD, (char *)c->path, (char *)c->copy, NULL};
        if (env) execve(g_checker, argv, env);
    }
    int rc = walk_child((void *)c->path);
    return rc || !c->copy ? rc : sps__h5_copy(c->path, c->copy);
}

/* ---- the clean copies ------------------------------------------------- */

/* The copies are files $TMPDIR/.spanscope-h5copy-<pid>-<k> (or /tmp):
 * one per verdict, kept while the verdict is (a reader opens its own hard
 * link of it, which it removes once libhdf5 has the file open, so that
 * no reader's name goes away under it), all removed at exit, and those of
 * processes that died without exiting removed by the next process that
 * checks a file.  libhdf5 needs a name: it resolves a /proc/self/fd link
 * to a real path, which an unnamed file has none of. */
#define COPY_PREFIX ".spanscope-h5copy-"

static const char *copy_dir(void) {
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

/* A new name for a copy in name (n bytes). */
static void copy_name(char *name, size_t n) {
    static unsigned long serial;
    unsigned long k = __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
    snprintf(name, n, "%s/" COPY_PREFIX "%ld-%lu", copy_dir(), (long)getpid(), k);
}

/* Creates an empty file for the copy of a file of size bytes (mode 0600,
 * never through a link that was there), its name in name; 0, or -1 when
 * none is made -- $SPANSCOPE_H5_COPY=0, or no room for it where copies go
 * (a copy that failed for want of space would refuse a sound file) --
 * and the file itself is read after the walks. */
static int copy_create(off_t size, char *name, size_t n) {
    const char *env = getenv("SPANSCOPE_H5_COPY");
    struct statvfs vfs;
    if ((env && !strcmp(env, "0")) || statvfs(copy_dir(), &vfs) != 0 ||
        (unsigned long long)vfs.f_bavail * vfs.f_frsize <
            (unsigned long long)size + (size >> 3) + ((unsigned long long)64 << 20))
        return -1;
    for (int tries = 0; tries < 8; tries++) {
        copy_name(name, n);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EEXIST) break;
    }
    name[0] = '\0';
    return -1;
}

/* A hard link of the copy from, its name in name: 0 or -1. */
static int copy_link(const char *from, char *name, size_t n) {
    for (int tries = 0; tries < 8; tries++) {
        copy_name(name, n);
        if (link(from, name) == 0) return 0;
        if (errno != EEXIST) break;
    }
    return -1;
}

/* Removes the copies of processes that are gone (a crash, a kill). */
static void copy_sweep(void) {
    DIR *d = opendir(copy_dir());
    if (!d) return;
    struct dirent *e;
    size_t plen = strlen(COPY_PREFIX);
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, COPY_PREFIX, plen)) continue;
        char *end;
        long pid = strtol(e->d_name + plen, &end, 10);
        if (pid <= 0 || *end != '-' || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s/%s", copy_dir(), e->d_name) < (int)sizeof p) unlink(p);
    }
    closedir(d);
}

/* The check of path: a walk in a fresh process that then writes the clean
 * copy into the file copy (when not NULL) -- and, where no copy is made
 * (or libhdf5 cannot open the file to copy it), the second walk, without
 * malloc's caches, since the caller will then parse the file itself.
 * Where no tool runs them: one walk and the copy in the fork.  Returns
 * sps__isolated's result (9: the copy failed, SPS__H5_COPY_NONE: libhdf5
 * cannot open the file). */
static int check_file(const char *path, unsigned timeout_s, size_t mem_limit,
                      const char *copy) {
    pthread_once(&g_checker_once, checker_find);
    check_t c = {path, 0, copy};
    int status = sps__isolated(check_child, &c, timeout_s, mem_limit);
    if (status == 2 && g_checker[0]) { /* a tool without CHECK_CMD (another version) */
        g_checker[0] = '\0';
        return sps__isolated(check_child, &c, timeout_s, mem_limit);
    }
    if (!g_checker[0] || (status != 0 && status != SPS__H5_COPY_NONE) ||
        (status == 0 && copy))
        return status;
    c.tunables = 1;
    c.copy = NULL;
    int again = sps__isolated(check_child, &c, timeout_s, mem_limit);
    return again != 0 ? again : status;
}

/* ---- the verdicts ------------------------------------------------------ */

typedef struct verdict {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtim, ctim;
    int status; /* sps__isolated's result */
    char *copy; /* the clean copy's name (status 0; malloc'd), or NULL */
} verdict_t;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static verdict_t g_cache[GUARD_CACHE];
static size_t g_ncache, g_next;
static uint64_t g_checks, g_refused;

static int same_file(const verdict_t *v, const struct stat *st) {
    return v->dev == st->st_dev && v->ino == st->st_ino && v->size == st->st_size &&
           v->mtim.tv_sec == st->st_mtim.tv_sec && v->mtim.tv_nsec == st->st_mtim.tv_nsec &&
           v->ctim.tv_sec == st->st_ctim.tv_sec && v->ctim.tv_nsec == st->st_ctim.tv_nsec;
}

/* The kept verdict of the file st describes, or -1; with a copy, o is
 * set to a link of it of the caller's own (o->linked). */
static int cache_find(const struct stat *st, sps__h5_open_t *o) {
    int status = -1;
    pthread_mutex_lock(&g_mu);
    for (size_t i = g_ncache; i-- > 0;)
        if (same_file(&g_cache[i], st)) {
            status = g_cache[i].status;
            if (g_cache[i].copy) {
                o->linked = copy_link(g_cache[i].copy, o->path, sizeof o->path) == 0;
                if (!o->linked) status = -1; /* the copy is gone: check again */
            }
            break;
        }
    pthread_mutex_unlock(&g_mu);
    return status;
}

/* Removes every kept copy (at exit). */
static void copies_remove(void) {
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_ncache; i++)
        if (g_cache[i].copy) {
            unlink(g_cache[i].copy);
            free(g_cache[i].copy);
            g_cache[i].copy = NULL;
        }
    pthread_mutex_unlock(&g_mu);
}

/* Keeps the verdict, and copy (a name the cache owns from here, or NULL). */
static void cache_put(const struct stat *st, int status, char *copy) {
    pthread_mutex_lock(&g_mu);
    verdict_t *v = &g_cache[g_next];
    g_next = (g_next + 1) % GUARD_CACHE;
    if (g_ncache < GUARD_CACHE) g_ncache++;
    else if (v->copy) {
        unlink(v->copy);
        free(v->copy);
    }
    *v = (verdict_t){st->st_dev, st->st_ino, st->st_size, st->st_mtim, st->st_ctim,
                     status, copy};
    g_checks++;
    if (status != 0) g_refused++;
    pthread_mutex_unlock(&g_mu);
}

/* The child's time limit: 20 s plus 1 s per 4 MiB of file, or
 * $SPANSCOPE_READ_TIMEOUT seconds (0: none), at most a day -- the rule of
 * the command-line tool's isolated commands. */
static unsigned guard_timeout_s(off_t size) {
    const char *env = getenv("SPANSCOPE_READ_TIMEOUT");
    unsigned long long secs = 20 + (unsigned long long)(size > 0 ? size >> 22 : 0);
    if (env && *env) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(env, &end, 10);
        if (!errno && !*end && env[0] != '-') secs = v;
    }
    return (unsigned)(secs > 86400 ? 86400 : secs);
}

/* Non-zero unless $SPANSCOPE_H5_ISOLATE is "0". */
/* Set on a thread while it reads files this library wrote itself moments
 * ago (sps__h5_guard_trust). */
static __thread int g_trusted;

void sps__h5_guard_trust(int on) { g_trusted = on != 0; }

int sps__h5_guard_trusted(void) { return g_trusted; }

static int guard_enabled(void) {
    const char *env = getenv("SPANSCOPE_H5_ISOLATE");
    return !g_trusted && !(env && !strcmp(env, "0"));
}

/* The error for a refused file, from the child's status. */
static int guard_error(const char *path, int status, unsigned timeout_s) {
    if (status == SPS__ISOLATED_SIGNAL + SIGALRM)
        return sps__err_fail(SPS_EFORMAT,
                             "%s: corrupt file: parsing it took over %u s in an isolated "
                             "check (libhdf5 loops on some corrupt files; "
                             "SPANSCOPE_READ_TIMEOUT sets the limit)", path, timeout_s);
    if (status > SPS__ISOLATED_SIGNAL)
        return sps__err_fail(SPS_EFORMAT,
                             "%s: corrupt file: parsing it crashed libhdf5 (%s) in an "
                             "isolated check; nothing was read", path,
                             strsignal(status - SPS__ISOLATED_SIGNAL));
    if (status == 3)
        return sps__err_fail(SPS_EFORMAT, "%s: corrupt file: a data chunk lies outside "
                             "the file", path);
    if (status == 6)
        return sps__err_fail(SPS_EFORMAT, "%s: corrupt file: a compound datatype has a "
                             "member outside its element (libhdf5 would copy from outside "
                             "its buffers)", path);
    if (status == 5)
        return sps__err_fail(SPS_EFORMAT, "%s: corrupt file: libhdf5 would need over "
                             "%zu MiB to read it (an attribute or dataset claims far more "
                             "data than the file holds)", path, GUARD_MEM_BYTES >> 20);
    if (status == 7)
        return sps__err_fail(SPS_EFORMAT, "%s: corrupt file: a group's link table "
                             "cannot be read (objects in it could not be checked)", path);
    if (status == 9)
        return sps__err_fail(SPS_EFORMAT, "%s: corrupt file: libhdf5 could not copy it "
                             "in the isolated check (the copy is what is read)", path);
    if (status == 8)
        return sps__err_fail(SPS_EFORMAT, "%s: corrupt file: a global heap collection "
                             "(where its strings are) does not divide into objects "
                             "(libhdf5 would loop or read past it)", path);
    if (status == 4)
        return sps__err_fail(SPS_EFORMAT, "%s: corrupt file: a variable-length string "
                             "is longer than its element says (libhdf5 would write "
                             "past its buffer)", path);
    return sps__err_fail(SPS_EFORMAT,
                         "%s: corrupt file: its isolated check failed (exit status %d; "
                         "out of memory?)", path, status);
}

static pthread_once_t g_copies_once = PTHREAD_ONCE_INIT;

static void copies_init(void) {
    copy_sweep();
    atexit(copies_remove);
}

int sps__h5_guard_open(const char *path, sps__h5_open_t *o) {
    struct stat st;
    snprintf(o->path, sizeof o->path, "%s", path);
    o->linked = 0;
    if (!guard_enabled() || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0; /* the reader reports a missing or odd file itself */
    int status = cache_find(&st, o);
    unsigned timeout_s = guard_timeout_s(st.st_size);
    if (status < 0) {
        pthread_once(&g_copies_once, copies_init);
        char copy[PATH_MAX];
        int have = copy_create(st.st_size, copy, sizeof copy) == 0;
        status = check_file(path, timeout_s, GUARD_MEM_BYTES + (size_t)st.st_size,
                            have ? copy : NULL);
        if (status == SPS__H5_COPY_NONE) { /* libhdf5 cannot open it: no copy */
            status = 0;
            if (have) unlink(copy);
            have = 0;
        }
        if (status != 0 && have) {
            unlink(copy);
            have = 0;
        }
        if (status < 0)
            return sps__err_fail(SPS_EIO,
                                 "%s: cannot check the file in a child process (%s); "
                                 "SPANSCOPE_H5_ISOLATE=0 reads it unchecked", path,
                                 strerror(errno));
        char *kept = have ? strdup(copy) : NULL;
        if (have && !kept) unlink(copy);
        if (kept) o->linked = copy_link(kept, o->path, sizeof o->path) == 0;
        cache_put(&st, status, kept);
    }
    if (status != 0) return guard_error(path, status, timeout_s);
    if (!o->linked) snprintf(o->path, sizeof o->path, "%s", path);
    return 0;
}

void sps__h5_guard_close(sps__h5_open_t *o) {
    if (o->linked) unlink(o->path);
    o->linked = 0;
}

int sps__h5_guard(const char *path) {
    sps__h5_open_t o;
    int rc = sps__h5_guard_open(path, &o);
    sps__h5_guard_close(&o);
    return rc;
}

void sps__h5_guard_stats(uint64_t *checks, uint64_t *refused) {
    pthread_mutex_lock(&g_mu);
    if (checks) *checks = g_checks;
    if (refused) *refused = g_refused;
    pthread_mutex_unlock(&g_mu);
}
