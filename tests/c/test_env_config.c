/* test_env_config.c -- configuration without code (src/api/env.c): the
 * strict TOML reader on good text and on hostile text (truncated strings,
 * huge numbers, deep nesting, NUL bytes, invalid UTF-8: a clear
 * "NAME:LINE: ..." error, never a crash or a silent misreading), the one
 * table of settings (every variable the library reads is in it), the
 * resolution defaults < file < variables, unknown keys named, and
 * sps_setup_from_env / sps_env_resolve taking SPANSCOPE_CONFIG. */
#include "testutil.h"
#include "tu_core.h"
#include "tu_h5.h"

#include "api/env.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parses text (n bytes; -1: strlen) and returns the code; *msg the error. */
static int parse(const char *text, long n, sps__tv_t **out) {
    sps__err_clear();
    return sps__toml_parse(text, n < 0 ? strlen(text) : (size_t)n, "t.toml", out);
}

/* Asserts that text is refused with a message holding want (and the
 * file's name and line). */
static void refused(const char *text, long n, const char *want, int line) {
    sps__tv_t *v = (sps__tv_t *)1;
    int rc = parse(text, n, &v);
    if (rc != SPS_EINVAL || !strstr(sps__err_msg(), want))
        fail_msg("'%s': rc %d, message '%s', wanted '%s'", text, rc, sps__err_msg(), want);
    assert_null(v);
    char where[32];
    snprintf(where, sizeof where, "t.toml:%d: ", line);
    if (strncmp(sps__err_msg(), where, strlen(where)))
        fail_msg("'%s': message '%s' does not start with '%s'", text, sps__err_msg(), where);
}

static void test_toml_values(void **state) {
    (void)state;
    const char *text =
        "# comment\n"
        "top = 1\n"
        "[profiling]  # the table\n"
        "s = \"a\\tb\\u00e9\\U0001F600\\\"\\\\\"\n"
        "lit = 'C:\\path\\x'\n"
        "\"quoted key\" = true\n"
        "n = -1_000_000\n"
        "big = 9223372036854775807\n"
        "small = -9223372036854775808\n"
        "f = 6.5e-1\n"
        "inf_ = -inf\n"
        "arr = [ 1, 'two',\n   # a comment inside\n   [3], ]\n"
        "inl = { a = 1, b.c = \"x\" }\n"
        "dotted.x.y = false\r\n"
        "[profiling.memray]\n"
        "enabled = true\n";
    sps__tv_t *root = NULL;
    assert_int_equal(parse(text, -1, &root), 0);
    assert_int_equal(sps__tv_int(sps__tv_get(root, "top")), 1);
    const sps__tv_t *p = sps__tv_get(root, "profiling");
    assert_non_null(p);
    assert_int_equal(sps__tv_kind(p), SPS__TV_TABLE);
    assert_string_equal(sps__tv_str(sps__tv_get(p, "s")), "a\tb\xc3\xa9\xf0\x9f\x98\x80\"\\");
    assert_string_equal(sps__tv_str(sps__tv_get(p, "lit")), "C:\\path\\x");
    assert_true(sps__tv_bool(sps__tv_get(p, "quoted key")));
    assert_int_equal(sps__tv_int(sps__tv_get(p, "n")), -1000000);
    assert_true(sps__tv_int(sps__tv_get(p, "big")) == INT64_MAX);
    assert_true(sps__tv_int(sps__tv_get(p, "small")) == INT64_MIN);
    assert_true(sps__tv_float(sps__tv_get(p, "f")) == 0.65);
    assert_true(sps__tv_float(sps__tv_get(p, "inf_")) < -1e308);
    const sps__tv_t *arr = sps__tv_get(p, "arr");
    assert_int_equal(sps__tv_len(arr), 3);
    assert_string_equal(sps__tv_str(sps__tv_at(arr, 1)), "two");
    assert_int_equal(sps__tv_kind(sps__tv_at(arr, 2)), SPS__TV_ARRAY);
    assert_int_equal(sps__tv_line(sps__tv_at(arr, 2)), 14);
    const sps__tv_t *inl = sps__tv_get(p, "inl");
    assert_string_equal(sps__tv_str(sps__tv_get(sps__tv_get(inl, "b"), "c")), "x");
    const sps__tv_t *y = sps__tv_get(sps__tv_get(sps__tv_get(p, "dotted"), "x"), "y");
    assert_non_null(y);
    assert_false(sps__tv_bool(y));
    assert_true(sps__tv_bool(sps__tv_get(sps__tv_get(p, "memray"), "enabled")));
    sps__tv_free(root);
    /* empty text, only comments, a BOM */
    assert_int_equal(parse("", 0, &root), 0);
    assert_int_equal(sps__tv_len(root), 0);
    sps__tv_free(root);
    assert_int_equal(parse("\xEF\xBB\xBF# x\n\n", -1, &root), 0);
    sps__tv_free(root);
}

