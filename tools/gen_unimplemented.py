#!/usr/bin/env python3
"""Generate stubs for the MPI functions that Aptus MPI does not implement yet.

Usage:
    gen_unimplemented.py OUTPUT.c [--header include/mpi.h] [--src src/]

Reads every MPI_ prototype from the public header, scans the C sources under
--src for functions that are already defined (a definition is a line that
starts with an optional return type followed by `PMPI_Name(` or `MPI_Name(`
whose parameter list is followed by a `{`), and writes OUTPUT.c holding, for
each function that is still missing, a stub of the form

    int PMPI_Foo(<params>) { (void)a; ... return aptus_not_implemented("MPI_Foo"); } APTUS_ALIAS(Foo)

(an output handle of a function that creates an object -- MPI_File_open's fh, MPI_Comm_spawn's
intercomm -- is first set to its null handle, as the implemented constructors do)

aptus_not_implemented() (core/errors.h) raises MPI_ERR_UNSUPPORTED_OPERATION
through the error handler.

The tool interface (MPI_T_*) is different: its functions never invoke an error
handler and print nothing, they return one of the MPI_T_ERR_* codes (MPI 4.1,
chapter 15, "Return Codes"). All of them are implemented (src/api/mpit*.c); should
one ever be missing, its stub returns MPI_T_ERR_NOT_SUPPORTED (MPI_T_init_thread)
or MPI_T_ERR_NOT_INITIALIZED (the others).

Return types other than int are handled as follows:
  * double (MPI_Wtime, MPI_Wtick) and MPI_Aint (MPI_Aint_add, MPI_Aint_diff):
    the stub raises the error and returns 0;
  * handle conversions (MPI_*_f2c, MPI_*_c2f, MPI_*_toint, MPI_*_fromint,
    but not the int-returning MPI_Status_f2c / MPI_Status_c2f) and any
    other non-int return type: no stub is written, and the functions are
    listed in a warning on stderr; they must be implemented by hand.

Standard library only.
"""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# A C identifier, possibly followed by array brackets, at the end of a parameter.
PARAM_NAME = re.compile(r'([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$')
# Handle conversions whose result is a handle value, not an error code: no
# generic stub is meaningful for them (the status conversions MPI_Status_f2c
# etc. return error codes and do get stubs).
CONVERSION = re.compile(r'^MPI_\w+_(f2c|c2f|toint|fromint)$')
# Output handles a stub sets to the null handle before it fails, as every implemented constructor
# does (MPI_File_open's fh, MPI_Comm_spawn's intercomm, the request of MPI_File_iread, ...): a
# non-const pointer to one of these handle types, not an array, in a function that does not free
# or close the object (where the handle is an input too).
NULL_HANDLES = {
    'MPI_Comm': 'MPI_COMM_NULL',
    'MPI_Group': 'MPI_GROUP_NULL',
    'MPI_Info': 'MPI_INFO_NULL',
    'MPI_Request': 'MPI_REQUEST_NULL',
    'MPI_File': 'MPI_FILE_NULL',
    'MPI_Datatype': 'MPI_DATATYPE_NULL',
    'MPI_Errhandler': 'MPI_ERRHANDLER_NULL',
    'MPI_T_cvar_handle': 'MPI_T_CVAR_HANDLE_NULL',
    'MPI_T_pvar_handle': 'MPI_T_PVAR_HANDLE_NULL',
    'MPI_T_pvar_session': 'MPI_T_PVAR_SESSION_NULL',
}
OUT_HANDLE = re.compile(r'^(MPI_\w+)\s*\*\s*(\w+)$')


def strip_comments(text):
    """Remove /* */ and // comments, keeping string literals and line count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * text.count('\n', i, j))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def read_prototypes(header):
    """Return [(return_type, name, params_text)] for every MPI_ function."""
    with open(header, encoding='utf-8') as f:
        text = strip_comments(f.read())
    protos = []
    seen = set()
    decl = re.compile(
        r'^[ \t]*(?!typedef\b)(?!#)([A-Za-z_][\w \t\*]*?)[ \t\*]*\b(MPI_[A-Za-z0-9_]+)\s*\(([^;{}()]*)\)\s*;',
        re.M)
    for m in decl.finditer(text):
        ret_start = m.start(1)
        # keep the '*' of pointer return types
        ret = text[ret_start:m.start(2)].strip()
        ret = re.sub(r'\s+', ' ', ret)
        name = m.group(2)
        params = re.sub(r'\s+', ' ', m.group(3)).strip()
        if name in seen:
            continue
        seen.add(name)
        protos.append((ret, name, params))
    return protos


def defined_functions(src_dir, skip=()):
    """Names (without the P prefix) of MPI_ functions defined under src_dir."""
    found = {}
    head = re.compile(r'^[ \t]*(?:[A-Za-z_][\w \t\*]*?[ \t\*])?(P?MPI_[A-Za-z0-9_]+)\s*\(', re.M)
    skip = {os.path.abspath(p) for p in skip}
    for dirpath, dirnames, filenames in os.walk(src_dir):
        dirnames.sort()
        for fn in sorted(filenames):
            if not fn.endswith('.c'):
                continue
            path = os.path.join(dirpath, fn)
            if os.path.abspath(path) in skip:
                continue
            with open(path, encoding='utf-8', errors='replace') as f:
                text = strip_comments(f.read())
            for m in head.finditer(text):
                # Find the matching ')' and check that a body follows.
                depth, i = 1, m.end()
                while i < len(text) and depth:
                    if text[i] == '(':
                        depth += 1
                    elif text[i] == ')':
                        depth -= 1
                    i += 1
                rest = text[i:i + 200].lstrip()
                if not rest.startswith('{'):
                    continue  # a declaration or a call, not a definition
                name = m.group(1)
                found.setdefault(name[1:] if name.startswith('P') else name, path)
    return found


def param_names(params):
    if params in ('', 'void'):
        return []
    names = []
    for p in params.split(','):
        p = p.strip()
        if p == '...':
            continue
        m = PARAM_NAME.search(p)
        if not m:
            raise ValueError('cannot find the parameter name in %r' % p)
        names.append(m.group(1))
    return names


def out_handles(name, params):
    """The statements that set a stub's output handles to their null handles."""
    if 'free' in name.lower() or 'close' in name.lower() or params in ('', 'void'):
        return ''
    sets = ''
    for p in params.split(','):
        m = OUT_HANDLE.match(p.strip())
        if m and m.group(1) in NULL_HANDLES and not m.group(2).startswith('array_of'):
            sets += 'if (%s) *%s = %s; ' % (m.group(2), m.group(2), NULL_HANDLES[m.group(1)])
    return sets


