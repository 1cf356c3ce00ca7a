/* fuzz_view_http.c -- libFuzzer target: the HTTP server of `spanscope
 * view` (tools/view_http.c), fed arbitrary bytes as a hostile client.
 *
 * The input: one byte that says how the rest is cut into writes (0: one
 * write; n: writes of n * 13 bytes), then the bytes the client sends,
 * where every "PPPPP" becomes the server's port (a free one, so its five
 * digits vary; decide's part uses 12345), so that the seeds' Host and
 * Origin headers pass and the fuzzer gets past the checks.
 *
 *   1. view_http_decide over the bytes, and again over what follows each
 *      request it took (pipelining), as the server does.  It traps when the
 *      decision breaks its contract: a route out of range, an error without
 *      a message or with a status not among 400 403 404 405 413, a 405
 *      without an Allow header (or an Allow without 405), more bytes taken
 *      than given, an API route whose path is not under /api/ or is
 *      /api/quit, whose method is not GET or POST, or whose query is empty
 *      or still holds a token parameter, or a wait for more bytes when the
 *      connection's buffer (VIEW_HTTP_MAX_HEAD + VIEW_HTTP_MAX_BODY) is
 *      already full (the server would wait with nothing left to read).
 *   2. the connection state machine: a server on loopback adopts one end
 *      of a socketpair, the bytes are written to the other in the cut
 *      writes with one poll round (no wait) after each, then the client
 *      shuts down its side and the rounds go on until the server closed
 *      the connection (a bounded number of rounds: more traps as a hang).
 *      Everything the server wrote must be whole answers: "HTTP/1.1 NNN",
 *      a head with a Content-Length, that many bytes of body.  The API
 *      callback checks what it is handed as above.
 */
#include "view_http.h"
#include "view_http_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TOK "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define PORT 12345 /* view_http_decide's port: "PPPPP" becomes "12345" */
#define IN_CAP ((size_t)VIEW_HTTP_MAX_HEAD + VIEW_HTTP_MAX_BODY)

/* Traps unless the query q (NULL or NUL-terminated) is NULL or non-empty
 * and holds no token parameter. */
static void check_query(const char *q) {
    if (!q) return;
    if (!q[0]) __builtin_trap();
    for (const char *p = q; p; p = strchr(p, '&'), p = p ? p + 1 : NULL)
        if (!strncmp(p, "token=", 6)) __builtin_trap();
}

/* Traps unless method and path are what the callback may be handed. */
static void check_api(const char *method, const char *path, const char *query) {
    if (!method || (strcmp(method, "GET") && strcmp(method, "POST"))) __builtin_trap();
    if (!path || strncmp(path, "/api/", 5) || !strcmp(path, "/api/quit")) __builtin_trap();
    check_query(query);
}

static int api(void *ctx, const char *method, const char *path, const char *query,
               char **body, size_t *len, const char **ctype) {
    (void)ctx;
    check_api(method, path, query);
    size_t n = strlen(path) + (query ? strlen(query) : 0) + 2;
    char *b = malloc(n);
    if (b) snprintf(b, n, "%s?%s", path, query ? query : "");
    *body = b;
    *len = b ? strlen(b) : 0;
    *ctype = "text/plain";
    return path[5] == 'x' ? 404 : 200; /* some answers not 200 */
}

/* Decides the requests in in[0..len), one after the other as the server
 * would take them off a kept-alive connection. */
static void fuzz_decide(const char *in, size_t len) {
    static view_http_req_t q;
    for (int k = 0; k < 1000; k++) {
        int route = view_http_decide(in, len, PORT, TOK, &q);
        switch (route) {
        case VIEW_HTTP_MORE:
            if (len >= IN_CAP || q.used) __builtin_trap();
            return;
        case VIEW_HTTP_ERROR:
            if (!q.msg || (q.status != 400 && q.status != 403 && q.status != 404 &&
                           q.status != 405 && q.status != 413))
                __builtin_trap();
            if ((q.status == 405) != (q.allow != NULL)) __builtin_trap();
            if (q.status != 404 && q.status != 405 && !q.close) __builtin_trap();
            break;
        case VIEW_HTTP_PAGE:
        case VIEW_HTTP_QUIT:
            if (q.status != 200 || q.msg) __builtin_trap();
            if (route == VIEW_HTTP_QUIT && !q.close) __builtin_trap();
            break;
        case VIEW_HTTP_API:
            if (q.status) __builtin_trap();
            check_api(q.method, q.path, q.query);
            if (strlen(q.path) >= len) __builtin_trap();
            break;
        default:
            __builtin_trap();
        }
        if (q.used > len) __builtin_trap();
        if (q.close || !q.used) return; /* the server reads no further */
        in += q.used;
        len -= q.used;
    }
}

