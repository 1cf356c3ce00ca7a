/*
 * merge.h -- the hidden side of sps_merge (src/formats/merge.c), for the
 * command-line tool: the argument check on its own (so that the tool can
 * tell usage errors from data errors) and the merge with hooks around the
 * reading of the inputs (where the tool arms and disarms its watchdog).
 */
#ifndef SPS_MERGE_H
#define SPS_MERGE_H

#include "formats/formats.h"

/* Called around the reading of the inputs; either may be NULL. */
typedef struct sps__merge_hooks {
    /* before each input is opened (the tool: its read time limit) */
    void (*reading)(const char *path);
    /* once every input's header is read: the rest is bounded work */
    void (*read_done)(void);
} sps__merge_hooks_t;

/* Checks sps_merge's arguments without reading any file: paths given, the
 * output's and every input's extension known, no .h5 output from trace
 * inputs.  Returns 0 or SPS_EINVAL after writing the one-line reason (no
 * "merge:" prefix) to err_file (a FILE*, may be NULL). */
SPS__HIDDEN int sps__merge_check(const char *out_path,
                                 const char *const *in_paths, size_t n,
                                 void *err_file);

/* sps_merge with hooks (NULL: none); same contract as sps_merge. */
SPS__HIDDEN int sps__merge(const char *out_path, const char *const *in_paths,
                           size_t n, void *err_file,
                           const sps__merge_hooks_t *hooks);

#endif /* SPS_MERGE_H */
