/* The viewer's HTTP server (tools/view_http.c).
 *
 * view_http_decide -- the parsing and every check, which the server answers
 * through -- over a table of requests: malformed request lines, versions,
 * control characters and NUL bytes, bare line feeds, folded headers,
 * repeated headers, Host (missing, wrong port, DNS-rebinding names),
 * Origin, the token (header or query, wrong, short, long, percent-encoded,
 * repeated), the head and body limits (413), Content-Length (bad,
 * negative, huge, repeated), Transfer-Encoding, methods (405 with Allow),
 * paths (404), keep-alive; then the connection state machine through a
 * socketpair and one poll round at a time (a request byte by byte, half a
 * request and a disconnect, pipelining, the connection limit), and the
 * whole server over a real loopback socket in a thread (the page,
 * pipelined keep-alive requests, a client that goes away mid-request, 403
 * and 413 closing the connection, POST /api/quit and the stop
 * descriptor). */
#include "testutil.h"
#include "view_http.h"
#include "view_http_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define PORT 8123
#define TOK "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define HOST "Host: 127.0.0.1:8123\r\n"
#define XTOK "X-Spanscope-Token: " TOK "\r\n"
#define OK_HEAD HOST XTOK "\r\n"

/* One case: the request (len 0: strlen), the route, the status, whether
 * the connection closes after it, a word of the error message. */
typedef struct dcase {
    const char *req;
    size_t len;
    int route, status, close;
    const char *msg;
} dcase_t;

#define E VIEW_HTTP_ERROR
#define MORE VIEW_HTTP_MORE
#define PAGE VIEW_HTTP_PAGE
#define QUIT VIEW_HTTP_QUIT
#define API VIEW_HTTP_API

