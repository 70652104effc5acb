#!/usr/bin/env bash
# Installs what scalegnn needs to build and run on Debian/Ubuntu: an MPI
# (OpenMPI), a CBLAS (OpenBLAS) and pkg-config, with apt-get, skipping the
# packages already installed. Go itself (1.24 or newer) must be installed.
# On other systems install the equivalents by hand (see README.md).
set -euo pipefail
pkgs=(libopenmpi-dev openmpi-bin libopenblas-dev pkg-config)
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup: not a Debian-like system; install an MPI with pkg-config file 'ompi' (or build with -tags mpich), a CBLAS and pkg-config" >&2
  exit 1
fi
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -eq 0 ]; then
  echo "setup: ${pkgs[*]} already installed"
  exit 0
fi
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
echo "setup: installing ${need[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
echo "setup: done"