static void test_toml_hostile(void **state) {
    (void)state;
    /* truncated strings and tables */
    refused("a = \"abc", -1, "not closed", 1);
    refused("x = 1\na = 'abc\nb = 1", -1, "not closed", 2);
    refused("a = \"abc\\", -1, "lone backslash", 1);
    refused("a = \"\\u12\"", -1, "hexadecimal digits", 1);
    refused("a = [1, 2", -1, "not closed", 1);
    refused("a = {b = 1", -1, "not closed", 1);
    refused("[profiling", -1, "']' expected", 1);
    refused("a =", -1, "value is missing", 1);
    refused("a", -1, "'=' expected", 1);
    refused("= 1", -1, "key is expected", 1);
    /* numbers */
    refused("a = 9223372036854775808", -1, "out of range", 1);
    refused("a = -9223372036854775809", -1, "out of range", 1);
    refused("a = 99999999999999999999999999999999999999999999999999", -1, "out of range", 1);
    char huge[400] = "a = 1";
    memset(huge + 5, '0', 300);
    refused(huge, -1, "more than", 1);
    refused("a = 1e999", -1, "out of range", 1);
    refused("a = 0x1F", -1, "hexadecimal", 1);
    refused("a = 01", -1, "not a value", 1);
    refused("a = 1__0", -1, "not a value", 1);
    refused("a = _1", -1, "not a value", 1);
    refused("a = 1.", -1, "not a value", 1);
    refused("a = .5", -1, "needs quotes", 1);
    refused("a = 1979-05-27", -1, "dates and times", 1);
    refused("a = 07:32:00", -1, "dates and times", 1);
    refused("a = yes", -1, "needs quotes", 1);
    refused("a = True", -1, "needs quotes", 1);
    /* outside the subset: refused, not misread */
    refused("a = \"\"\"x\"\"\"", -1, "multi-line strings", 1);
    refused("a = '''x'''", -1, "multi-line strings", 1);
    refused("[[profiling]]", -1, "arrays of tables", 1);
    /* structure */
    refused("a = 1\na = 2", -1, "defined twice", 2);
    refused("[t]\n[t]", -1, "defined twice", 2);
    refused("a = 1\n[a]", -1, "already a value", 2);
    refused("a.b = 1\n[a]", -1, "defined twice", 2);
    refused("a = {b = 1}\na.c = 2", -1, "cannot be extended", 2);
    refused("a = 1 b = 2", -1, "goes on", 1);
    refused("a = \"\\q\"", -1, "unknown escape", 1);
    refused("a = \"\\u0000\"", -1, "NUL", 1);
    refused("a = \"\\uD800\"", -1, "scalar value", 1);
    refused("a = {b = 1,\nc = 2}", -1, "key is missing", 1);
    /* bytes that are no text */
    refused("a = 1\nb = \"x\0y\"", 15, "NUL byte", 2);
    refused("a = \"\xff\"", -1, "not UTF-8", 1);
    refused("a = \"\xc3\"", -1, "not UTF-8", 1);      /* truncated sequence */
    refused("a = \"\xed\xa0\x80\"", -1, "not UTF-8", 1); /* a surrogate */
    refused("a = 1\n\n\x01", -1, "control character", 3);
    refused("a = 1\rb = 2", -1, "carriage return", 1);
    /* deep nesting: refused at 32, whatever the depth */
    size_t deep = 100000;
    char *d = malloc(deep * 2 + 8);
    assert_non_null(d);
    memcpy(d, "a = ", 4);
    memset(d + 4, '[', deep);
    memset(d + 4 + deep, ']', deep);
    d[4 + 2 * deep] = 0;
    refused(d, -1, "nested more than 32", 1);
    memset(d + 4, '{', deep);
    refused(d, (long)(4 + deep), "a key is", 1);
    free(d);
    char nest[400] = "a = ";
    for (int i = 0; i < 40; i++) strcat(nest, "{b = ");
    strcat(nest, "1");
    for (int i = 0; i < 40; i++) strcat(nest, "}");
    refused(nest, -1, "nested more than 32", 1);
    /* every prefix of a good file: parsed or refused, never a crash */
    const char *good = "[profiling]\nfile_path = \"r\\u00e9.h5\"\narr = [1, {a = 'x'}]\n";
    for (size_t n = 0; n <= strlen(good); n++) {
        sps__tv_t *v = NULL;
        int rc = parse(good, (long)n, &v);
        assert_true(rc == 0 || rc == SPS_EINVAL);
        if (rc) assert_non_null(strstr(sps__err_msg(), "t.toml:"));
        sps__tv_free(v);
    }
}

