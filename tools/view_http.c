/*
 * view_http.c -- the HTTP/1.1 server of `spanscope view` (see view_http.h
 * for what it checks and in which order).
 *
 * One thread, one poll() over the listening socket, the caller's stop
 * descriptor and every connection.  Sockets are non-blocking, so a client
 * that sends or reads slowly only holds its own connection: each has its
 * own input buffer (at most a request head and body), its own answer
 * (head and body, written as the socket takes them) and time limits (a
 * request must arrive whole within VIEW_HTTP_REQUEST_MS, an answer must
 * be taken with no pause longer than VIEW_HTTP_WRITE_MS, a kept-alive
 * connection lives VIEW_HTTP_IDLE_MS without a request).  With
 * VIEW_HTTP_MAX_CONNS open, a new one closes the one idle longest.  One
 * request at a time per connection: pipelined ones wait in the buffer
 * until the answer before them is written, and each connection gets one
 * answer per round of the loop, so that one client's many requests do
 * not starve the others.
 */
#include "view_http.h"
#include "view_http_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The page's Content-Security-Policy: nothing from the network (not even
 * from this server but its API fetches), inline script and style only,
 * images only from data: and blob: URLs, never framed. */
static const char page_csp[] =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data: blob:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";
/* Every other answer's: data, never a document that runs anything. */
static const char data_csp[] = "default-src 'none'; frame-ancestors 'none'";

#define IN_CAP (VIEW_HTTP_MAX_HEAD + VIEW_HTTP_MAX_BODY)

/* One connection. */
typedef struct conn {
    int fd;
    char *in; /* IN_CAP bytes: what arrived and is not yet answered */
    size_t in_len;
    char head[1024]; /* the answer's status line and headers */
    size_t head_len;
    const char *body; /* the answer's body: the page, or owned */
    char *body_owned;
    size_t body_len;
    size_t sent;         /* bytes of head, then body, written */
    int writing;         /* an answer is being written */
    int close_after;     /* close once it is written */
    int quit_after;      /* stop the server once it is written */
    int draining;        /* answered and closing: what still comes is read and dropped */
    long long last_ms;   /* the last progress (a byte either way) */
    long long req_ms;    /* when the first byte of the pending request came */
} conn_t;

struct view_http {
    int lfd;
    unsigned short port;
    char *token;
    const unsigned char *page;
    size_t page_len;
    view_http_api_fn api;
    void *api_ctx;
    conn_t conns[VIEW_HTTP_MAX_CONNS];
    size_t nconns;
    int quit;                 /* POST /api/quit was answered */
    long long accept_pause;   /* out of descriptors: accept again after this */
    view_http_req_t req;      /* the request being answered (one thread) */
};

