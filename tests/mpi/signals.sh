#!/bin/sh
# signals.sh BIN DIR MPIEXEC -- SIGTERM to mpirun running 4 recording ranks
# (test_mpi_signals.c): mpirun passes it on to every rank, each writes its
# part and rank 0 merges them into DIR/sig.h5 (docs/signals.md, MPI).
# Waits for every rank to record a random number of calls, notes each
# rank's count (DIR/before.R), signals mpirun, waits for every rank to be
# gone, then checks the file with `BIN check DIR`.
set -u
BIN=$1 DIR=$2 MPIEXEC=$3
NP=4
# Open MPI's mpirun sends SIGCONT, then SIGTERM this many seconds later, and
# its ranks end about a second after mpirun exits (they lose their daemon):
# 3 s leaves a loaded machine time to write and merge (docs/signals.md)
OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-3}
export OMPI_MCA_odls_base_sigkill_timeout
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1
"$MPIEXEC" -n $NP --oversubscribe "$BIN" run "$DIR" >"$DIR/mpirun.out" 2>"$DIR/mpirun.err" &
MP=$!
count() { od -An -t d8 "$DIR/count.$1" 2>/dev/null | tr -d ' '; }
target=$(( 200 + $(od -An -N2 -t u2 /dev/urandom | tr -d ' ') % 2000 ))
# a bound on a stuck start (120 s), not a timing claim
i=0
while :; do
  ready=0
  for r in 0 1 2 3; do
    c=$(count $r)
    [ -f "$DIR/pid.$r" ] && [ -n "$c" ] && [ "$c" -ge "$target" ] && ready=$((ready + 1))
  done
  [ $ready -eq $NP ] && break
  if ! kill -0 $MP 2>/dev/null || [ $i -ge 2400 ]; then
    echo "signals.sh: check failed: the ranks did not start recording"; cat "$DIR/mpirun.err"
    kill -KILL $MP 2>/dev/null; exit 1
  fi
  i=$((i + 1)); sleep 0.05
done
for r in 0 1 2 3; do count $r >"$DIR/before.$r"; done
kill -TERM $MP
wait $MP
echo "signals.sh: mpirun exited with $?"
# every rank writes, rank 0 merges, then each dies of the signal: wait for
# them (mpirun may have gone first)
i=0
for r in 0 1 2 3; do
  pid=$(cat "$DIR/pid.$r")
  while kill -0 "$pid" 2>/dev/null; do
    if [ $i -ge 3000 ]; then
      echo "signals.sh: check failed: rank $r (pid $pid) still runs"; kill -KILL "$pid"; exit 1
    fi
    i=$((i + 1)); sleep 0.05
  done
done
cat "$DIR/mpirun.err"
n=$(grep -c '^spanscope:' "$DIR/mpirun.err")
if [ "$n" -gt 1 ]; then echo "signals.sh: check failed: $n spanscope lines"; exit 1; fi
exec "$BIN" check "$DIR"
