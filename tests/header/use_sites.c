/* Every public macro of <spanscope.h> at a use site, compiled as C and as
 * C++ by tests/header/run.sh under the strictest warning sets users ask
 * for (any warning fails), then linked and run: the scopes record what
 * they should, SPS_FUNCTION and SPS_REGION are declarations (declarations
 * follow them here), the run-time version is the header's.
 * With -DSPS_DISABLE the scopes compile to nothing and record nothing. */
#include <spanscope.h>

#include <stdio.h>
#include <string.h>

#if !SPS_VERSION_AT_LEAST(0, 1, 0)
#error "SPS_VERSION_AT_LEAST(0, 1, 0) is false for a 0.1+ header"
#endif
#if SPS_VERSION_AT_LEAST(SPS_VERSION_MAJOR, SPS_VERSION_MINOR, SPS_VERSION_PATCH + 1)
#error "SPS_VERSION_AT_LEAST is true for a version after the header's"
#endif
#if SPS_VERSION_NUMBER != SPS_VERSION_ENCODE(SPS_VERSION_MAJOR, SPS_VERSION_MINOR, SPS_VERSION_PATCH)
#error "SPS_VERSION_NUMBER is not SPS_VERSION_ENCODE of the parts"
#endif

static int failures;
static const char *no_name; /* a null pointer in C and in C++ */

static void expect(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "use_sites: %s\n", what);
        failures++;
    }
}

/* SPS_FUNCTION first, declarations after it (-Wdeclaration-after-statement) */
static int scoped(int x) {
    SPS_FUNCTION();
    int y = x + 1;
    {
        SPS_REGION("use_sites.block");
        int z = y * 2;
        y = z;
    }
    return y;
}

/* Counts the codes of SPS_ERRNO_MAP and checks each one's name. */
static int check_errno_map(void) {
    int n = 0;
#define USE_SITES_CODE(name, val, msg)                                         \
    n++;                                                                       \
    expect(SPS_##name == (val) && (val) < 0, "code " #name);                  \
    expect(strcmp(sps_err_name(SPS_##name), "SPS_" #name) == 0, "name " #name); \
    expect(strcmp(sps_strerror(SPS_##name), msg) == 0, "message " #name);
    SPS_ERRNO_MAP(USE_SITES_CODE)
#undef USE_SITES_CODE
    return n;
}

int main(void) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    sps_html_options_t html = SPS_HTML_OPTIONS_INIT;
    sps_export_opts_t exp = SPS_EXPORT_OPTS_INIT;
    sps_stats_t st;
    int i;
    unsigned has = SPS_FILE_HAS_LIKWID | SPS_FILE_HAS_PERF_EVENTS | SPS_FILE_HAS_LINE_PROFILE;
    uint64_t seq_none = SPS_SEQ_NONE;
    uint32_t no_row = SPS_FILE_NO_ROW;
    uint64_t expect_calls = 3;
    sps_frame_walker_t walker;

#ifdef SPS_DISABLE
    expect_calls = 0;
#endif
    expect(has == 7u, "SPS_FILE_HAS_* are distinct bits");
    expect((SPS_TRACK_MEMORY | SPS_TRACK_COUNTERS) == 3, "SPS_TRACK_* are distinct bits");
    expect((SPS_EMIT_NVTX | SPS_EMIT_ITT) == 3, "SPS_EMIT_* are distinct bits");
    expect((SPS_DEVICE_CUPTI | SPS_DEVICE_EVENTS) == 3, "SPS_DEVICE_* collectors are distinct bits");
    expect(SPS_DEVICE_KERNEL + SPS_DEVICE_MEMCPY + SPS_DEVICE_MEMSET + SPS_DEVICE_RUNTIME +
               SPS_DEVICE_DRIVER == 15 && SPS_DEVICE_DRIVER == 5,
           "SPS_DEVICE_KERNEL..SPS_DEVICE_DRIVER are /device's kinds 1..5");
    memset(&walker, 0, sizeof walker);
    walker.abi = SPS_FRAME_WALKER_ABI + 1;
    expect(sps_sampling_set_walker(&walker) == SPS_EINVAL, "SPS_FRAME_WALKER_ABI checked");
    expect(seq_none == UINT64_MAX && no_row == UINT32_MAX, "SPS_SEQ_NONE, SPS_FILE_NO_ROW");
    expect(html.max_spans == SPS_HTML_DEFAULT_MAX_SPANS &&
               SPS_HTML_DEFAULT_MAX_SPANS <= SPS_HTML_MAX_SPANS_LIMIT,
           "SPS_HTML_OPTIONS_INIT");
    expect(exp.width == 1200 && exp.call_paths == 1, "SPS_EXPORT_OPTS_INIT");
    expect(sps_region(no_name) == SPS_REGION_INVALID, "SPS_REGION_INVALID");
    expect(check_errno_map() > 0, "SPS_ERRNO_MAP is empty");
    expect(strcmp(sps_version(), SPS_VERSION_STRING) == 0, "sps_version()");
    expect(sps_version_number() == SPS_VERSION_NUMBER, "sps_version_number()");

    cfg.file_path = no_name;
    if (sps_setup(&cfg) < 0) {
        fprintf(stderr, "use_sites: sps_setup failed\n");
        return 1;
    }
    for (i = 0; i < 3; i++) expect(scoped(i) == 2 * (i + 1), "scoped()'s result");
    if (expect_calls) {
        expect(sps_region_stats(sps_region("scoped"), &st) == 0 &&
                   st.num_calls == expect_calls,
               "SPS_FUNCTION records each call under the function's name");
        expect(sps_region_stats(sps_region("use_sites.block"), &st) == 0 &&
                   st.num_calls == expect_calls,
               "SPS_REGION records each pass through its block");
    } else {
        expect(sps_region_stats(sps_region("scoped"), &st) != 0 || st.num_calls == 0,
               "SPS_DISABLE: SPS_FUNCTION records nothing");
    }
    expect(sps_finalize() == 0 && sps_shutdown() == 0, "finalize, shutdown");
    if (failures == 0) printf("use_sites: ok\n");
    return failures != 0;
}
