#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Check the dynamic symbol table of a built library against include/mpi.h.
#
#   tools/dev/check_exports.sh <path to libmpi.so> [path to mpi.h]
#
# Problems reported (exit 1):
#   - a function mpi.h declares (MPI_, PMPI_, MPIX_, PMPIX_, MPIR_Dup_fn) that
#     the library does not export as a function;
#   - a data symbol mpi.h declares extern that is not exported as an object;
#   - MPI_x that is not a weak alias of a strong PMPI_x (same address);
#   - any exported symbol other than MPI_*, PMPI_*, MPIX_*, PMPIX_*,
#     MPIR_Dup_fn and the MPIR_F08_* objects (an internal symbol leaking);
#   - if MPICH's library is installed ($MPICH_LIB, default Debian's
#     libmpich.so.12): a data symbol whose size differs from MPICH's (programs
#     built non-PIE copy-relocate these objects with MPICH's size).
# Exits 0 when there is none.
set -eu

if [ $# -lt 1 ] || [ ! -f "$1" ]; then
    echo "usage: $0 <path to libmpi.so> [path to mpi.h]" >&2
    exit 2
fi
lib=$1
here=$(cd "$(dirname "$0")" && pwd)
header=${2:-$here/../../include/mpi.h}
cc=${CC:-cc}

work=$(mktemp -d "${TMPDIR:-/tmp}/check_exports.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Declarations of the header, one per line once preprocessed (mpi.h starts
# every prototype at column 0: `<type> <name>(`).
"$cc" -E -P -x c "$header" > "$work/hdr.i"
grep -v '^typedef' "$work/hdr.i" |
    sed -n 's/^[A-Za-z_][A-Za-z0-9_ ]*[ *]\(P\{0,1\}MPIX\{0,1\}_[A-Za-z0-9_]*\)(.*/\1/p; s/^[A-Za-z_][A-Za-z0-9_ ]*[ *]\(MPIR_[A-Za-z0-9_]*\)(.*/\1/p' |
    sort -u > "$work/hdr_funcs"
sed -n 's/^extern .*[ *]\([A-Za-z_][A-Za-z0-9_]*\)\(\[[0-9]*\]\)\{0,1\};$/\1/p' "$work/hdr.i" |
    sort -u > "$work/hdr_data"
if [ ! -s "$work/hdr_funcs" ]; then
    echo "check_exports: found no function declarations in $header" >&2
    exit 2
fi

# name type address of every defined dynamic symbol
nm -D --defined-only "$lib" | awk 'NF == 3 { print $3, $2, $1 }' | sort > "$work/syms"
awk '$2 ~ /^[TtWwi]$/ { print $1 }' "$work/syms" | sort -u > "$work/lib_funcs"
awk '$2 ~ /^[DdBbRrVvGgSs]$/ { print $1 }' "$work/syms" | sort -u > "$work/lib_data"

: > "$work/problems"
comm -23 "$work/hdr_funcs" "$work/lib_funcs" | sed 's/^/missing function: /' >> "$work/problems"
comm -23 "$work/hdr_data" "$work/lib_data" | sed 's/^/missing data symbol: /' >> "$work/problems"

# MPI_x must be a weak alias of a strong PMPI_x
awk '
    { type[$1] = $2; addr[$1] = $3 }
    END {
        for (n in type) {
            if (n !~ /^MPIX?_/ || type[n] !~ /^[TtWwi]$/) continue
            p = "P" n
            if (!(p in type))
                printf "%s has no PMPI_ twin\n", n
            else if (type[n] != "W" || type[p] != "T" || addr[n] != addr[p])
                printf "%s (%s) is not a weak alias of %s (%s)\n", n, type[n], p, type[p]
        }
    }' "$work/syms" | sort >> "$work/problems"

# nothing else leaks
awk '{ print $1 }' "$work/syms" |
    grep -Ev '^(P?MPIX?_[A-Za-z0-9_]+|MPIR_Dup_fn|MPIR_F08_MPI_(STATUS_IGNORE_OBJ|STATUSES_IGNORE_OBJ|IN_PLACE|BOTTOM))$' |
    sed 's/^/unexpected export: /' >> "$work/problems" || true

# data object sizes against MPICH's library
mpich_lib=${MPICH_LIB:-/usr/lib/x86_64-linux-gnu/libmpich.so.12}
if [ -f "$mpich_lib" ]; then
    nm -D -S --defined-only "$lib" | awk 'NF == 4 { print $4, $2 }' | sort > "$work/size_ours"
    nm -D -S --defined-only "$mpich_lib" | awk 'NF == 4 { print $4, $2 }' | sort > "$work/size_mpich"
    while read -r name; do
        a=$(awk -v n="$name" '$1 == n { print $2 }' "$work/size_ours")
        b=$(awk -v n="$name" '$1 == n { print $2 }' "$work/size_mpich")
        if [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]; then
            echo "data symbol $name has size 0x$a, MPICH's has 0x$b" >> "$work/problems"
        fi
    done < "$work/hdr_data"
fi

nfuncs=$(wc -l < "$work/hdr_funcs")
ndata=$(wc -l < "$work/hdr_data")
if [ -s "$work/problems" ]; then
    cat "$work/problems"
    echo "check_exports: $(wc -l < "$work/problems") problems in $lib" \
        "($nfuncs functions and $ndata data symbols declared)" >&2
    exit 1
fi
echo "check_exports: $lib exports all $nfuncs functions and $ndata data symbols of mpi.h, nothing else"