def stub(ret, name, params):
    short = name[len('MPI_'):]
    voids = ''.join('(void)%s; ' % n for n in param_names(params)) + out_handles(name, params)
    plist = params if params else 'void'
    call = 'aptus_not_implemented("%s")' % name
    if name.startswith('MPI_T_') and ret == 'int':
        code = 'MPI_T_ERR_NOT_SUPPORTED' if name == 'MPI_T_init_thread' else 'MPI_T_ERR_NOT_INITIALIZED'
        body = '%sreturn %s;' % (voids, code)
    elif ret == 'int':
        body = '%sreturn %s;' % (voids, call)
    elif ret == 'double':
        body = '%s(void)%s; return 0.0;' % (voids, call)
    elif ret == 'MPI_Aint':
        body = '%s(void)%s; return 0;' % (voids, call)
    else:
        return None
    return '%s PMPI_%s(%s) { %s } APTUS_ALIAS(%s)' % (ret, short, plist, body, short)


def defined_in_objects(objects):
    """Names (without the P prefix) of PMPI_ functions that compiled objects define. This sees
    definitions written through macros, which the source scan cannot."""
    import subprocess
    found = {}
    for obj in objects:
        out = subprocess.run(['nm', '--defined-only', obj], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in 'TW' and parts[2].startswith('PMPI_'):
                found.setdefault(parts[2][1:], obj)
    return found


def generate(header, src_dir, output, objects=None):
    protos = read_prototypes(header)
    if not protos:
        raise SystemExit('gen_unimplemented: no MPI_ prototypes found in %s' % header)
    defined = defined_in_objects(objects) if objects else defined_functions(src_dir, skip=[output])
    lines = [
        '/* Generated by tools/gen_unimplemented.py -- do not edit.',
        ' *',
        ' * One stub per MPI function that no source file under src/ defines yet;',
        ' * each stub reports MPI_ERR_UNSUPPORTED_OPERATION through the error handler, except the',
        ' * tool interface\'s (MPI_T_*), which return an MPI_T_ERR_* code and call no handler. */',
        '#include "api/api.h"',
        '#include "core/errors.h"',
        '',
    ]
    stubs, skipped = 0, []
    for ret, name, params in protos:
        if name in defined:
            continue
        conversion = CONVERSION.match(name) and (ret != 'int' or name.endswith('_toint'))
        text = None if conversion else stub(ret, name, params)
        if text is None:
            skipped.append('%s (returns %s)' % (name, ret))
            continue
        lines.append(text)
        stubs += 1
    content = '\n'.join(lines) + '\n'
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    tmp = output + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(content)
    os.replace(tmp, output)
    if skipped:
        sys.stderr.write('gen_unimplemented: warning: %d functions need a hand-written '
                         'implementation (no stub generated):\n' % len(skipped))
        for s in skipped:
            sys.stderr.write('  %s\n' % s)
    return len(protos), len(defined), stubs, skipped


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('output', help='C file to write')
    ap.add_argument('--header', default=os.path.join(ROOT, 'include', 'mpi.h'))
    ap.add_argument('--src', default=os.path.join(ROOT, 'src'))
    ap.add_argument('-q', '--quiet', action='store_true')
    ap.add_argument('--objects', nargs='*', help='compiled objects to read definitions from (nm) instead of scanning --src')
    args = ap.parse_args(argv)
    total, defined, stubs, skipped = generate(args.header, args.src, args.output, args.objects)
    if not args.quiet:
        print('gen_unimplemented: %d MPI functions, %d defined in %s, %d stubs, %d left to hand-written code'
              % (total, defined, args.src, stubs, len(skipped)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
