/* view_http_int.h -- the parts of the viewer's HTTP server (view_http.c)
 * that its tests and its fuzz target reach without a listening socket.
 * Not an interface for anything else: cmd_view.c uses view_http.h only.
 *
 *   - view_http_decide: what the server answers to the bytes a connection
 *     has received so far (the parsing and every check of view_http.h's
 *     rules, no I/O).  The server itself answers through it, so what the
 *     tests check is what the server does.
 *   - view_http_adopt and view_http_round: one connection that is not
 *     accepted from the listening socket (a socketpair's end) and one
 *     round of the server's poll loop, to drive the connection state
 *     machine (buffers, pipelining, lingering close) without a thread.
 */
#ifndef SPS_VIEW_HTTP_INT_H
#define SPS_VIEW_HTTP_INT_H

#include "view_http.h"

#include <stddef.h>

/* What view_http_decide found: the route of the request. */
enum view_http_route {
    VIEW_HTTP_MORE = 0, /* not all of the request has arrived: wait for more */
    VIEW_HTTP_ERROR,    /* answered by the server with an error: status, msg, allow */
    VIEW_HTTP_PAGE,     /* GET /: the page (status 200) */
    VIEW_HTTP_QUIT,     /* POST /api/quit: {"ok":true} (status 200), then stop */
    VIEW_HTTP_API       /* GET or POST /api/...: the callback (method, path, query) */
};

/* One decided request. */
typedef struct view_http_req {
    int status;         /* the status the server answers (200, 400, 403, 404, 405,
                           413); 0 for VIEW_HTTP_API (the callback's) and MORE */
    const char *msg;    /* VIEW_HTTP_ERROR: the error's text (a literal) */
    const char *allow;  /* 405: the Allow header's value; else NULL */
    int close;          /* the connection closes after the answer: an error that
                           ends it (400, 403, 413), HTTP/1.0 or Connection: close
                           without keep-alive, the quit */
    size_t used;        /* the bytes of the input the request takes (head and
                           body); 0 when the connection closes on a bad head */
    const char *method; /* VIEW_HTTP_API: "GET" or "POST" (static) */
    char *path;         /* VIEW_HTTP_API: the URL path, NUL-terminated (in buf) */
    char *query;        /* VIEW_HTTP_API: the query without its token parameters,
                           NUL-terminated (in buf); NULL when nothing is left */
    char buf[VIEW_HTTP_MAX_HEAD + 2]; /* room for path and query */
} view_http_req_t;

/* Decides the request at the start of in (len bytes: what a connection
 * has received and not yet had answered), as the server at 127.0.0.1:port
 * with the token `token` (NUL-terminated) would, in view_http.h's order:
 * no blank line in the first VIEW_HTTP_MAX_HEAD bytes: MORE, or 413 once
 * that many arrived; a head that does not parse (request line, HTTP
 * version, control characters, bare LF, header syntax including folded
 * lines, repeated Host/Origin/X-Spanscope-Token/Content-Length, a bad
 * Content-Length, any Transfer-Encoding): 400, a body over
 * VIEW_HTTP_MAX_BODY: 413; a body not yet all there: MORE; then Host,
 * Origin, the token (header first, else the first `token=` query
 * parameter, compared byte for byte in constant time, no percent-decoding):
 * 403; a target that is not a path: 400; a method other than GET and
 * POST: 405; the routes.  Fills *out and returns the route (enum
 * view_http_route).  Reads nothing outside in[0..len); no allocation. */
int view_http_decide(const char *in, size_t len, unsigned short port, const char *token,
                     view_http_req_t *out);

/* Whether the len bytes at a equal the slen bytes of secret, in a time that depends on slen only (never on where the
 * first difference is, nor on len). */
int view_http_token_eq(const char *a, size_t len, const char *secret, size_t slen);

/* Makes the connected, non-blocking stream socket fd one of s's
 * connections, as if accepted (s owns it from then on: view_http_close or
 * the connection's end closes it).  Returns 0, or -1 with errno ENOMEM. */
int view_http_adopt(view_http_t *s, int fd);

/* One round of view_http_serve's loop: closes the connections past their
 * time limits, answers one waiting request per connection, polls for at
 * most max_ms (-1: until the next time limit) and reads, writes and
 * accepts what is ready.  Returns 1 once POST /api/quit was answered, 0
 * when stop_fd became readable, -1 with errno set when poll failed, 2
 * otherwise (go on). */
int view_http_round(view_http_t *s, int stop_fd, int max_ms);

/* The number of connections s holds. */
size_t view_http_nconns(const view_http_t *s);

#endif /* SPS_VIEW_HTTP_INT_H */
