/* jacobi.c -- a small multi-threaded 2-D heat-equation solver (Jacobi
 * iteration), profiled with spanscope.
 *
 * The steady-state heat equation (Laplace's equation) on an N x N plate: the
 * top edge is held at 1.0, the bottom at 0.0, the left edge falls linearly
 * between them and the right edge is insulated; every interior point is
 * repeatedly replaced by the mean of its four neighbours.  The
 * interior rows are split into T horizontal bands, one per thread.  Each
 * thread keeps its band in a private array with one ghost row above and one
 * below, as a distributed-memory code would, and the threads exchange their
 * edge rows through shared "mailboxes" between iterations (the halo
 * exchange).  Per iteration and thread:
 *
 *   halo          copy the neighbours' published edge rows into the ghost rows
 *   sweep         u_new = mean of the 4 neighbours of u, over the band
 *   boundary      re-impose the edge conditions (fixed left edge,
 *                 insulated right edge)
 *   barrier wait  everyone has read the mailboxes (they may now be refilled)
 *   publish       put this band's new edge rows and partial residual out
 *   barrier wait  everyone has published
 *   residual      sum the partial residuals: || u_new - u ||_2
 *
 * Every step is a spanscope region, so the summary table printed at the end
 * (cfg.verbose) shows where each thread's time went, and the HDF5 file holds
 * every call.
 *
 *   jacobi --threads 2 --n 512 --iters 200 --out jacobi.h5
 *   spanscope report jacobi.h5
 */
#define _GNU_SOURCE
#include <spanscope.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shared {
    int n;          /* grid points per side, edges included */
    int iters;      /* maximum iterations */
    double tol;     /* stop when the residual falls below (0: never) */
    int nthreads;
    double **mail;  /* [2 * nthreads]: top and bottom edge row of each band */
    double *part;   /* [nthreads]: partial sums of squared updates */
    pthread_barrier_t barrier;
    /* results, written by thread 0 after the last iteration */
    double residual;
    int done_iters;
    double center;
} shared_t;

typedef struct worker {
    pthread_t th;
    int id;
    int row0, rows; /* first global interior row, number of rows */
    shared_t *sh;
    double center;  /* value at the plate's centre, if this band holds it */
    int has_center;
    int rc;
} worker_t;

/* Temperature held fixed on the plate's edges (Dirichlet conditions): the
 * top edge at 1.0, the bottom at 0.0, the left edge falling linearly from
 * 1.0 to 0.0.  The right edge is insulated (no heat flows through it): its
 * value is copied from its inner neighbour after every sweep. */
static double edge_value(int n, int i) {
    if (i <= 0) return 1.0;
    if (i >= n - 1) return 0.0;
    return 1.0 - (double)i / (double)(n - 1); /* left edge */
}

static void barrier_wait(shared_t *sh) {
    SPS_REGION("barrier wait");
    pthread_barrier_wait(&sh->barrier);
}

