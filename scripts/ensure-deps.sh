#!/bin/sh
# Installs the Debian packages Aptus MPI needs to build and test, when they are missing.
# Usage: scripts/ensure-deps.sh [extra packages...]
set -e
need=""
have() { command -v "$1" >/dev/null 2>&1; }
have cmake || need="$need cmake"
have ninja || need="$need ninja-build"
have cc || need="$need gcc"
have c++ || need="$need g++"
have python3 || need="$need python3"
have pgrep || need="$need procps"
have nm || need="$need binutils"
have clang-format || need="$need clang-format"
have git || need="$need git"
for p in "$@"; do
  dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "Aptus MPI needs these Debian packages:$need" >&2
  echo "Install them with: sudo apt-get install -y$need" >&2
  exit 1
fi
echo "Installing:$need"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $need >/dev/null
