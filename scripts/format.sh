#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Format C sources with the project's .clang-format.
#   scripts/format.sh [FILE...]           format in place (default: every tracked or new
#                                         .c/.h file of the repository)
#   scripts/format.sh --check [FILE...]   list unformatted files; exit 1 if there are any
set -euo pipefail

check=0
if [ "${1:-}" = "--check" ]; then
    check=1
    shift
fi
args=()
for f in "$@"; do
    args+=("$(realpath -- "$f")")
done
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
    echo "format: clang-format is missing (scripts/install-deps.sh installs it)" >&2
    exit 2
fi
if [ ${#args[@]} -eq 0 ]; then
    mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h')
else
    files=("${args[@]}")
fi

bad=0
for f in "${files[@]}"; do
    if [ "$check" = 1 ]; then
        if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
            echo "format: $f is not formatted (scripts/format.sh $f)"
            bad=$((bad + 1))
        fi
    else
        clang-format -i "$f"
    fi
done
if [ "$check" = 1 ]; then
    echo "format: $bad of ${#files[@]} files not formatted"
    [ "$bad" -eq 0 ]
fi
