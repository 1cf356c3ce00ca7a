#include <spanscope.h>
#include <stdio.h>

int main(int argc, char **argv) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = argc > 1 ? argv[1] : NULL;
    if (sps_setup(&cfg) < 0) return 1;
    for (int i = 0; i < 10; i++) {
        SPS_REGION("consumer.loop");
    }
    sps_stats_t st;
    sps_region_stats(sps_region("consumer.loop"), &st);
    printf("calls %llu\n", (unsigned long long)st.num_calls);
    return sps_finalize() < 0 || st.num_calls != 10;
}
