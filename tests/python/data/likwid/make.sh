#!/bin/sh
# make.sh -- remakes the LIKWID files of this folder (tests/python/test_likwid.py
# reads them).  Needs root, Debian's likwid 5.2.2 (apt-get install likwid), a C
# compiler with OpenMP, unshare(1), and /work/main/.venv-like Python ($PY) with
# pylikwid and spanscope installed.  Run from this folder:  sh make.sh
#
# Everything here is LIKWID's own output: likwid-perfctr's tables and CSV,
# the marker file likwid_markerClose writes, and LIKWID's perfmon read-back
# (pylikwid: event and counter names, derived metrics).  The machines that
# made them have no PMU and an Emerald Rapids model LIKWID 5.2.2 does not
# know, so LIKWID runs in a private mount namespace where
#   - /etc/likwid_topo.cfg (LIKWID's topology file, read before CPUID) says
#     family 6 model 26 (Nehalem, a CPU LIKWID supports without uncore PCI
#     devices), and
#   - /dev/cpu/N/msr are sparse regular files (direct access mode, -M 0),
# so LIKWID's code runs unchanged while its counters read back what was
# written to those files: gen_markers.c writes known amounts (see there).
# Nothing outside the namespace is changed.
set -eu
PY=${PY:-/work/main/.venv/bin/python}
here=$(pwd)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
likwid-genTopoCfg -o "$w/topo.cfg" >/dev/null
sed -i -e 's/^cpuid_info model = .*/cpuid_info model = 26/' \
  -e 's/^cpuid_info short_name = .*/cpuid_info short_name = nehalem/' \
  -e 's/^cpuid_info perf_version = .*/cpuid_info perf_version = 3/' \
  -e 's/^cpuid_info perf_num_ctr = .*/cpuid_info perf_num_ctr = 4/' \
  -e 's/^cpuid_info perf_num_fixed_ctr = .*/cpuid_info perf_num_fixed_ctr = 3/' \
  -e 's/^cpuid_info perf_width_ctr = .*/cpuid_info perf_width_ctr = 48/' "$w/topo.cfg"
cp -a /etc "$w/etc"
cp "$w/topo.cfg" "$w/etc/likwid_topo.cfg"
for c in 0 1; do mkdir -p "$w/dev/$c"; : > "$w/dev/$c/msr"; truncate -s 5G "$w/dev/$c/msr"; done
cc -O1 -fopenmp -DLIKWID_PERFMON gen_markers.c -llikwid -o "$w/gen_markers"
run() {  # run NAME GROUPS PERFCTR-ARGS...: a fresh set of MSR files each time
  name=$1 groups=$2; shift 2
  for c in 0 1; do : > "$w/dev/$c/msr"; truncate -s 5G "$w/dev/$c/msr"; done
  GEN_GROUPS=$groups GEN_OUT="$here/markers_$name.txt" \
  GEN_AFTER="$PY -c 'import sys; from spanscope.results._likwid import _subprocess_main; sys.exit(_subprocess_main())' $here/full_api_$name.json" \
  unshare -m --propagation private sh -c \
    'mount --bind "$0/etc" /etc && mount --bind "$0/dev" /dev/cpu && exec "$@"' \
    "$w" likwid-perfctr -M 0 -C 0,1 "$@" -m "$w/gen_markers"
}
run flops_dp 1 -g FLOPS_DP > perfctr_flops_dp.txt 2>&1
run flops_dp_csv 1 -O -g FLOPS_DP > perfctr_flops_dp.csv 2>&1
rm -f markers_flops_dp_csv.txt full_api_flops_dp_csv.json
run two_groups 2 -g FLOPS_DP -g BRANCH > perfctr_two_groups.txt 2>&1
echo "made: $(ls)"