/* Traps unless out[0..len) is whole answers, one after the other. */
static void check_answers(const char *out, size_t len) {
    while (len) {
        if (len < 13 || memcmp(out, "HTTP/1.1 ", 9)) __builtin_trap();
        int st = atoi(out + 9);
        if (st < 100 || st > 599) __builtin_trap();
        const char *end = memmem(out, len, "\r\n\r\n", 4);
        if (!end) __builtin_trap();
        size_t hl = (size_t)(end - out) + 4;
        const char *cl = memmem(out, hl, "\r\nContent-Length: ", 18);
        if (!cl) __builtin_trap();
        size_t blen = strtoul(cl + 18, NULL, 10);
        if (hl + blen > len) __builtin_trap();
        out += hl + blen;
        len -= hl + blen;
    }
}

/* Reads what the server wrote into *out (grown), returns 1 at its end. */
static int drain(int fd, char **out, size_t *len, size_t *cap) {
    for (;;) {
        if (*cap - *len < 65536) {
            size_t nc = *cap * 2 + 65536;
            char *o = realloc(*out, nc);
            if (!o) abort();
            *out = o;
            *cap = nc;
        }
        ssize_t n = recv(fd, *out + *len, *cap - *len, MSG_DONTWAIT);
        if (n > 0) {
            *len += (size_t)n;
            continue;
        }
        return n == 0;
    }
}

static const unsigned char page[] = "<!doctype html><title>fuzz</title>";

/* Writes port's digits over every "PPPPP" of b (size bytes) when it has
 * five of them. */
static void put_port(char *b, size_t size, unsigned port) {
    char d[8];
    if (snprintf(d, sizeof d, "%u", port) != 5) return;
    for (char *p = b; (p = memmem(p, size - (size_t)(p - b), "PPPPP", 5)); p += 5)
        memcpy(p, d, 5);
}

static void fuzz_conn(const uint8_t *data, size_t size, size_t cut) {
    view_http_conf_t conf = {TOK, page, sizeof page - 1, api, NULL};
    view_http_t *s;
    if (view_http_open(&s, 0, &conf) < 0) abort();
    char *b = malloc(size + 1);
    if (!b) abort();
    memcpy(b, data, size);
    put_port(b, size, view_http_port(s));
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) abort();
    if (view_http_adopt(s, sv[0]) < 0) abort();
    char *out = NULL;
    size_t olen = 0, ocap = 0;
    int rc = 2, eof = 0;
    size_t rounds = 0, max_rounds = 64 + size * 2;
    for (size_t off = 0; off < size && rc == 2 && !eof;) {
        size_t n = cut && size - off > cut ? cut : size - off;
        ssize_t w = send(sv[1], b + off, n, MSG_NOSIGNAL);
        if (w > 0) off += (size_t)w;
        else if (w < 0 && errno != EAGAIN) break; /* the server closed it */
        rc = view_http_round(s, -1, 0);
        eof = drain(sv[1], &out, &olen, &ocap);
        if (++rounds > max_rounds) __builtin_trap(); /* nothing read: a hang */
    }
    shutdown(sv[1], SHUT_WR);
    while (rc == 2 && view_http_nconns(s)) {
        rc = view_http_round(s, -1, 0);
        drain(sv[1], &out, &olen, &ocap);
        if (++rounds > max_rounds) __builtin_trap(); /* never closed: a hang */
    }
    if (rc < 0) abort();
    drain(sv[1], &out, &olen, &ocap);
    check_answers(out, olen);
    free(out);
    free(b);
    close(sv[1]);
    view_http_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t cut = (size_t)data[0] * 13;
    data++;
    size--;
    /* a copy of exactly the input's size (ASan sees a read past it) */
    char *b = malloc(size ? size : 1);
    if (!b) abort();
    memcpy(b, data, size);
    put_port(b, size, PORT);
    fuzz_decide(b, size);
    free(b);
    fuzz_conn(data, size, cut);
    return 0;
}
