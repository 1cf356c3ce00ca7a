/*
 * view.h -- the view object behind `spanscope view` (src/api/view.c): one
 * or several recordings opened for the local viewer, each through its
 * level-of-detail index (formats/viewidx.h, built on first open and kept
 * beside the file), and the answers to the page's requests.  The HTTP
 * server (tools/view_http.c) parses requests and calls sps__view_handle;
 * everything the page is told comes from here.  The page's API (paths,
 * parameters, the bodies' layout) is documented in docs/view.md.
 */
#ifndef SPS_API_VIEW_H
#define SPS_API_VIEW_H

#include "util/util.h"

#include <stddef.h>

typedef struct sps__view sps__view_t;

typedef struct sps__view_opts {
    /* NULL: FILE.spsview beside FILE, or, when that directory is not
     * writable, $XDG_CACHE_HOME/spanscope (else ~/.cache/spanscope)
     * /<hash of the real path>.spsview; else the directory to keep the
     * indexes in. */
    const char *index_dir;
    int rebuild;  /* 1: build each index even if a valid one exists */
    int progress; /* 1: progress of an index build on stderr */
} sps__view_opts_t;

/* Opens the n >= 1 recordings paths (.h5, .json, .json.gz, .pftrace;
 * several are shown side by side as processes), building or reusing each
 * one's index.  opts may be NULL (the defaults).  Returns 0 with *out
 * set, or an SPS_E* code with the one-line message in sps__err_msg (a
 * hostile file: SPS_EFORMAT, never a crash). */
SPS__HIDDEN int sps__view_open(sps__view_t **out, const char *const *paths,
                               size_t n, const sps__view_opts_t *opts);

/* Answers one request of the page's API: method "GET" or "POST", path the
 * URL path ("/api/tiles"), query the raw query string after '?' or NULL.
 * Sets *body (malloc'd, the caller frees it), *len and *ctype (a static
 * string) and returns the HTTP status: 200; 400 with {"error":"..."} for
 * bad parameters; 404 for an unknown path; 500 with {"error":"..."} when
 * the index cannot be read.  The server serves "/" (the page) and
 * /api/quit itself.  Not thread-safe: one caller thread. */
SPS__HIDDEN int sps__view_handle(sps__view_t *v, const char *method,
                                 const char *path, const char *query,
                                 char **body, size_t *len, const char **ctype);

/* Frees v and closes its files (NULL is fine). */
SPS__HIDDEN void sps__view_close(sps__view_t *v);

#endif /* SPS_API_VIEW_H */
