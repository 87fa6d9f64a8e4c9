#!/bin/sh
# Installs the Debian packages Aptus MPI needs to build and test, when they are missing.
# Usage: scripts/ensure-deps.sh [extra packages...]
set -e
need=""
have() { command -v "$1" >/dev/null 2>&1; }
have cmake || need="$need cmake"
have ninja || need="$need ninja-build"
have make || need="$need make"  # the plain build of the README (build.makefiles test)
have cc || need="$need gcc"
have c++ || need="$need g++"
have gfortran || need="$need gfortran"  # the Fortran bindings (mpif.h, use mpi, mpifort)
have python3 || need="$need python3"
# python3's pip (the standard-ABI tests fetch a wheel), venv and C headers (ctest -L mpi4py
# builds mpi4py from source in a virtual environment); Debian splits them off python3.
pyok() { have python3 && python3 -c "$1" >/dev/null 2>&1; }
pyok 'import pip' || need="$need python3-pip"
pyok 'import venv, ensurepip' || need="$need python3-venv"
pyok 'import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))' ||
  need="$need python3-dev"
# The certificates for HTTPS to PyPI (the ABI tests' wheel, mpi4py): a fresh Debian has none.
[ -s /etc/ssl/certs/ca-certificates.crt ] || need="$need ca-certificates"
have pgrep || need="$need procps"
have mpiexec.mpich || need="$need mpich"  # MPICH's Hydra launcher (ctest -L hydra)
have nm || need="$need binutils"
have clang-format || need="$need clang-format"
have git || need="$need git"
# The network channels: libfabric (found with pkg-config); network namespaces for the multi-node
# tests (iproute2) and real packet loss in them (nftables).
have pkg-config || need="$need pkg-config"
dpkg -s libfabric-dev >/dev/null 2>&1 || need="$need libfabric-dev"
# mpiexec binds ranks to CPUs from the host's topology (hwloc); the library reads it for the
# hardware split types of MPI_Comm_split_type and MPI_Get_hw_resource_info
dpkg -s libhwloc-dev >/dev/null 2>&1 || need="$need libhwloc-dev"
have ip || need="$need iproute2"
have nft || need="$need nftables"
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
