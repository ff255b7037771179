#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Check include/mpi.h against the MPICH ABI: the table of predefined handles of the newest
# MPICH release (tools/dev/mpich_handles.txt) and an installed MPICH mpi.h, name by name.
#
#   tools/dev/check_abi.sh [our include dir] [MPICH include dir]
#   TANDEM_LIB=path/to/libmpi.so: also probe that library's own tables
#
# The table: every handle it marks "yes" must have its value in our header, every one it
# marks "no" must be absent; with TANDEM_LIB, a program built against our header and run on
# that library (a singleton) checks that the library knows each datatype (its size is the
# one the handle encodes, its name is the table's, its envelope says MPI_COMBINER_NAMED),
# op, error handler, error class (its class and string), and the predefined communicators,
# group and info. The table is authoritative for its names: they are left out of the
# comparison with the installed header, which may be an older MPICH.
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
# a mismatch too. Exits 0 if all match, 1 listing the mismatches, 77 if a C++ compiler
# or python3 is missing (without an MPICH header only the table is checked).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
ours=${1:-$here/../../include}
mpich=${2:-${MPICH_INCLUDE:-/usr/include/x86_64-linux-gnu/mpich}}
table=$here/mpich_handles.txt
cc=${CC:-gcc}
cxx=${CXX:-g++}

if ! command -v "$cxx" >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    echo "check_abi: needs $cxx and python3; skipped" >&2
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/check_abi.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- the table of predefined handles -------------------------------------------------
status=0
printf '#include <mpi.h>\n' > "$work/inc.c"
"$cc" -std=c11 -I"$ours" -E -dM "$work/inc.c" > "$work/table_ours.dm"
python3 - "$table" "$work" <<'EOF'
import re, sys, os
table, work = sys.argv[1], sys.argv[2]
ents = []
for ln, line in enumerate(open(table), 1):
    line = line.strip()
    if not line or line.startswith('#'):
        continue
    f = line.split(None, 4)
    if len(f) < 5 or not (f[4] == 'yes' or f[4].startswith('no:')):
        sys.exit('%s:%d: expected "kind name value since yes|no: why"' % (table, ln))
    ents.append((f[0], f[1], int(f[2], 0), f[4] == 'yes'))
macros = {m.group(1) for m in re.finditer(r'^#define (\w+)', open(os.path.join(work, 'table_ours.dm')).read(), re.M)}
# enum constants are not macros: let the compiler say whether each name is declared
probe = ['#include <mpi.h>', '#include <stdio.h>', 'int main(void) {']
for kind, name, value, yes in ents:
    if yes:
        probe.append('    printf("%s %%lld\\n", (long long)(%s));' % (name, name))
probe.append('    return 0;\n}')
open(os.path.join(work, 'table_probe.c'), 'w').write('\n'.join(probe) + '\n')
absent = [name for kind, name, value, yes in ents if not yes and name in macros]
open(os.path.join(work, 'table_absent.txt'), 'w').write(''.join(
    'defined but the table says Tandem has no %s\n' % n for n in absent))
# the library probe: what the library says of each handle
lib = ['#include <mpi.h>', '#include <stdio.h>', 'int main(void) {',
       '    char s[MPI_MAX_ERROR_STRING]; int rc, n, l, ni, na, nd, comb;',
       '    MPI_Init(NULL, NULL);',
       '    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);',
       '    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);']
for kind, name, value, yes in ents:
    if not yes:
        continue
    if kind in ('datatype', 'pair'):
        lib.append('    n = -1; s[0] = 0; comb = -1; rc = MPI_Type_size(%s, &n);' % name)
        lib.append('    if (!rc) rc = MPI_Type_get_name(%s, s, &l);' % name)
        lib.append('    if (!rc) rc = MPI_Type_get_envelope(%s, &ni, &na, &nd, &comb);' % name)
        lib.append('    printf("%s %%d %%d %%d %%s\\n", rc, n, comb, s);' % name)
    elif kind == 'op':
        lib.append('    rc = MPI_Op_commutative(%s, &n); printf("%s %%d\\n", rc);' % (name, name))
    elif kind == 'errhandler':
        lib.append('    rc = MPI_Comm_set_errhandler(MPI_COMM_SELF, %s);' % name)
        lib.append('    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);')
        lib.append('    printf("%s %%d\\n", rc);' % name)
    elif kind == 'errclass':
        lib.append('    n = -1; s[0] = 0; rc = MPI_Error_class(%s, &n);' % name)
        lib.append('    if (!rc) rc = MPI_Error_string(%s, s, &l);' % name)
        lib.append('    printf("%s %%d %%d %%s\\n", rc, n, s);' % name)
    elif kind == 'comm':
        lib.append('    rc = MPI_Comm_size(%s, &n); printf("%s %%d\\n", rc);' % (name, name))
    elif kind == 'group':
        lib.append('    rc = MPI_Group_size(%s, &n); printf("%s %%d\\n", rc);' % (name, name))
    elif kind == 'info':
        lib.append('    rc = MPI_Info_get_nkeys(%s, &n); printf("%s %%d\\n", rc);' % (name, name))
