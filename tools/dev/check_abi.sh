#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Check include/mpi.h against an installed MPICH mpi.h, name by name.
#
#   tools/dev/check_abi.sh [our include dir] [MPICH include dir]
#
# Compares, for every name MPICH's header defines:
#   - constants and predefined handles (macros, enum constants): value and type;
#   - function-like macros (handle c2f/f2c): result for a sample argument;
#   - extern data symbols: type;
#   - typedefs: type (C++ mangled name) and size;
#   - functions (MPI_, PMPI_, MPIX_, PMPIX_, MPIR_Dup_fn): full signature, as the
#     C++ mangled function type, so const-ness of pointees, int vs long vs long
#     long and struct names all count (top-level const and array-vs-pointer
#     parameters do not, as for the ABI);
#   - MPI_Status / MPI_F08_status: size and field offsets.
# Each header is compiled in its own C++ translation unit that prints
# name=value lines; the two outputs are diffed. A name MPICH has and we lack is
# a mismatch too. Exits 0 if all match, 1 listing the mismatches, 77 if MPICH's
# header or a C++ compiler is not installed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
ours=${1:-$here/../../include}
mpich=${2:-${MPICH_INCLUDE:-/usr/include/x86_64-linux-gnu/mpich}}
cc=${CC:-gcc}
cxx=${CXX:-g++}

if [ ! -f "$mpich/mpi.h" ]; then
    echo "check_abi: no MPICH header in $mpich; skipped" >&2
    exit 77
fi
if ! command -v "$cxx" >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    echo "check_abi: needs $cxx and python3; skipped" >&2
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/check_abi.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The preprocessed text and macro list of each header.
for side in mpich ours; do
    if [ $side = mpich ]; then inc=$mpich; else inc=$ours; fi
    printf '#include <mpi.h>\n' > "$work/inc.c"
    "$cc" -std=c11 -I"$inc" -E -P "$work/inc.c" > "$work/$side.i"
    "$cc" -std=c11 -I"$inc" -E -dM "$work/inc.c" > "$work/$side.dm"
done

python3 - "$work" <<'EOF'
import re, sys, os
work = sys.argv[1]

# Differences we mean to have: MPICH 4.0.2 says MPI 4.0, Tandem implements 3.1.
INTENDED = {'MPI_VERSION', 'MPI_SUBVERSION'}
# MPICH names that are not part of the ABI (include guards, ROMIO bookkeeping).
NOT_ABI = {'MPI_INCLUDED', 'MPI_PROTO_H_INCLUDED', 'MPI_FILE_DEFINED'}
# Non-MPI_ names the ABI still needs.
EXTRA = {'MPIR_Dup_fn', 'MPIR_ERRORS_THROW_EXCEPTIONS', 'MPIR_F08_MPI_STATUS_IGNORE_OBJ',
         'MPIR_F08_MPI_STATUSES_IGNORE_OBJ', 'MPIR_F08_MPI_IN_PLACE', 'MPIR_F08_MPI_BOTTOM'}

def wanted(n):
    return (re.match(r'^P?MPIX?_', n) or n in EXTRA) and n not in NOT_ABI

def statements(text):
    out, depth, cur = [], 0, []
    for ch in text:
        cur.append(ch)
        if ch == '{': depth += 1
        elif ch == '}': depth -= 1
        elif ch == ';' and depth == 0:
            out.append(' '.join(''.join(cur).split())); cur = []
    return out

def scan(side):
    text = open(os.path.join(work, side + '.i')).read()
    text = re.sub(r'^\s*#.*$', '', text, flags=re.M)  # pragmas
    macros, fmacros = {}, {}
    for line in open(os.path.join(work, side + '.dm')):
        m = re.match(r'#define (\w+)(\([^)]*\))? ?(.*)', line.rstrip('\n'))
        if m and wanted(m.group(1)):
            (fmacros if m.group(2) else macros)[m.group(1)] = m.group(3)
    funcs, data, types, enums = set(), set(), set(), set()
    for s in statements(text):
        if s.startswith('typedef'):
            m = re.search(r'(\w+)\s*(\[[^\]]*\])?\s*;$', s)
            m2 = re.match(r'typedef [^(]*\(\s*\*?\s*(\w+)\s*\)\s*\(', s)
            name = m2.group(1) if m2 else (m.group(1) if m else None)
            if name and wanted(name): types.add(name)
        if 'enum' in s and '{' in s:
            if 'QMPI' in s:  # QMPI_Functions_enum: MPICH's tool-interface table
                continue
            body = s[s.index('{') + 1:s.rindex('}')]
            for item in body.split(','):
                n = item.split('=')[0].strip()
                if n and wanted(n): enums.add(n)
            continue
        if s.startswith('typedef'):
            continue
        if s.startswith('extern') and '(' not in s:
            n = re.search(r'(\w+)\s*(\[[^\]]*\])?\s*;$', s).group(1)
            if wanted(n): data.add(n)
            continue
        m = re.match(r'^[^(]*?\b(\w+)\s*\(.*\)\s*;$', s)
        if m and wanted(m.group(1)) and not m.group(1).startswith('QMPI'):
            funcs.add(m.group(1))
    return dict(macros=macros, fmacros=fmacros, funcs=funcs, data=data, types=types, enums=enums)

a, b = scan('mpich'), scan('ours')
problems = []
for kind in ('macros', 'fmacros', 'funcs', 'data', 'types', 'enums'):
    missing = set(a[kind]) - set(b[kind]) - INTENDED
    # a constant may be a macro on one side and an enum constant on the other
    if kind in ('macros', 'enums'):
        missing -= set(b['macros']) | set(b['enums'])
    for n in sorted(missing):
        problems.append('missing %s: %s' % (kind.rstrip('s'), n))