static void *worker_main(void *arg) {
    worker_t *w = arg;
    shared_t *sh = w->sh;
    const int n = sh->n, rows = w->rows, t = w->id, nt = sh->nthreads;
    char name[16];
    snprintf(name, sizeof name, "jacobi-%d", t);
    pthread_setname_np(pthread_self(), name);

    /* Band with ghost rows: local row 0 and rows+1 are ghosts. */
    double *u = NULL, *v = NULL;
    {
        SPS_REGION("init");
        size_t cells = (size_t)(rows + 2) * (size_t)n;
        u = calloc(cells, sizeof *u);
        v = calloc(cells, sizeof *v);
        if (!u || !v) {
            w->rc = ENOMEM;
        } else {
            for (int i = 0; i < rows + 2; i++) /* the left edge */
                u[(size_t)i * n] = v[(size_t)i * n] = edge_value(n, w->row0 - 1 + i);
            if (t == 0) /* the hot top edge is the first band's upper ghost */
                for (int j = 0; j < n; j++) u[j] = v[j] = edge_value(n, 0);
            if (t == nt - 1) /* the cold bottom edge is the last band's lower one */
                for (int j = 0; j < n; j++)
                    u[(size_t)(rows + 1) * n + j] = v[(size_t)(rows + 1) * n + j] =
                        edge_value(n, n - 1);
            memcpy(sh->mail[2 * t], u + n, (size_t)n * sizeof *u);
            memcpy(sh->mail[2 * t + 1], u + (size_t)rows * n, (size_t)n * sizeof *u);
        }
    }
    if (w->rc) sh->part[t] = -1.0; /* tells everyone to stop */
    barrier_wait(sh); /* the mailboxes hold every band's initial edges */
    int failed = 0;
    for (int k = 0; k < nt; k++) failed |= sh->part[k] < 0;
    if (failed || w->rc) goto out;

    for (int it = 0; it < sh->iters; it++) {
        SPS_REGION("iteration");
        {
            SPS_REGION("halo");
            if (t > 0) /* the bottom row of the band above */
                memcpy(u, sh->mail[2 * (t - 1) + 1], (size_t)n * sizeof *u);
            if (t < nt - 1) /* the top row of the band below */
                memcpy(u + (size_t)(rows + 1) * n, sh->mail[2 * (t + 1)],
                       (size_t)n * sizeof *u);
        }
        double sum = 0.0;
        {
            SPS_REGION("sweep");
            for (int i = 1; i <= rows; i++) {
                const double *up = u + (size_t)(i - 1) * n, *mid = u + (size_t)i * n,
                             *dn = u + (size_t)(i + 1) * n;
                double *out = v + (size_t)i * n;
                for (int j = 1; j < n - 1; j++) {
                    double x = 0.25 * (up[j] + dn[j] + mid[j - 1] + mid[j + 1]);
                    double d = x - mid[j];
                    sum += d * d;
                    out[j] = x;
                }
            }
        }
        {
            SPS_REGION("boundary");
            for (int i = 1; i <= rows; i++) {
                double *row = v + (size_t)i * n;
                row[0] = edge_value(n, w->row0 - 1 + i); /* fixed */
                row[n - 1] = row[n - 2];                 /* insulated */
            }
        }
        double *tmp = u; /* v is the new iterate; the ghost rows of the
                            first and last band hold the fixed edges in both */
        u = v;
        v = tmp;
        barrier_wait(sh); /* every thread has read the mailboxes */
        {
            SPS_REGION("publish");
            memcpy(sh->mail[2 * t], u + n, (size_t)n * sizeof *u);
            memcpy(sh->mail[2 * t + 1], u + (size_t)rows * n, (size_t)n * sizeof *u);
            sh->part[t] = sum;
        }
        barrier_wait(sh); /* every thread has published */
        double res;
        {
            SPS_REGION("residual");
            double total = 0.0;
            for (int k = 0; k < nt; k++) total += sh->part[k];
            res = sqrt(total);
        }
        /* Every thread computed the same res, so all leave together.  The
         * parts are read again only after the next iteration's first
         * barrier, so no thread overwrites them while another reads. */
        if (t == 0) {
            sh->residual = res;
            sh->done_iters = it + 1;
        }
        if (sh->tol > 0 && res < sh->tol) break;
    }
    int ci = (n - 1) / 2; /* the plate's centre row, if in this band */
    if (ci >= w->row0 && ci < w->row0 + rows) {
        w->has_center = 1;
        w->center = u[(size_t)(ci - w->row0 + 1) * n + (n - 1) / 2];
    }
out:
    free(u);
    free(v);
    return NULL;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: jacobi [--threads T] [--n N] [--iters K] [--tol X] [--out FILE.h5]\n"
            "Solves the 2-D steady heat equation on an N x N plate (top edge 1.0,\n"
            "bottom 0.0, left edge linear, right edge insulated) by Jacobi\n"
            "iteration on T threads, profiled with\n"
            "spanscope: prints the summary table and the final residual, writes\n"
            "every region call to FILE.h5.\n"
            "  --threads T   worker threads (default 2)\n"
            "  --n N         grid points per side, edges included (default 512)\n"
            "  --iters K     iterations (default 200)\n"
            "  --tol X       stop early once ||u_new - u||_2 < X (default 0: never)\n"
            "  --out FILE    HDF5 output (default jacobi.h5; \"\" for none)\n");
}