lib.append('    MPI_Finalize();\n    return 0;\n}')
open(os.path.join(work, 'lib_probe.c'), 'w').write('\n'.join(lib) + '\n')
EOF
if ! "$cc" -std=c11 -w -I"$ours" "$work/table_probe.c" -o "$work/table_probe" 2> "$work/table.err"; then
    echo "check_abi: a name the table gives is not declared by $ours/mpi.h:" >&2
    grep -E 'error' "$work/table.err" | head -20 >&2
    exit 1
fi
"$work/table_probe" > "$work/table_ours.out"
if [ -n "${TANDEM_LIB:-}" ]; then
    libdir=$(dirname "$TANDEM_LIB")
    "$cc" -std=c11 -w -I"$ours" "$work/lib_probe.c" -o "$work/lib_probe" "$TANDEM_LIB" \
        -Wl,-rpath,"$libdir"
    env -u TANDEM_RANK -u TANDEM_SIZE -u TANDEM_SHM_FD -u TANDEM_CTL_FD \
        "$work/lib_probe" > "$work/lib.out" 2> "$work/lib.err" || {
        echo "check_abi: the library probe failed:" >&2
        cat "$work/lib.err" >&2
        exit 1
    }
fi
if ! python3 - "$table" "$work" "${TANDEM_LIB:-}" <<'EOF'
import sys, os
table, work, lib = sys.argv[1], sys.argv[2], sys.argv[3]
ents = []
for line in open(table):
    line = line.strip()
    if not line or line.startswith('#'):
        continue
    f = line.split(None, 4)
    ents.append((f[0], f[1], int(f[2], 0), f[4] == 'yes'))
problems = open(os.path.join(work, 'table_absent.txt')).read().splitlines()
ours = dict(l.split() for l in open(os.path.join(work, 'table_ours.out')))
for kind, name, value, yes in ents:
    if yes and int(ours[name]) & 0xffffffff != value:
        problems.append('%s: ours %#x, MPICH %#x' % (name, int(ours[name]) & 0xffffffff, value))
# names of the same type the standard gives two spellings of
ALIAS = {'MPI_C_FLOAT_COMPLEX': 'MPI_C_COMPLEX', 'MPI_LONG_LONG_INT': 'MPI_LONG_LONG'}
checked = 0
if lib:
    got = {}
    for l in open(os.path.join(work, 'lib.out')):
        f = l.rstrip('\n').split(' ', 4)
        got[f[0]] = f[1:]
    for kind, name, value, yes in ents:
        if not yes or kind not in ('datatype', 'pair', 'op', 'errhandler', 'errclass', 'comm',
                                   'group', 'info'):
            continue
        checked += 1
        g = got.get(name)
        if g is None or g[0] != '0':
            problems.append('library: %s %s refused (%s)' % (kind, name, g))
            continue
        if kind in ('datatype', 'pair'):
            size, comb, tname = int(g[1]), int(g[2]), g[3] if len(g) > 3 else ''
            if kind == 'datatype' and size != (value >> 8) & 0xff:
                problems.append('library: %s has size %d, its handle says %d'
                                % (name, size, (value >> 8) & 0xff))
            if tname not in (name, ALIAS.get(name)):
                problems.append('library: %s is named "%s"' % (name, tname))
            if comb != 1:
                problems.append('library: %s has combiner %d, not MPI_COMBINER_NAMED' % (name, comb))
        elif kind == 'errclass':
            cls, text = int(g[1]), ' '.join(g[2:])
            if cls != value or not text:
                problems.append('library: error class %s: class %d, string "%s"' % (name, cls, text))
for p in problems:
    print('table: ' + p)
print('check_abi: %d names of %s; %s' % (len(ents), os.path.basename(table),
      'the library knows all %d of its objects' % checked if lib and not problems else
      'library not probed (set TANDEM_LIB)' if not lib else 'mismatches above'))
sys.exit(1 if problems else 0)
EOF
then
    status=1
fi

if [ ! -f "$mpich/mpi.h" ]; then
    echo "check_abi: no MPICH header in $mpich: only the table was checked" >&2
    exit $status
fi

# The preprocessed text and macro list of each header.
for side in mpich ours; do
    if [ $side = mpich ]; then inc=$mpich; else inc=$ours; fi
    printf '#include <mpi.h>\n' > "$work/inc.c"
    "$cc" -std=c11 -I"$inc" -E -P "$work/inc.c" > "$work/$side.i"
    "$cc" -std=c11 -I"$inc" -E -dM "$work/inc.c" > "$work/$side.dm"
done

python3 - "$work" "$table" <<'EOF'
import re, sys, os
work, table = sys.argv[1], sys.argv[2]

# Differences we mean to have: the names of the table of predefined handles, checked
# against it above (the installed MPICH may be older than the one the table describes).
# Both headers say MPI 4.0.
INTENDED = {l.split()[1] for l in open(table) if l.strip() and not l.startswith('#')}
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