/* Writes text to a temporary file; its path. */
static const char *write_file(const char *name, const char *text) {
    const char *path = tu_path(name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Every variable and key this test sets. */
static void env_clear(void) {
    size_t n;
    const sps__setting_t *t = sps__settings_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (t[i].env && (t[i].flags & (SPS__SF_TUNING | SPS__SF_TOOL)) == 0 &&
            strcmp(t[i].env, "SPANSCOPE_SAMPLER"))
            unsetenv(t[i].env);
        if (t[i].alias) unsetenv(t[i].alias);
    }
}

static void test_table(void **state) {
    (void)state;
    size_t n;
    const sps__setting_t *t = sps__settings_table(&n);
    assert_true(n > 40);
    for (size_t i = 0; i < n; i++) {
        assert_true(t[i].env || t[i].toml);
        assert_non_null(t[i].doc);
        assert_non_null(t[i].dflt);
        if (t[i].env) assert_int_equal(strncmp(t[i].env, "SPANSCOPE_", 10), 0);
        if (t[i].alias) assert_int_equal(strncmp(t[i].alias, "SCOPE_PROFILER_", 15), 0);
        for (size_t j = 0; j < i; j++) { /* no name twice */
            if (t[i].env && t[j].env) assert_string_not_equal(t[i].env, t[j].env);
            if (t[i].toml && t[j].toml) assert_string_not_equal(t[i].toml, t[j].toml);
        }
        if (t[i].env) assert_int_equal(sps__setting_by_env(t[i].env), (int)i);
        if (t[i].toml) assert_int_equal(sps__setting_by_toml(t[i].toml), (int)i);
    }
    /* the variables that every helper of issue 35 reads, and the older ones */
    static const char *const must[] = {
        "SPANSCOPE_SIGNALS", "SPANSCOPE_CRASH_SAFE", "SPANSCOPE_FORK", "SPANSCOPE_FOLLOW",
        "SPANSCOPE_RUN", "SPANSCOPE_OUTPUT", "SPANSCOPE_CONFIG", "SPANSCOPE_SAMPLE_HZ",
        "SPANSCOPE_BG_ANALYSIS", "SPANSCOPE_SPILL_THREAD", "SPANSCOPE_READ_TIMEOUT",
        "SCOPE_PROFILER_OUTPUT", "SCOPE_PROFILER_SAMPLE_HZ"};
    for (size_t i = 0; i < sizeof must / sizeof *must; i++)
        if (sps__setting_by_env(must[i]) < 0) fail_msg("%s is not in the table", must[i]);
    /* every SPANSCOPE_* name the sources read with getenv is in the table
     * (the source tree: above tests/c/, where this file is; grep finds
     * the names) */
    char src[512];
    snprintf(src, sizeof src, "%s", __FILE__);
    char *cut = strstr(src, "/tests/c/test_env_config.c");
    if (!cut) skip(); /* built from a copy elsewhere: nothing to grep */
    *cut = 0;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "grep -rhoE 'getenv\\(\"SPANSCOPE_[A-Z0-9_]+' '%s/src' '%s/tools' "
             "'%s/python/spanscope' | sed 's/.*\"//' | sort -u",
             src, src, src);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[256];
    int seen = 0;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        seen++;
        if (sps__setting_by_env(line) < 0) fail_msg("%s (read by the sources) is not in the "
                                                     "table of src/api/env.c", line);
    }
    pclose(p);
    assert_true(seen > 10);
}

