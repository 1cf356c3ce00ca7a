#!/usr/bin/env bash
# tests/native_run/run.sh -- `spanscope run [options] -- CMD` on real
# programs (docs/native-run.md), each compared with its bare run:
#   - plain (not built for profiling): stdout, stderr and exit status 3
#     the same, arguments with spaces kept, the profile written with the
#     command in /metadata, and on stderr exactly one line more (none
#     with -q); %p, --no-output, SPANSCOPE_OUTPUT without -o, the default
#     file; a missing command (127), a bad option (2), a statically
#     linked program (2, told: the preload cannot reach it);
#   - own (links libspanscope, sps_setup of its own path): its sps_setup
#     succeeds, its regions land in the run's file, its own path is not
#     written, and children it starts (system) before and after its
#     finalize do not replace the profile;
#   - func (-finstrument-functions): with --functions every function is a
#     region, exact counts and parents;
#   - sig: ended by SIGTERM, SIGKILL, SIGABRT: the same status as bare;
#   - mpiprog under MPIEXEC -n 2 spanscope run --mpi: one file, every
#     rank's MPI calls (when MPIEXEC and MPIPROG are given).
#
#   - func_linked (the same linked with libspanscope_instrument): without
#     --functions its hooks record into the run's session, and its own
#     constructor writes no spanscope_instrument.h5;
#
#   - burn (CPU in one function, no region): --sample-hz N gives its stack
#     samples (outside every span), in main's burn loop;
#
#   run.sh SPANSCOPE INST_COUNTS PLAIN SIG OWN FUNC FUNC_LINKED BURN [MPIEXEC MPIPROG]
set -uo pipefail
sps=$1 ic=$2 plain=$3 sig=$4 own=$5 func=$6 func_linked=$7 burn=$8 mpiexec=${9:-} mpiprog=${10:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sps-native-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset SPANSCOPE_OUTPUT SCOPE_PROFILER_OUTPUT SPANSCOPE_CONFIG SPANSCOPE_DEACTIVATE_PROFILING \
      SPANSCOPE_LABEL SPANSCOPE_RUN SPANSCOPE_RUN_PID LD_PRELOAD || true
fails=0 checks=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# same WHAT EXPECTED ACTUAL
same() {
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    fail "$1"
    diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") >&2 || true
  fi
}
T=$'\t'
counts() { "$ic" "$1" 2>&1 | LC_ALL=C sort; }
# what own.c records
own_counts=$(LC_ALL=C sort <<EOF
count${T}outer${T}1
count${T}inner${T}5
parent${T}outer${T}-${T}1
parent${T}inner${T}outer${T}5
misuse${T}0
EOF
)

# the preloaded library exports what it interposes and nothing else
lib=$(dirname "$sps")/libspanscope_run.so
if command -v nm > /dev/null 2>&1 && [ -f "$lib" ]; then
  same "libspanscope_run's exports" \
    "MPI_Finalize MPI_Init MPI_Init_thread sps_finalize sps_finalize_paths sps_finalize_print sps_finalize_to sps_setup" \
    "$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbVvi]$/ {print $3}' | sed 's/@.*//' |
       LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
fi

# ---- an unmodified program: output and status untouched ----------------------
"$plain" a "b c" "" > bare.out 2> bare.err; bare_rc=$?
same "bare plain exits 3" 3 "$bare_rc"
"$sps" run -o p.h5 -- "$plain" a "b c" "" > run.out 2> run.err; run_rc=$?
same "run plain: exit status" "$bare_rc" "$run_rc"
same "run plain: stdout" "$(cat bare.out)" "$(cat run.out)"
same "run plain: stderr is the program's, then one line" \
  "$(cat bare.err; echo "spanscope: wrote $tmp/p.h5 (0 regions)")" "$(cat run.err)"
same "run plain: the profile is written" "misuse${T}0" "$(counts p.h5)"
"$sps" inspect p.h5 | grep -Eq "^ *command +$plain a b c *\$" ||
  fail "run plain: the command in /metadata: $("$sps" inspect p.h5 | grep command)"
"$sps" run -q -o q.h5 -- "$plain" x > q.out 2> q.err; q_rc=$?
same "run -q: exit status" 3 "$q_rc"
same "run -q: stderr is the program's only" "$(cat bare.err)" "$(cat q.err)"
[ -f q.h5 ] || fail "run -q: no profile"
# %p: the program's pid (exec keeps the tool's)
"$sps" run -q -o 'pid-%p.h5' -- sh -c 'echo $$; exec "$0"' "$plain" > pid.out 2>/dev/null
sed -i '/^plain/d' pid.out
[ -f "pid-$(cat pid.out).h5" ] || fail "run -o pid-%p.h5: no pid-$(cat pid.out).h5 ($(ls))"
# --no-output: no file, no line
mkdir none && (cd none && "$sps" run --no-output -- "$plain" > /dev/null 2> ../none.err)
same "run --no-output: no file" "" "$(ls none)"
same "run --no-output: no line" "$(cat bare.err)" "$(cat none.err)"
# SPANSCOPE_OUTPUT without -o; else the default profiling_data.h5
SPANSCOPE_OUTPUT=env.h5 "$sps" run -q -- "$plain" > /dev/null 2>&1
[ -f env.h5 ] || fail "SPANSCOPE_OUTPUT=env.h5: no env.h5"
mkdir dflt && (cd dflt && "$sps" run -q -- "$plain" > /dev/null 2>&1)
[ -f dflt/profiling_data.h5 ] || fail "run without -o: no profiling_data.h5 ($(ls dflt))"
# a command that is not there; a bad option
"$sps" run -o m.h5 -- ./no-such-program > /dev/null 2> miss.err; miss_rc=$?
same "run of a missing command: 127" 127 "$miss_rc"
grep -q "cannot run ./no-such-program" miss.err || fail "missing command: $(cat miss.err)"
"$sps" run --bogus -- "$plain" > /dev/null 2> bad.err; bad_rc=$?
same "run --bogus: usage error" 2 "$bad_rc"
"$sps" run --sample-hz 20000 -- "$plain" > /dev/null 2> bad.err; bad_rc=$?
same "run --sample-hz 20000: usage error" 2 "$bad_rc"
# --config: the file's file_path and label (the run's -o wins over the
# file's path); a bad file stops the run before the program starts
printf '[profiling]\nfile_path = "from-file.h5"\nlabel = "file-label"\n' > c.toml
"$sps" run -q --config c.toml -- "$own" own-cfg.h5 > /dev/null 2>&1
same "run --config: the file's path, the program's regions" "$own_counts" "$(counts from-file.h5)"
"$sps" inspect from-file.h5 | grep -Eq '^ *label +file-label *$' ||
  fail "run --config: no label from the file: $("$sps" inspect from-file.h5 | grep label)"
"$sps" run -q --config c.toml -o cli.h5 -- "$plain" > /dev/null 2>&1
[ -f cli.h5 ] || fail "run --config -o cli.h5: no cli.h5"
printf '[profiling]\nfile_pth = "x.h5"\n' > bad.toml
"$sps" run --config bad.toml -- "$plain" > badcfg.out 2> badcfg.err; bc=$?
same "run --config BAD: usage error" 2 "$bc"
same "run --config BAD: the program did not run" "" "$(cat badcfg.out)"
grep -q "file_pth" badcfg.err || fail "run --config BAD: $(cat badcfg.err)"

# a statically linked program: the preload cannot reach it, said before it runs
if ${CC:-cc} -static "$(dirname "$0")/plain.c" -o plain_static 2>/dev/null; then
  "$sps" run -o st.h5 -- ./plain_static > st.out 2> st.err; st_rc=$?
  same "run of a static program: usage error" 2 "$st_rc"
  same "run of a static program: not run" "" "$(cat st.out)"
  grep -q "statically linked" st.err || fail "static program: $(cat st.err)"
else
  echo "native_run: no static C library here: the static-program case is not run"
fi

# ---- a program with its own session ------------------------------------------
"$own" bare-own.h5 > /dev/null || fail "bare own"
same "bare own: its own file" "$own_counts" "$(counts bare-own.h5)"
# (the children: a shell, and plain, which would write an empty profile at
# its exit if it set a session up)
"$sps" run -o o.h5 -- "$own" own-path.h5 "sh -c true" "$plain" > own.out 2> own.err
same "run own: exit status" 0 "$?"
same "run own: stdout" "$(printf 'plain\nown done')" "$(cat own.out)"
same "run own: its regions in the run's file" "$own_counts" "$(counts o.h5)"
[ ! -e own-path.h5 ] || fail "run own: the program's own path was written (the run's must win)"
same "run own: the child's stderr, then one line" \
  "$(printf 'plain: on stderr\nspanscope: wrote %s (2 regions)' "$tmp/o.h5")" "$(cat own.err)"

# ---- -finstrument-functions --------------------------------------------------
func_counts=$(LC_ALL=C sort <<EOF
count${T}main${T}1
count${T}mid${T}3
count${T}leaf${T}12
parent${T}main${T}-${T}1
parent${T}mid${T}main${T}3
parent${T}leaf${T}mid${T}12
misuse${T}0
EOF
)
"$sps" run -q --functions -o f.h5 -- "$func" > f.out 2> f.err
same "run --functions: exit status" 0 "$?"
same "run --functions: stdout" "func 36" "$(cat f.out)"
same "run --functions: every function" "$func_counts" "$(counts f.h5)"
same "run --functions -q: nothing on stderr" "" "$(cat f.err)"
# without --functions the hooks are glibc's no-ops: no region
"$sps" run -q -o nf.h5 -- "$func" > /dev/null 2>&1
same "run without --functions: no function regions" "misuse${T}0" "$(counts nf.h5)"

# linked with libspanscope_instrument: the run's session, not its own
mkdir linked && (cd linked && "$sps" run -q -o fl.h5 -- "$func_linked" > /dev/null 2> fl.err)
same "run of a program linked with the hooks: every function" "$func_counts" \
  "$(counts linked/fl.h5)"
same "run of a program linked with the hooks: no file of its own" "fl.err fl.h5" \
  "$(ls linked | tr '\n' ' ' | sed 's/ $//')"

# ---- stack samples of a program with no region ------------------------------
"$sps" run -q --sample-hz 1000 -o burn.h5 -- "$burn" > /dev/null 2>&1
same "run --sample-hz: exit status" 0 "$?"
"$sps" report burn.h5 > burn.txt 2>&1
n=$(sed -n 's/^\([0-9][0-9]*\) samples at 1000 Hz.*/\1/p' burn.txt)
if [ -z "$n" ] || [ "$n" -lt 10 ]; then
  fail "run --sample-hz 1000: fewer than 10 samples of a 0.1 s+ burn: $(grep -i sample burn.txt)"
fi
grep -q "(outside every span)" burn.txt || fail "run --sample-hz: no samples outside every span"

# ---- killed by a signal: the status stays the signal's -----------------------
for s in 15 9 6; do
  "$sig" $s > /dev/null 2>&1; b=$?
  "$sps" run -q -o "sig$s.h5" -- "$sig" $s > /dev/null 2>&1; r=$?
  same "signal $s: status" "$b" "$r"
  same "signal $s: status is 128+$s" $((128 + s)) "$r"
done

# ---- MPI ---------------------------------------------------------------------
if [ -n "$mpiexec" ] && [ -n "$mpiprog" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 \
         OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
         OMPI_MCA_rmaps_base_oversubscribe=1
  # --mpi on a program that never calls MPI_Init: no file, and said
  "$sps" run --mpi -q -o nompi.h5 -- "$plain" > /dev/null 2> nompi.err
  same "run --mpi of a program without MPI: the status" 3 "$?"
  same "run --mpi of a program without MPI: said" \
    "$(cat bare.err; echo "spanscope: --mpi: the program never called MPI_Init (C bindings); no profile written")" \
    "$(cat nompi.err)"
  [ ! -e nompi.h5 ] || fail "run --mpi of a program without MPI wrote a file"
  mkdir mpi
  timeout 120 "$mpiexec" -n 2 --oversubscribe "$sps" run --mpi -o mpi/m.h5 -- "$mpiprog" \
    > mpi.out 2> mpi.err
  same "mpirun -n 2 run --mpi: exit status" 0 "$?"
  same "mpirun run --mpi: stdout" "mpiprog 2 ranks sum 1" "$(cat mpi.out)"
  same "mpirun run --mpi: every rank's MPI calls in one file" "$(LC_ALL=C sort <<EOF
count${T}MPI_Allreduce${T}6
count${T}MPI_Barrier${T}2
parent${T}MPI_Allreduce${T}-${T}6
parent${T}MPI_Barrier${T}-${T}2
misuse${T}0
EOF
)" "$(counts mpi/m.h5)"
  same "mpirun run --mpi: the file holds 2 ranks" "mpi_size 2" \
    "$("$sps" inspect mpi/m.h5 | awk '$1 == "mpi_size" {print $1, $2}')"
  same "mpirun run --mpi: one line, from rank 0" \
    "spanscope: wrote $tmp/mpi/m.h5 (2 regions)" "$(grep '^spanscope:' mpi.err)"
  same "mpirun run --mpi: no per-rank files left" "m.h5" "$(ls mpi | grep -v '\.live-' )"
else
  echo "native_run: no mpirun or no MPI build: the --mpi case is not run"
fi

if [ "$fails" -gt 0 ]; then
  echo "native_run: $fails of $checks checks failed"
  exit 1
fi
echo "native_run: all $checks checks passed"
