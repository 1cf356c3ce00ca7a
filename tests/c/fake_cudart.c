/* fake_cudart.c -- a stand-in libcudart for test_gpu_timing (and
 * tests/python/test_gpu_timing.py), loaded through SPANSCOPE_CUDART_LIB.
 *
 * It exports the runtime functions src/ext/gpu_timing.c resolves, with
 * CUDA's own prototypes (checked against cuda_runtime_api.h when the
 * build found it: FAKE_CUDART_REAL_HEADERS), and times events by a fake
 * device the test drives:
 *   - the device has a clock (device_now) and a queue of work on its one
 *     stream that ends at queued_until; fake_cudart_work(ns) queues ns of
 *     work, fake_cudart_advance(ns) moves the device's clock;
 *   - cudaEventRecord stamps the event with the time the work queued
 *     before it ends (max(queued_until, device_now)): the event completes
 *     when the device's clock reaches that stamp;
 *   - cudaEventQuery answers cudaErrorNotReady until then;
 *     cudaEventSynchronize moves the clock to the stamp (the host waited);
 *     cudaEventElapsedTime gives the stamps' difference in ms (float), or
 *     cudaErrorNotReady / cudaErrorInvalidResourceHandle as CUDA does.
 * Counters (events made, destroyed, live, records, queries, syncs) and
 * the device count (or an error for cudaGetDeviceCount) are the test's
 * through the fake_cudart_* functions. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef FAKE_CUDART_REAL_HEADERS
#include <cuda_runtime_api.h>
#else
typedef int cudaError_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUstream_st *cudaStream_t;
enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600
};
#define CUDARTAPI
#endif

#define EXPORT __attribute__((visibility("default")))

struct CUevent_st {
    uint32_t magic;
    int recorded;
    uint64_t stamp;
};
#define MAGIC 0xCEE7u

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_now, g_queued;
static int g_devices = 1;
static int g_count_error; /* cudaGetDeviceCount's answer when not 0 */
static long g_made, g_destroyed, g_records, g_queries, g_syncs, g_fail_record;

/* ---- the test's controls ------------------------------------------------ */

EXPORT void fake_cudart_reset(void);
EXPORT void fake_cudart_reset(void) {
    pthread_mutex_lock(&g_lock);
    g_now = g_queued = 0;
    g_devices = 1;
    g_count_error = 0;
    g_made = g_destroyed = g_records = g_queries = g_syncs = g_fail_record = 0;
    pthread_mutex_unlock(&g_lock);
}

/* Queues ns of device work on the stream. */
EXPORT void fake_cudart_work(uint64_t ns);
EXPORT void fake_cudart_work(uint64_t ns) {
    pthread_mutex_lock(&g_lock);
    g_queued = (g_queued > g_now ? g_queued : g_now) + ns;
    pthread_mutex_unlock(&g_lock);
}

/* Moves the device's clock by ns. */
EXPORT void fake_cudart_advance(uint64_t ns);
EXPORT void fake_cudart_advance(uint64_t ns) {
    pthread_mutex_lock(&g_lock);
    g_now += ns;
    pthread_mutex_unlock(&g_lock);
}

EXPORT uint64_t fake_cudart_now(void);
EXPORT uint64_t fake_cudart_now(void) {
    pthread_mutex_lock(&g_lock);
    uint64_t v = g_now;
    pthread_mutex_unlock(&g_lock);
    return v;
}

/* n devices (0: none); err: cudaGetDeviceCount's error (0: none). */
EXPORT void fake_cudart_devices(int n, int err);
EXPORT void fake_cudart_devices(int n, int err) {
    pthread_mutex_lock(&g_lock);
    g_devices = n;
    g_count_error = err;
    pthread_mutex_unlock(&g_lock);
}

/* The next n cudaEventRecord calls fail (cudaErrorInvalidValue). */
EXPORT void fake_cudart_fail_records(long n);
EXPORT void fake_cudart_fail_records(long n) {
    pthread_mutex_lock(&g_lock);
    g_fail_record = n;
    pthread_mutex_unlock(&g_lock);
}

/* which: 0 made, 1 destroyed, 2 live, 3 records, 4 queries, 5 syncs. */
EXPORT long fake_cudart_count(int which);
EXPORT long fake_cudart_count(int which) {
    pthread_mutex_lock(&g_lock);
    long v = which == 0   ? g_made
             : which == 1 ? g_destroyed
             : which == 2 ? g_made - g_destroyed
             : which == 3 ? g_records
             : which == 4 ? g_queries
             : which == 5 ? g_syncs
                          : -1;
    pthread_mutex_unlock(&g_lock);
    return v;
}

/* ---- CUDA's runtime API -------------------------------------------------- */

static int valid(cudaEvent_t e) { return e && e->magic == MAGIC; }

EXPORT cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
    if (!event || flags & ~0xFu) return cudaErrorInvalidValue;
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e) return cudaErrorInvalidValue;
    e->magic = MAGIC;
    pthread_mutex_lock(&g_lock);
    g_made++;
    pthread_mutex_unlock(&g_lock);
    *event = e;
    return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    (void)stream;
    if (!valid(event)) return cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&g_lock);
    cudaError_t rc = cudaSuccess;
    if (g_fail_record > 0) {
        g_fail_record--;
        rc = cudaErrorInvalidValue;
    } else {
        event->recorded = 1;
        event->stamp = g_queued > g_now ? g_queued : g_now;
        g_records++;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

EXPORT cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event) {
    if (!valid(event)) return cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&g_lock);
    g_queries++;
    cudaError_t rc = event->recorded && event->stamp > g_now ? cudaErrorNotReady : cudaSuccess;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

EXPORT cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event) {
    if (!valid(event)) return cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&g_lock);
    g_syncs++;
    if (event->recorded && event->stamp > g_now) g_now = event->stamp;
    pthread_mutex_unlock(&g_lock);
    return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
    if (!ms) return cudaErrorInvalidValue;
    if (!valid(start) || !valid(end)) return cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&g_lock);
    cudaError_t rc = cudaSuccess;
    if (!start->recorded || !end->recorded)
        rc = cudaErrorInvalidResourceHandle;
    else if (start->stamp > g_now || end->stamp > g_now)
        rc = cudaErrorNotReady;
    else
        *ms = (float)((double)((int64_t)end->stamp - (int64_t)start->stamp) / 1e6);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

EXPORT cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
    if (!valid(event)) return cudaErrorInvalidResourceHandle;
    event->magic = 0;
    free(event);
    pthread_mutex_lock(&g_lock);
    g_destroyed++;
    pthread_mutex_unlock(&g_lock);
    return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaGetDeviceCount(int *count) {
    if (!count) return cudaErrorInvalidValue;
    pthread_mutex_lock(&g_lock);
    cudaError_t rc = (cudaError_t)g_count_error;
    *count = rc ? 0 : g_devices;
    if (!rc && !g_devices) rc = cudaErrorNoDevice;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

EXPORT cudaError_t CUDARTAPI cudaGetDevice(int *device) {
    if (!device) return cudaErrorInvalidValue;
    *device = 0;
    return cudaSuccess;
}

EXPORT const char *CUDARTAPI cudaGetErrorString(cudaError_t error) {
    switch ((int)error) {
    case 0: return "no error";
    case 1: return "invalid argument";
    case 35: return "CUDA driver version is insufficient for CUDA runtime version";
    case 100: return "no CUDA-capable device is detected";
    case 400: return "invalid resource handle";
    case 600: return "device not ready";
    default: return "unrecognized error code";
    }
}