static void test_resolve_precedence(void **state) {
    (void)state;
    env_clear();
    const char *cfg = write_file("env_cfg_a.toml",
                                 "[profiling]\n"
                                 "file_path = \"from-file.h5\"\n"
                                 "label = \"file-label\"\n"
                                 "memory_limit = 4096\n"
                                 "overflow = \"drop\"\n"
                                 "chunk_size = 8192\n"
                                 "enable_tags = [\"io\", \"net\"]\n"
                                 "[profiling.hdf5]\n"
                                 "compression = \"none\"\n");
    sps__settings_t *s = NULL;
    assert_int_equal(sps__settings_resolve(cfg, &s), 0);
    int fp = sps__setting_by_toml("file_path"), lb = sps__setting_by_toml("label");
    const char *v;
    sps__settings_str(s, fp, &v);
    assert_string_equal(v, "from-file.h5");
    assert_int_equal(s->v[fp].from, SPS__FROM_FILE);
    uint64_t u;
    assert_int_equal(sps__settings_uint(s, sps__setting_by_toml("memory_limit"), &u), 0);
    assert_int_equal(u, 4096);
    char buf[64];
    assert_int_equal(sps__settings_list(s, sps__setting_by_toml("enable_tags"), buf, sizeof buf),
                     0);
    assert_string_equal(buf, "io,net");
    assert_int_equal(sps__settings_list(s, sps__setting_by_toml("enable_tags"), buf, 4),
                     SPS_ETOOBIG);
    int hc = sps__setting_by_toml("hdf5_compression");
    assert_int_equal(s->v[hc].from, SPS__FROM_FILE);
    assert_string_equal(s->v[hc].via, "hdf5.compression");
    sps__settings_free(s);
    /* the variables win over the file; the alias when SPANSCOPE_ is unset */
    setenv("SCOPE_PROFILER_OUTPUT", "alias.h5", 1);
    setenv("SPANSCOPE_LABEL", "env-label", 1);
    setenv("SCOPE_PROFILER_LABEL", "alias-label", 1);
    assert_int_equal(sps__settings_resolve(cfg, &s), 0);
    sps__settings_str(s, fp, &v);
    assert_string_equal(v, "alias.h5");
    assert_int_equal(s->v[fp].from, SPS__FROM_ALIAS);
    sps__settings_str(s, lb, &v);
    assert_string_equal(v, "env-label");
    assert_int_equal(s->v[lb].from, SPS__FROM_ENV);
    sps__settings_free(s);
    /* through the public calls */
    setenv("SPANSCOPE_CONFIG", cfg, 1);
    sps_env_t e;
    char err[512] = "";
    assert_int_equal(sps_env_resolve(&e, err, sizeof err), 0);
    assert_string_equal(e.cfg.file_path, "alias.h5");
    assert_string_equal(e.cfg.label, "env-label");
    assert_int_equal(e.cfg.memory_limit, 4096);
    assert_int_equal(e.cfg.chunk_size, 8192);
    assert_int_equal(e.cfg.overflow, SPS_OVERFLOW_DROP);
    assert_int_equal(e.cfg.compress_threshold, -1);
    assert_string_equal(e.enable_tags, "io,net");
    assert_true(e.has_output);
    /* sps_env_read: the variables only */
    assert_int_equal(sps_env_read(&e, err, sizeof err), 0);
    assert_int_equal(e.cfg.memory_limit, 0);
    assert_string_equal(e.config_path, cfg);
    assert_null(e.enable_tags);
    /* SPANSCOPE_OUTPUT=none: no file, whatever the file says */
    setenv("SPANSCOPE_OUTPUT", "none", 1);
    assert_int_equal(sps_env_resolve(&e, err, sizeof err), 0);
    assert_null(e.cfg.file_path);
    assert_true(e.has_output);
    /* a bad variable is named */
    setenv("SPANSCOPE_MEMORY_LIMIT", "lots", 1);
    assert_int_equal(sps_env_resolve(&e, err, sizeof err), SPS_EINVAL);
    assert_non_null(strstr(err, "SPANSCOPE_MEMORY_LIMIT=lots"));
    env_clear();
}

