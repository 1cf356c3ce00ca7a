"""The Python half of scripts/gpu-check.sh (issue 38 part 6), for a GPU machine.

    python tests/gpu/gpu_check.py build/gpu-check/libgpu_check.so [reps]

Loads the CUDA workload of gpu_check.cu (built with -DGPU_CHECK_LIB: it marks
no regions and measures its own CUDA-event pair around every phase), runs it
under profile(activities=[CPU, CUDA]) with record_function regions and
emit_nvtx on, and checks through the torch-style face: the kernels' names and
counts (device_kernels), each kernel joined to the region that launched it,
and each region call's own device time (FunctionEvent.self_device_time_total)
within 10 % of the CUDA events'.  Prints a table; exit 0 ok, 1 a check failed.
"""
import ctypes
import sys

from spanscope import profiler as P

REGIONS = ("upload", "step", "saxpy", "stencil", "download")


def main():
    lib = ctypes.CDLL(sys.argv[1])
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    lib.gpu_check_truth.argtypes = (ctypes.c_char_p, ctypes.POINTER(ctypes.c_double),
                                    ctypes.c_int)
    lib.gpu_check_init(1 << 22, 2000, 0)
    acts = [P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA]
    with P.profile(activities=acts) as prof, P.emit_nvtx():
        for _ in range(reps):
            with P.record_function("upload"):
                lib.gpu_check_upload()
            with P.record_function("step"):
                lib.gpu_check_step_memset()
                with P.record_function("saxpy"):
                    lib.gpu_check_saxpy()
                with P.record_function("stencil"):
                    lib.gpu_check_stencil()
            with P.record_function("download"):
                lib.gpu_check_download()
    fails = []
    events = [e for e in prof.events() if e.name in REGIONS]
    print(f"{'region':9} {'calls':>6} {'device ms':>12} {'events ms':>12} {'worst %':>10}")
    for r in REGIONS:
        calls = sorted((e for e in events if e.name == r), key=lambda e: e.time_range.start)
        buf = (ctypes.c_double * len(calls))()
        n = lib.gpu_check_truth(r.encode(), buf, len(calls))
        if n != len(calls):
            fails.append(f"{r}: {len(calls)} calls recorded, the program made {n}")
        got = want = worst = 0.0
        for e, truth_ns in zip(calls, buf):
            dev_ns = e.self_device_time_total * 1e3  # torch's unit: us
            got, want = got + dev_ns, want + truth_ns
            worst = max(worst, abs(dev_ns - truth_ns) / truth_ns * 100.0)
        print(f"{r:9} {len(calls):6} {got / 1e6:12.3f} {want / 1e6:12.3f} {worst:10.2f}")
        if worst > 10.0:
            fails.append(f"{r}: a call's device time is {worst:.1f} % off the CUDA events'")
    acts = prof.device_kernels().activities  # each kernel, copy and set
    kernels = [a for a in acts if a.kind == "k"]
    n_saxpy = sum("saxpy_kernel" in k.name for k in kernels)
    n_stencil = sum("stencil_kernel" in k.name for k in kernels)
    print(f"kernels: saxpy {n_saxpy}, stencil {n_stencil} (of {len(acts)} device rows)")
    if n_saxpy != reps or n_stencil != 2 * reps:
        fails.append(f"kernels: saxpy {n_saxpy} (want {reps}), stencil {n_stencil} "
                     f"(want {2 * reps})")
    for a in acts:
        want = ("saxpy" if "saxpy_kernel" in a.name else "stencil" if "stencil_kernel" in a.name
                else "upload" if "HtoD" in a.name else "download" if "DtoH" in a.name
                else "step" if a.kind == "s" else None)
        if want and a.span_name != want:
            fails.append(f"{a.name} joined to {a.span_name!r}, launched in {want!r}")
            break
    for f in fails:
        print("gpu-check: FAIL:", f, file=sys.stderr)
    print("gpu-check python:", "FAILED" if fails else "ok")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
