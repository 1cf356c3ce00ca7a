#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds a consumer with
# find_package(spanscope) and one with pkg-config, and runs both.
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib:${LD_LIBRARY_PATH:-}" "$tmp/cm/consumer" "$tmp/a.h5" | grep -qx "calls 10"
libdir=$(ls -d "$tmp"/prefix/lib*/pkgconfig | head -1)
export PKG_CONFIG_PATH="$libdir"
cc "$src/consumer/main.c" -o "$tmp/pc" $(pkg-config --cflags --libs spanscope)
LD_LIBRARY_PATH="$(dirname "$libdir"):${LD_LIBRARY_PATH:-}" "$tmp/pc" "$tmp/b.h5" | grep -qx "calls 10"
test -s "$tmp/a.h5" && test -s "$tmp/b.h5"
echo "install consumer: find_package and pkg-config both work"