static const dcase_t cases[] = {
    /* the good ones */
    {"GET / HTTP/1.1\r\n" OK_HEAD, 0, PAGE, 200, 0, NULL},
    {"GET /?token=" TOK " HTTP/1.1\r\n" HOST "\r\n", 0, PAGE, 200, 0, NULL},
    {"GET /api/meta HTTP/1.1\r\n" OK_HEAD, 0, API, 0, 0, NULL},
    {"POST /api/tiles HTTP/1.1\r\n" OK_HEAD, 0, API, 0, 0, NULL},
    {"POST /api/quit HTTP/1.1\r\n" OK_HEAD, 0, QUIT, 200, 1, NULL},
    {"GET / HTTP/1.1\r\nhOsT: LOCALHOST:8123\r\nx-spanscope-TOKEN:\t " TOK " \t\r\n\r\n", 0,
     PAGE, 200, 0, NULL},
    {"GET / HTTP/1.1\r\nHost: localhost:8123\r\nOrigin: http://localhost:8123\r\n" XTOK "\r\n",
     0, PAGE, 200, 0, NULL},
    {"GET / HTTP/1.1\r\n" HOST "Origin: http://127.0.0.1:8123\r\n" XTOK "\r\n", 0, PAGE, 200, 0,
     NULL},
    {"GET / HTTP/1.1\r\n" HOST "X-Other: a:b:c\r\nAccept:\r\n" XTOK "\r\n", 0, PAGE, 200, 0,
     NULL},
    /* not all there yet */
    {"", 0, MORE, 0, 1, NULL},
    {"GET / HTTP/1.1\r\n" HOST XTOK, 0, MORE, 0, 1, NULL},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 5\r\n\r\nabcd", 0, MORE, 0, 1, NULL},
    /* keep-alive and close */
    {"GET / HTTP/1.0\r\n" OK_HEAD, 0, PAGE, 200, 1, NULL},
    {"GET / HTTP/1.0\r\n" HOST XTOK "Connection: Keep-Alive\r\n\r\n", 0, PAGE, 200, 0, NULL},
    {"GET / HTTP/1.1\r\n" HOST XTOK "Connection: close\r\n\r\n", 0, PAGE, 200, 1, NULL},
    {"GET / HTTP/1.1\r\n" HOST XTOK "Connection: upgrade , CLOSE\r\n\r\n", 0, PAGE, 200, 1,
     NULL},
    {"GET /nope HTTP/1.1\r\n" OK_HEAD, 0, E, 404, 0, "not found"},
    {"GET /nope HTTP/1.0\r\n" OK_HEAD, 0, E, 404, 1, "not found"},
    /* malformed request lines and versions */
    {"GET /\r\n" OK_HEAD, 0, E, 400, 1, "request line"},
    {"GET  / HTTP/1.1\r\n" OK_HEAD, 0, E, 400, 1, "request line"},
    {" GET / HTTP/1.1\r\n" OK_HEAD, 0, E, 400, 1, "request line"},
    {"\r\nGET / HTTP/1.1\r\n" OK_HEAD, 0, E, 400, 1, "request line"},
    {"G@T / HTTP/1.1\r\n" OK_HEAD, 0, E, 400, 1, "request line"},
    {"GET / HTTP/1.1 \r\n" OK_HEAD, 0, E, 400, 1, "HTTP/1.0"},
    {"GET / HTTP/2.0\r\n" OK_HEAD, 0, E, 400, 1, "HTTP/1.0"},
    {"GET / HTTP/1.2\r\n" OK_HEAD, 0, E, 400, 1, "HTTP/1.0"},
    {"GET / http/1.1\r\n" OK_HEAD, 0, E, 400, 1, "HTTP/1.0"},
    {"GET / HTTP/1.1 extra\r\n" OK_HEAD, 0, E, 400, 1, "HTTP/1.0"},
    {"GET /\xc3\xa9 HTTP/1.1\r\n" OK_HEAD, 0, E, 400, 1, "request line"},
    {"GET /\x7f HTTP/1.1\r\n" OK_HEAD, 0, E, 400, 1, "control"},
    {"GET / HTTP/1.1\n" HOST XTOK "\r\n", 0, E, 400, 1, NULL},
    /* NUL bytes and other control characters anywhere in the head */
    {"GET /\0 HTTP/1.1\r\n" OK_HEAD, sizeof("GET /\0 HTTP/1.1\r\n" OK_HEAD) - 1, E, 400, 1,
     "control"},
    {"GET / HTTP/1.1\r\nHost: 127.0.0.1:8123\0evil\r\n" XTOK "\r\n",
     sizeof("GET / HTTP/1.1\r\nHost: 127.0.0.1:8123\0evil\r\n" XTOK "\r\n") - 1, E, 400, 1,
     "control"},
    {"GET / HTTP/1.1\r\n" HOST "X-Spanscope-Token: " TOK "\0\r\n\r\n",
     sizeof("GET / HTTP/1.1\r\n" HOST "X-Spanscope-Token: " TOK "\0\r\n\r\n") - 1, E, 400, 1,
     "control"},
    {"GET / HTTP/1.1\r\n" HOST "X-A: \x1b[31m\r\n" XTOK "\r\n", 0, E, 400, 1, "control"},
    /* header syntax: bare LF, folding, names */
    {"GET / HTTP/1.1\r\n" HOST "X-A: a\nX-B: b\r\n" XTOK "\r\n", 0, E, 400, 1, "line feed"},
    {"GET / HTTP/1.1\r\n" HOST "X-A: a\r\n folded\r\n" XTOK "\r\n", 0, E, 400, 1, "header"},
    {"GET / HTTP/1.1\r\n" HOST "X-A: a\r\n\tX-B: folded\r\n" XTOK "\r\n", 0, E, 400, 1,
     "header name"},
    {"GET / HTTP/1.1\r\nHost : 127.0.0.1:8123\r\n" XTOK "\r\n", 0, E, 400, 1, "header name"},
    {"GET / HTTP/1.1\r\n" HOST ": no name\r\n" XTOK "\r\n", 0, E, 400, 1, "header line"},
    {"GET / HTTP/1.1\r\n" HOST "no colon\r\n" XTOK "\r\n", 0, E, 400, 1, "header line"},
    {"GET / HTTP/1.1\r\n" HOST "X(A): 1\r\n" XTOK "\r\n", 0, E, 400, 1, "header name"},
    /* repeated headers */
    {"GET / HTTP/1.1\r\n" HOST HOST XTOK "\r\n", 0, E, 400, 1, "repeated"},
    {"GET / HTTP/1.1\r\n" HOST "Host: evil.example\r\n" XTOK "\r\n", 0, E, 400, 1, "repeated"},
    {"GET / HTTP/1.1\r\n" HOST "Origin: http://127.0.0.1:8123\r\nOrigin: http://127.0.0.1:8123"
     "\r\n" XTOK "\r\n", 0, E, 400, 1, "repeated"},
    {"GET / HTTP/1.1\r\n" HOST XTOK XTOK "\r\n", 0, E, 400, 1, "repeated"},
    /* Host: missing, wrong port, other names (DNS rebinding) */
    {"GET / HTTP/1.1\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost:\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: 127.0.0.1:8124\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: 127.0.0.1:08123\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: 127.0.0.1:81234\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: evil.example:8123\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: localhost.evil.example:8123\r\n" XTOK "\r\n", 0, E, 403, 1,
     "Host"},
    {"GET / HTTP/1.1\r\nHost: 127.0.0.1.nip.io:8123\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: [::1]:8123\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: 0.0.0.0:8123\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: 127.0.0.1:8123.\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    {"GET / HTTP/1.1\r\nHost: user@127.0.0.1:8123\r\n" XTOK "\r\n", 0, E, 403, 1, "Host"},
    /* the Host is checked before the token: no token, still the Host's 403 */
    {"GET / HTTP/1.1\r\nHost: evil.example:8123\r\n\r\n", 0, E, 403, 1, "Host"},
    /* Origin */
    {"GET / HTTP/1.1\r\n" HOST "Origin: http://evil.example\r\n" XTOK "\r\n", 0, E, 403, 1,
     "Origin"},
    {"GET / HTTP/1.1\r\n" HOST "Origin: null\r\n" XTOK "\r\n", 0, E, 403, 1, "Origin"},
    {"GET / HTTP/1.1\r\n" HOST "Origin: https://127.0.0.1:8123\r\n" XTOK "\r\n", 0, E, 403, 1,
     "Origin"},
    {"GET / HTTP/1.1\r\n" HOST "Origin: http://127.0.0.1:8124\r\n" XTOK "\r\n", 0, E, 403, 1,
     "Origin"},
    {"GET / HTTP/1.1\r\n" HOST "Origin: http://127.0.0.1:8123/\r\n" XTOK "\r\n", 0, E, 403, 1,
     "Origin"},
    {"GET / HTTP/1.1\r\n" HOST "Origin:\r\n" XTOK "\r\n", 0, E, 403, 1, "Origin"},
    {"GET / HTTP/1.1\r\n" HOST "Origin: http://127.0.0.1:8123\r\n\r\n", 0, E, 403, 1, "token"},
    /* the token */
    {"GET / HTTP/1.1\r\n" HOST "\r\n", 0, E, 403, 1, "token"},
    {"GET / HTTP/1.1\r\n" HOST "X-Spanscope-Token:\r\n\r\n", 0, E, 403, 1, "token"},
    {"GET /?token= HTTP/1.1\r\n" HOST "\r\n", 0, E, 403, 1, "token"},
    {"GET /?token HTTP/1.1\r\n" HOST "\r\n", 0, E, 403, 1, "token"},
    {"GET / HTTP/1.1\r\n" HOST
     "X-Spanscope-Token: 00112233445566778899aabbccddeeff00112233445566778899aabbccddeefe\r\n\r\n",
     0, E, 403, 1, "token"},
    {"GET / HTTP/1.1\r\n" HOST
     "X-Spanscope-Token: 10112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\r\n\r\n",
     0, E, 403, 1, "token"},
    {"GET / HTTP/1.1\r\n" HOST /* short: one digit less */
     "X-Spanscope-Token: 00112233445566778899aabbccddeeff00112233445566778899aabbccddeef\r\n\r\n",
     0, E, 403, 1, "token"},
    {"GET / HTTP/1.1\r\n" HOST /* long: one digit more */
     "X-Spanscope-Token: " TOK "0\r\n\r\n", 0, E, 403, 1, "token"},
    {"GET / HTTP/1.1\r\n" HOST /* upper case: bytes, not numbers */
     "X-Spanscope-Token: 00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF\r\n\r\n",
     0, E, 403, 1, "token"},
    {"GET /?Token=" TOK " HTTP/1.1\r\n" HOST "\r\n", 0, E, 403, 1, "token"},
    {"GET /?xtoken=" TOK " HTTP/1.1\r\n" HOST "\r\n", 0, E, 403, 1, "token"},
    {"GET /?token=" TOK "%00 HTTP/1.1\r\n" HOST "\r\n", 0, E, 403, 1, "token"},
    {"GET /?token=bad&token=" TOK " HTTP/1.1\r\n" HOST "\r\n", 0, E, 403, 1, "token"},
    {"GET /?token=" TOK "&token=bad HTTP/1.1\r\n" HOST "\r\n", 0, PAGE, 200, 0, NULL},
    {"GET /?a=1&token=" TOK "&b=2 HTTP/1.1\r\n" HOST "\r\n", 0, PAGE, 200, 0, NULL},
    /* the header wins over the query: a wrong header is refused */
    {"GET /?token=" TOK " HTTP/1.1\r\n" HOST "X-Spanscope-Token: bad\r\n\r\n", 0, E, 403, 1,
     "token"},
    {"GET /?token=bad HTTP/1.1\r\n" OK_HEAD, 0, PAGE, 200, 0, NULL},
    /* Content-Length and Transfer-Encoding */
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 5\r\n\r\nabcde", 0, API, 0, 0, NULL},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 0\r\n\r\n", 0, API, 0, 0, NULL},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 007\r\n\r\nabcdefg", 0, API, 0, 0,
     NULL},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: -1\r\n\r\n", 0, E, 400, 1,
     "Content-Length"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: +5\r\n\r\nabcde", 0, E, 400, 1,
     "Content-Length"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 0x10\r\n\r\n", 0, E, 400, 1,
     "Content-Length"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 1 2\r\n\r\n", 0, E, 400, 1,
     "Content-Length"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 5,5\r\n\r\nabcde", 0, E, 400, 1,
     "Content-Length"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length:\r\n\r\n", 0, E, 400, 1,
     "Content-Length"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 5\r\nContent-Length: 5\r\n\r\nabcde",
     0, E, 400, 1, "repeated"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 65537\r\n\r\n", 0, E, 413, 1,
     "too large"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 99999999999999999999999999999\r\n\r\n",
     0, E, 413, 1, "too large"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 18446744073709551617\r\n\r\n", 0, E,
     413, 1, "too large"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 999999999999x\r\n\r\n", 0, E, 400, 1,
     "Content-Length"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 65536\r\n\r\n", 0, MORE, 0, 1, NULL},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Transfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n"
     "\r\n", 0, E, 400, 1, "Transfer-Encoding"},
    {"POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
     "abcde", 0, E, 400, 1, "Transfer-Encoding"},
    {"GET / HTTP/1.1\r\n" HOST XTOK "transfer-encoding: identity\r\n\r\n", 0, E, 400, 1,
     "Transfer-Encoding"},
    /* methods */
    {"PUT / HTTP/1.1\r\n" OK_HEAD, 0, E, 405, 0, "method"},
    {"HEAD / HTTP/1.1\r\n" OK_HEAD, 0, E, 405, 0, "method"},
    {"OPTIONS / HTTP/1.1\r\n" OK_HEAD, 0, E, 405, 0, "method"},
    {"get / HTTP/1.1\r\n" OK_HEAD, 0, E, 405, 0, "method"},
    {"POST / HTTP/1.1\r\n" OK_HEAD, 0, E, 405, 0, "method"},
    {"GET /api/quit HTTP/1.1\r\n" OK_HEAD, 0, E, 405, 0, "method"},
    {"DELETE /api/quit HTTP/1.1\r\n" OK_HEAD, 0, E, 405, 0, "method"},
    {"PATCH /api/meta HTTP/1.1\r\n" OK_HEAD, 0, E, 405, 0, "method"},
    /* a method is refused only for someone with the token */
    {"PUT / HTTP/1.1\r\n" HOST "\r\n", 0, E, 403, 1, "token"},
    /* paths */
    {"GET /api HTTP/1.1\r\n" OK_HEAD, 0, E, 404, 0, "not found"},
    {"GET /index.html HTTP/1.1\r\n" OK_HEAD, 0, E, 404, 0, "not found"},
    {"GET //api/meta HTTP/1.1\r\n" OK_HEAD, 0, E, 404, 0, "not found"},
    {"GET /API/meta HTTP/1.1\r\n" OK_HEAD, 0, E, 404, 0, "not found"},
    {"POST /api/quit/ HTTP/1.1\r\n" OK_HEAD, 0, API, 0, 0, NULL},
    {"GET * HTTP/1.1\r\n" OK_HEAD, 0, E, 400, 1, "path"},
    {"GET http://127.0.0.1:8123/ HTTP/1.1\r\n" OK_HEAD, 0, E, 400, 1, "path"},
    {"GET ?token=" TOK " HTTP/1.1\r\n" HOST "\r\n", 0, E, 400, 1, "path"},
};

