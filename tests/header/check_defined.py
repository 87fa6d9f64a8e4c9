#!/usr/bin/env python3
"""Every function include/mpi.h declares is defined by the library, and no large-count (_c)
form is a stub where its int form is implemented.

    check_defined.py HEADER LIBRARY STUBS_C

HEADER   include/mpi.h (its prototypes are read with tools/gen_unimplemented.py's parser)
LIBRARY  the built libmpi_abi.so (its dynamic symbols are read with nm -D)
STUBS_C  the generated unimplemented.c (each function there calls aptus_not_implemented)

Both MPI_X and PMPI_X must be exported for every prototype MPI_X. A function that is a stub
is still "defined" (it raises MPI_ERR_UNSUPPORTED_OPERATION); the second check makes sure the
stubs are only whole features, never the _c twin of a working function. Exit status 0 when
both hold; otherwise the offending names are listed.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), 'tools'))
import gen_unimplemented  # noqa: E402


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    header, library, stubs_c = argv[1:]
    protos = [name for _ret, name, _params in gen_unimplemented.read_prototypes(header)]
    if len(protos) < 400:
        print('FAIL: only %d prototypes read from %s' % (len(protos), header))
        return 1
    out = subprocess.run(['nm', '-D', '--defined-only', library], check=True, capture_output=True, text=True).stdout
    exported = {parts[2].split('@')[0] for parts in (l.split() for l in out.splitlines())
                if len(parts) == 3 and parts[1] in 'TWi'}
    missing = [n for n in protos if n not in exported or 'P' + n not in exported]

    with open(stubs_c, encoding='utf-8') as f:
        stubs = set(re.findall(r'\bPMPI_(\w+)\s*\(', f.read()))
    stub_c_forms = sorted('MPI_' + n for n in stubs if n.endswith('_c') and n[:-2] not in stubs)

    ok = True
    if missing:
        ok = False
        print('FAIL: %d functions declared in mpi.h are not exported by %s:' % (len(missing), library))
        for n in missing:
            print('  ' + n + ('' if n in exported else ' (MPI_ form missing too)'))
    if stub_c_forms:
        ok = False
        print('FAIL: %d large-count functions are stubs although their int forms are implemented:'
              % len(stub_c_forms))
        for n in stub_c_forms:
            print('  ' + n)
    if ok:
        print('%d functions declared in mpi.h, all exported as MPI_ and PMPI_; %d still stubs, '
              'none of them the _c form of an implemented function' % (len(protos), len(stubs)))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
