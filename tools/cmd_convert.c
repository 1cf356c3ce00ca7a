/*
 * cmd_convert.c -- spanscope convert IN OUT: copies a recording's spans
 * (and the counters and flows of its header) from a timeline reader to a
 * timeline writer, the formats chosen by the file extensions
 * (src/formats/timeline.h), and an .h5's stack samples (its /samples, read
 * by the one checked reader) to a trace, each on its thread's row
 * (formats/export.h: sps__tl_samples_place, sps__tlw_samples).
 */
#include "sps_int.h"
#include "formats/export.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char convert_help[] =
    "usage: spanscope convert [--torch-tb] IN OUT\n"
    "\n"
    "Converts a recording between formats, chosen by the file extensions:\n"
    "  .h5        spanscope / scope-profiler HDF5 (schema 3 when written:\n"
    "             rows per rank and region, a rank per process of a trace)\n"
    "  .json      Chrome trace event JSON (Perfetto, chrome://tracing, HTA), one\n"
    "             slice per span\n"
    "  .json.gz   the same, gzip-compressed\n"
    "  .pftrace   Perfetto protobuf trace (compact; ui.perfetto.dev)\n"
    "\n"
    "An .h5 to an .h5 keeps its device activity (/device), stack samples\n"
    "(/samples) and per-span device times (/events/gpu_durations), each on\n"
    "its span in the rewritten file; where the spans cannot be paired one for\n"
    "one (a file without call ids) they are left out, and stderr says so.\n"
    "The stack samples of an .h5 (with_samples, docs/sampling.md) go to a\n"
    "trace on their thread's row: an instant event each in JSON (args.stack,\n"
    "region, weight, as torch's traces write them), PerfSample callstacks in a\n"
    ".pftrace.  Other conversions carry the spans, counters and flows.\n"
    "\n"
    "--torch-tb  JSON in the layout of TensorBoard's profiler plugin\n"
    "            (torch-tb-profiler, deprecated): each span also as a cpu_op\n"
    "            copy, plus the \"PyTorch Profiler (0)\" window; other viewers\n"
    "            draw those spans twice\n"
    "\n"
    "OUT is written to a temporary name and renamed into place.  On a\n"
    "terminal, progress is shown on stderr for large inputs.\n";

/* Copies every span of r to w, showing the progress on a terminal. */
static int convert_spans(sps__tlr_t *r, sps__tlw_t *w, uint64_t total) {
    sps__tl_span_t s;
    uint64_t n = 0;
    int rc;
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        if ((rc = sps__tlw_span(w, &s)) != 0) return rc;
        if ((++n & 0xFFFF) == 0) cli_progress("convert", n, total, 0);
    }
    if (total >= 0x10000) cli_progress("convert", n, total, 1);
    return rc;
}

/* The reason a write of out failed with rc: the operating system's cause
 * when one was noted ("no space left on device (writing OUT)"), else why
 * (a reader's message) or the code's name. */
static const char *write_why(int rc, const char *out, const char *why) {
    if ((rc == SPS_EIO || rc == SPS_EPATH) && sps_last_errno()) {
        sps__err_os_fail(rc, "writing", out);
        return sps__err_msg();
    }
    return why && *why ? why : sps_strerror(rc);
}

/* IN (any format) to OUT.h5 through sps__h5_from_timeline, at a
 * temporary name renamed into place. */
static int convert_to_h5(const char *in, sps__tl_format_t fi, const char *out) {
    char *tmp = sps__tmp_name(out, NULL);
    if (!tmp) return die(EXIT_DATA, "convert: %s: %s", out, sps_strerror(SPS_ENOMEM));
    sps__err_clear();
    int rc = sps__h5_from_timeline(in, fi, tmp);
    alarm(0);
    /* an .h5's device activity, stack samples and per-span device times,
     * moved onto the rewritten spans; where the spans cannot be paired one
     * for one they are left out, and said so */
    unsigned what = 0;
    if (!rc && fi == SPS__TL_H5) {
        int crc = sps__h5_carry_device(in, tmp, &what);
        if (crc == SPS_EMODE) {
            char list[96] = "";
            const char *part[] = {"/device", "/samples", "/events/gpu_durations"};
            for (int k = 0; k < 3; k++)
                if (what & (1u << k))
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                             list[0] ? ", " : "", part[k]);
            fprintf(stderr, "spanscope: convert: not carried into %s: %s (%s)\n", out, list,
                    sps__err_msg());
        } else {
            rc = crc;
        }
    }
    if (!rc && rename(tmp, out) != 0) sps__err_os_note(errno), rc = SPS_EIO;
    if (rc) unlink(tmp); /* no partial output */
    free(tmp);
    /* a reader's message names the file; a failed write names the cause */
    if (rc) return die(EXIT_DATA, "convert: %s", write_why(rc, out, sps__err_msg()));
    return 0;
}