static void check_case(size_t i, const dcase_t *c) {
    static view_http_req_t q;
    size_t len = c->len ? c->len : strlen(c->req);
    /* a copy of exactly len bytes, no NUL after it: a read past the
     * request is a read past the block (ASan builds see it) */
    char *req = malloc(len ? len : 1);
    assert_non_null(req);
    memcpy(req, c->req, len);
    int route = view_http_decide(req, len, PORT, TOK, &q);
    free(req);
    if (route != c->route || q.status != c->status || q.close != c->close ||
        (c->msg && (!q.msg || !strstr(q.msg, c->msg)))) {
        fprintf(stderr, "case %zu: %.*s\n  route %d status %d close %d msg %s; expected %d %d %d %s\n",
                i, (int)len, c->req, route, q.status, q.close, q.msg ? q.msg : "(none)", c->route,
                c->status, c->close, c->msg ? c->msg : "(any)");
        fail();
    }
    /* what every route promises */
    if (route == VIEW_HTTP_ERROR) {
        assert_non_null(q.msg);
        assert_true(q.status == 400 || q.status == 403 || q.status == 404 || q.status == 405 ||
                    q.status == 413);
        assert_true((q.status == 405) == (q.allow != NULL));
    }
    if (route == VIEW_HTTP_MORE) assert_int_equal(q.used, 0);
    if (route == VIEW_HTTP_API) {
        assert_true(q.used > 0 && q.used <= len);
        assert_int_equal(strncmp(q.path, "/api/", 5), 0);
        assert_true(!strcmp(q.method, "GET") || !strcmp(q.method, "POST"));
    }
    if (route == VIEW_HTTP_PAGE || route == VIEW_HTTP_QUIT) assert_true(q.used == len);
}

