#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build Tandem MPI with warnings as errors and install it into build/install.
#   scripts/build.sh [extra cmake arguments]     (BUILD_DIR=... to build elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
build=${BUILD_DIR:-build}
cmake -G Ninja -S . -B "$build" -DTANDEM_WERROR=ON -DCMAKE_INSTALL_PREFIX="$PWD/$build/install" "$@"
cmake --build "$build"
cmake --install "$build" >"$build/install.log" || { cat "$build/install.log"; exit 1; }
echo "build: installed into $build/install (bin/mpicc, bin/mpirun, lib/libmpi.so)"