/* spanscope convert IN OUT */
int cmd_convert(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    int torch_tb = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(convert_help, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--torch-tb")) {
            torch_tb = 1;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return die(EXIT_USAGE, "convert: unknown option '%s' (see spanscope convert --help)", argv[i]);
        if (!in) in = argv[i];
        else if (!out) out = argv[i];
        else return die(EXIT_USAGE, "convert: too many arguments (IN OUT)");
    }
    if (!in || !out) return die(EXIT_USAGE, "convert: needs IN and OUT (see spanscope convert --help)");
    sps__tl_format_t fi = sps__tl_format_of(in), fo = sps__tl_format_of(out);
    if (fi == SPS__TL_UNKNOWN)
        return die(EXIT_USAGE, "convert: %s: unknown input format (.h5, .json, .json.gz, .pftrace)", in);
    if (fo == SPS__TL_UNKNOWN)
        return die(EXIT_USAGE, "convert: %s: unknown output format (.h5, .json, .json.gz, .pftrace)", out);
    input_watchdog(in);
    if (torch_tb && fo != SPS__TL_JSON && fo != SPS__TL_JSON_GZ)
        return die(EXIT_USAGE, "convert: --torch-tb is a JSON layout (OUT .json or .json.gz), "
                               "not for %s", out);
    if (fo == SPS__TL_H5) return convert_to_h5(in, fi, out);
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, in, fi);
    if (rc) return die(EXIT_DATA, "convert: %s", sps__err_msg());
    alarm(0); /* the header is read: the rest is bounded work */
    char *tmp = sps__tmp_name(out, NULL);
    if (!tmp) {
        sps__tlr_free(r);
        return die(EXIT_DATA, "convert: %s: %s", out, sps_strerror(SPS_ENOMEM));
    }
    const sps__tl_header_t *h = sps__tlr_header(r);
    sps__tl_header_t oh = *h;
    /* an .h5's stack samples, on the output's rows (a thread with samples
     * and no spans gets one of its own) */
    sps__h5r_samples_t smp;
    sps__tl_samples_t placed;
    memset(&smp, 0, sizeof smp);
    memset(&placed, 0, sizeof placed);
    if (fi == SPS__TL_H5) {
        sps__err_clear();
        if (sps__h5r_samples(in, &smp)) {
            sps__tlr_free(r);
            free(tmp);
            return die(EXIT_DATA, "convert: %s", sps__err_msg());
        }
        if (sps__tl_samples_place(&placed, &smp, h)) {
            sps__h5r_samples_free(&smp);
            sps__tlr_free(r);
            free(tmp);
            return die(EXIT_DATA, "convert: %s: %s", out, sps_strerror(SPS_ENOMEM));
        }
        oh.threads = placed.threads;
        oh.nthreads = placed.nthreads;
    }
    /* an .h5's device activity (/device): GPU processes, stream tracks, the
     * API calls on their threads' rows, flows (export.h) */
    sps__h5r_device_t dev;
    sps__tl_device_t dplaced;
    memset(&dev, 0, sizeof dev);
    memset(&dplaced, 0, sizeof dplaced);
    if (fi == SPS__TL_H5) {
        sps__err_clear();
        int drc = sps__h5r_device(in, &dev);
        if (!drc && sps__tl_device_place(&dplaced, &dev, &oh)) drc = SPS_ENOMEM;
        if (drc) {
            const char *dwhy = drc == SPS_ENOMEM ? sps_strerror(drc) : sps__err_msg();
            sps__h5r_device_free(&dev);
            sps__tl_samples_free(&placed);
            sps__h5r_samples_free(&smp);
            sps__tlr_free(r);
            free(tmp);
            return die(EXIT_DATA, "convert: %s", dwhy);
        }
        oh.threads = dplaced.threads;
        oh.nthreads = dplaced.nthreads;
    }
    /* JSON for torch's tools (HTA, Perfetto; TensorBoard's plugin with
     * --torch-tb): chrome_json.c */
    oh.kineto = torch_tb ? SPS__TL_TORCH_TB : 1;
    sps__tlw_t *w;
    rc = sps__tlw_open(&w, tmp, fo, &oh);
    const char *owhy = NULL;
    if (!rc && dplaced.nplaced && (rc = sps__tlw_device(w, &dplaced))) {
        sps__tlw_abort(w);
        if (rc == SPS_EINVAL) owhy = "a device activity's time leaves the trace's time range";
    }
    if (rc) {
        sps__tl_device_free(&dplaced);
        sps__h5r_device_free(&dev);
        sps__tl_samples_free(&placed);
        sps__h5r_samples_free(&smp);
        sps__tlr_free(r);
        unlink(tmp);
        free(tmp);
        return die(EXIT_DATA, "convert: %s", write_why(rc, out, owhy));
    }
    sps__err_clear(); /* what follows: the spans read and written */
    rc = convert_spans(r, w, h->nspans);
    const char *why = rc ? (rc == SPS_EFORMAT ? sps__err_msg() : sps_strerror(rc)) : NULL;
    if (!rc && placed.nplaced && (rc = sps__tlw_samples(w, &placed)) == SPS_EINVAL)
        why = "a stack sample's time leaves the trace's time range";
    if (rc) sps__tlw_abort(w);
    else rc = sps__tlw_close(w);
    sps__tl_device_free(&dplaced);
    sps__h5r_device_free(&dev);
    sps__tl_samples_free(&placed);
    sps__h5r_samples_free(&smp);
    sps__tlr_free(r);
    if (!rc && rename(tmp, out) != 0) sps__err_os_note(errno), rc = SPS_EIO;
    if (rc) unlink(tmp); /* no partial output */
    free(tmp);
    if (rc) return die(EXIT_DATA, "convert: %s", write_why(rc, out, why));
    return 0;
}
