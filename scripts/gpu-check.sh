#!/usr/bin/env bash
# gpu-check.sh -- issue 38 part 6: the device check, one prepared script
# for a machine with an NVIDIA GPU (under 5 minutes).  docs/device.md.
#
#   bash scripts/gpu-check.sh              build, run every check, print the table
#   bash scripts/gpu-check.sh --build-only compile the CUDA program and stop
#                                          (what CI can do without a GPU)
#
# It builds spanscope (Release) when $BUILD has no library, compiles
# tests/gpu/gpu_check.cu with nvcc twice (a program, and a library for the
# Python half), then:
#   1. C, CUPTI:          kernel names and counts, every kernel / copy / set
#                         joined to the span that launched it, device time
#                         per span within 10 % of CUDA events;
#   2. C, CUPTI + NVTX:   the same with the NVTX ranges on (and, when nsys
#                         is installed, the ranges seen by Nsight Systems);
#   3. C, gpu_timing:     device time per span (CUDA event pairs) within 10 %;
#   4. Python, CUPTI:     profile(activities=[CPU, CUDA]) with record_function
#                         regions and emit_nvtx on: the same checks through
#                         the torch-style face (skipped, and said, when this
#                         machine's Python cannot import spanscope).
# Exit: 0 all passed, 1 a check failed, 77 no GPU here (nothing ran),
# 2 the build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OUTDIR=${OUT:-$BUILD/gpu-check}
REPS=${GPU_CHECK_REPS:-20}
build_only=0
[ "${1:-}" = --build-only ] && build_only=1

say() { printf 'gpu-check: %s\n' "$*"; }

NVCC=${NVCC:-$(command -v nvcc || ls -d /usr/local/cuda/bin/nvcc 2>/dev/null || true)}
[ -n "$NVCC" ] && [ -x "$NVCC" ] || { say "nvcc not found (set NVCC)"; exit 2; }

if [ $build_only = 0 ]; then
  if ! nvidia-smi -L >/dev/null 2>&1; then
    say "no NVIDIA GPU here (nvidia-smi -L failed): nothing run"
    exit 77
  fi
  nvidia-smi -L | sed 's/^/gpu-check: /'
fi

if [ ! -e "$BUILD/libspanscope.so" ]; then
  say "building spanscope in $BUILD"
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$BUILD" -j "$(nproc)" --target spanscope >/dev/null ||
    { say "the spanscope build failed"; exit 2; }
fi
mkdir -p "$OUTDIR"
ARCH=${GPU_CHECK_ARCH:-native}
[ $build_only = 1 ] && ARCH=${GPU_CHECK_ARCH:-sm_80}
"$NVCC" -O2 -std=c++17 -arch="$ARCH" -Iinclude tests/gpu/gpu_check.cu -o "$OUTDIR/gpu_check" \
  -L"$BUILD" -lspanscope -Xlinker -rpath -Xlinker "$BUILD" &&
  "$NVCC" -O2 -std=c++17 -arch="$ARCH" -Xcompiler -fPIC -shared -DGPU_CHECK_LIB -Iinclude \
    tests/gpu/gpu_check.cu -o "$OUTDIR/libgpu_check.so" ||
  { say "nvcc failed"; exit 2; }
say "built $OUTDIR/gpu_check and $OUTDIR/libgpu_check.so"
[ $build_only = 1 ] && exit 0

fails=0
results=()
run() { # name, then the command
  local name=$1
  shift
  local t0=$SECONDS
  timeout 120 "$@"
  local rc=$?
  results+=("$(printf '%-22s %-8s %4ds' "$name" "$([ $rc = 0 ] && echo ok || echo "FAIL($rc)")" $((SECONDS - t0)))")
  [ $rc = 0 ] || fails=$((fails + 1))
}

run "C cupti" "$OUTDIR/gpu_check" cupti "$OUTDIR/c_cupti.h5" "$REPS"
run "C cupti+nvtx" "$OUTDIR/gpu_check" cupti+nvtx "$OUTDIR/c_nvtx.h5" "$REPS"
run "C gpu_timing" "$OUTDIR/gpu_check" events "$OUTDIR/c_events.h5" "$REPS"
if command -v nsys >/dev/null 2>&1; then
  run "nsys nvtx ranges" bash -c "
    nsys profile -q -t cuda,nvtx -o '$OUTDIR/nsys' --force-overwrite true \
      '$OUTDIR/gpu_check' events+nvtx '$OUTDIR/c_nsys.h5' $REPS >/dev/null &&
    nsys stats -q --report nvtx_sum --format csv '$OUTDIR/nsys.nsys-rep' > '$OUTDIR/nvtx.csv' &&
    for r in upload step saxpy stencil download; do
      grep -q \"\$r\" '$OUTDIR/nvtx.csv' || { echo \"gpu-check: nsys saw no NVTX range \$r\"; exit 1; }
    done"
else
  results+=("$(printf '%-22s %-8s' "nsys nvtx ranges" "skipped (nsys not installed)")")
fi
PY=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || command -v python3)}
if [ -n "$PY" ] && SPS_BUILD=$BUILD "$PY" -c "import spanscope.profiler" 2>/dev/null; then
  run "Python cupti+nvtx" env SPS_BUILD="$BUILD" "$PY" tests/gpu/gpu_check.py \
    "$OUTDIR/libgpu_check.so" "$REPS"
else
  results+=("$(printf '%-22s %-8s' "Python cupti+nvtx" "skipped ($PY cannot import spanscope)")")
fi
echo
say "summary"
printf '%s\n' "${results[@]}"
say "$([ $fails = 0 ] && echo "all checks passed" || echo "$fails check(s) failed")"
[ $fails = 0 ]