/* A monotonic clock in milliseconds. */
static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int view_http_token(char *hex) {
    unsigned char r[VIEW_HTTP_TOKEN_HEX / 2];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = getrandom(r + got, sizeof r - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    if (got < sizeof r) { /* no getrandom (old kernel, seccomp) */
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -1;
        for (got = 0; got < sizeof r;) {
            ssize_t n = read(fd, r + got, sizeof r - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                close(fd);
                if (n == 0) errno = EIO;
                return -1;
            }
            got += (size_t)n;
        }
        close(fd);
    }
    for (size_t i = 0; i < sizeof r; i++) {
        hex[2 * i] = "0123456789abcdef"[r[i] >> 4];
        hex[2 * i + 1] = "0123456789abcdef"[r[i] & 15];
    }
    hex[VIEW_HTTP_TOKEN_HEX] = 0;
    return 0;
}

int view_http_open(view_http_t **out, unsigned short port, const view_http_conf_t *conf) {
    if (!conf->token || !conf->token[0]) { /* an empty token would let anyone in */
        errno = EINVAL;
        return -1;
    }
    view_http_t *s = calloc(1, sizeof *s);
    if (!s || !(s->token = strdup(conf->token))) {
        free(s);
        errno = ENOMEM;
        return -1;
    }
    s->page = conf->page;
    s->page_len = conf->page_len;
    s->api = conf->api;
    s->api_ctx = conf->api_ctx;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    if (s->lfd < 0 || setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(s->lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(s->lfd, 64) < 0 ||
        getsockname(s->lfd, (struct sockaddr *)&a, &alen) < 0) {
        int e = errno;
        if (s->lfd >= 0) close(s->lfd);
        free(s->token);
        free(s);
        errno = e;
        return -1;
    }
    s->port = ntohs(a.sin_port);
    *out = s;
    return 0;
}

unsigned short view_http_port(const view_http_t *s) { return s->port; }

/* Closes connection i (the last one takes its place). */
static void conn_drop(view_http_t *s, size_t i) {
    conn_t *c = &s->conns[i];
    if (c->quit_after) s->quit = 1; /* answered, or as good as: its client went */
    close(c->fd);
    free(c->in);
    free(c->body_owned);
    s->conns[i] = s->conns[--s->nconns];
    memset(&s->conns[s->nconns], 0, sizeof s->conns[s->nconns]);
}

/* The reason phrase of status. */
static const char *reason(int status) {
    switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return status < 400 ? "OK" : "Error";
    }
}

/* Queues the answer on c: status, ctype, the body (owned: taken over and
 * freed; else kept as is), the page's policy or the data's, an Allow
 * header when allow is set. */
static void answer(conn_t *c, int status, const char *ctype, const char *body, char *owned,
                   size_t len, int is_page, const char *allow) {
    int n = snprintf(c->head, sizeof c->head,
                     "HTTP/1.1 %d %s\r\n"
                     "Content-Type: %s\r\n"
                     "Content-Length: %zu\r\n"
                     "Cache-Control: no-store\r\n"
                     "X-Content-Type-Options: nosniff\r\n"
                     "Referrer-Policy: no-referrer\r\n"
                     "X-Frame-Options: DENY\r\n"
                     "Cross-Origin-Resource-Policy: same-origin\r\n"
                     "Content-Security-Policy: %s\r\n"
                     "%s%s%s"
                     "Connection: %s\r\n\r\n",
                     status, reason(status), ctype, len, is_page ? page_csp : data_csp,
                     allow ? "Allow: " : "", allow ? allow : "", allow ? "\r\n" : "",
                     c->close_after ? "close" : "keep-alive");
    c->head_len = n > 0 && (size_t)n < sizeof c->head ? (size_t)n : 0;
    c->body = owned ? owned : body;
    c->body_owned = owned;
    c->body_len = len;
    c->sent = 0;
    c->writing = 1;
    c->last_ms = now_ms(); /* the write limit counts from here */
}

/* Queues an error answer {"error":"msg"} (msg: a plain literal) and, when
 * fatal, closes the connection after it. */
static void answer_error(conn_t *c, int status, const char *msg, int fatal,
                         const char *allow) {
    char buf[256];
    int n = snprintf(buf, sizeof buf, "{\"error\":\"%s\"}", msg);
    char *body = malloc((size_t)n + 1);
    if (fatal) c->close_after = 1;
    if (body) memcpy(body, buf, (size_t)n + 1);
    answer(c, status, "application/json", NULL, body, body ? (size_t)n : 0, 0, allow);
}

int view_http_token_eq(const char *a, size_t len, const char *secret, size_t slen) {
    volatile unsigned char d = (unsigned char)(len != slen);
    for (size_t i = 0; i < slen; i++) d |= (unsigned char)((i < len ? a[i] : 0) ^ secret[i]);
    return d == 0;
}

/* Whether the len bytes at v equal the string s, ignoring case. */
static int value_is(const char *v, size_t len, const char *s) {
    return v && strlen(s) == len && strncasecmp(v, s, len) == 0;
}

/* The parts of a request's head that matter here. */
typedef struct request {
    const char *method, *target, *host, *origin, *token;
    size_t method_len, target_len, host_len, origin_len, token_len;
    int nhost, norigin, ntoken, nlength;
    size_t content_length;
    int keep_alive;
} request_t;

/* Whether c is a token character of RFC 9110 (method and header names). */
static int tchar(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Parses the head (len bytes, ending in the blank line's CRLF CRLF) into
 * r.  Returns 0, or the status to answer (400, 413) with *msg set. */
static int parse_head(const char *h, size_t len, request_t *r, const char **msg) {
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)h[i];
        if ((ch < 0x20 && ch != '\r' && ch != '\n' && ch != '\t') || ch == 0x7f) {
            *msg = "control character in the request head";
            return 400;
        }
    }
    const char *end = h + len, *eol = memchr(h, '\r', len);
    if (!eol || eol + 1 >= end || eol[1] != '\n') goto bad_line;
    /* METHOD SP TARGET SP HTTP/1.x */
    const char *p = h, *sp = memchr(p, ' ', (size_t)(eol - p));
    if (!sp || sp == p) goto bad_line;
    for (const char *q = p; q < sp; q++)
        if (!tchar((unsigned char)*q)) goto bad_line;
    r->method = p;
    r->method_len = (size_t)(sp - p);
    p = sp + 1;
    if (!(sp = memchr(p, ' ', (size_t)(eol - p))) || sp == p) goto bad_line;
    r->target = p;
    r->target_len = (size_t)(sp - p);
    for (const char *q = p; q < sp; q++)
        if ((unsigned char)*q <= ' ' || (unsigned char)*q >= 0x7f) goto bad_line;
    p = sp + 1;
    if (eol - p != 8 || memcmp(p, "HTTP/1.", 7) || (p[7] != '0' && p[7] != '1')) {
        *msg = "only HTTP/1.0 and HTTP/1.1 are spoken here";
        return 400;
    }
    r->keep_alive = p[7] == '1';
    /* the headers, one per CRLF-ended line, up to the empty one */
    for (p = eol + 2; p < end;) {
        eol = memchr(p, '\r', (size_t)(end - p));
        if (!eol || eol + 1 >= end || eol[1] != '\n' || memchr(p, '\n', (size_t)(eol - p))) {
            *msg = "bare line feed in the request head";
            return 400;
        }
        if (eol == p) break; /* the blank line */
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        if (!colon || colon == p) {
            *msg = "malformed header line";
            return 400;
        }
        for (const char *q = p; q < colon; q++)
            if (!tchar((unsigned char)*q)) {
                *msg = "malformed header name";
                return 400;
            }
        size_t nlen = (size_t)(colon - p);
        const char *v = colon + 1, *ve = eol;
        while (v < ve && (*v == ' ' || *v == '\t')) v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
        size_t vlen = (size_t)(ve - v);
        if (nlen == 4 && !strncasecmp(p, "host", 4)) {
            r->host = v, r->host_len = vlen, r->nhost++;
        } else if (nlen == 6 && !strncasecmp(p, "origin", 6)) {
            r->origin = v, r->origin_len = vlen, r->norigin++;
        } else if (nlen == 17 && !strncasecmp(p, "x-spanscope-token", 17)) {
            r->token = v, r->token_len = vlen, r->ntoken++;
        } else if (nlen == 14 && !strncasecmp(p, "content-length", 14)) {
            size_t n = 0;
            if (!vlen || r->nlength++) {
                *msg = "bad or repeated Content-Length";
                return 400;
            }
            for (const char *q = v; q < ve; q++) {
                if (*q < '0' || *q > '9') {
                    *msg = "bad Content-Length";
                    return 400;
                }
                /* past the limit: still every character checked, the
                 * value no longer grows (no overflow) */
                if (n <= VIEW_HTTP_MAX_BODY) n = n * 10 + (size_t)(*q - '0');
            }
            if (n > VIEW_HTTP_MAX_BODY) {
                *msg = "request body too large";
                return 413;
            }
            r->content_length = n;
        } else if (nlen == 17 && !strncasecmp(p, "transfer-encoding", 17)) {
            *msg = "Transfer-Encoding is not supported: send a Content-Length";
            return 400;
        } else if (nlen == 10 && !strncasecmp(p, "connection", 10)) {
            /* a list: "close" or "keep-alive" among its items */
            for (const char *q = v; q < ve;) {
                const char *comma = memchr(q, ',', (size_t)(ve - q));
                const char *ie = comma ? comma : ve, *is = q;
                while (is < ie && (*is == ' ' || *is == '\t')) is++;
                while (ie > is && (ie[-1] == ' ' || ie[-1] == '\t')) ie--;
                if (value_is(is, (size_t)(ie - is), "close")) r->keep_alive = 0;
                else if (value_is(is, (size_t)(ie - is), "keep-alive")) r->keep_alive = 1;
                q = comma ? comma + 1 : ve;
            }
        }
        p = eol + 2;
    }
    if (r->nhost > 1 || r->norigin > 1 || r->ntoken > 1) {
        *msg = "repeated Host, Origin or X-Spanscope-Token header";
        return 400;
    }
    return 0;
bad_line:
    *msg = "malformed request line";
    return 400;
}

/* Splits the query q (qlen bytes, not NUL-terminated) into the first
 * token parameter's value (*tok, *tok_len; NULL when none) and the rest,
 * written NUL-terminated to rest (room for qlen + 1). */
static void split_token(const char *q, size_t qlen, const char **tok, size_t *tok_len,
                        char *rest) {
    size_t o = 0;
    *tok = NULL;
    *tok_len = 0;
    for (size_t i = 0; i < qlen;) {
        const char *amp = memchr(q + i, '&', qlen - i);
        size_t e = amp ? (size_t)(amp - q) : qlen;
        if (e - i >= 6 && !memcmp(q + i, "token=", 6)) {
            if (!*tok) {
                *tok = q + i + 6;
                *tok_len = e - i - 6;
            }
        } else if (e > i) {
            if (o) rest[o++] = '&';
            memcpy(rest + o, q + i, e - i);
            o += e - i;
        }
        i = e + 1;
    }
    rest[o] = 0;
}

/* Sets q to the error status (msg, Allow header allow), closing the
 * connection when fatal; returns VIEW_HTTP_ERROR. */
static int decided_error(view_http_req_t *q, int status, const char *msg, int fatal,
                         const char *allow) {
    q->status = status;
    q->msg = msg;
    q->allow = allow;
    if (fatal) q->close = 1;
    return VIEW_HTTP_ERROR;
}

int view_http_decide(const char *in, size_t len, unsigned short port, const char *token,
                     view_http_req_t *q) {
    q->status = 0;
    q->msg = q->allow = q->method = NULL;
    q->path = q->query = NULL;
    q->close = 1;
    q->used = 0;
    size_t scan = len < VIEW_HTTP_MAX_HEAD ? len : VIEW_HTTP_MAX_HEAD;
    const char *blank = memmem(in, scan, "\r\n\r\n", 4);
    if (!blank)
        return len >= VIEW_HTTP_MAX_HEAD
                   ? decided_error(q, 413, "request head too large", 1, NULL)
                   : VIEW_HTTP_MORE;
    size_t head_len = (size_t)(blank - in) + 4;
    request_t r;
    const char *msg = NULL;
    int st = parse_head(in, head_len, &r, &msg);
    if (st) return decided_error(q, st, msg, 1, NULL);
    if (len - head_len < r.content_length) return VIEW_HTTP_MORE; /* the body is on its way */
    q->used = head_len + r.content_length;
    q->close = !r.keep_alive;
    /* who asks: this machine's browser on this port, with the token */
    char host_ip[32], host_name[32], origin_ip[40], origin_name[40];
    snprintf(host_ip, sizeof host_ip, "127.0.0.1:%u", port);
    snprintf(host_name, sizeof host_name, "localhost:%u", port);
    snprintf(origin_ip, sizeof origin_ip, "http://127.0.0.1:%u", port);
    snprintf(origin_name, sizeof origin_name, "http://localhost:%u", port);
    if (!r.host || (!value_is(r.host, r.host_len, host_ip) &&
                    !value_is(r.host, r.host_len, host_name)))
        return decided_error(q, 403, "forbidden: the Host header must be 127.0.0.1:PORT or "
                                     "localhost:PORT", 1, NULL);
    if (r.origin && !value_is(r.origin, r.origin_len, origin_ip) &&
        !value_is(r.origin, r.origin_len, origin_name))
        return decided_error(q, 403, "forbidden: a foreign Origin", 1, NULL);
    /* path and query (without the token) into q->buf: the target is
     * shorter than the head, so both fit */
    const char *qmark = memchr(r.target, '?', r.target_len);
    size_t plen = qmark ? (size_t)(qmark - r.target) : r.target_len;
    size_t qlen = qmark ? r.target_len - plen - 1 : 0;
    char *path = q->buf, *query = q->buf + plen + 1;
    memcpy(path, r.target, plen);
    path[plen] = 0;
    const char *qtok;
    size_t qtok_len;
    split_token(qmark ? qmark + 1 : "", qlen, &qtok, &qtok_len, query);
    const char *tok = r.token ? r.token : qtok;
    size_t tok_len = r.token ? r.token_len : qtok_len;
    int is_get = r.method_len == 3 && !memcmp(r.method, "GET", 3);
    int is_post = r.method_len == 4 && !memcmp(r.method, "POST", 4);
    if (!tok || !view_http_token_eq(tok, tok_len, token, strlen(token)))
        return decided_error(q, 403, "forbidden: this needs the token of the URL spanscope "
                                     "view printed", 1, NULL);
    if (path[0] != '/')
        return decided_error(q, 400, "the request target must be a path", 1, NULL);
    if (!is_get && !is_post)
        return decided_error(q, 405, "method not allowed", 0,
                             !strcmp(path, "/api/quit") ? "POST"
                             : !strcmp(path, "/")       ? "GET"
                                                        : "GET, POST");
    if (!strcmp(path, "/")) {
        if (!is_get) return decided_error(q, 405, "method not allowed", 0, "GET");
        q->status = 200;
        return VIEW_HTTP_PAGE;
    }
    if (!strcmp(path, "/api/quit")) {
        if (!is_post) return decided_error(q, 405, "method not allowed", 0, "POST");
        q->status = 200;
        q->close = 1;
        return VIEW_HTTP_QUIT;
    }
    if (!strncmp(path, "/api/", 5)) {
        q->method = is_get ? "GET" : "POST";
        q->path = path;
        q->query = query[0] ? query : NULL;
        return VIEW_HTTP_API;
    }
    return decided_error(q, 404, "not found", 0, NULL);
}

/* Answers the request at the start of c->in if it arrived whole. */
static void take_request(view_http_t *s, conn_t *c) {
    if (c->writing || !c->in_len) return;
    view_http_req_t *q = &s->req;
    int route = view_http_decide(c->in, c->in_len, s->port, s->token, q);
    if (route == VIEW_HTTP_MORE) return;
    c->close_after = q->close;
    if (route == VIEW_HTTP_PAGE) {
        answer(c, 200, "text/html; charset=utf-8", (const char *)s->page, NULL, s->page_len, 1,
               NULL);
    } else if (route == VIEW_HTTP_QUIT) {
        c->quit_after = 1;
        char *body = strdup("{\"ok\":true}");
        answer(c, 200, "application/json", NULL, body, body ? strlen(body) : 0, 0, NULL);
    } else if (route == VIEW_HTTP_API && s->api) {
        char *body = NULL;
        size_t len = 0;
        const char *ctype = NULL;
        int st = s->api(s->api_ctx, q->method, q->path, q->query, &body, &len, &ctype);
        if (st < 100 || st > 599) st = 500;
        if (!body) len = 0;
        answer(c, st, ctype ? ctype : "application/octet-stream", NULL, body, len, 0, NULL);
    } else if (route == VIEW_HTTP_API) { /* no callback: nothing is under /api/ */
        answer_error(c, 404, "not found", 0, NULL);
    } else {
        answer_error(c, q->status, q->msg, q->close, q->allow);
    }
    if (!q->used) return; /* a bad head: the connection closes after the answer */
    memmove(c->in, c->in + q->used, c->in_len - q->used);
    c->in_len -= q->used;
    c->req_ms = c->in_len ? now_ms() : 0;
}

/* Writes what c's socket takes of its answer.  Returns -1 when the
 * connection is to be closed, else 0. */
static int conn_write(conn_t *c) {
    while (c->writing) {
        struct iovec iov[2];
        int n = 0;
        size_t total = c->head_len + c->body_len;
        if (c->sent < c->head_len) {
            iov[n].iov_base = c->head + c->sent;
            iov[n++].iov_len = c->head_len - c->sent;
        }
        size_t boff = c->sent > c->head_len ? c->sent - c->head_len : 0;
        if (boff < c->body_len) {
            iov[n].iov_base = (char *)c->body + boff;
            iov[n++].iov_len = c->body_len - boff;
        }
        if (n) {
            struct msghdr m;
            memset(&m, 0, sizeof m);
            m.msg_iov = iov;
            m.msg_iovlen = (size_t)n;
            ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
            if (w < 0) {
                if (errno == EINTR) continue;
                return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
            }
            c->sent += (size_t)w;
            c->last_ms = now_ms();
        }
        if (c->sent >= total) {
            free(c->body_owned);
            c->body_owned = NULL;
            c->body = NULL;
            c->writing = 0;
            if (c->quit_after) return -1;
            if (c->close_after) {
                /* a lingering close: closing with unread input would
                 * reset the connection, and the client might lose the
                 * answer (a 413 while it is still sending) */
                shutdown(c->fd, SHUT_WR);
                c->draining = 1;
                c->in_len = 0;
            }
            /* a pipelined request waits for the next round (fairness) */
            return 0;
        }
    }
    return 0;
}

/* Reads what arrived on c (one read: the others get their turn) and
 * answers the request if it is whole.  Returns -1 when the connection is
 * to be closed (the peer closed it, an error), else 0. */
static int conn_read(view_http_t *s, conn_t *c) {
    ssize_t n;
    if (c->draining) { /* read and dropped, until the client closes */
        do
            n = recv(c->fd, c->in, IN_CAP, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        return n == 0 ? -1 : 0;
    }
    if (c->writing || c->in_len >= IN_CAP) return 0;
    do
        n = recv(c->fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    if (n == 0) return -1;
    if (!c->in_len) c->req_ms = now_ms();
    c->in_len += (size_t)n;
    c->last_ms = now_ms();
    take_request(s, c);
    return c->writing ? conn_write(c) : 0;
}

/* Makes fd (connected, non-blocking) a connection of s; with
 * VIEW_HTTP_MAX_CONNS open, the one idle longest goes first.  Returns 0,
 * or -1 (fd closed) when no buffer could be had. */
static int conn_add(view_http_t *s, int fd) {
    if (s->nconns == VIEW_HTTP_MAX_CONNS) { /* full: the idlest one goes */
        size_t old = 0;
        for (size_t i = 1; i < s->nconns; i++)
            if (s->conns[i].last_ms < s->conns[old].last_ms) old = i;
        conn_drop(s, old);
    }
    conn_t *c = &s->conns[s->nconns];
    memset(c, 0, sizeof *c);
    if (!(c->in = malloc(IN_CAP))) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    c->last_ms = now_ms();
    s->nconns++;
    return 0;
}

int view_http_adopt(view_http_t *s, int fd) {
    if (conn_add(s, fd) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

size_t view_http_nconns(const view_http_t *s) { return s->nconns; }

/* Accepts the connections waiting on the listening socket. */
static void accept_all(view_http_t *s) {
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                s->accept_pause = now_ms() + 100; /* out of descriptors: a pause */
            return;
        }
        if (conn_add(s, fd) < 0) return;
    }
}

/* The moment connection c is closed for taking too long. */
static long long conn_deadline(const conn_t *c) {
    if (c->draining) return c->last_ms + VIEW_HTTP_LINGER_MS;
    if (c->writing) return c->last_ms + VIEW_HTTP_WRITE_MS;
    if (c->in_len) return c->req_ms + VIEW_HTTP_REQUEST_MS;
    return c->last_ms + VIEW_HTTP_IDLE_MS;
}

int view_http_round(view_http_t *s, int stop_fd, int max_ms) {
    struct pollfd fds[VIEW_HTTP_MAX_CONNS + 2];
    if (s->quit) return 1;
    long long now = now_ms(), next = now + 60000;
    /* close the connections past their time */
    for (size_t i = 0; i < s->nconns;) {
        long long d = conn_deadline(&s->conns[i]);
        if (d <= now) {
            conn_drop(s, i);
            continue;
        }
        if (d < next) next = d;
        i++;
    }
    if (s->quit) return 1;
    /* one waiting request per connection and round: a client that
     * pipelines many gets its answers one round at a time */
    for (size_t i = 0; i < s->nconns; i++)
        if (!s->conns[i].writing && s->conns[i].in_len) take_request(s, &s->conns[i]);
    nfds_t n = 0;
    int listening = now >= s->accept_pause;
    if (!listening && s->accept_pause < next) next = s->accept_pause;
    fds[n].fd = listening ? s->lfd : -1;
    fds[n++].events = POLLIN;
    fds[n].fd = stop_fd;
    fds[n++].events = POLLIN;
    for (size_t i = 0; i < s->nconns; i++) {
        fds[n].fd = s->conns[i].fd;
        fds[n].revents = 0;
        fds[n++].events = s->conns[i].writing ? POLLOUT : POLLIN;
    }
    long long wait = next - now + 1;
    if (max_ms >= 0 && wait > max_ms) wait = max_ms;
    int rc = poll(fds, n, (int)wait);
    if (rc < 0) return errno == EINTR ? 2 : -1;
    if (stop_fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) return 0;
    /* the connections, from the last (conn_drop moves the last into
     * a closed one's place: the ones before keep their slots) */
    for (size_t k = s->nconns; k-- > 0;) {
        short ev = fds[2 + k].revents;
        conn_t *c = &s->conns[k];
        if (!ev) continue;
        int drop = 0;
        if (ev & POLLNVAL) drop = 1;
        else if (c->writing && (ev & (POLLOUT | POLLERR | POLLHUP)))
            drop = conn_write(c) < 0;
        else if (!c->writing && (ev & (POLLIN | POLLERR | POLLHUP)))
            drop = conn_read(s, c) < 0;
        if (drop) conn_drop(s, k);
    }
    if (fds[0].revents & POLLIN) accept_all(s);
    return s->quit ? 1 : 2;
}

int view_http_serve(view_http_t *s, int stop_fd) {
    int rc;
    while ((rc = view_http_round(s, stop_fd, -1)) == 2) {
    }
    return rc;
}

void view_http_close(view_http_t *s) {
    if (!s) return;
    while (s->nconns) {
        s->conns[s->nconns - 1].quit_after = 0;
        conn_drop(s, s->nconns - 1);
    }
    close(s->lfd);
    free(s->token);
    free(s);
}
