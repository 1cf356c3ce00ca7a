/* fuzz_toml.c -- libFuzzer target: the configuration file reader
 * (src/api/env.c: sps__toml_parse, then the [profiling] table's checks
 * through sps__settings_resolve on the same bytes as a file).  Beyond what
 * ASan and UBSan catch, it traps when the reader breaks its contract: a
 * refusal without a "NAME:LINE: " message, a success that hands out a
 * string holding bytes that are not UTF-8, or a value whose line is not
 * one of the input's. */
#include "api/env.h"
#include "spanscope.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Walks v (any depth: the reader caps nesting), checking every string and
 * line; returns the number of values. */
static size_t walk(const sps__tv_t *v, int lines) {
    int line = sps__tv_line(v);
    if (line < 1 || line > lines) __builtin_trap();
    size_t n = 1;
    switch (sps__tv_kind(v)) {
    case SPS__TV_STR: {
        const char *s = sps__tv_str(v);
        if (!s || !sps__utf8_valid(s, strlen(s))) __builtin_trap();
        break;
    }
    case SPS__TV_ARRAY:
    case SPS__TV_TABLE:
        for (size_t i = 0; i < sps__tv_len(v); i++) {
            const char *k = sps__tv_key(v, i);
            if (sps__tv_kind(v) == SPS__TV_TABLE && (!k || sps__tv_get(v, k) == NULL))
                __builtin_trap();
            n += walk(sps__tv_at(v, i), lines);
        }
        break;
    default:
        break;
    }
    return n;
}

/* libFuzzer's entry point: reads data as a configuration file. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int lines = 1;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    sps__tv_t *root = NULL;
    sps__err_clear();
    int rc = sps__toml_parse((const char *)data, size, "fuzz.toml", &root);
    if (rc) {
        if (root || strncmp(sps__err_msg(), "fuzz.toml:", 10)) __builtin_trap();
    } else {
        walk(root, lines);
        sps__tv_free(root);
    }
    /* the same bytes as SPANSCOPE_CONFIG's file: the [profiling] checks */
    int fd = memfd_create("spanscope-fuzz-toml", MFD_CLOEXEC);
    if (fd < 0) return 0;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    sps__settings_t *s = NULL;
    if (off == size && sps__settings_resolve(path, &s) == 0) {
        size_t n;
        sps__settings_table(&n);
        FILE *null = fopen("/dev/null", "w");
        for (size_t i = 0; i < n && null; i++) sps__settings_put(null, s, (int)i, 1);
        if (null) fclose(null);
        sps__settings_free(s);
    }
    close(fd);
    return 0;
}
