#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_no_rep_stos.sh <libmpi.so>
# The per-call paths must not zero memory with `rep stos`: it waits for the store
# buffer to drain, which right after a ring cell was published costs a cross-core
# round trip (src/CMakeLists.txt builds with -mmemset-strategy for that). Lists
# the library's functions that still contain one; exit 77 (skipped) without objdump.
set -euo pipefail
lib=$1
command -v objdump >/dev/null || exit 77
hits=$(objdump -d --no-show-raw-insn "$lib" |
    awk '/^[0-9a-f]+ <.*>:$/ {fn = $2} /rep stos/ {print fn}' | sort -u)
# start-up and set-up code may keep them; anything else is a per-call path
hits=$(printf '%s\n' "$hits" | grep -Ev '<(tdm_dtype_init|tdm_comm_init|tdm_shm_init|tdm_boot_init|tdm_boot_bind|tdm_boot_bind_unbound|tdm_boot_cpulist_read|tdm_params_init|show_binding)>:' || true)
if [ -n "$hits" ]; then
    echo "rep stos in: $hits"
    exit 1
fi
echo "no rep stos outside start-up code"
