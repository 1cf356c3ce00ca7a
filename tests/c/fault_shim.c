/*
 * fault_shim.c -- an LD_PRELOAD library that makes a disk fail on cue, for
 * the failing-disk tests where a real one (a small tmpfs, which needs
 * root) cannot be had.  It wraps write, pwrite, pwrite64, writev,
 * sendfile(64) and copy_file_range (the copies of Python's shutil),
 * fallocate, fsync, fdatasync and rename, and (only when SPS_FAULT_OPS
 * names "open") open, open64, openat, openat64 and mkostemp(64) when they
 * would create or write a file; a wrapped call on a file under
 * SPS_FAULT_DIR fails with SPS_FAULT_ERRNO once the budget is spent:
 *
 *   SPS_FAULT_DIR     only files whose path starts with it (required: the
 *                     shim does nothing without it, so the interpreter's
 *                     and the test runner's own writes are never touched)
 *   SPS_FAULT_ERRNO   the errno to fail with (default 28, ENOSPC)
 *   SPS_FAULT_BYTES   bytes the writes may still write before they fail
 *                     (a write crossing the limit writes up to it: a
 *                     short write, as a filling disk gives); default
 *                     unlimited
 *   SPS_FAULT_CALLS   wrapped calls that succeed before each later one
 *                     fails; default unlimited.  With neither budget
 *                     every chosen call fails; once the bytes are spent
 *                     every chosen call (fsync, rename... too) fails
 *   SPS_FAULT_OPS     comma-separated subset of write,fallocate,fsync,
 *                     rename,open (default all but open; write covers
 *                     pwrite and writev; open: a file that cannot be
 *                     created, as in a read-only or forbidden directory:
 *                     EACCES, EROFS without root)
 *
 * What it cannot see: glibc's stdio writes through an internal write, not
 * the interposable one, so a writer that uses fwrite on a FILE from fopen
 * is invisible here (spanscope's text outputs write through
 * sps__out_open's stream, whose writes are write(2) calls).
 *
 * The budget is the process's (a child started after fork has its own
 * copy).  Test-only: not installed, no sps_ names, not thread-careful
 * beyond what a test needs (a lock around the budget).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_init, g_errno = ENOSPC, g_ops;
static long long g_bytes = -1, g_calls = -1; /* -1: unlimited */
static char g_dir[PATH_MAX];

enum { OP_WRITE = 1, OP_FALLOC = 2, OP_FSYNC = 4, OP_RENAME = 8, OP_OPEN = 16 };

/* Reads the environment once. */
static void init(void) {
    if (g_init) return;
    g_init = 1;
    const char *d = getenv("SPS_FAULT_DIR"), *e = getenv("SPS_FAULT_ERRNO");
    const char *b = getenv("SPS_FAULT_BYTES"), *c = getenv("SPS_FAULT_CALLS");
    const char *o = getenv("SPS_FAULT_OPS");
    g_ops = OP_WRITE | OP_FALLOC | OP_FSYNC | OP_RENAME; /* open: opt-in */
    if (d) snprintf(g_dir, sizeof g_dir, "%s", d);
    if (e && *e) g_errno = atoi(e);
    if (b && *b) g_bytes = atoll(b);
    if (c && *c) g_calls = atoll(c);
    if (o && *o) {
        g_ops = 0;
        if (strstr(o, "write")) g_ops |= OP_WRITE;
        if (strstr(o, "fallocate")) g_ops |= OP_FALLOC;
        if (strstr(o, "fsync")) g_ops |= OP_FSYNC;
        if (strstr(o, "rename")) g_ops |= OP_RENAME;
        if (strstr(o, "open")) g_ops |= OP_OPEN;
    }
}

/* Whether path lies under SPS_FAULT_DIR. */
static int path_watched(const char *path) {
    return g_dir[0] && path && !strncmp(path, g_dir, strlen(g_dir));
}

/* Whether descriptor fd is a file under SPS_FAULT_DIR. */
static int fd_watched(int fd) {
    if (!g_dir[0]) return 0;
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = 0;
    return path_watched(target);
}

/* How many of n bytes a watched call of kind op may do: n, fewer (the
 * byte budget ends inside), or -1 with errno set (it fails). */
static long long allow(int op, long long n) {
    pthread_mutex_lock(&g_mu);
    long long ok = n;
    if (!(g_ops & op)) goto out;
    if (g_calls == 0) {
        ok = -1;
        goto out;
    }
    if (g_calls > 0) g_calls--;
    if (g_bytes < 0 && g_calls < 0) {
        ok = -1; /* no budget: a chosen operation always fails */
    } else if (g_bytes == 0) {
        ok = -1; /* the disk is full: every chosen operation fails */
    } else if (op == OP_WRITE && g_bytes > 0) {
        if (n > g_bytes) ok = g_bytes;
        g_bytes -= ok;
    }
out:
    pthread_mutex_unlock(&g_mu);
    if (ok < 0) errno = g_errno;
    return ok;
}

