/*
 * h5_comm.h -- the reader of an HDF5 file's /communication table
 * (h5_comm.c): the PMPI wrappers' calls and bytes per region and rank
 * (src/ext/pmpi.c, written by src/ext/mpi.c; docs/mpi.md), for the
 * report's communication section.
 */
#ifndef SPS_H5_COMM_H
#define SPS_H5_COMM_H

#include "formats/formats.h"

typedef struct sps__h5r_comm {
    size_t n;
    char **region;                 /* valid UTF-8 */
    int64_t *rank, *calls, *bytes; /* checked: ranks 0..INT32_MAX, >= 0 */
} sps__h5r_comm_t;

/* Reads /communication of the file at path into *out (none: n = 0).
 * Returns 0, SPS_EIO, SPS_EFORMAT or SPS_ENOMEM (message set for the
 * first two); free with sps__h5r_comm_free. */
SPS__HIDDEN int sps__h5r_comm(const char *path, sps__h5r_comm_t *out);
SPS__HIDDEN void sps__h5r_comm_free(sps__h5r_comm_t *c);
/* Prints the report's communication section for the file at path
 * (nothing without /communication): per region its calls, bytes,
 * bytes per call, min / max bytes over the ranks that called it and how
 * many did, most bytes first.  0 or the reader's code. */
SPS__HIDDEN int sps__comm_print(FILE *fp, const char *path);

/* The source location of each region (scope-profiler's
 * /rank_region_index source_files and source_lines: the first row of a
 * region with a non-empty file and a line >= 0).  file[g] NULL and
 * line[g] -1 where region g (0..n-1, the file's region ids; regions past
 * n have none) has none. */
typedef struct sps__h5r_sources {
    size_t n;
    char **file;    /* valid UTF-8, or NULL */
    int64_t *line;
} sps__h5r_sources_t;
/* Reads the regions' locations of the file at path; a file without them,
 * or whose columns are not valid, gives none (n = 0: the main reader
 * judges the file).  Call it while no other reader has the file open
 * (HDF5 refuses a second open with other close flags).  0 or
 * SPS_ENOMEM; free with sps__h5r_sources_free. */
SPS__HIDDEN int sps__h5r_sources(const char *path, sps__h5r_sources_t *out);
SPS__HIDDEN void sps__h5r_sources_free(sps__h5r_sources_t *s);

#endif /* SPS_H5_COMM_H */
