#!/usr/bin/env bash
# The public header at its use sites (issue 14): use_sites.c, which uses
# every public macro of include/spanscope.h (checked here), must compile
# with no diagnostic at all under
#   gcc     -std=c99   -pedantic -Wall -Wextra -Wdeclaration-after-statement
#   clang   -std=c11   -Weverything -Wno-padded
#   clang++ -std=c++11 -Weverything -Wno-c++98-compat
#   g++     -std=c++11 -pedantic -Wall -Wextra
# each as is and with -DSPS_DISABLE, and then, linked with the build's
# libspanscope, run and print "use_sites: ok" (the scopes record what they
# should).  A compiler that is not installed is skipped with a message.
# Also: a pre-C99 or pre-C++11 compile stops at the header's #error, and
# every struct of the header is complete and warning-free under both
# -Weverything sets (-Wno-padded there: the structs' padding is their
# documented layout, docs/abi.md; the macros' structs have none).
#   run.sh SOURCE_DIR BUILD_DIR [norun]   (norun: sanitizer builds, whose
#   library a plain program cannot link)
set -euo pipefail
src=$1 build=$2 mode=${3:-run}
here=$src/tests/header
inc=$src/include
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# 1. every public macro is used by use_sites.c (SPS_API is the header's
# declaration attribute; names ending in "_" are the header's own)
macros=$(grep -ohE '^#[[:space:]]*define[[:space:]]+SPS_[A-Z0-9_]+' "$inc/spanscope.h" |
  awk '{print $NF}' | grep -vE '_$|^SPS_API$' | sort -u)
[ -n "$macros" ] || { echo "header: no public macros found in $inc/spanscope.h" >&2; exit 1; }
for m in $macros; do
  case $m in SPS__*)
    echo "header: macro $m contains \"__\", reserved in C++ (the header's own macros end in \"_\")" >&2
    fail=1
    continue
  esac
  grep -qw "$m" "$here/use_sites.c" || { echo "header: use_sites.c does not use $m" >&2; fail=1; }
done

# 2. the use sites under each compiler, clean, then run
configs=(
  "gcc|c|-std=c99 -pedantic -Wall -Wextra -Wdeclaration-after-statement"
  "clang|c|-std=c11 -Weverything -Wno-padded"
  "clang++|c++|-std=c++11 -Weverything -Wno-c++98-compat"
  "g++|c++|-std=c++11 -pedantic -Wall -Wextra"
)
ran=0
for c in "${configs[@]}"; do
  IFS='|' read -r cc lang flags <<<"$c"
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "header: $cc not installed, its checks skipped"
    continue
  fi
  for variant in "" "-DSPS_DISABLE"; do
    obj=$tmp/use_$cc$variant.o
    # shellcheck disable=SC2086
    if ! out=$("$cc" -x "$lang" $flags -Werror $variant -I"$inc" -c "$here/use_sites.c" -o "$obj" 2>&1) ||
       [ -n "$out" ]; then
      echo "header: $cc $flags $variant: not clean at the use sites:" >&2
      echo "$out" >&2
      fail=1
      continue
    fi
    [ "$mode" = run ] || continue
    exe=$tmp/use_$cc$variant
    if ! "$cc" "$obj" -o "$exe" -L"$build" -lspanscope -Wl,-rpath,"$build" 2>"$tmp/link.txt"; then
      echo "header: $cc: linking use_sites failed:" >&2
      cat "$tmp/link.txt" >&2
      fail=1
      continue
    fi
    if ! out=$("$exe" 2>&1) || [ "$out" != "use_sites: ok" ]; then
      echo "header: use_sites built by $cc $variant failed:" >&2
      echo "$out" >&2
      fail=1
    fi
  done
  ran=$((ran + 1))

  # 3. too old a language stops at the header's #error, which names the need
  if [ "$lang" = c ]; then old=-std=c89 need="needs C99"; else old=-std=c++98 need="needs C++11"; fi
  if "$cc" -x "$lang" $old -I"$inc" -c "$here/use_sites.c" -o /dev/null >"$tmp/old.txt" 2>&1 ||
     ! grep -q "$need" "$tmp/old.txt"; then
    echo "header: $cc $old: no #error saying \"$need\":" >&2
    cat "$tmp/old.txt" >&2
    fail=1
  fi

  # 4. every struct complete and clean (sizeof forces C++'s layout checks)
  case $cc in clang|clang++)
    {
      echo '#include <spanscope.h>'
      echo 'extern const size_t use_sites_sizes[];'
      echo 'const size_t use_sites_sizes[] = {'
      grep -oE '^\} (sps_[a-z0-9_]+_t);' "$inc/spanscope.h" | sed -E 's/^\} (.*);/    sizeof(\1),/'
      echo '    0};'
    } >"$tmp/structs.c"
    # shellcheck disable=SC2086
    if ! out=$("$cc" -x "$lang" $flags -Wno-padded -Werror -I"$inc" -c "$tmp/structs.c" -o /dev/null 2>&1) ||
       [ -n "$out" ]; then
      echo "header: $cc: the header's structs are not clean:" >&2
      echo "$out" >&2
      fail=1
    fi
  esac
done
[ "$ran" -gt 0 ] || { echo "header: no compiler found (gcc, clang, clang++, g++)" >&2; exit 1; }
[ "$fail" = 0 ] || exit 1
ran_note=", each program run"
[ "$mode" = run ] || ran_note=" (not run: $mode)"
echo "header: clean at every macro's use site under $ran compilers$ran_note"
