/* progress.c -- the progress line of long writes (finalize, merge): on
 * stderr, rewritten in place at most twice a second once the work has
 * taken a second, when asked (verbose) or when stderr is a terminal;
 * SPANSCOPE_PROGRESS=0 never, =1 always and at once (tests). */
#include "formats/formats.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sps__pline_init(sps__pline_t *p, const char *verb, const char *path,
                     const char *unit, int verbose, int rank) {
    const char *env = getenv("SPANSCOPE_PROGRESS");
    memset(p, 0, sizeof *p);
    p->verb = verb;
    p->path = path;
    p->unit = unit;
    p->start_ns = sps_now_ns();
    p->always = env && !strcmp(env, "1");
    p->on = rank == 0 && (p->always || ((verbose || isatty(STDERR_FILENO)) &&
                                        !(env && !strcmp(env, "0"))));
}

void sps__pline_fn(void *ctx, uint64_t done, uint64_t total) {
    sps__pline_t *p = ctx;
    int64_t now = sps_now_ns();
    if (!p->on || (!p->always && now - p->start_ns < 1000000000) ||
        (p->shown && now - p->last_ns < 500000000))
        return;
    p->last_ns = now;
    p->shown = 1;
    fprintf(stderr, "\rspanscope: %s %s: %3d%% (%llu of %llu %s)", p->verb, p->path,
            total ? (int)(100.0 * (double)(done > total ? total : done) / (double)total) : 100,
            (unsigned long long)done, (unsigned long long)total, p->unit);
}

void sps__pline_end(const sps__pline_t *p, uint64_t total, int rc) {
    if (!p->shown) return;
    double s = (double)(sps_now_ns() - p->start_ns) / 1e9;
    if (rc) fprintf(stderr, "\rspanscope: %s %s: failed after %.1f s\n", p->verb, p->path, s);
    else fprintf(stderr, "\rspanscope: %s %s: %llu %s in %.1f s\n", p->verb, p->path,
                 (unsigned long long)total, p->unit, s);
}