static void test_file_errors_name_the_key(void **state) {
    (void)state;
    env_clear();
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[profiling]\nfile_pth = \"x.h5\"\n", ":2: unknown profiling setting 'file_pth' (did "
                                               "you mean 'file_path'?)"},
        {"[profiling]\nwhatever = 1\n", ":2: unknown profiling setting 'whatever'"},
        {"[profiling.memray]\nenabeld = true\n", ":2: unknown [memray] profiling setting "
                                                 "'enabeld' (did you mean 'enabled'?)"},
        {"[profiling]\nuse_memray = true\n[profiling.memray]\nenabled = true\n",
         ":4: profiling setting 'use_memray' is set both directly and as memray.enabled"},
        {"[profiling]\naggregation_mode = \"yes\"\n", ":2: profiling setting "
                                                      "'aggregation_mode' must be a boolean"},
        {"[profiling]\nmemory_limit = -1\n", ":2: profiling setting 'memory_limit' must be a "
                                             "whole number >= 0"},
        {"[profiling]\nmemory_limit = 1.5\n", "must be a whole number >= 0, not a float"},
        {"[profiling]\nperf_events = []\n", "non-empty list of event names"},
        {"[profiling]\nperf_events = [\"a\", \"A\"]\n", "names 'A' twice"},
        {"[profiling]\nenable_tags = [1]\n", "must hold non-empty strings, not an integer"},
        {"profiling = 3\n", ":1: profiling must be a TOML table"},
        {"[profiling]\nmemray = 1\n", "'memray' must be a TOML table"},
        {"label = \"x\"\n[other]\n", ":2: unknown profiling setting 'other'"},
        {"[profiling]\nlabel = \"x\xff\"\n", ":2: byte 0xff is not UTF-8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = write_file("env_cfg_bad.toml", cases[i].text);
        sps__settings_t *s = (sps__settings_t *)1;
        sps__err_clear();
        int rc = sps__settings_resolve(path, &s);
        if (rc != SPS_EINVAL || !strstr(sps__err_msg(), cases[i].want) ||
            !strstr(sps__err_msg(), path))
            fail_msg("case %zu: rc %d, '%s', wanted '%s'", i, rc, sps__err_msg(),
                     cases[i].want);
        assert_null(s);
    }
    /* a file that is not there, and a directory */
    sps__settings_t *s = NULL;
    assert_int_equal(sps__settings_resolve(tu_path("no-such.toml"), &s), SPS_EIO);
    assert_non_null(strstr(sps__err_msg(), "no-such.toml"));
    assert_int_equal(sps__settings_resolve("/", &s), SPS_EIO);
    /* a file without [profiling]: its top level, as the Python face reads it */
    const char *path = write_file("env_cfg_top.toml", "label = \"top\"\n");
    assert_int_equal(sps__settings_resolve(path, &s), 0);
    const char *v;
    sps__settings_str(s, sps__setting_by_toml("label"), &v);
    assert_string_equal(v, "top");
    sps__settings_free(s);
    /* hdf5_compression lzf: not available (as in the Python face) */
    path = write_file("env_cfg_lzf.toml", "[profiling]\nhdf5_compression = \"lzf\"\n");
    setenv("SPANSCOPE_CONFIG", path, 1);
    sps_env_t e;
    char err[512];
    assert_int_equal(sps_env_resolve(&e, err, sizeof err), SPS_ENOTSUP);
    assert_non_null(strstr(err, "lzf"));
    env_clear();
}

