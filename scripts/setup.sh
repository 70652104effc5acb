#!/usr/bin/env bash
# Installs what scalegnn needs to build and run on Debian/Ubuntu: an MPI
# (OpenMPI), a CBLAS (OpenBLAS) and pkg-config. Go itself (1.24 or newer)
# must already be installed. Does nothing for packages that are present.
set -euo pipefail
need=()
pkg-config --exists ompi 2>/dev/null || need+=(libopenmpi-dev openmpi-bin)
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
[ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ] || ls /usr/include/*/cblas*.h >/dev/null 2>&1 || need+=(libopenblas-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if [ ${#need[@]} -eq 0 ]; then
  echo "setup: MPI, BLAS and pkg-config already installed"
  exit 0
fi
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
echo "setup: installing ${need[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
echo "setup: done"
