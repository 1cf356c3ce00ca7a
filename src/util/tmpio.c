/* tmpio.c -- temporary files and whole-buffer reads and writes (util.h):
 * the spill file of the recording buffers, the external sort's runs and
 * the HDF5 writer's staging file all go through these, and every output
 * is written under sps__tmp_name's name before it is renamed into place;
 * the text outputs (Chrome trace, exports, HTML page) are written through
 * sps__out_open's stream, so that their writes are write(2) calls whose
 * failure notes its cause. */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *sps__tmpdir(void) {
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

char *sps__tmp_name(const char *path, const char *suffix) {
    if (!suffix) suffix = "";
    char pid[24];
    int np = snprintf(pid, sizeof pid, ".tmp-%d", (int)getpid());
    size_t a = strlen(path), b = strlen(suffix);
    if (a > SIZE_MAX - b - (size_t)np - 1) return NULL;
    char *s = malloc(a + (size_t)np + b + 1);
    if (!s) return NULL;
    memcpy(s, path, a);
    memcpy(s + a, pid, (size_t)np);
    memcpy(s + a + (size_t)np, suffix, b + 1);
    return s;
}

int sps__tmpfile_open(const char *dir, const char *stem) {
    if (!dir) dir = sps__tmpdir();
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
#endif
    size_t n = strlen(dir) + strlen(stem) + 8;
    char *path = malloc(n);
    if (!path) return -1; /* errno is ENOMEM */
    snprintf(path, n, "%s/%sXXXXXX", dir, stem);
    int tfd = mkostemp(path, O_CLOEXEC);
    int err = errno;
    if (tfd < 0) sps__err_os_note(err);
    if (tfd >= 0) unlink(path);
    free(path);
    errno = err;
    return tfd;
}

/* The loop of both writers: all n bytes at off, or at the file position
 * when off is -1; after EINTR and short writes it goes on.  A failure
 * notes its errno as the cause (error.c) before the caller's cleanup
 * (close, unlink) can overwrite errno. */
static int write_loop(int fd, const void *buf, size_t n, off_t off) {
    const char *p = buf;
    while (n) {
        ssize_t k = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0) errno = EIO;
            sps__err_os_note(errno);
            return -1;
        }
        p += k;
        n -= (size_t)k;
        if (off >= 0) off += k;
    }
    return 0;
}

int sps__pwrite_all(int fd, const void *buf, size_t n, off_t off) {
    if (off < 0) {
        errno = EINVAL;
        return -1;
    }
    return write_loop(fd, buf, n, off);
}

int sps__write_all(int fd, const void *buf, size_t n) {
    return write_loop(fd, buf, n, -1);
}

/* The cookie of an sps__out_open stream: its descriptor and whether its
 * close syncs. */
typedef struct out_cookie {
    int fd;
    int sync;
} out_cookie_t;

/* fopencookie's write: all n bytes or 0 (the stream's error; the cause is
 * noted by write_loop at the failing write). */
static ssize_t out_write(void *cookie, const char *buf, size_t n) {
    out_cookie_t *c = cookie;
    return write_loop(c->fd, buf, n, -1) ? 0 : (ssize_t)n;
}

/* fopencookie's close (after stdio's last flush): fsync when asked, then
 * close; 0, or -1 with the first failure's errno noted and left in errno.
 * Frees the cookie either way. */
static int out_close(void *cookie) {
    out_cookie_t *c = cookie;
    int err = 0;
    if (c->sync && fsync(c->fd) < 0 && errno != EINVAL && errno != EROFS) err = errno;
    if (close(c->fd) < 0 && !err && errno != EINTR) err = errno;
    free(c);
    if (!err) return 0;
    sps__err_os_note(err);
    errno = err;
    return -1;
}

FILE *sps__out_open(const char *path, int sync) {
    out_cookie_t *c = malloc(sizeof *c);
    if (!c) return NULL; /* errno is ENOMEM */
    c->sync = sync;
    c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (c->fd < 0) {
        int err = errno;
        sps__err_os_note(err);
        free(c);
        errno = err;
        return NULL;
    }
    cookie_io_functions_t io = {NULL, out_write, NULL, out_close};
    FILE *fp = fopencookie(c, "w", io);
    if (!fp) {
        int err = errno ? errno : ENOMEM;
        close(c->fd);
        free(c);
        errno = err;
        return NULL;
    }
    setvbuf(fp, NULL, _IOFBF, 1u << 16); /* stdio allocates it; fewer writes */
    return fp;
}

ssize_t sps__pread_full(int fd, void *buf, size_t n, off_t off) {
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, p + got, n - got, off + (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) break; /* the end of the file */
        got += (size_t)k;
    }
    return (ssize_t)got;
}