consts = sorted(((set(a['macros']) | a['enums']) & (set(b['macros']) | b['enums'])) - INTENDED)
fmacros = sorted(set(a['fmacros']) & set(b['fmacros']))
funcs = sorted(a['funcs'] & b['funcs'])
data = sorted(a['data'] & b['data'])
types = sorted(a['types'] & b['types'])

src = ['#include <mpi.h>', '#include <cstdio>', '#include <cstddef>', '#include <cstdint>',
       '#include <typeinfo>', '#include <type_traits>', '''
template <class T> static const char *tn() {
    return std::is_enum<T>::value ? "int(enum)" : typeid(T).name();
}
template <class T>
static typename std::enable_if<std::is_integral<T>::value || std::is_enum<T>::value>::type
show(const char *n, T v) { std::printf("%s: %s = %lld\\n", n, tn<T>(), (long long)v); }
template <class T> static void show(const char *n, T *p) {
    std::printf("%s: %s = %#llx\\n", n, typeid(T *).name(),
                (unsigned long long)reinterpret_cast<std::uintptr_t>(p));
}
static void str(const char *n, const char *s) { std::printf("%s: string = \\"%s\\"\\n", n, s); }
template <class T> static void fn(const char *n, const T &) {
    std::printf("%s: %s\\n", n, typeid(T).name());
}
template <class T> static typename std::enable_if<!std::is_function<T>::value>::type
ty(const char *n) { std::printf("type %s: %s size %zu\\n", n, typeid(T).name(), sizeof(T)); }
template <class T> static typename std::enable_if<std::is_function<T>::value>::type
ty(const char *n) { std::printf("type %s: %s\\n", n, typeid(T).name()); }
''', 'int main() {']
# Constants that name a data object or function (MPI_DUP_FN, MPI_COMM_DUP_FN)
# have addresses, not values: compare their type and which symbol they name.
for n in consts:
    body = a['macros'].get(n, '')
    if re.search(r'Dup_fn|DUP_FN', body):
        src.append('    std::printf("%s: %%s -> MPIR_Dup_fn %%d\\n", typeid(%s).name(), '
                   '(int)(reinterpret_cast<void (*)()>(%s) == '
                   'reinterpret_cast<void (*)()>(&MPIR_Dup_fn)));' % (n, n, n))
    elif body.startswith('"'):
        src.append('    str("%s", %s);' % (n, n))
    else:
        src.append('    show("%s", %s);' % (n, n))
for n in fmacros:
    src.append('    show("%s(0x44000000)", %s(0x44000000));' % (n, n))
for n in data:
    src.append('    fn("data %s", %s);' % (n, n))
    src.append('    std::printf("const %s: %%d\\n", (int)std::is_const<decltype(%s)>::value);' % (n, n))
for n in types:
    src.append('    ty<%s>("%s");' % (n, n))
for n in funcs:
    src.append('    fn("function %s", %s);' % (n, n))
for st in ('MPI_Status', 'MPI_F08_status'):
    src.append('    std::printf("sizeof(%s) = %%zu\\n", sizeof(%s));' % (st, st))
    for f in ('count_lo', 'count_hi_and_cancelled', 'MPI_SOURCE', 'MPI_TAG', 'MPI_ERROR'):
        src.append('    std::printf("offsetof(%s, %s) = %%zu\\n", offsetof(%s, %s));'
                   % (st, f, st, f))
src.append('    return 0;\n}')
open(os.path.join(work, 'probe.cc'), 'w').write('\n'.join(src) + '\n')
open(os.path.join(work, 'problems.txt'), 'w').write(''.join(p + '\n' for p in problems))
print('check_abi: comparing %d constants, %d conversion macros, %d data symbols, %d types, '
      '%d functions' % (len(consts), len(fmacros), len(data), len(types), len(funcs)))
EOF

# A stub object defines the few non-function symbols the probes take the
# address of, so the probes link without either library.
cat > "$work/stub.c" <<'EOF'
int MPIR_Dup_fn(void) { return 0; }
EOF
"$cc" -c "$work/stub.c" -o "$work/stub.o"

status=0
for side in mpich ours; do
    if [ $side = mpich ]; then inc=$mpich; else inc=$ours; fi
    if ! "$cxx" -std=c++11 -w -DMPICH_SKIP_MPICXX -I"$inc" -c "$work/probe.cc" -o "$work/$side.o" \
         2> "$work/$side.err"; then
        echo "check_abi: the probe does not compile against the $side header:" >&2
        head -40 "$work/$side.err" >&2
        exit 1
    fi
    # data symbols are only named (typeid), never read, so they need no definition
    if ! "$cxx" "$work/$side.o" "$work/stub.o" -Wl,--unresolved-symbols=ignore-all \
         -o "$work/$side.bin" 2> "$work/$side.err"; then
        cat "$work/$side.err" >&2
        exit 1
    fi
    "$work/$side.bin" > "$work/$side.out"
done

if [ -s "$work/problems.txt" ]; then
    cat "$work/problems.txt"
    status=1
fi
if ! diff "$work/mpich.out" "$work/ours.out" > "$work/diff.txt"; then
    echo "mismatches (< MPICH, > ours):"
    grep '^[<>]' "$work/diff.txt"
    status=1
fi
if [ $status = 0 ]; then
    echo "check_abi: $(wc -l < "$work/ours.out") items match MPICH ($mpich)"
fi
exit $status