static void test_decide_table(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(i, &cases[i]);
}

/* The token percent-encoded in the query is not decoded: refused. */
static void test_token_percent_encoded(void **state) {
    (void)state;
    static view_http_req_t q;
    char req[512];
    /* %30 is '0', the token's first digit; %61 is 'a' */
    snprintf(req, sizeof req, "GET /?token=%%30%s HTTP/1.1\r\n" HOST "\r\n", &TOK[1]);
    assert_int_equal(view_http_decide(req, strlen(req), PORT, TOK, &q), VIEW_HTTP_ERROR);
    assert_int_equal(q.status, 403);
    snprintf(req, sizeof req, "GET /?token%%3D%s HTTP/1.1\r\n" HOST "\r\n", TOK);
    assert_int_equal(view_http_decide(req, strlen(req), PORT, TOK, &q), VIEW_HTTP_ERROR);
    assert_int_equal(q.status, 403);
    /* and a header token is not decoded either */
    snprintf(req, sizeof req, "GET / HTTP/1.1\r\n" HOST "X-Spanscope-Token: %%30%s\r\n\r\n",
             &TOK[1]);
    assert_int_equal(view_http_decide(req, strlen(req), PORT, TOK, &q), VIEW_HTTP_ERROR);
    assert_int_equal(q.status, 403);
}

/* The API route's path and query: the token parameters taken out, the
 * rest kept in order; NULL when nothing is left; the body skipped. */