static void test_setup_from_env_reads_the_file(void **state) {
    (void)state;
    env_clear();
    const char *out = tu_path("env_cfg_run.h5");
    unlink(out);
    char text[1024];
    snprintf(text, sizeof text,
             "[profiling]\nfile_path = \"%s\"\nlabel = \"from-toml\"\n"
             "use_memray = false  # the Python face's: checked, left alone\n", out);
    const char *cfg = write_file("env_cfg_run.toml", text);
    setenv("SPANSCOPE_CONFIG", cfg, 1);
    char err[512] = "";
    assert_int_equal(sps_setup_from_env(err, sizeof err), 0);
    assert_true(sps_is_active());
    sps_region_t A = sps_region("cfg.region");
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(out);
    assert_non_null(h);
    assert_true(h->ok);
    assert_true(tu_h5_row(h, "cfg.region") >= 0);
    tu_h5_free(h);
    sps_shutdown();
    unlink(out);
    /* deactivate_profiling in the file: no session */
    cfg = write_file("env_cfg_off.toml", "[profiling]\ndeactivate_profiling = true\n");
    setenv("SPANSCOPE_CONFIG", cfg, 1);
    assert_int_equal(sps_setup_from_env(err, sizeof err), 0);
    assert_false(sps_is_active());
    /* ... and the variable over it */
    setenv("SPANSCOPE_DEACTIVATE_PROFILING", "0", 1);
    assert_int_equal(sps_setup_from_env(err, sizeof err), 0);
    assert_true(sps_is_active());
    sps_shutdown();
    /* an unknown key: an error naming it and the file, no session */
    cfg = write_file("env_cfg_unknown.toml", "[profiling]\nlabell = \"x\"\n");
    setenv("SPANSCOPE_CONFIG", cfg, 1);
    err[0] = 0;
    assert_int_equal(sps_setup_from_env(err, sizeof err), SPS_EINVAL);
    assert_non_null(strstr(err, "labell"));
    assert_non_null(strstr(err, cfg));
    assert_false(sps_is_active());
    /* a missing file */
    setenv("SPANSCOPE_CONFIG", tu_path("missing.toml"), 1);
    assert_int_equal(sps_setup_from_env(err, sizeof err), SPS_EIO);
    assert_non_null(strstr(err, "missing.toml"));
    env_clear();
}

static void test_unknown_variables(void **state) {
    (void)state;
    setenv("SPANSCOPE_OUTPTU", "x", 1);
    char name[128];
    size_t idx = 0;
    const char *u;
    int found = 0;
    while ((u = sps__env_unknown_next(&idx, name, sizeof name)))
        if (!strcmp(u, "SPANSCOPE_OUTPTU")) found = 1;
    assert_true(found);
    const char *near = sps__env_closest("SPANSCOPE_OUTPTU");
    assert_non_null(near);
    assert_string_equal(near, "SPANSCOPE_OUTPUT");
    /* the tool names it too, and exits 0; the table lists every setting */
    assert_int_equal(tu_system("SPANSCOPE_OUTPTU=x '%s' config > '%s' 2>&1", getenv("SPS_CLI"),
                               tu_path("config_out.txt")), 0);
    assert_int_equal(tu_system("grep -q 'unknown variable SPANSCOPE_OUTPTU.*SPANSCOPE_OUTPUT' "
                               "'%s'", tu_path("config_out.txt")), 0);
    assert_int_equal(tu_system("grep -q 'SPANSCOPE_SIGNALS' '%s'", tu_path("config_out.txt")),
                     0);
    unsetenv("SPANSCOPE_OUTPTU");
    /* a bad file: exit status 1 with the file and key named */
    const char *cfg = write_file("env_cfg_cli.toml", "[profiling]\nlabel = 1\n");
    assert_int_equal(tu_system("'%s' config --file '%s' > '%s' 2>&1", getenv("SPS_CLI"), cfg,
                               tu_path("config_out.txt")), 1);
    assert_int_equal(tu_system("grep -q \"env_cfg_cli.toml:2: profiling setting 'label' "
                               "must be a string\" '%s'", tu_path("config_out.txt")), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_toml_values),
        cmocka_unit_test(test_toml_hostile),
        cmocka_unit_test(test_table),
        TU_TEST(test_resolve_precedence),
        TU_TEST(test_file_errors_name_the_key),
        TU_TEST(test_setup_from_env_reads_the_file),
        cmocka_unit_test(test_unknown_variables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
