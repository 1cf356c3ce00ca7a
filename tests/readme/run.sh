#!/usr/bin/env bash
# The README's quick starts as pasted (issue 14 part 4).  Each fenced block
# after a "<!-- test:NAME ... -->" line in README.md is taken verbatim:
#   c-quickstart  saved as app.c; compiled clean with -std=c99 -pedantic
#                 -Wall -Wextra -Werror too
#   sh-install    its "cmake --install" line runs (the whole build-and-
#                 install is tests/install/standalone.sh's)
#   sh-link       runs with HOME a scratch directory, against that install
#   sh-buildtree  runs in a directory whose "build" is this build tree
# Each program must write profile.h5 and spanscope report must show both
# regions of the quick start, with their 100 calls of "solve".  LD_LIBRARY_PATH
# is unset: the README's rpaths must do.
#   run.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
unset LD_LIBRARY_PATH PKG_CONFIG_PATH
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
readme=$src/README.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "readme: $*" >&2; exit 1; }

# block NAME: the fenced block after the marker <!-- test:NAME ...-->
block() {
  awk -v name="$1" '
    $0 ~ "^<!-- test:" name "( |-->)" { want = 1; next }
    want && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
  ' "$readme"
}
for name in c-quickstart sh-install sh-link sh-buildtree; do
  n=$(grep -cE "^<!-- test:$name( |-->)" "$readme" || true)
  [ "$n" = 1 ] || die "README.md has $n markers <!-- test:$name -->, not 1"
  [ -n "$(block "$name")" ] || die "no fenced block after <!-- test:$name -->"
done

# the report of a run of the quick start: both regions, solve's 100 calls
check_report() {  # DIR WHAT OUTPUT
  [ -s "$1/profile.h5" ] || die "$2: no profile.h5"
  grep -q 'total ' <<<"$3" || die "$2: the program printed no total: $3"
  grep -qE '(^|[^a-z])step([^a-z]|$)' <<<"$3" || die "$2: no region step in: $3"
  grep -qE 'solve +100 ' <<<"$3" || die "$2: no region solve with 100 calls in: $3"
}

block c-quickstart >"$tmp/app.c"
gcc -std=c99 -pedantic -Wall -Wextra -Werror -I"$src/include" -c "$tmp/app.c" -o "$tmp/app.o" ||
  die "the C quick start does not compile clean with gcc -std=c99 -pedantic -Wall -Wextra"

# against an install in $HOME/.local, as the README says
home=$tmp/home
mkdir -p "$home" "$tmp/link"
ln -s "$build" "$tmp/link/build"
cp "$tmp/app.c" "$tmp/link/app.c"
inst=$(block sh-install | grep -E '^cmake --install ') || die "sh-install has no cmake --install line"
(cd "$tmp/link" && HOME=$home bash -euo pipefail -c "$inst") >/dev/null ||
  die "the install line failed: $inst"
out=$(cd "$tmp/link" && HOME=$home bash -euo pipefail -c "$(block sh-link)" 2>&1) ||
  die "the sh-link block failed: $out"
check_report "$tmp/link" "sh-link" "$out"

# from the build tree
mkdir -p "$tmp/bt"
ln -s "$build" "$tmp/bt/build"
cp "$tmp/app.c" "$tmp/bt/app.c"
out=$(cd "$tmp/bt" && HOME=$home bash -euo pipefail -c "$(block sh-buildtree)" 2>&1) ||
  die "the sh-buildtree block failed: $out"
check_report "$tmp/bt" "sh-buildtree" "$out"
echo "readme: the C quick start, the install, the link and the build-tree blocks run as pasted"