static void test_api_path_query(void **state) {
    (void)state;
    static view_http_req_t q;
    const char *r1 = "GET /api/tiles?t0=1&token=" TOK "&t1=2&px=800 HTTP/1.1\r\n" HOST "\r\n";
    assert_int_equal(view_http_decide(r1, strlen(r1), PORT, TOK, &q), VIEW_HTTP_API);
    assert_string_equal(q.method, "GET");
    assert_string_equal(q.path, "/api/tiles");
    assert_string_equal(q.query, "t0=1&t1=2&px=800");
    assert_int_equal(q.close, 0);
    const char *r2 = "GET /api/meta?token=" TOK " HTTP/1.1\r\n" HOST "\r\n";
    assert_int_equal(view_http_decide(r2, strlen(r2), PORT, TOK, &q), VIEW_HTTP_API);
    assert_string_equal(q.path, "/api/meta");
    assert_null(q.query);
    const char *r3 = "GET /api/meta?&&token=" TOK "&& HTTP/1.1\r\n" HOST "\r\n";
    assert_int_equal(view_http_decide(r3, strlen(r3), PORT, TOK, &q), VIEW_HTTP_API);
    assert_null(q.query);
    const char *r4 = "GET /api/search?q=a%26b&token=" TOK "&token=x HTTP/1.1\r\n" HOST "\r\n";
    assert_int_equal(view_http_decide(r4, strlen(r4), PORT, TOK, &q), VIEW_HTTP_API);
    assert_string_equal(q.query, "q=a%26b"); /* passed on raw: the API decodes */
    /* a body is skipped: used covers head and body, the next request follows */
    const char *r5 = "POST /api/x?k=v HTTP/1.1\r\n" HOST XTOK "Content-Length: 3\r\n\r\nabc"
                     "GET / HTTP/1.1\r\n";
    size_t head = strlen("POST /api/x?k=v HTTP/1.1\r\n" HOST XTOK "Content-Length: 3\r\n\r\n");
    assert_int_equal(view_http_decide(r5, strlen(r5), PORT, TOK, &q), VIEW_HTTP_API);
    assert_string_equal(q.method, "POST");
    assert_string_equal(q.query, "k=v");
    assert_int_equal(q.used, head + 3);
    /* the Allow header of each 405 */
    const char *r6 = "PUT /api/quit HTTP/1.1\r\n" OK_HEAD;
    assert_int_equal(view_http_decide(r6, strlen(r6), PORT, TOK, &q), VIEW_HTTP_ERROR);
    assert_string_equal(q.allow, "POST");
    const char *r7 = "PUT / HTTP/1.1\r\n" OK_HEAD;
    assert_int_equal(view_http_decide(r7, strlen(r7), PORT, TOK, &q), VIEW_HTTP_ERROR);
    assert_string_equal(q.allow, "GET");
    const char *r8 = "PUT /api/meta HTTP/1.1\r\n" OK_HEAD;
    assert_int_equal(view_http_decide(r8, strlen(r8), PORT, TOK, &q), VIEW_HTTP_ERROR);
    assert_string_equal(q.allow, "GET, POST");
    /* another port is another server */
    const char *r9 = "GET / HTTP/1.1\r\n" OK_HEAD;
    assert_int_equal(view_http_decide(r9, strlen(r9), 8124, TOK, &q), VIEW_HTTP_ERROR);
    assert_int_equal(q.status, 403);
    assert_int_equal(view_http_decide(r9, strlen(r9), PORT, TOK, &q), VIEW_HTTP_PAGE);
    /* a pipelined request after a whole one is not looked at yet */
    char two[512];
    snprintf(two, sizeof two, "%s%s", r9, "garbage\r\n\r\n");
    assert_int_equal(view_http_decide(two, strlen(two), PORT, TOK, &q), VIEW_HTTP_PAGE);
    assert_int_equal(q.used, strlen(r9));
}

/* The head limit: no blank line in VIEW_HTTP_MAX_HEAD bytes is 413 once
 * that many arrived, not before; a head of exactly the limit is read. */
static void test_head_limit(void **state) {
    (void)state;
    static view_http_req_t q;
    size_t cap = VIEW_HTTP_MAX_HEAD + 64;
    char *b = malloc(cap);
    assert_non_null(b);
    const char *start = "GET / HTTP/1.1\r\n" HOST XTOK "X-Pad: ";
    size_t sl = strlen(start);
    /* exactly VIEW_HTTP_MAX_HEAD bytes, ending in the blank line */
    memcpy(b, start, sl);
    memset(b + sl, 'p', VIEW_HTTP_MAX_HEAD - sl - 4);
    memcpy(b + VIEW_HTTP_MAX_HEAD - 4, "\r\n\r\n", 4);
    assert_int_equal(view_http_decide(b, VIEW_HTTP_MAX_HEAD, PORT, TOK, &q), VIEW_HTTP_PAGE);
    /* one byte more of padding: the blank line ends past the limit */
    memset(b + sl, 'p', VIEW_HTTP_MAX_HEAD - sl - 3);
    memcpy(b + VIEW_HTTP_MAX_HEAD - 3, "\r\n\r\n", 4);
    assert_int_equal(view_http_decide(b, VIEW_HTTP_MAX_HEAD + 1, PORT, TOK, &q), VIEW_HTTP_ERROR);
    assert_int_equal(q.status, 413);
    assert_int_equal(q.close, 1);
    /* no blank line: wait below the limit, 413 at it */
    memset(b + sl, 'p', cap - sl);
    assert_int_equal(view_http_decide(b, VIEW_HTTP_MAX_HEAD - 1, PORT, TOK, &q), VIEW_HTTP_MORE);
    assert_int_equal(view_http_decide(b, VIEW_HTTP_MAX_HEAD, PORT, TOK, &q), VIEW_HTTP_ERROR);
    assert_int_equal(q.status, 413);
    assert_non_null(strstr(q.msg, "head too large"));
    assert_int_equal(view_http_decide(b, cap, PORT, TOK, &q), VIEW_HTTP_ERROR);
    /* a body of exactly VIEW_HTTP_MAX_BODY bytes is taken */
    const char *h = "POST /api/x HTTP/1.1\r\n" HOST XTOK "Content-Length: 65536\r\n\r\n";
    size_t hl = strlen(h), n = hl + VIEW_HTTP_MAX_BODY;
    char *big = malloc(n);
    assert_non_null(big);
    memcpy(big, h, hl);
    memset(big + hl, 'x', VIEW_HTTP_MAX_BODY);
    assert_int_equal(view_http_decide(big, n - 1, PORT, TOK, &q), VIEW_HTTP_MORE);
    assert_int_equal(view_http_decide(big, n, PORT, TOK, &q), VIEW_HTTP_API);
    assert_int_equal(q.used, n);
    free(big);
    free(b);
}

