/* gpu_check.cu -- issue 38 part 6: the device check run on a GPU machine by
 * scripts/gpu-check.sh (it cannot run without one; CI only compiles it
 * when nvcc is there).
 *
 * A small CUDA program marks regions around kernels, copies and a set,
 * records them with spanscope (mode "cupti": CUPTI activities joined to
 * spans; mode "events": gpu_timing's CUDA-event pair per region call;
 * either with "+nvtx": NVTX ranges on too), and measures the truth itself:
 * its own CUDA-event pair around the body of every region call.  After the
 * finalize it reads its file back through the public readers and checks:
 *
 *   - cupti: the kernel names and counts, every kernel / copy / set joined
 *     to the span that launched it (its region), and per span the device
 *     time (/events/gpu_durations) within 10 % of the CUDA events';
 *   - events: per span the device time within 10 % of the CUDA events'.
 *
 * It prints one table row per region and "gpu-check <mode>: ok" or the
 * first failures, and exits 0 / 1 (2: the device or spanscope refused,
 * with the reason).  Also built as a shared library (-DGPU_CHECK_LIB: no
 * main, no spanscope calls made) whose phases the Python half
 * (gpu_check.py) calls through ctypes inside record_function regions. */
#include <spanscope.h>

#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                         \
    do {                                                                              \
        cudaError_t e_ = (x);                                                         \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "gpu-check: %s: %s\n", #x, cudaGetErrorString(e_));       \
            exit(2);                                                                  \
        }                                                                             \
    } while (0)

/* Compute-bound kernels that last about a millisecond each on a current
 * GPU, so that a launch's few microseconds are far below the 10 %. */
__global__ void saxpy_kernel(float *y, const float *x, float a, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = y[i];
    for (int k = 0; k < iters; k++) v = a * x[i] + v * 0.999f;
    y[i] = v;
}

__global__ void stencil_kernel(float *out, const float *in, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= 0 || i >= n - 1) return;
    float v = in[i];
    for (int k = 0; k < iters; k++) v = 0.25f * (in[i - 1] + 2.0f * v + in[i + 1]) * 0.999f;
    out[i] = v;
}

enum { R_UPLOAD, R_STEP, R_SAXPY, R_STENCIL, R_DOWNLOAD, NREG };
static const char *const REG_NAME[NREG] = {"upload", "step", "saxpy", "stencil", "download"};

/* The truth: per region, per call, the ms between the CUDA events around
 * the region's own device work (the step's: its memset alone). */
typedef struct {
    cudaEvent_t *a, *b;
    int n, cap;
} truth_t;

static truth_t TRUTH[NREG];

static void truth_mark(int r, cudaEvent_t *ev) {
    truth_t *t = &TRUTH[r];
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->a = (cudaEvent_t *)realloc(t->a, t->cap * sizeof *t->a);
        t->b = (cudaEvent_t *)realloc(t->b, t->cap * sizeof *t->b);
        if (!t->a || !t->b) exit(2);
    }
    CK(cudaEventCreate(&t->a[t->n]));
    CK(cudaEventCreate(&t->b[t->n]));
    *ev = t->a[t->n];
}

#define TRUTH_BEGIN(r)                 \
    cudaEvent_t tb_;                   \
    truth_mark(r, &tb_);               \
    CK(cudaEventRecord(tb_, 0))
#define TRUTH_END(r)                                        \
    CK(cudaEventRecord(TRUTH[r].b[TRUTH[r].n], 0));         \
    TRUTH[r].n++

/* The workload's state: pinned host memory, two device arrays, and the
 * regions (marked here when the C half runs; the Python half marks them
 * itself with record_function around each phase). */
static float *H, *DX, *DY;
static size_t BYTES;
static int NF, ITERS;
#ifndef GPU_CHECK_LIB
static int MARK;
static sps_region_t REG[NREG];
#endif

extern "C" int gpu_check_init(int n_floats, int iters, int mark) {
    NF = n_floats, ITERS = iters;
    BYTES = (size_t)n_floats * sizeof(float);
    CK(cudaMallocHost((void **)&H, BYTES));
    for (int i = 0; i < n_floats; i++) H[i] = (float)(i % 97) * 0.01f;
    CK(cudaMalloc((void **)&DX, BYTES));
    CK(cudaMalloc((void **)&DY, BYTES));
#ifndef GPU_CHECK_LIB
    MARK = mark;
    if (mark)
        for (int r = 0; r < NREG; r++) REG[r] = sps_region(REG_NAME[r]);
#else
    (void)mark;
#endif
    return 0;
}

#ifndef GPU_CHECK_LIB
static void mark_begin(int r) {
    if (MARK) sps_begin(REG[r]);
}
static void mark_end(int r) {
    if (MARK) sps_end(REG[r]);
}
#else /* the Python half marks the regions itself */
static void mark_begin(int) {}
static void mark_end(int) {}
#endif