static int parse_int(const char *opt, const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "jacobi: %s wants an integer in [%ld, %ld], got '%s'\n",
                opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv) {
    int nthreads = 2, n = 512, iters = 200;
    double tol = 0.0;
    const char *out = "jacobi.h5";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "jacobi: %s needs a value (see --help)\n", a);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--threads")) {
            if (parse_int(a, v, 1, 256, &nthreads)) return 2;
        } else if (!strcmp(a, "--n")) {
            if (parse_int(a, v, 3, 1 << 15, &n)) return 2;
        } else if (!strcmp(a, "--iters")) {
            if (parse_int(a, v, 0, 100000000, &iters)) return 2;
        } else if (!strcmp(a, "--tol")) {
            char *end;
            tol = strtod(v, &end);
            if (end == v || *end || !(tol >= 0)) {
                fprintf(stderr, "jacobi: --tol wants a number >= 0, got '%s'\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--out")) {
            out = v;
        } else {
            fprintf(stderr, "jacobi: unknown option %s (see --help)\n", a);
            return 2;
        }
    }
    int interior = n - 2;
    if (nthreads > interior) {
        fprintf(stderr, "jacobi: %d threads need --n of at least %d\n", nthreads,
                nthreads + 2);
        return 2;
    }

    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = *out ? out : NULL;
    cfg.verbose = 1; /* sps_finalize prints the summary table to stderr */
    cfg.label = "jacobi example";
    int rc = sps_setup(&cfg);
    if (rc) {
        fprintf(stderr, "jacobi: sps_setup: %s\n", sps_strerror(rc));
        return 1;
    }

    shared_t sh = {0};
    sh.n = n;
    sh.iters = iters;
    sh.tol = tol;
    sh.nthreads = nthreads;
    sh.mail = calloc(2 * (size_t)nthreads, sizeof *sh.mail);
    sh.part = calloc((size_t)nthreads, sizeof *sh.part);
    worker_t *w = calloc((size_t)nthreads, sizeof *w);
    int ok = sh.mail && sh.part && w;
    for (int k = 0; ok && k < 2 * nthreads; k++)
        ok = (sh.mail[k] = calloc((size_t)n, sizeof(double))) != NULL;
    if (!ok) {
        fprintf(stderr, "jacobi: out of memory\n");
        return 1;
    }
    pthread_barrier_init(&sh.barrier, NULL, (unsigned)nthreads);

    {
        SPS_REGION("solve");
        int row = 1;
        for (int t = 0; t < nthreads; t++) { /* bands differ by at most a row */
            w[t].id = t;
            w[t].sh = &sh;
            w[t].row0 = row;
            w[t].rows = interior / nthreads + (t < interior % nthreads);
            row += w[t].rows;
        }
        int started = 0;
        for (; started < nthreads; started++)
            if (pthread_create(&w[started].th, NULL, worker_main, &w[started])) break;
        if (started < nthreads) {
            /* the barrier counts every thread: without all of them no one
             * could pass it, so a partial start is fatal */
            fprintf(stderr, "jacobi: could not start thread %d\n", started);
            return 1;
        }
        for (int t = 0; t < nthreads; t++) pthread_join(w[t].th, NULL);
    }

    int failed = 0;
    double center = 0.0;
    for (int t = 0; t < nthreads; t++) {
        failed |= w[t].rc != 0;
        if (w[t].has_center) center = w[t].center;
    }
    if (failed) {
        fprintf(stderr, "jacobi: a worker ran out of memory\n");
        sps_shutdown();
        return 1;
    }

    rc = sps_finalize(); /* prints the table, writes the file */
    if (rc) fprintf(stderr, "jacobi: sps_finalize: %s\n", sps_strerror(rc));
    printf("jacobi: %d x %d grid, %d threads, %d iterations\n", n, n, nthreads,
           sh.done_iters);
    printf("final residual ||u_new - u||_2 = %.6e\n", sh.residual);
    printf("temperature at the centre = %.6f (the heat spreads %s)\n", center,
           center > 0.01 ? "to the centre" : "slowly: try more --iters");
    sps_shutdown();

    pthread_barrier_destroy(&sh.barrier);
    for (int k = 0; k < 2 * nthreads; k++) free(sh.mail[k]);
    free(sh.mail);
    free(sh.part);
    free(w);
    return rc ? 1 : 0;
}