/* The comparison: equal only for the same bytes and length. */
static void test_token_eq(void **state) {
    (void)state;
    const char *s = TOK;
    size_t sl = strlen(s);
    assert_true(view_http_token_eq(s, sl, s, sl));
    char t[80];
    memcpy(t, s, sl + 1);
    for (size_t i = 0; i < sl; i += 7) {
        t[i] ^= 1;
        assert_false(view_http_token_eq(t, sl, s, sl));
        t[i] ^= 1;
    }
    assert_false(view_http_token_eq(s, sl - 1, s, sl));
    assert_false(view_http_token_eq(s, 0, s, sl));
    t[sl] = 'x';
    assert_false(view_http_token_eq(t, sl + 1, s, sl));
    /* a prefix of the secret followed by NULs is not the secret */
    char z[80] = {0};
    memcpy(z, s, 10);
    assert_false(view_http_token_eq(z, sl, s, sl));
    assert_true(view_http_token_eq("", 0, "", 0));
}

/* ---- the connection state machine, one poll round at a time ---- */

static const char page[] = "<!doctype html><title>page</title>";

/* The API callback: echoes "METHOD PATH QUERY"; /api/missing is a 404. */
static int echo_api(void *ctx, const char *method, const char *path, const char *query,
                    char **body, size_t *len, const char **ctype) {
    int *calls = ctx;
    if (calls) (*calls)++;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "%s %s %s", method, path, query ? query : "-");
    *body = strdup(buf);
    *len = *body ? (size_t)n : 0;
    *ctype = "text/plain";
    return strcmp(path, "/api/missing") ? 200 : 404;
}

/* Reads what is there on fd (non-blocking) and appends it to buf (cap
 * bytes, *len so far).  Returns 1 at end of stream, else 0. */
static int drain(int fd, char *buf, size_t cap, size_t *len) {
    for (;;) {
        if (*len + 1 >= cap) return 0;
        ssize_t n = recv(fd, buf + *len, cap - 1 - *len, MSG_DONTWAIT);
        if (n > 0) {
            *len += (size_t)n;
            buf[*len] = 0;
            continue;
        }
        return n == 0;
    }
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static view_http_t *open_server(int *calls) {
    view_http_conf_t conf = {TOK, (const unsigned char *)page, sizeof page - 1, echo_api, calls};
    view_http_t *s = NULL;
    assert_int_equal(view_http_open(&s, 0, &conf), 0);
    return s;
}

/* Host header for server s. */
static const char *host_of(view_http_t *s) {
    static char h[64];
    snprintf(h, sizeof h, "Host: 127.0.0.1:%u\r\n", view_http_port(s));
    return h;
}

/* A request byte by byte: nothing is answered before the last byte. */
static void test_conn_byte_by_byte(void **state) {
    (void)state;
    int calls = 0;
    view_http_t *s = open_server(&calls);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    assert_int_equal(view_http_adopt(s, sv[0]), 0);
    char req[512], out[4096];
    size_t olen = 0;
    snprintf(req, sizeof req, "GET /api/meta?x=1 HTTP/1.1\r\n%s" XTOK "\r\n", host_of(s));
    size_t rl = strlen(req);
    for (size_t i = 0; i < rl; i++) {
        assert_int_equal(send(sv[1], req + i, 1, 0), 1);
        assert_int_equal(view_http_round(s, -1, 0), 2);
        assert_int_equal(drain(sv[1], out, sizeof out, &olen), 0);
        if (i + 1 < rl) assert_int_equal(olen, 0);
    }
    for (int k = 0; k < 4 && !strstr(out, "GET /api/meta x=1"); k++) {
        view_http_round(s, -1, 10);
        drain(sv[1], out, sizeof out, &olen);
    }
    assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(out, "Connection: keep-alive\r\n"));
    assert_non_null(strstr(out, "\r\n\r\nGET /api/meta x=1"));
    assert_int_equal(calls, 1);
    assert_int_equal(view_http_nconns(s), 1);
    close(sv[1]);
    for (int k = 0; k < 4 && view_http_nconns(s); k++) view_http_round(s, -1, 10);
    assert_int_equal(view_http_nconns(s), 0);
    view_http_close(s);
}

/* Half a request, then the client goes: the connection is closed, the
 * callback never called. */
static void test_conn_half_request(void **state) {
    (void)state;
    int calls = 0;
    view_http_t *s = open_server(&calls);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    assert_int_equal(view_http_adopt(s, sv[0]), 0);
    const char *half = "POST /api/x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Le";
    assert_int_equal(send(sv[1], half, strlen(half), 0), (ssize_t)strlen(half));
    view_http_round(s, -1, 10);
    assert_int_equal(view_http_nconns(s), 1);
    close(sv[1]);
    for (int k = 0; k < 4 && view_http_nconns(s); k++) view_http_round(s, -1, 10);
    assert_int_equal(view_http_nconns(s), 0);
    assert_int_equal(calls, 0);
    view_http_close(s);
}

/* Pipelined requests in one write: answered in order, one per round, the
 * connection kept; a 403 among them answers and closes, what follows is
 * dropped. */
