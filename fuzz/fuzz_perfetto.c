/* fuzz_perfetto.c -- libFuzzer target: the Perfetto protobuf reader
 * (perfetto_read.c) through sps__tlr_open. */
#include "fuzz_util.h"

/* libFuzzer's entry point: reads data as a .pftrace file. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0) return 0;
    fuzz_read_timeline(path, SPS__TL_PFTRACE);
    close(fd);
    return 0;
}
