#!/usr/bin/env bash
# The README's two commands on a fresh Debian bookworm (issue 14 part 0):
# a `debootstrap --variant=minbase` chroot with only git and make added, the
# current commit cloned into it, and
#   1. `make demo` in one fresh copy of that chroot,
#   2. `make check` alone in another fresh copy (after planting a half-made
#      .venv, an empty .venv/bin, as an interrupted `python3 -m venv`
#      leaves: install-deps.sh must make it again, not trip over it).
#   3. (FRESH_STEPS="wheel", FRESH_WHEEL=dist/...whl) a wheel installed
#      where only python3 and python3-venv were added (no compiler, CMake or
#      HDF5 headers: checked), by scripts/check-wheel.sh WHEEL there.
# Each step starts from the same untouched base, so none profits from
# what another installed.  Run as root (debootstrap and chroot need it).
#
#   scripts/fresh-check.sh [ROOT]        ROOT: /var/tmp/spanscope-fresh
#   FRESH_STEPS="demo check" (default)   which steps, in that order
#   FRESH_MIRROR=http://deb.debian.org/debian
#   FRESH_MAKEFLAGS="JOBS=2" (default)   added to make's command line (a
#                                        shared machine: 2 build jobs)
#
# ROOT/base (the minbase system with git and make) is made once and reused;
# ROOT/run (its copy for a step) and the clone are made again every time.
# Downloaded .debs are kept in ROOT/apt-archives, shared by the steps.
# Logs: ROOT/STEP.log; the last lines of each are printed, then one line
# "fresh-check: STEP: ok|FAILED (rc N)" per step; exit 0 when all passed.
# Only committed work is checked (the clone is of HEAD).
set -euo pipefail
{ # read whole before it runs: an edit of this file during a run cannot garble the run
repo=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-/var/tmp/spanscope-fresh}
steps=${FRESH_STEPS:-demo check}
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}
makeflags=${FRESH_MAKEFLAGS-JOBS=2}
run=$root/run

if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-check: needs root (debootstrap, chroot, mount): sudo $0 $*" >&2
  exit 2
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "fresh-check: installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  echo "fresh-check: warning: uncommitted changes are not checked (the clone is of HEAD $(git -C "$repo" rev-parse --short HEAD))" >&2
fi
mkdir -p "$root" "$root/apt-archives/partial"

# mounted_under DIR: whether anything is mounted at or below DIR.
mounted_under() {
  awk -v d="$1" '$2 == d || index($2, d "/") == 1 { found = 1 } END { exit !found }' /proc/mounts
}

# unmount_all DIR: unmounts everything at or below DIR, deepest first.
unmount_all() {
  local m
  for m in $(awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
}

# mount_system DIR: /proc, /dev, /sys and the shared apt cache inside the
# chroot DIR (rslave: unmounting them there never unmounts the host's).
mount_system() {
  local d=$1
  mount -t proc proc "$d/proc"
  mount --rbind /dev "$d/dev" && mount --make-rslave "$d/dev"
  mount --rbind /sys "$d/sys" && mount --make-rslave "$d/sys"
  mkdir -p "$d/var/cache/apt/archives"
  mount --bind "$root/apt-archives" "$d/var/cache/apt/archives"
}

cleanup() { unmount_all "$root"; }
trap cleanup EXIT INT TERM

# in_chroot DIR CMD: CMD under bash in DIR with a clean environment, as a
# fresh machine's root login has (the host's variables stay out).  Where
# the host's network intercepts TLS (this project's machines: PIP_CERT
# names a bundle with its CA), pip in the chroot is given that bundle, or
# it could reach no index; nothing else is carried.
in_chroot() {
  local d=$1 cmd=$2 extra=()
  if [ -n "${PIP_CERT:-}" ] && [ -f "$PIP_CERT" ]; then
    cp "$PIP_CERT" "$d/etc/ssl-host-ca.crt"
    extra+=(PIP_CERT=/etc/ssl-host-ca.crt)
  fi
  env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${extra[@]}" \
    chroot "$d" /bin/bash -c "$cmd"
}

# The base: minbase bookworm, then git and make (all the README asks for).
if [ ! -e "$root/base/.fresh-base-done" ]; then
  mounted_under "$root/base" && { echo "fresh-check: $root/base has mounts, not touching it" >&2; exit 1; }
  rm -rf "$root/base"
  echo "fresh-check: debootstrap --variant=minbase bookworm $root/base"
  debootstrap --variant=minbase bookworm "$root/base" "$mirror" > "$root/debootstrap.log" 2>&1 \
    || { tail -20 "$root/debootstrap.log"; exit 1; }
  cp /etc/resolv.conf "$root/base/etc/resolv.conf"
  mount_system "$root/base"
  in_chroot "$root/base" 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git make >/dev/null'
  unmount_all "$root/base"
  rm -rf "$root/base/var/lib/apt/lists/"*  # a fresh machine has not run apt-get update
  touch "$root/base/.fresh-base-done"
fi

git -C "$repo" bundle create "$root/spanscope.bundle" HEAD 2>/dev/null
commit=$(git -C "$repo" rev-parse --short HEAD)

declare -A result
for step in $steps; do
  case "$step" in
    demo) cmd="make demo $makeflags" ;;
    check) cmd="mkdir -p .venv/bin && make check $makeflags" ;;  # a half-made .venv first
    wheel)
      [ -f "${FRESH_WHEEL:-}" ] || { echo "fresh-check: wheel: FRESH_WHEEL names no wheel" >&2; exit 2; }
      cmd="apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
           for t in cc gcc clang cmake h5cc; do ! command -v \$t || { echo \"fresh-check: \$t is here\"; exit 1; }; done
           ! ls /usr/include/hdf5* >/dev/null 2>&1 || { echo 'fresh-check: HDF5 headers are here'; exit 1; }
           python3 -m venv .venv && bash scripts/check-wheel.sh /tmp/$(basename "$FRESH_WHEEL")" ;;
    *) echo "fresh-check: unknown step '$step' (demo, check, wheel)" >&2; exit 2 ;;
  esac
  mounted_under "$run" && { echo "fresh-check: $run still has mounts, not removing it" >&2; exit 1; }
  rm -rf "$run"
  cp -a "$root/base" "$run"
  cp /etc/resolv.conf "$run/etc/resolv.conf"
  cp "$root/spanscope.bundle" "$run/tmp/spanscope.bundle"
  [ "$step" != wheel ] || cp "$FRESH_WHEEL" "$run/tmp/"
  mount_system "$run"
  echo "fresh-check: $step: $commit, $cmd, log $root/$step.log"
  start=$(date +%s)
  set +e
  in_chroot "$run" "set -e; git clone -q /tmp/spanscope.bundle /root/spanscope; cd /root/spanscope; $cmd" \
    > "$root/$step.log" 2>&1
  rc=$?
  set -e
  unmount_all "$run"
  tail -15 "$root/$step.log"
  result[$step]="$rc $(( $(date +%s) - start ))"
done

fail=0
for step in $steps; do
  read -r rc secs <<< "${result[$step]}"
  if [ "$rc" -eq 0 ]; then
    echo "fresh-check: $step: ok ($commit, ${secs} s)"
  else
    echo "fresh-check: $step: FAILED (rc $rc, $commit, ${secs} s; $root/$step.log)"
    fail=1
  fi
done
exit $fail
}