static void test_conn_pipelined(void **state) {
    (void)state;
    int calls = 0;
    view_http_t *s = open_server(&calls);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    assert_int_equal(view_http_adopt(s, sv[0]), 0);
    char req[2048], out[16384];
    size_t olen = 0;
    const char *h = host_of(s);
    snprintf(req, sizeof req,
             "GET /api/a?n=1 HTTP/1.1\r\n%s" XTOK "\r\n"
             "POST /api/b HTTP/1.1\r\n%s" XTOK "Content-Length: 4\r\n\r\nbody"
             "GET /api/missing HTTP/1.1\r\n%s" XTOK "\r\n"
             "GET /?token=" TOK " HTTP/1.1\r\n%s\r\n"
             "GET /api/c HTTP/1.1\r\n%s\r\n" /* no token: 403, closes */
             "GET /api/d HTTP/1.1\r\n%s" XTOK "\r\n",
             h, h, h, h, h, h);
    assert_int_equal(send(sv[1], req, strlen(req), 0), (ssize_t)strlen(req));
    int eof = 0;
    for (int k = 0; k < 40 && !eof; k++) {
        int rc = view_http_round(s, -1, 10);
        assert_int_equal(rc, 2);
        eof = drain(sv[1], out, sizeof out, &olen);
        if (count(out, "HTTP/1.1 403") == 1) shutdown(sv[1], SHUT_WR); /* let it close */
    }
    assert_true(eof);
    assert_int_equal(count(out, "HTTP/1.1 "), 5);
    const char *a = strstr(out, "GET /api/a n=1"), *b = strstr(out, "POST /api/b -"),
               *m = strstr(out, "404 Not Found"), *p = strstr(out, page),
               *f = strstr(out, "403 Forbidden");
    assert_true(a && b && m && p && f);
    assert_true(a < b && b < m && m < p && p < f);
    assert_null(strstr(out, "/api/d"));
    assert_int_equal(calls, 3);
    assert_non_null(strstr(f, "Connection: close\r\n"));
    for (int k = 0; k < 4 && view_http_nconns(s); k++) view_http_round(s, -1, 10);
    assert_int_equal(view_http_nconns(s), 0);
    close(sv[1]);
    view_http_close(s);
}

/* With VIEW_HTTP_MAX_CONNS open, a new connection closes the idlest. */
static void test_conn_limit(void **state) {
    (void)state;
    view_http_t *s = open_server(NULL);
    int peer[VIEW_HTTP_MAX_CONNS + 1];
    for (int i = 0; i <= VIEW_HTTP_MAX_CONNS; i++) {
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
        assert_int_equal(view_http_adopt(s, sv[0]), 0);
        peer[i] = sv[1];
        if (i == 0) usleep(2000); /* the first is the idlest by a clear margin */
    }
    assert_int_equal(view_http_nconns(s), VIEW_HTTP_MAX_CONNS);
    char b[8];
    assert_int_equal(recv(peer[0], b, sizeof b, MSG_DONTWAIT), 0); /* closed */
    for (int i = 1; i <= VIEW_HTTP_MAX_CONNS; i++) {
        errno = 0;
        assert_int_equal(recv(peer[i], b, sizeof b, MSG_DONTWAIT), -1); /* open */
        assert_int_equal(errno, EAGAIN);
    }
    view_http_close(s);
    for (int i = 0; i <= VIEW_HTTP_MAX_CONNS; i++) {
        assert_int_equal(recv(peer[i], b, sizeof b, MSG_DONTWAIT), 0); /* all closed */
        close(peer[i]);
    }
}

/* ---- the whole server over loopback TCP, serving in a thread ---- */

typedef struct srv {
    view_http_t *s;
    int stop[2];
    int rc;
    pthread_t th;
} srv_t;

static void *serve_thread(void *arg) {
    srv_t *v = arg;
    v->rc = view_http_serve(v->s, v->stop[0]);
    return NULL;
}

static void srv_start(srv_t *v, int *calls) {
    v->s = open_server(calls);
    assert_int_equal(pipe(v->stop), 0);
    v->rc = -2;
    assert_int_equal(pthread_create(&v->th, NULL, serve_thread, v), 0);
}

static void srv_join(srv_t *v) {
    pthread_join(v->th, NULL);
    view_http_close(v->s);
    close(v->stop[0]);
    close(v->stop[1]);
}

static int tcp_connect(unsigned short port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_all(int fd, const char *b, size_t n) {
    while (n) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        assert_true(w > 0);
        b += w;
        n -= (size_t)w;
    }
}

/* Reads one answer (head and Content-Length body) from fd: buf (cap
 * bytes) holds what was received and not yet taken (*have bytes).
 * Returns the status with *body and *blen its body (valid until the next
 * call), or -1 at end of stream or time-out. */
