/* crash_samples.h -- stack samples in the live directory (core/crash.c,
 * docs/crash-recovery.md): the sampler (src/ext/sampler.c) hands each
 * sample it drains from its rings to crash.c, which appends it to
 * PATH.live-<pid>/samples, with the text of the stack's frames the first
 * time the directory sees that stack, so that `spanscope recover`
 * (src/api/recover.c) can write /samples after the process died.
 *
 * The file: entries {u32 len, u32 type, len bytes of payload, u32
 * checksum of all before it} (the log's framing, a larger bound), native
 * byte order, each one write(2) on an O_APPEND descriptor: a torn entry
 * (the one being written at the kill) is detected and ends the file. */
#ifndef SPS_CORE_CRASH_SAMPLES_H
#define SPS_CORE_CRASH_SAMPLES_H

#include "core/core.h"

enum {
    SPS__CSMP_HDR = 1,   /* u64 magic, u32 version, u32 0 */
    SPS__CSMP_STACK = 2, /* u32 stack id, u32 nframes, then per frame (innermost
                            first): i64 kind, i64 line, i64 address, strings
                            function, file, module (u32 length, bytes) */
    SPS__CSMP_BATCH = 3, /* u32 n, u32 hz, u64 lost (dropped since the previous
                            batch), then n sps__csmp_rec_t */
    SPS__CSMP_DONE = 4   /* u64 ticks: a finalize wrote every sample at or
                            before it (but those logged again after it: the
                            deferred ones of calls still open) */
};
#define SPS__CSMP_MAGIC 0x31504D5353505355ull /* "USPSSMP1" */
#define SPS__CSMP_VERSION 1u
#define SPS__CSMP_ENTRY_MAX (1u << 20)   /* bytes of the largest payload */
#define SPS__CSMP_FRAMES_MAX 256u        /* frames of one stack */
#define SPS__CSMP_STR_MAX 1024u          /* bytes of one frame string */
#define SPS__CSMP_BATCH_MAX 4096u        /* samples of one batch entry */

typedef struct sps__csmp_rec {
    uint64_t ticks;
    int32_t tid;
    uint32_t stack;  /* the sampler's stack id, described by an earlier STACK */
    uint32_t weight;
    uint32_t pad;
} sps__csmp_rec_t;

struct sps_frame_walker;

/* The sampler, under its own lock, on the thread that drains its rings
 * (its own thread but at a finalize's take or a stop): one sample
 * drained, of stack id `stack` whose words are w[0, nn) native return
 * addresses then w[nn, nn + nr) runtime words (walker describes those;
 * NULL: none).  The first sample of a stack in this directory describes
 * it (symbols, walker->describe: never in a signal handler).  Buffered
 * until sps__crash_samples_flush.  A no-op when crash safety is off. */
SPS__HIDDEN void sps__crash_sample(uint64_t ticks, int32_t tid, uint32_t weight, uint32_t stack,
                                   const uint64_t *w, uint32_t nn, uint32_t nr,
                                   const struct sps_frame_walker *walker);
/* The sampler, after a drain (same lock): appends the buffered samples
 * as one entry, with the rate and the samples dropped since (lost). */
SPS__HIDDEN void sps__crash_samples_flush(int hz, uint64_t lost);

#endif /* SPS_CORE_CRASH_SAMPLES_H */
