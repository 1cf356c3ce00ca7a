/* view_http.h -- the HTTP/1.1 server of `spanscope view` (view_http.c).
 *
 * A small single-threaded server on the loopback interface: poll() over
 * non-blocking sockets, each connection with its own bounded buffers and
 * time limits, keep-alive, Content-Length bodies only.  It knows nothing
 * of profiles: it checks every request (the Host and Origin headers, the
 * token), serves the page it was given for GET /, stops on POST /api/quit
 * or when the stop descriptor becomes readable, and hands every other
 * /api/ request to a callback (cmd_view.c passes sps__view_handle's
 * answers through).  The rules, in the order they are checked:
 *
 *   - a request that does not parse, or whose head exceeds
 *     VIEW_HTTP_MAX_HEAD bytes or body VIEW_HTTP_MAX_BODY bytes: 400 / 413
 *     and the connection closes;
 *   - Host must be 127.0.0.1:PORT or localhost:PORT (no DNS rebinding),
 *     an Origin, when present, http://127.0.0.1:PORT or
 *     http://localhost:PORT, and the token must come as the header
 *     X-Spanscope-Token or the query parameter token (compared in constant
 *     time): else 403;
 *   - methods other than GET and POST: 405; GET / is the page, POST
 *     /api/quit stops the server, GET or POST /api/... the callback, any
 *     other path 404.
 *
 * Every answer carries Content-Length, Cache-Control: no-store and
 * X-Content-Type-Options: nosniff; the page a Content-Security-Policy that
 * allows no network but its own origin's fetches. *
 * The parsing and these checks are one function without I/O,
 * view_http_decide (view_http_int.h, for the tests and the fuzz target):
 * the server answers through it.
 */
#ifndef SPS_VIEW_HTTP_H
#define SPS_VIEW_HTTP_H

#include <stddef.h>

#define VIEW_HTTP_MAX_HEAD 16384      /* request line and headers, bytes */
#define VIEW_HTTP_MAX_BODY 65536      /* request body, bytes */
#define VIEW_HTTP_MAX_CONNS 64        /* open connections; the idlest goes */
#define VIEW_HTTP_IDLE_MS 30000       /* a kept-alive connection's idle limit */
#define VIEW_HTTP_REQUEST_MS 10000    /* the time to send one whole request */
#define VIEW_HTTP_WRITE_MS 30000      /* the limit on an answer's unread part */
#define VIEW_HTTP_LINGER_MS 2000      /* input read and dropped after a closing answer */
#define VIEW_HTTP_TOKEN_HEX 64        /* the token: 256 random bits in hex */

/* Answers one /api/ request (not /api/quit): method "GET" or "POST", path
 * the URL path, query the query string without its token parameter (NULL
 * when none is left).  Sets *body (malloc'd: the server frees it; NULL
 * with *len 0 for none), *len and *ctype (a static string) and returns the
 * HTTP status. */
typedef int (*view_http_api_fn)(void *ctx, const char *method, const char *path,
                                const char *query, char **body, size_t *len,
                                const char **ctype);

typedef struct view_http view_http_t;

/* What a server serves. */
typedef struct view_http_conf {
    const char *token;          /* the token (copied) */
    const unsigned char *page;  /* GET /: the page (kept, not copied) */
    size_t page_len;
    view_http_api_fn api;       /* the /api/ callback and its context */
    void *api_ctx;
} view_http_conf_t;

/* Fills hex (room for VIEW_HTTP_TOKEN_HEX + 1) with a fresh token: 256
 * bits of getrandom() (else /dev/urandom) in lowercase hex.  Returns 0, or
 * -1 with errno set when no randomness could be had. */
int view_http_token(char *hex);

/* Binds a server to 127.0.0.1:port (port 0: a free one) and starts
 * listening.  Returns 0 with *out set, or -1 with errno set (EADDRINUSE:
 * the port is taken; EINVAL: an empty token).  Nothing is served until
 * view_http_serve. */
int view_http_open(view_http_t **out, unsigned short port, const view_http_conf_t *conf);

/* The port s listens on. */
unsigned short view_http_port(const view_http_t *s);

/* Serves until POST /api/quit was answered (returns 1) or stop_fd (-1:
 * none) became readable (returns 0); -1 with errno set when poll fails.
 * Connections stay open (view_http_close closes them). */
int view_http_serve(view_http_t *s, int stop_fd);

/* Closes s's connections and socket and frees it (NULL is fine). */
void view_http_close(view_http_t *s);

#endif /* SPS_VIEW_HTTP_H */