static int read_answer(int fd, char *buf, size_t cap, size_t *have, const char **body,
                       size_t *blen) {
    static char ans[65536];
    for (;;) {
        buf[*have] = 0;
        char *end = strstr(buf, "\r\n\r\n");
        if (end) {
            const char *cl = strstr(buf, "Content-Length: ");
            size_t len = cl && cl < end ? strtoul(cl + 16, NULL, 10) : 0;
            size_t hl = (size_t)(end - buf) + 4;
            if (*have >= hl + len && hl + len < sizeof ans) {
                memcpy(ans, buf, hl + len);
                ans[hl + len] = 0;
                memmove(buf, buf + hl + len, *have - hl - len);
                *have -= hl + len;
                *body = ans + hl;
                *blen = len;
                return atoi(ans + 9);
            }
        }
        if (*have + 1 >= cap) return -1;
        ssize_t n = recv(fd, buf + *have, cap - 1 - *have, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        *have += (size_t)n;
    }
}

/* The server end to end: the page with its headers, pipelined keep-alive
 * requests answered in order on one connection, a client that leaves
 * mid-request, 403 and 413 closing the connection, POST /api/quit. */
static void test_tcp_end_to_end(void **state) {
    (void)state;
    int calls = 0;
    srv_t v;
    srv_start(&v, &calls);
    unsigned short port = view_http_port(v.s);
    char host[64], req[4096];
    snprintf(host, sizeof host, "Host: 127.0.0.1:%u\r\n", port);
    static char buf[65536];
    size_t have = 0, blen;
    const char *body;

    /* a client that sends half a request and goes */
    int h = tcp_connect(port);
    snprintf(req, sizeof req, "GET /api/meta HTTP/1.1\r\n%sX-Spanscope-To", host);
    send_all(h, req, strlen(req));
    close(h);

    /* the page */
    int fd = tcp_connect(port);
    snprintf(req, sizeof req, "GET /?token=" TOK " HTTP/1.1\r\n%s\r\n", host);
    send_all(fd, req, strlen(req));
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), 200);
    assert_int_equal(blen, sizeof page - 1);
    assert_memory_equal(body, page, blen);
    /* pipelined keep-alive requests on the same connection, in one write */
    snprintf(req, sizeof req,
             "GET /api/one?a=1&token=" TOK " HTTP/1.1\r\n%s\r\n"
             "POST /api/two HTTP/1.1\r\n%s" XTOK "Content-Length: 3\r\n\r\nxyz"
             "GET /nope HTTP/1.1\r\n%s" XTOK "\r\n"
             "GET /api/three HTTP/1.1\r\n%s" XTOK "\r\n",
             host, host, host, host);
    send_all(fd, req, strlen(req));
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), 200);
    assert_int_equal(strncmp(body, "GET /api/one a=1", blen), 0);
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), 200);
    assert_int_equal(strncmp(body, "POST /api/two -", blen), 0);
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), 404);
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), 200);
    assert_int_equal(strncmp(body, "GET /api/three -", blen), 0);
    /* still open: one more */
    snprintf(req, sizeof req, "GET /api/four HTTP/1.1\r\n%s" XTOK "\r\n", host);
    send_all(fd, req, strlen(req));
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), 200);
    assert_int_equal(calls, 4);
    /* a foreign Host: 403, then the connection closes */
    send_all(fd, "GET / HTTP/1.1\r\nHost: evil.example:80\r\n" XTOK "\r\n",
             strlen("GET / HTTP/1.1\r\nHost: evil.example:80\r\n" XTOK "\r\n"));
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), 403);
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), -1);
    close(fd);
    have = 0;

    /* a head past the limit while the client still sends: 413, closed */
    fd = tcp_connect(port);
    char *junk = malloc(VIEW_HTTP_MAX_HEAD + 1000);
    assert_non_null(junk);
    memset(junk, 'a', VIEW_HTTP_MAX_HEAD + 1000);
    send_all(fd, junk, VIEW_HTTP_MAX_HEAD + 1000);
    free(junk);
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), 413);
    shutdown(fd, SHUT_WR);
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), -1);
    close(fd);
    have = 0;

    /* POST /api/quit: answered, then serve returns 1 */
    fd = tcp_connect(port);
    snprintf(req, sizeof req, "POST /api/quit HTTP/1.1\r\n%s" XTOK "Content-Length: 0\r\n\r\n",
             host);
    send_all(fd, req, strlen(req));
    assert_int_equal(read_answer(fd, buf, sizeof buf, &have, &body, &blen), 200);
    assert_int_equal(strncmp(body, "{\"ok\":true}", blen), 0);
    close(fd);
    srv_join(&v);
    assert_int_equal(v.rc, 1);
    assert_int_equal(calls, 4);
}

/* The stop descriptor stops a server with a connection open. */
static void test_tcp_stop_fd(void **state) {
    (void)state;
    srv_t v;
    srv_start(&v, NULL);
    int fd = tcp_connect(view_http_port(v.s));
    send_all(fd, "GET / HT", 8);
    assert_int_equal(write(v.stop[1], "x", 1), 1);
    srv_join(&v);
    assert_int_equal(v.rc, 0);
    close(fd);
}

/* An empty token is refused: it would let every request in. */
static void test_open_empty_token(void **state) {
    (void)state;
    view_http_conf_t conf = {"", (const unsigned char *)page, sizeof page - 1, echo_api, NULL};
    view_http_t *s = NULL;
    errno = 0;
    assert_int_equal(view_http_open(&s, 0, &conf), -1);
    assert_int_equal(errno, EINVAL);
    assert_null(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide_table),
        cmocka_unit_test(test_token_percent_encoded),
        cmocka_unit_test(test_api_path_query),
        cmocka_unit_test(test_head_limit),
        cmocka_unit_test(test_token_eq),
        cmocka_unit_test(test_conn_byte_by_byte),
        cmocka_unit_test(test_conn_half_request),
        cmocka_unit_test(test_conn_pipelined),
        cmocka_unit_test(test_conn_limit),
        cmocka_unit_test(test_tcp_end_to_end),
        cmocka_unit_test(test_tcp_stop_fd),
        cmocka_unit_test(test_open_empty_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
