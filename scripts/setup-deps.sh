#!/usr/bin/env bash
# Install the Debian packages rvfit builds and tests with, when missing.
# As root it installs them; otherwise it prints the command and fails.
set -euo pipefail
pkgs=(cmake make gcc pkg-config libcfitsio-dev libinih-dev libqhull-dev
      liblapacke-dev libopenblas-dev
      ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
      libopenmpi-dev openmpi-bin libcairo2-dev libhdf5-dev
      python3-numpy python3-astropy python3-pytest python3-pip python3-venv)
# --fuzz: clang (with libFuzzer) for the fuzz targets, tests/fuzz; without
# it the build skips them and says so.
if [ "${1:-}" = "--fuzz" ]; then
    pkgs+=(clang)
fi
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "rvfit: missing Debian packages: ${missing[*]}" >&2
    echo "       install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi
echo "rvfit: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
