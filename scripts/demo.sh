#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build and install Tandem MPI, compile examples/hello_ring.c with the installed mpicc
# and run it on 2 and 4 ranks with the installed mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p build
echo "demo: building and installing into build/install (log: build/demo-build.log)"
if ! scripts/build.sh >build/demo-build.log 2>&1; then
    tail -n 40 build/demo-build.log
    echo "demo: the build failed"
    exit 1
fi
prefix=build/install
mkdir -p build/demo
run() {
    echo "\$ $*"
    "$@"
}
run "$prefix/bin/mpicc" -O2 -o build/demo/hello_ring examples/hello_ring.c
for n in 2 4; do
    run "$prefix/bin/mpirun" -n "$n" --timeout 60 build/demo/hello_ring
done