/* The phases; each ends when its device work has (a synchronize). */
extern "C" void gpu_check_upload(void) {
    mark_begin(R_UPLOAD);
    TRUTH_BEGIN(R_UPLOAD);
    CK(cudaMemcpy(DX, H, BYTES, cudaMemcpyHostToDevice));
    TRUTH_END(R_UPLOAD);
    mark_end(R_UPLOAD);
}
extern "C" void gpu_check_step_memset(void) { /* inside the step region */
    TRUTH_BEGIN(R_STEP);
    CK(cudaMemset(DY, 0, BYTES));
    TRUTH_END(R_STEP);
    CK(cudaDeviceSynchronize());
}
extern "C" void gpu_check_saxpy(void) {
    int threads = 256, blocks = (NF + threads - 1) / threads;
    mark_begin(R_SAXPY);
    TRUTH_BEGIN(R_SAXPY);
    saxpy_kernel<<<blocks, threads>>>(DY, DX, 2.0f, NF, ITERS);
    CK(cudaGetLastError());
    TRUTH_END(R_SAXPY);
    CK(cudaDeviceSynchronize());
    mark_end(R_SAXPY);
}
extern "C" void gpu_check_stencil(void) {
    int threads = 256, blocks = (NF + threads - 1) / threads;
    mark_begin(R_STENCIL);
    TRUTH_BEGIN(R_STENCIL);
    stencil_kernel<<<blocks, threads>>>(DX, DY, NF, ITERS);
    stencil_kernel<<<blocks, threads>>>(DY, DX, NF, ITERS);
    CK(cudaGetLastError());
    TRUTH_END(R_STENCIL);
    CK(cudaDeviceSynchronize());
    mark_end(R_STENCIL);
}
extern "C" void gpu_check_download(void) {
    mark_begin(R_DOWNLOAD);
    TRUTH_BEGIN(R_DOWNLOAD);
    CK(cudaMemcpy(H, DY, BYTES, cudaMemcpyDeviceToHost));
    TRUTH_END(R_DOWNLOAD);
    mark_end(R_DOWNLOAD);
}

#ifndef GPU_CHECK_LIB
/* One step of the C half: upload, step{memset, saxpy, stencil}, download. */
static void c_step(void) {
    gpu_check_upload();
    mark_begin(R_STEP);
    gpu_check_step_memset();
    gpu_check_saxpy();
    gpu_check_stencil();
    mark_end(R_STEP);
    gpu_check_download();
}
#endif

/* The truth of call k of region r, ns (Python half: per region, the
 * calls' truths into out[0..cap), returns how many). */
static double truth_ns(int r, int k) {
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, TRUTH[r].a[k], TRUTH[r].b[k]));
    return ms * 1e6;
}

extern "C" int gpu_check_truth(const char *region, double *out, int cap) {
    CK(cudaDeviceSynchronize());
    for (int r = 0; r < NREG; r++)
        if (!strcmp(region, REG_NAME[r])) {
            int n = TRUTH[r].n < cap ? TRUTH[r].n : cap;
            for (int k = 0; k < n; k++) out[k] = truth_ns(r, k);
            return TRUTH[r].n;
        }
    return -1;
}

#ifndef GPU_CHECK_LIB

static int fails = 0;
#define FAIL(...)                                 \
    do {                                          \
        fprintf(stderr, "gpu-check: FAIL: ");     \
        fprintf(stderr, __VA_ARGS__);             \
        fputc('\n', stderr);                      \
        fails++;                                  \
    } while (0)

/* The row of region name in f (rank 0), or NULL. */
static const sps_file_row_t *row_of(const sps_file_t *f, const char *name) {
    for (size_t i = 0; i < f->nrows; i++)
        if (!strcmp(f->names[f->rows[i].region], name)) return &f->rows[i];
    return NULL;
}

/* Per region: calls, spanscope's device ms in all, the truth's, the worst
 * per-call deviation; checks every call within 10 %. */
static void check_per_span(const sps_file_t *f, const char *mode) {
    printf("%-9s %6s %12s %12s %10s\n", "region", "calls", "device ms", "events ms", "worst %");
    for (int r = 0; r < NREG; r++) {
        const sps_file_row_t *row = row_of(f, REG_NAME[r]);
        if (!row) {
            FAIL("%s: region %s is not in the file", mode, REG_NAME[r]);
            continue;
        }
        if ((int)row->count != TRUTH[r].n)
            FAIL("%s: region %s has %llu calls, the program made %d", mode, REG_NAME[r],
                 (unsigned long long)row->count, TRUTH[r].n);
        if (!f->gpu_dur_ns) {
            FAIL("%s: the file has no /events/gpu_durations", mode);
            return;
        }
        double got = 0, want = 0, worst = 0;
        for (uint64_t k = 0; k < row->count && (int)k < TRUTH[r].n; k++) {
            int64_t g = f->gpu_dur_ns[row->first + k];
            double t = truth_ns(r, (int)k);
            if (g < 0) {
                FAIL("%s: %s call %llu has no device time", mode, REG_NAME[r],
                     (unsigned long long)k);
                continue;
            }
            got += (double)g, want += t;
            double dev = fabs((double)g - t) / t * 100.0;
            if (dev > worst) worst = dev;
        }
        printf("%-9s %6llu %12.3f %12.3f %10.2f\n", REG_NAME[r],
               (unsigned long long)row->count, got / 1e6, want / 1e6, worst);
        if (worst > 10.0)
            FAIL("%s: %s: a call's device time is %.1f %% off the CUDA events'", mode,
                 REG_NAME[r], worst);
    }
}

