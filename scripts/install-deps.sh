#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what building and testing Tandem MPI needs (Debian/Ubuntu, apt-get).
# Idempotent and quick when everything is there: apt-get update runs only when a package
# is missing. MPICH (mpicc.mpich, libmpich.so.12) is for the ABI tests; Open MPI is an
# anchor of the benchmarks. iproute2 makes the namespace cluster of the multi-node tests
# (../shared/tools/netns-cluster); ucx-utils' ucx_perftest measures its path's limit.
# libucx-dev (UCX 1.13) is the transport between nodes (src/net/ucx.c).
# libpmix-dev gives the PMIx client (src/boot/pmix.c) its headers; libpmix2 is what it loads
# under a PMIx server (Open MPI's mpirun, whose ranks the pmix tests start).
# slurmctld, slurmd, slurm-client and munge run the private Slurm of tests/mpi/slurm (srun
# --mpi=pmi2 and --mpi=pmix on the namespace cluster); slurm-wlm-basic-plugins has their
# mpi/pmi2 and mpi/pmix plugins (bookworm has no separate mpi-pmix package).
set -euo pipefail

packages=(
    build-essential gcc g++ clang clang-format cmake ninja-build pkg-config binutils
    python3 python3-venv
    mpich libmpich-dev
    openmpi-bin libopenmpi-dev
    iproute2 ucx-utils libucx-dev
    libpmix-dev libpmix2
    slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge
)

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: not a Debian system; install by hand: ${packages[*]}" >&2
    for tool in cc c++ cmake ninja python3; do
        command -v "$tool" >/dev/null 2>&1 || { echo "install-deps: $tool is missing" >&2; exit 1; }
    done
    exit 0
fi

# dpkg-query fails for a package it has never heard of: that one is simply missing
installed=" $({ dpkg-query -W -f='${Package}:${Status}\n' "${packages[@]}" 2>/dev/null || true; } |
    sed -n 's/^\([^:]*\):install ok installed$/\1/p' | tr '\n' ' ')"
missing=()
for p in "${packages[@]}"; do
    if [[ $installed != *" $p "* ]]; then
        missing+=("$p")
    fi
done
if ((${#missing[@]} == 0)); then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi

sudo=()
if [ "$(id -u)" != 0 ]; then
    sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
