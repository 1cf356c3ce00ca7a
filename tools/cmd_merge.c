/*
 * cmd_merge.c -- spanscope merge -o OUT IN...: the command line of
 * sps_merge (src/api/merge.c; the rules for ranks and clock alignment are
 * src/model/align.c; docs/merge.md).
 *
 * Exit status: 2 for usage (options, no -o or inputs, unknown
 * extension), 1 for data (anything sps_merge reports), each
 * error one line on stderr.  The dispatcher runs merge in a child process
 * (HDF5 may crash on a corrupt file); the reading of each input is under
 * the watchdog's time limit, lifted once every input's header is read.
 */
#include "sps_int.h"
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char merge_help[] =
    "usage: spanscope merge -o OUT IN...\n"
    "\n"
    "Merges per-rank recordings into one file: each input becomes one\n"
    "process, labelled with its rank (from the file: /metadata rank of an\n"
    ".h5, distributedInfo.rank or a \"rank N\" process label of a trace;\n"
    "else its position among the inputs).  Two inputs with the same rank\n"
    "are an error.\n"
    "\n"
    "Clocks are aligned through the MPI clock offset an .h5 carries\n"
    "(clock_offset_ns, onto rank 0's clock), else through each recording's\n"
    "wall-clock anchor (an .h5's /metadata, a spanscope JSON trace's\n"
    "\"spanscopeClock\") onto the clock of the first input that has one\n"
    "(recordings of one host are not shifted).\n"
    "Traces without an anchor (Perfetto, torch's JSON) are merged unshifted;\n"
    "the JSON output records this per rank as \"clock_aligned\": false.\n"
    "See docs/merge.md.\n"
    "\n"
    "The stack samples of .h5 inputs (with_samples) go along, shifted like\n"
    "their spans: into an .h5's /samples (each under its rank), into a trace\n"
    "on their thread's row (JSON instant events, Perfetto PerfSamples).\n"
    "\n"
    "OUT by extension:\n"
    "  .json, .json.gz, .pftrace  from any inputs (.h5, .json, .json.gz,\n"
    "                             .pftrace)\n"
    "  .h5                        from any inputs (from traces: through\n"
    "                             the trace merge, then written as .h5)\n"
    "\n"
    "options:\n"
    "  -o, --output OUT   the merged file (written to a temporary name and\n"
    "                     renamed into place)\n"
    "  -h, --help         show this help and exit\n";

/* Parses merge's arguments: *out and the inputs (pointers into argv, in
 * order, into ins).  Returns 0, 1 for --help, or EXIT_USAGE after the
 * error line. */
static int merge_args(int argc, char **argv, const char **out,
                      const char **ins, size_t *nin) {
    int opts_done = 0;
    *nin = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!opts_done && !strcmp(a, "--")) { opts_done = 1; continue; }
        if (!opts_done && (!strcmp(a, "-h") || !strcmp(a, "--help"))) return 1;
        int o = opts_done ? 0 : cli_output_opt(argc, argv, &i, out);
        if (o < 0) return die(EXIT_USAGE, "merge: %s needs a file name", a);
        if (o) continue;
        if (!opts_done && a[0] == '-' && a[1])
            return die(EXIT_USAGE, "merge: unknown option '%s' (see spanscope "
                       "merge --help)", a);
        ins[(*nin)++] = a;
    }
    if (!*out || !**out)
        return die(EXIT_USAGE, "merge: missing -o OUT (see spanscope merge "
                   "--help)");
    if (!*nin)
        return die(EXIT_USAGE, "merge: no input files (see spanscope merge "
                   "--help)");
    return 0;
}

/* The read_done hook: the inputs' headers are read, the rest is bounded
 * work, so the watchdog is lifted. */
static void read_done(void) { alarm(0); }

/* Checks the arguments (check non-zero: sps__merge_check, no file read)
 * or merges (sps__merge with the watchdog hooks), the library's error line
 * caught in a memory stream and printed as "spanscope: merge: <line>".
 * Returns 0, or code after the error line. */
static int run_merge(int check, const char *out, const char **ins, size_t n,
                     int code) {
    static const sps__merge_hooks_t hooks = {input_watchdog, read_done};
    char *line = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&line, &len);
    int rc = check ? sps__merge_check(out, ins, n, err)
                   : sps__merge(out, ins, n, err, &hooks);
    if (err) fclose(err);
    while (line && len > 0 && line[len - 1] == '\n') line[--len] = 0;
    if (rc) die(code, "merge: %s", line && *line ? line : sps_strerror(rc));
    free(line);
    return rc ? code : 0;
}

/* spanscope merge -o OUT IN... */
int cmd_merge(int argc, char **argv) {
    const char *out = NULL;
    const char **ins = calloc((size_t)argc + 1, sizeof *ins);
    size_t n = 0;
    if (!ins) return die(EXIT_DATA, "merge: out of memory");
    int rc = merge_args(argc, argv, &out, ins, &n);
    if (rc == 1) {
        free(ins);
        fputs(merge_help, stdout);
        return 0;
    }
    if (rc == 0) rc = run_merge(1, out, ins, n, EXIT_USAGE);
    if (rc == 0) rc = run_merge(0, out, ins, n, EXIT_DATA);
    free(ins);
    return rc;
}