/* cupti: kernel names and counts, and the join of every device row to
 * the region that launched it. */
static void check_join(const char *path, int reps) {
    sps_device_t d;
    int rc = sps_device_read(path, &d);
    if (rc) {
        FAIL("cupti: sps_device_read: %s (%s)", sps_strerror(rc), sps_last_error());
        sps_device_free(&d);
        return;
    }
    int saxpy = 0, stencil = 0, htod = 0, dtoh = 0, sets = 0, apis = 0;
    for (size_t i = 0; i < d.n; i++) {
        const char *name = d.names[d.names_idx[i]];
        const char *reg = d.regions[i] >= 0 && (size_t)d.regions[i] < d.nregion_names
                              ? d.region_names[d.regions[i]]
                              : "(none)";
        const char *want = NULL;
        if (d.kinds[i] == 1 && strstr(name, "saxpy_kernel")) saxpy++, want = "saxpy";
        else if (d.kinds[i] == 1 && strstr(name, "stencil_kernel")) stencil++, want = "stencil";
        else if (d.kinds[i] == 2 && strstr(name, "HtoD")) htod++, want = "upload";
        else if (d.kinds[i] == 2 && strstr(name, "DtoH")) dtoh++, want = "download";
        else if (d.kinds[i] == 3) sets++, want = "step";
        else if (d.kinds[i] == 4 || d.kinds[i] == 5) apis++;
        if (want && strcmp(reg, want))
            FAIL("cupti: %s (row %zu) joined to region %s, launched in %s", name, i, reg, want);
    }
    printf("cupti rows: %zu (kernels saxpy %d, stencil %d; copies HtoD %d, DtoH %d; sets %d; "
           "API calls %d)\n", d.n, saxpy, stencil, htod, dtoh, sets, apis);
    if (saxpy != reps) FAIL("cupti: %d saxpy kernels, the program launched %d", saxpy, reps);
    if (stencil != 2 * reps)
        FAIL("cupti: %d stencil kernels, the program launched %d", stencil, 2 * reps);
    if (htod != reps || dtoh != reps)
        FAIL("cupti: copies HtoD %d, DtoH %d, the program made %d each", htod, dtoh, reps);
    if (sets != reps) FAIL("cupti: %d sets, the program made %d", sets, reps);
    sps_device_free(&d);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: gpu_check cupti|events[+nvtx] OUT.h5 [reps]\n");
        return 2;
    }
    const char *mode = argv[1], *out = argv[2];
    int reps = argc > 3 ? atoi(argv[3]) : 20;
    unsigned what = !strncmp(mode, "cupti", 5) ? SPS_DEVICE_CUPTI : SPS_DEVICE_EVENTS;
    int count = 0;
    CK(cudaGetDeviceCount(&count));
    CK(cudaFree(0)); /* the context, before the session's clock anchors */
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = out;
    if (strstr(mode, "+nvtx")) cfg.emit = SPS_EMIT_NVTX;
    int rc = sps_setup(&cfg);
    if (rc) {
        fprintf(stderr, "gpu-check: sps_setup: %s (%s)\n", sps_strerror(rc), sps_last_error());
        return 2;
    }
    rc = sps_device_start(what);
    if (rc) {
        fprintf(stderr, "gpu-check: sps_device_start: %s (%s)\n", sps_strerror(rc),
                sps_last_error());
        return 2;
    }
    gpu_check_init(1 << 22, 2000, 1);
    for (int s = 0; s < reps; s++) c_step();
    rc = sps_device_stop(what);
    if (!rc) rc = sps_finalize();
    if (rc) {
        fprintf(stderr, "gpu-check: stop/finalize: %s (%s)\n", sps_strerror(rc),
                sps_last_error());
        return 2;
    }
    const sps_file_t *f = NULL;
    char err[256] = "";
    if (sps_file_open(out, &f, err, sizeof err)) {
        fprintf(stderr, "gpu-check: %s\n", err);
        return 2;
    }
    printf("== %s, %d GPU(s), %d reps\n", mode, count, reps);
    check_per_span(f, mode);
    sps_file_close(f);
    if (what == SPS_DEVICE_CUPTI) check_join(out, reps);
    printf("gpu-check %s: %s\n", mode, fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
#endif /* GPU_CHECK_LIB */
