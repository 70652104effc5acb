#!/usr/bin/env bash
# Installs what scalegnn needs to build and run on Debian/Ubuntu: an MPI
# (OpenMPI, the default build's), MPICH (which CI also builds with -tags
# mpich), a CBLAS (OpenBLAS) and pkg-config, with apt-get, skipping the
# packages already installed, and keeps Open MPI's mpirun the default
# `mpirun`. Go itself (1.24 or newer) must be installed. On other systems
# install the equivalents by hand (see README.md); builds with -tags nompi
# and -tags noblas need neither MPI nor BLAS.
set -euo pipefail
pkgs=(libopenmpi-dev openmpi-bin mpich libmpich-dev libopenblas-dev pkg-config)
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup: not a Debian-like system; install an MPI with pkg-config file 'ompi' (or build with -tags mpich), a CBLAS and pkg-config" >&2
  exit 1
fi
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
if [ ${#need[@]} -eq 0 ]; then
  echo "setup: ${pkgs[*]} already installed"
else
  echo "setup: installing ${need[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
fi
# With both MPIs installed, `mpirun` is a Debian alternative (Open MPI's
# by priority, unless someone chose MPICH's). The default build links Open
# MPI and its tests start plain `mpirun`, so make sure it is Open MPI's.
ompirun=/usr/bin/mpirun.openmpi
if [ "$(readlink -f /usr/bin/mpirun)" != "$(readlink -f "$ompirun")" ]; then
  echo "setup: making $ompirun the default mpirun"
  "${sudo[@]}" update-alternatives --set mpirun "$ompirun" >/dev/null
fi
echo "setup: done"
