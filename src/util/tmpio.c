/* tmpio.c -- temporary files and whole-buffer reads and writes (util.h):
 * the spill file of the recording buffers, the external sort's runs and
 * the HDF5 writer's staging file all go through these, and every output
 * is written under sps__tmp_name's name before it is renamed into place. */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
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
