#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: run_golden.sh <select_table binary> <golden file> [VAR=value ...]
# Runs the binary with the given environment and diffs its output with the file.
# To accept a new table: TANDEM_GOLDEN_UPDATE=1 (writes the file).
set -euo pipefail
bin=$1 golden=$2
shift 2
out=$(env -i PATH="$PATH" "$@" "$bin")
if [ "${TANDEM_GOLDEN_UPDATE:-0}" = 1 ]; then
    printf '%s\n' "$out" >"$golden"
    echo "updated $golden"
    exit 0
fi
if ! diff -u "$golden" <(printf '%s\n' "$out"); then
    echo "golden: the selection table changed; if intended, rerun with TANDEM_GOLDEN_UPDATE=1 and review the diff"
    exit 1
fi