/* real_NAME: the next definition of NAME (libc's), looked up once. */
#define REAL(name) static __typeof__(&name) real_##name; \
    if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buf, size_t n) {
    REAL(write);
    init();
    if (n && fd_watched(fd)) {
        long long k = allow(OP_WRITE, (long long)n);
        if (k < 0) return -1;
        n = (size_t)k;
    }
    return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL(pwrite);
    init();
    if (n && fd_watched(fd)) {
        long long k = allow(OP_WRITE, (long long)n);
        if (k < 0) return -1;
        n = (size_t)k;
    }
    return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
    return pwrite(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    REAL(writev);
    init();
    if (fd_watched(fd)) {
        long long n = 0;
        for (int i = 0; i < cnt; i++) n += (long long)iov[i].iov_len;
        long long k = allow(OP_WRITE, n);
        if (k < 0) return -1;
        if (k < n) { /* a short write: the first iovecs up to the budget */
            ssize_t done = 0;
            for (int i = 0; i < cnt && k > 0; i++) {
                size_t m = iov[i].iov_len < (size_t)k ? iov[i].iov_len : (size_t)k;
                ssize_t w = pwrite(fd, iov[i].iov_base, m, lseek(fd, 0, SEEK_CUR));
                if (w > 0) lseek(fd, w, SEEK_CUR), done += w, k -= w;
                if (w < (ssize_t)m) break;
            }
            return done;
        }
    }
    return real_writev(fd, iov, cnt);
}

ssize_t sendfile(int out_fd, int in_fd, off_t *off, size_t n) {
    REAL(sendfile);
    init();
    if (n && fd_watched(out_fd)) {
        long long k = allow(OP_WRITE, (long long)n);
        if (k < 0) return -1;
        n = (size_t)k;
    }
    return real_sendfile(out_fd, in_fd, off, n);
}

ssize_t sendfile64(int out_fd, int in_fd, off_t *off, size_t n) {
    return sendfile(out_fd, in_fd, off, n);
}

ssize_t copy_file_range(int in_fd, off_t *in_off, int out_fd, off_t *out_off, size_t n,
                        unsigned int flags) {
    REAL(copy_file_range);
    init();
    if (n && fd_watched(out_fd)) {
        long long k = allow(OP_WRITE, (long long)n);
        if (k < 0) return -1;
        n = (size_t)k;
    }
    return real_copy_file_range(in_fd, in_off, out_fd, out_off, n, flags);
}

int fallocate(int fd, int mode, off_t off, off_t len) {
    REAL(fallocate);
    init();
    if (fd_watched(fd) && allow(OP_FALLOC, 0) < 0) return -1;
    return real_fallocate(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off_t off, off_t len) {
    return fallocate(fd, mode, off, len);
}

int fsync(int fd) {
    REAL(fsync);
    init();
    if (fd_watched(fd) && allow(OP_FSYNC, 0) < 0) return -1;
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync);
    init();
    if (fd_watched(fd) && allow(OP_FSYNC, 0) < 0) return -1;
    return real_fdatasync(fd);
}

int rename(const char *from, const char *to) {
    REAL(rename);
    init();
    if ((path_watched(from) || path_watched(to)) && allow(OP_RENAME, 0) < 0) return -1;
    return real_rename(from, to);
}

/* Whether an open with flags creates or writes (the calls a read-only or
 * forbidden directory refuses); reads pass. */
static int opens_for_writing(int flags) {
#ifdef O_TMPFILE
    if ((flags & O_TMPFILE) == O_TMPFILE) return 1;
#endif
    return (flags & O_CREAT) || (flags & O_ACCMODE) != O_RDONLY;
}

/* The mode argument of an open that takes one. */
#define OPEN_MODE(flags, mode) do { \
        if ((flags) & O_CREAT || ((flags) & O_TMPFILE) == O_TMPFILE) { \
            va_list ap; va_start(ap, flags); mode = va_arg(ap, int); va_end(ap); \
        } \
    } while (0)

/* Whether an open of path (relative: to the working directory) with
 * flags fails here (errno set). */
static int open_fails(const char *path, int flags) {
    init();
    if (!(g_ops & OP_OPEN) || !opens_for_writing(flags)) return 0;
    char full[2 * PATH_MAX + 2];
    if (path[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || strlen(path) >= PATH_MAX) return 0;
        snprintf(full, sizeof full, "%s/%s", cwd, path);
        path = full;
    }
    return path_watched(path) && allow(OP_OPEN, 0) < 0;
}

int open(const char *path, int flags, ...) {
    REAL(open);
    int mode = 0;
    OPEN_MODE(flags, mode);
    if (open_fails(path, flags)) return -1;
    return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    REAL(open64);
    int mode = 0;
    OPEN_MODE(flags, mode);
    if (open_fails(path, flags)) return -1;
    return real_open64(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    REAL(openat);
    int mode = 0;
    OPEN_MODE(flags, mode);
    if ((path[0] == '/' || dirfd == AT_FDCWD) && open_fails(path, flags)) return -1;
    return real_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    REAL(openat64);
    int mode = 0;
    OPEN_MODE(flags, mode);
    if ((path[0] == '/' || dirfd == AT_FDCWD) && open_fails(path, flags)) return -1;
    return real_openat64(dirfd, path, flags, mode);
}

/* mkostemp opens through glibc's internal open: wrapped itself, so that a
 * fallback from O_TMPFILE to a named temporary file fails alike. */
int mkostemp(char *tmpl, int flags) {
    REAL(mkostemp);
    if (open_fails(tmpl, O_CREAT | O_RDWR)) return -1;
    return real_mkostemp(tmpl, flags);
}

int mkostemp64(char *tmpl, int flags) {
    REAL(mkostemp64);
    if (open_fails(tmpl, O_CREAT | O_RDWR)) return -1;
    return real_mkostemp64(tmpl, flags);
}
