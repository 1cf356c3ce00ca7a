/* A runnable example of scope-profiler's C API, recording through spanscope.
 *
 *     make -f "$(python -c 'import spanscope.results as r; print(r.c_source_path().parent)')/Makefile" \
 *          BUILD_DIR=/tmp/sp-example run
 *
 * or by hand, with INC and SRC as in scope_profiler.c's comment:
 *
 *     cc -std=c99 -O2 -I"$INC" example.c "$SRC" -lm -o example && ./example
 *
 * It writes profile_rank00000.spt (profile_rank00000.h5 when built with
 * -DSP_USE_HDF5), which spanscope.results.load_traces() / convert_traces()
 * read.  Regions: "assemble", "solve" (20 calls each), "checkpoint" (2),
 * "fibonacci" around a recursive "fib_call".
 */
#include "scope_profiler.h"

#include <math.h>
#include <stdio.h>

/* Floating-point work the compiler has to keep. */
static double churn(int n)
{
    double sum = 0.0;
    int k;
    for (k = 1; k <= n; ++k) sum += sqrt((double)k) / (double)k;
    return sum;
}

/* A recursive region: each level is one more open call of "fib_call". */
static long fib(int n)
{
    int call = sp_region("fib_call");
    long out;
    sp_begin(call);
    out = n < 2 ? (long)n : fib(n - 1) + fib(n - 2);
    sp_end(call);
    return out;
}

int main(void)
{
    int step, assemble, solve, checkpoint, fibonacci;
    double checksum = 0.0;
    long f;

    if (sp_init("profile", 0) != 0) fprintf(stderr, "example: profiling is off\n");

    /* region handles are resolved once, outside the loop */
    assemble = sp_region("assemble");
    solve = sp_region("solve");
    checkpoint = sp_region("checkpoint");
    fibonacci = sp_region("fibonacci");

    for (step = 0; step < 20; ++step) {
        sp_begin(assemble);
        checksum += churn(15000);
        sp_end(assemble);

        sp_begin(solve);
        checksum += churn(40000);
        sp_end(solve);

        if ((step + 1) % 10 == 0) {
            sp_begin(checkpoint);
            checksum += churn(4000);
            sp_end(checkpoint);
        }
    }

    sp_begin(fibonacci);
    f = fib(11);
    sp_end(fibonacci);

    printf("solve: %lld call(s), fib(11) = %ld, checksum %.3f\n",
           (long long)sp_num_calls(solve), f, checksum);
    printf("writing %s\n", sp_output_path() ? sp_output_path() : "(nothing)");
    return sp_finalize() == 0 ? 0 : 1;
}
