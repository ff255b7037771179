#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Regenerate src/mpi/unsupported.c: a stub for every MPI function that
include/mpi.h declares and no other file of src/mpi/ defines.

Run by hand after implementing functions (never by the build):

    tools/dev/gen_unsupported.py            # rewrite src/mpi/unsupported.c
    tools/dev/gen_unsupported.py --check    # exit 1 if the file is out of date
    tools/dev/gen_unsupported.py --list     # print what is implemented / stubbed

A function counts as implemented when some src/mpi/*.c other than
unsupported.c defines `PMPI_<name>(...) {`, written out or made by a macro
(each file is preprocessed with $CC, default cc). Each stub returns MPI_ERR_UNSUPPORTED_OPERATION
through the error handler of the function's communicator argument (or
MPI_COMM_NULL when it has none), via tdm_mpi_unsupported() from bind.h. MPI_T_
functions return MPI_T_ERR_NOT_SUPPORTED without calling an error handler, as
the tool interface never invokes error handlers (MPI 3.1, 14.3.9). Functions
that do not return an error code (MPI_Wtime, MPI_Aint_add, MPI_File_c2f,
MPIX_Query_cuda_support, ...) are never stubbed: the file lists the ones still missing, and the library will not link
(--no-undefined) until someone writes them.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
HEADER = os.path.join(ROOT, 'include', 'mpi.h')
SRCDIR = os.path.join(ROOT, 'src', 'mpi')
OUT = os.path.join(SRCDIR, 'unsupported.c')
COLUMNS = 100

# int functions whose result is an answer, not an error code: a stub returning
# MPI_ERR_UNSUPPORTED_OPERATION (nonzero) would read as "yes". Implemented in
# abi.c; never stubbed.
NOT_AN_ERROR_CODE = {'MPIX_Query_cuda_support', 'MPIX_Query_ze_support',
                     'MPIX_Query_hip_support'}


def header_functions(path):
    """[(return type, name without the P, [parameter declarations])] of every
    PMPI_/PMPIX_ prototype in the header, in header order."""
    text = open(path).read()
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    text = re.sub(r'^\s*#(?:[^\n]*\\\n)*[^\n]*', ' ', text, flags=re.M)  # directives
    out = []
    for stmt in text.split(';'):
        stmt = ' '.join(stmt.split())
        stmt = re.sub(r'^.*?[{}]\s*', '', stmt)  # leftovers of extern "C" { ... }
        if stmt.startswith(('typedef', 'extern', 'enum', 'struct')):
            continue
        m = re.match(r'^(.*?)\b(PMPIX?_\w+)\s*\((.*)\)$', stmt)
        if not m:
            continue
        ret, name, args = m.group(1).strip(), m.group(2), m.group(3)
        out.append((ret, name[1:], split_params(args)))
    return out


def split_params(args):
    params, depth, cur = [], 0, ''
    for ch in args:
        depth += ch == '('
        depth -= ch == ')'
        if ch == ',' and depth == 0:
            params.append(cur.strip())
            cur = ''
        else:
            cur += ch
    params.append(cur.strip())
    return [] if params == ['void'] else params


DEF_RE = re.compile(r'\b(?:int|double|MPI_Aint|MPI_Fint|MPI_File)\s+(PMPIX?_\w+)\s*'
                    r'\((?:[^()]|\([^()]*\))*\)\s*\{')


def implemented(srcdir):
    """{MPI name: file} of the functions defined in src/mpi/ outside unsupported.c.
    Each file is run through the preprocessor so that definitions made by
    macros (SEND_FN(Send, ...)) count; a file that does not preprocess is
    scanned as written."""
    found = {}
    cc = os.environ.get('CC', 'cc')
    for fn in sorted(os.listdir(srcdir)):
        if not fn.endswith('.c') or fn == 'unsupported.c':
            continue
        path = os.path.join(srcdir, fn)
        texts = [open(path).read()]
        try:
            r = subprocess.run([cc, '-E', '-P', '-D_GNU_SOURCE', '-I', os.path.join(ROOT, 'include'),
                                '-I', os.path.join(ROOT, 'src'), path],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
            if r.returncode == 0:
                texts.append(r.stdout)
            else:
                print('gen_unsupported: warning: %s does not preprocess; scanning it as written:\n%s'
                      % (fn, r.stderr.strip()[:500]), file=sys.stderr)
        except OSError as e:
            print('gen_unsupported: warning: cannot run %s (%s); scanning %s as written'
                  % (cc, e, fn), file=sys.stderr)
        for text in texts:
            for m in DEF_RE.finditer(text):
                found.setdefault(m.group(1)[1:], fn)
    return found


def param_name(p):
    m = re.search(r'(\w+)\s*(\[[^\]]*\])*$', p)
    return m.group(1) if m else None


def comm_arg(params):
    """The communicator the error goes to: the input parameter of type MPI_Comm
    (`comm` preferred), else MPI_COMM_NULL."""
    comms = [param_name(p) for p in params if re.match(r'^(const\s+)?MPI_Comm\s+\w+$', p)]
    if 'comm' in comms:
        return 'comm'
    return comms[0] if comms else 'MPI_COMM_NULL'


def wrap(head, params, tail):
    """`head(p1, p2, ...)tail` folded at COLUMNS, continuation aligned after `(`."""
    one = head + '(' + ', '.join(params) + ')' + tail
    if len(one) <= COLUMNS:
        return one
    indent = ' ' * (len(head) + 1)
    lines, cur = [], head + '('
    for i, p in enumerate(params):
        tok = p + (')' + tail if i == len(params) - 1 else ',')
        sep = '' if cur.endswith('(') or cur == indent else ' '
        if len(cur) + len(sep) + len(tok) > COLUMNS and cur.strip() and not cur.endswith('('):
            lines.append(cur)
            cur = indent + tok
        else:
            cur += sep + tok
    lines.append(cur)
    return '\n'.join(lines)


def stub(ret, name, params):
    head = 'int P' + name
    sig = wrap(head, params or ['void'], ' {')
    if name.startswith('MPI_T_'):
        body = '    return MPI_T_ERR_NOT_SUPPORTED;'
    else:
        body = '    return tdm_mpi_unsupported(%s, "%s");' % (comm_arg(params), name)
    return '%s\n%s\n}\nTDM_WEAK(%s)\n' % (sig, body, name)


def generate():
    funcs = header_functions(HEADER)
    impl = implemented(SRCDIR)
    stubs, missing_nonint = [], []
    for ret, name, params in funcs:
        if name in impl:
            continue
        if ret != 'int' or name in NOT_AN_ERROR_CODE:
            missing_nonint.append('%s %s' % (ret, name))
            continue
        stubs.append(stub(ret, name, params))
    nonint = ['%s %s' % (r, n) for r, n, _ in funcs if r != 'int' or n in NOT_AN_ERROR_CODE]
    text = ['/* SPDX-License-Identifier: BSD-3-Clause */',
            '/*',
            ' * GENERATED by tools/dev/gen_unsupported.py -- do not edit; implement the',
            ' * function in another file of src/mpi/ and rerun the script.',
            ' *',
            ' * Every MPI function of include/mpi.h that no other file of src/mpi/ defines:',
            ' * it reports MPI_ERR_UNSUPPORTED_OPERATION through the error handler of its',
            ' * communicator (MPI_COMM_NULL: MPI_COMM_WORLD\'s, or the default handler).',
            ' * MPI_T_ functions return MPI_T_ERR_NOT_SUPPORTED: the tool interface never',
            ' * calls error handlers.',
            ' *',
            ' * %d functions declared, %d implemented elsewhere, %d stubbed here.'
            % (len(funcs), len(funcs) - len(stubs) - len(missing_nonint), len(stubs)),
            ' *',
            ' * Never stubbed (they do not return an error code); implemented elsewhere:',
            ]
    text += [' *   %s%s' % (f, '   <-- MISSING' if f in missing_nonint else '') for f in nonint]
    text += [' */',
             '#include "bind.h"',
             '',
             '/* Stubs ignore their arguments. */',
             '#pragma GCC diagnostic ignored "-Wunused-parameter"',
             '']
    text.append('\n'.join(stubs))
    return '\n'.join(text), funcs, impl, stubs, missing_nonint


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--check', action='store_true', help='exit 1 if unsupported.c is stale')
    ap.add_argument('--list', action='store_true', help='print implemented and stubbed names')
    a = ap.parse_args()
    text, funcs, impl, stubs, missing = generate()
    if a.list:
        for ret, name, _ in funcs:
            stubbable = ret == 'int' and name not in NOT_AN_ERROR_CODE
            print('%-40s %s' % (name, impl.get(name, 'stub' if stubbable else 'MISSING')))
        return 0
    for f in missing:
        print('gen_unsupported: warning: %s is not implemented and cannot be stubbed' % f,
              file=sys.stderr)
    old = open(OUT).read() if os.path.exists(OUT) else None
    if a.check:
        if old != text:
            print('gen_unsupported: %s is out of date; run %s' % (OUT, sys.argv[0]),
                  file=sys.stderr)
            return 1
        return 0
    if old != text:
        with open(OUT, 'w') as f:
            f.write(text)
    print('gen_unsupported: %d functions declared, %d implemented, %d stubbed, %d missing'
          % (len(funcs), len(funcs) - len(stubs) - len(missing), len(stubs), len(missing)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
