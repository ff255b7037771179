#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The one command that checks everything (.ci/run calls it):
#   1. scripts/build.sh: gcc build with -Werror, installed into build/install
#   2. a clang build with -Werror in build-clang (compile only: warnings of both compilers)
#   3. a ThreadSanitizer build in build-tsan (gcc -fsanitize=thread: the library, mpirun
#      and the tests/mpi/threads programs only)
#   4. ctest on build: unit, MPI testlists, ABI, launcher and wrapper checks
#   5. ctest on build-tsan: every tests/mpi/threads line (and rma/threads) under TSan, whose
#      first report ends the rank with exit status 66 and so fails the test
#   6. clang-format --check of every .c/.h (STYLE.md: CI fails on unformatted code), run
#      beside the builds
# Ends with the line "N passed, N failed, N skipped" and exits non-zero on any failure.
#
# Parallelism: every MPI test claims as many ctest processors as it has ranks, so
# `ctest -j$(nproc)` never runs more ranks than there are cores (spinning ranks of two
# jobs on 2 cores would time out); launcher checks measure teardown times and run alone.
set -uo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
extra_failed=0
enforce_format=1

# the format check (one clang-format per file, mostly process start-up) runs beside the
# builds, whose last steps leave a core idle; its result is read at the end
mkdir -p build
scripts/format.sh --check >build/format.log 2>&1 &
format_pid=$!

if ! scripts/build.sh; then
    kill "$format_pid" 2>/dev/null
    echo "test: the gcc build failed"
    echo "0 passed, 1 failed"
    exit 1
fi

echo "test: clang build (compile only, warnings are errors)"
# -O0 without -g: clang warns from its front end, whatever the optimisation, and nothing
# built here runs; it takes half the time of the default -O2 -g
if cmake -G Ninja -S . -B build-clang -DTANDEM_WERROR=ON -DCMAKE_C_COMPILER=clang \
        -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O0 \
        -DCMAKE_CXX_FLAGS_DEBUG=-O0 >build/clang-build.log 2>&1 &&
    cmake --build build-clang >>build/clang-build.log 2>&1; then
    echo "test: clang build ok"
    clang_ok=1
else
    tail -n 60 build/clang-build.log
    echo "test: the clang build failed (full log: build/clang-build.log)"
    clang_ok=0
    extra_failed=1
fi

# ThreadSanitizer: races between threads found by a tool, not by chance. gcc, since
# Debian's clang 14 has no TSan runtime; no -Werror (gcc warns that TSan ignores
# atomic_thread_fence; the other two builds check warnings). src/coll/op.c builds no
# target_clones under TSan (their ifunc resolvers run before TSan is set up), so reports
# carry full stacks.
echo "test: ThreadSanitizer build (build-tsan: library, mpirun, threads tests)"
tsan_flags="-fsanitize=thread"
tsan_t0=$(date +%s)
# A tree configured otherwise (another compiler: CMake then drops the -D flags with its
# cache) is made again, and the library must need libtsan: never an uninstrumented run.
if ! grep -qs -- "^CMAKE_C_FLAGS:STRING=$tsan_flags\$" build-tsan/CMakeCache.txt; then
    rm -rf build-tsan
fi
if CC=gcc CXX=g++ cmake -G Ninja -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS=$tsan_flags" "-DCMAKE_CXX_FLAGS=$tsan_flags" >build/tsan-build.log 2>&1 &&
    cmake --build build-tsan --target mpi mpirun tests_threads mpitest_pt2pt_send_recv \
        mpitest_rma_threads >>build/tsan-build.log 2>&1 &&
    readelf -d build-tsan/lib/libmpi.so.12 | grep -q 'NEEDED.*libtsan'; then
    echo "test: ThreadSanitizer build ok ($(($(date +%s) - tsan_t0)) s)"
    tsan_ok=1
else
    tail -n 60 build/tsan-build.log
    echo "test: the ThreadSanitizer build failed (full log: build/tsan-build.log)"
    tsan_ok=0
    extra_failed=1
fi

format_ok=1
if ! wait "$format_pid"; then
    tail -n 1 build/format.log
    if [ "$enforce_format" = 1 ]; then
        cat build/format.log
        format_ok=0
        extra_failed=1
    else
        echo "test: formatting is not enforced yet (list: build/format.log)"
    fi
fi

junit=build/ctest-results.xml
rm -f "$junit"
ctest --test-dir build --output-on-failure -j "$jobs" --output-junit "$PWD/$junit" "$@"
ctest_rc=$?

# Under TSan: every line of tests/mpi/threads/testlist (with its environment and
# arguments; sendrecv does one round there instead of four), the one-sided threads lines
# (rma/threads), and pt2pt/send_recv:2, the engine without threads. A data race ends the
# rank (exit 66) and fails its test.
tsan_junit=build/ctest-tsan-results.xml
rm -f "$tsan_junit"
if [ "$tsan_ok" = 1 ]; then
    tsan_t0=$(date +%s)
    # UCX is not instrumented: its memory hooks (UCX_MEM_EVENTS) crash TSan in an exiting
    # thread's madvise, and tests/tsan.supp silences races inside libucs itself
    UCX_MEM_EVENTS=no \
        TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:-}" \
        ctest --test-dir build-tsan --output-on-failure -j "$jobs" --output-junit "$PWD/$tsan_junit" \
        -R "^(threads/.*|rma/threads:.*|pt2pt/send_recv:2)\$"
    [ $? -eq 0 ] || ctest_rc=1
    echo "test: ThreadSanitizer tests took $(($(date +%s) - tsan_t0)) s"
fi

# count from ctest's JUnit report: ctest's own summary counts skipped tests as passed
summary=$(python3 - "$junit" "$tsan_junit" "$tsan_ok" "$clang_ok" "$format_ok" <<'PY'
import sys
import xml.etree.ElementTree as ET
passed = failed = skipped = 0
cases = []
try:
    cases += list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
except (OSError, ET.ParseError) as e:
    print(f"test: no ctest report ({e})", file=sys.stderr)
    failed += 1
if sys.argv[3] == "1":  # the TSan tests ran: their report counts too
    try:
        cases += list(ET.parse(sys.argv[2]).getroot().iter("testcase"))
    except (OSError, ET.ParseError) as e:
        print(f"test: no ThreadSanitizer ctest report ({e})", file=sys.stderr)
        failed += 1
for case in cases:
    status = case.get("status", "")
    if case.find("failure") is not None or case.find("error") is not None \
            or status == "fail":
        failed += 1
    elif case.find("skipped") is not None or status in ("notrun", "disabled"):
        skipped += 1
    else:
        passed += 1
for ok in sys.argv[3:]:  # the TSan and clang builds and the format check count as checks
    if ok == "1":
        passed += 1
    else:
        failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
)
echo "$summary"
case $summary in
*" 0 failed"*) [ "$ctest_rc" -eq 0 ] && [ "$extra_failed" -eq 0 ] && exit 0 ;;
esac
exit 1
