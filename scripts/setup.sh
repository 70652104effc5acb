#!/usr/bin/env bash
# Installs what scalegnn needs to build and run on Debian/Ubuntu: an MPI
# (OpenMPI, the default build's), MPICH (which CI also builds with -tags
# mpich), a CBLAS (OpenBLAS) and pkg-config, and what the tests call: a
# one-node Slurm (slurmctld, slurmd, the clients, munge; scripts/slurm),
# make, procps (pgrep) and git. It uses apt-get, skips the packages
# already installed, and keeps Open MPI's mpirun the default `mpirun`. As
# root it runs apt-get directly; otherwise through sudo. Go itself (1.24
# or newer) must be installed. On other systems install the equivalents
# by hand (see README.md); builds with -tags nompi and -tags noblas need
# neither MPI nor BLAS.
set -euo pipefail
pkgs=(libopenmpi-dev openmpi-bin mpich libmpich-dev libopenblas-dev pkg-config
      slurmctld slurmd slurm-client munge make procps git)
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup: not a Debian-like system; install an MPI with pkg-config file 'ompi' (or build with -tags mpich), a CBLAS and pkg-config" >&2
  exit 1
fi
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
# as_root COMMAND...: runs it directly as root, else through sudo, else
# stops with one line saying what to run as root.
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "setup: not root and no sudo: as root run: $*" >&2
    exit 1
  fi
}
if [ ${#need[@]} -eq 0 ]; then
  echo "setup: ${pkgs[*]} already installed"
else
  echo "setup: installing ${need[*]}"
  # Wait for another apt-get (up to 5 minutes) rather than fail at once.
  as_root apt-get -o DPkg::Lock::Timeout=300 update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${need[@]}" >/dev/null
fi
# With both MPIs installed, `mpirun` is a Debian alternative (Open MPI's
# by priority, unless someone chose MPICH's). The default build links Open
# MPI and its tests start plain `mpirun`, so make sure it is Open MPI's.
ompirun=/usr/bin/mpirun.openmpi
if [ "$(readlink -f /usr/bin/mpirun)" != "$(readlink -f "$ompirun")" ]; then
  echo "setup: making $ompirun the default mpirun"
  as_root update-alternatives --set mpirun "$ompirun" >/dev/null
fi
echo "setup: done"
