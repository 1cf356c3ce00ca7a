/* fuzz_chrome_json.c -- libFuzzer target: the Chrome trace JSON reader
 * (chrome_json_read.c) through sps__tlr_open.  Inputs starting with the
 * gzip magic are read as .json.gz, the rest as plain .json. */
#include "fuzz_util.h"

/* libFuzzer's entry point: reads data as a Chrome trace file. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0) return 0;
    int gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    fuzz_read_timeline(path, gz ? SPS__TL_JSON_GZ : SPS__TL_JSON);
    close(fd);
    return 0;
}
