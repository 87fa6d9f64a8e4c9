#!/usr/bin/env python3
"""Generates the Fortran bindings of Aptus MPI (mpif.h and the module `mpi`) from the MPI Forum's
machine-readable API (the `pympistandard` package, pinned below) and from include/mpi.h.

Writes, all committed so that a build needs neither the network nor this script:
  include/mpif.h                   the constants of mpif.h (fixed and free source form)
  src/fortran/gen/mpi_constants.h  the same declarations, included by the module `mpi`
  src/fortran/gen/mpi_module.f90   the module `mpi`: constants and explicit interfaces
  src/fortran/gen/f_entries.c      the C entry points mpi_xxx_ and pmpi_xxx_ of every procedure
  src/fortran/gen/procedures.txt   the names of all procedures, generated or hand-written

Usage: tools/gen_fortran.py [--check]   (--check: fail when a committed file differs)

The script counts what it writes and fails when a procedure of the standard is neither bound nor
named in HAND_WRITTEN / UNSUPPORTED below: nothing is dropped silently. Needs a C compiler (the
constants' values are read by compiling include/mpi.h) and pympistandard==0.2.0 (pip).
"""
import os
import re
import subprocess
import sys
import tempfile

PYMPISTANDARD_VERSION = "0.2.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import pympistandard as std
except ImportError:
    sys.exit("gen_fortran.py: needs pympistandard==%s (pip install pympistandard==%s)" %
             (PYMPISTANDARD_VERSION, PYMPISTANDARD_VERSION))
if std.__version__ != PYMPISTANDARD_VERSION:
    sys.exit("gen_fortran.py: pympistandard %s found, %s pinned" % (std.__version__, PYMPISTANDARD_VERSION))

# Procedures whose bodies are written by hand in src/fortran/f_hand.c (callbacks, the
# procedures that are Fortran-only or take arguments no rule below converts).
HAND_WRITTEN = {
    "mpi_op_create", "mpi_comm_create_keyval", "mpi_type_create_keyval", "mpi_win_create_keyval",
    "mpi_keyval_create", "mpi_comm_create_errhandler", "mpi_win_create_errhandler",
    "mpi_session_create_errhandler", "mpi_file_create_errhandler", "mpi_op_free",
    "mpi_sizeof", "mpi_f_sync_reg", "mpi_status_f2f08", "mpi_status_f082f",
    "mpi_comm_spawn", "mpi_comm_spawn_multiple", "mpi_info_create_env",
    "mpi_grequest_start", "mpi_register_datarep", "mpi_attr_get", "mpi_attr_put",
    "mpi_comm_get_attr", "mpi_type_get_attr", "mpi_win_get_attr",
    "mpi_comm_set_attr", "mpi_type_set_attr", "mpi_win_set_attr",
}
# Not part of the Fortran bindings at all (C-only conversions the standard marks f90-expressible
# for Fortran's own use are hand-written above).
SKIPPED = set()

# Handle kinds -> the C type and the name used by MPI_<Name>_toint / _fromint.
HANDLES = {
    "COMMUNICATOR": ("MPI_Comm", "Comm"), "DATATYPE": ("MPI_Datatype", "Type"),
    "ERRHANDLER": ("MPI_Errhandler", "Errhandler"), "FILE": ("MPI_File", "File"),
    "GROUP": ("MPI_Group", "Group"), "INFO": ("MPI_Info", "Info"),
    "MESSAGE": ("MPI_Message", "Message"), "OPERATION": ("MPI_Op", "Op"),
    "REQUEST": ("MPI_Request", "Request"), "SESSION": ("MPI_Session", "Session"),
    "WINDOW": ("MPI_Win", "Win"),
}

# Arrays of handles whose length the standard writes as '*': the number of processes the
# communicator's collective exchanges with (aptus_f_ntypes in f_runtime.c).
STAR_TYPES = {"sendtypes": 0, "recvtypes": 1}


def c_prototypes():
    """PMPI prototypes of include/mpi.h: lower-case name -> (return type, [parameter types])."""
    protos = {}
    for line in open(os.path.join(ROOT, "include", "mpi.h")):
        m = re.match(r"^(\w[\w\s\*]*?)\s*\bPMPI_(\w+)\((.*)\);$", line.strip())
        if not m:
            continue
        params = [] if m.group(3) == "void" else [p.strip() for p in m.group(3).split(",")]
        types = []
        for p in params:
            if p.endswith("[3]"):
                types.append(p)
                continue
            pm = re.match(r"^(.*?)(\w+)$", p)
            t = pm.group(1).strip() if pm and not p.endswith("*") else p
            if t.endswith("[]"):
                t = t[:-2] + "*"
            if p != "...":
                types.append(re.sub(r"\s+\*", " *", t))
        protos["mpi_" + m.group(2).lower()] = (m.group(1).strip(), m.group(2), types)
    return protos


def fortran_procedures():
    std.use_api_version(1)
    procs = {}
    for name, p in std.PROCEDURES.items():
        a = p._parseset["attributes"]
        if not a["f90_expressible"] or a["callback"] or a["predefined_function"]:
            continue
        procs[name] = p
    return procs


class Body:
    """One procedure's C entry point under construction."""

    def __init__(self):
        self.fparams = []  # C parameters of the Fortran entry point
        self.hidden = []  # hidden string lengths
        self.decls = []
        self.pre = []
        self.args = []
        self.post = []
        self.cleanup = []


def is_pointer(ctype):
    return ctype.endswith("*")


def bind(name, p, proto):
    """The C entry point of procedure `name` as text, or raise ValueError naming what no rule
    converts."""
    ret, cname, ctypes = proto
    b = Body()
    ci = 0
    params = [q for q in p._parseset["parameters"] if not q["large_only"]]
    fnames = {q["name"] for q in params if "f90_parameter" not in q["suppress"] and q["kind"] != "VARARGS"}
    has_ierror = False
    inplace_guard = {}
    for q in params:
        in_c = "c_parameter" not in q["suppress"] and q["kind"] != "VARARGS"
        in_f = q["name"] in fnames
        kind, qn, d, length = q["kind"], q["name"], q["param_direction"], q["length"]
        ct = ctypes[ci] if in_c else None
        if in_c:
            ci += 1
        if in_f and not in_c:
            if kind == "ERROR_CODE":
                has_ierror = True
                b.fparams.append("MPI_Fint *ierror")
                continue
            raise ValueError("Fortran-only parameter %s (%s)" % (qn, kind))
        if not in_c and not in_f:
            continue
        if in_c and not in_f:
            b.args.append("NULL" if is_pointer(ct) else "0")
            continue
        base = ct.replace("const ", "").strip()
        if kind in HANDLES:
            htype, hname = HANDLES[kind]
            b.fparams.append("MPI_Fint *%s" % qn)
            if not is_pointer(base):
                b.args.append("MPI_%s_fromint(*%s)" % (hname, qn))
            elif length is None:
                b.decls.append("%s h_%s = MPI_%s_fromint(*%s);" % (htype, qn, hname, qn))
                b.args.append("&h_%s" % qn)
                if d != "in":
                    b.post.append("*%s = MPI_%s_toint(h_%s);" % (qn, hname, qn))
            else:
                if length == "*":
                    if qn not in STAR_TYPES:
                        raise ValueError("handle array %s of unknown length" % qn)
                    n = "aptus_f_ntypes(h_comm_, %d, %d)" % (STAR_TYPES[qn], 1 if "neighbor" in name else 0)
                else:
                    n = "*%s" % length
                b.decls.append("int n_%s = 0;" % qn)
                b.decls.append("%s hb_%s[APTUS_F_STACK], *h_%s = NULL;" % (htype, qn, qn))
                guard = ""
                if qn == "sendtypes":
                    guard = "!aptus_f_in_place(sendbuf) && "
                b.pre.append("if (%s(n_%s = %s) > 0 && !(h_%s = aptus_f_handles_in(APTUS_F_%s, %s, n_%s, hb_%s, %d))) goto nomem;"
                             % (guard, qn, n, qn, hname.upper(), qn, qn, qn, 1 if d == "out" else 0))
                b.args.append("h_%s" % qn)
                if d != "in":
                    b.post.append("if (h_%s) aptus_f_handles_out(APTUS_F_%s, %s, n_%s, h_%s);" % (qn, hname.upper(), qn, qn, qn))
                b.cleanup.append("if (h_%s != hb_%s) free(h_%s);" % (qn, qn, qn))
                b.nomem = True
            continue
        if kind == "STATUS":
            b.fparams.append("MPI_Fint *%s" % qn)
            b.args.append("aptus_f_status(%s)" % qn)
            continue
        if kind in ("LOGICAL", "LOGICAL_VOID"):
            b.fparams.append("MPI_Fint *%s" % qn)
            if not is_pointer(base):
                b.args.append("aptus_f_logical_in(*%s)" % qn)
            elif length is None:
                b.decls.append("int l_%s = %s;" % (qn, "aptus_f_logical_in(*%s)" % qn if d != "out" else "0"))
                b.args.append("&l_%s" % qn)
                if d != "in":
                    b.post.append("*%s = aptus_f_logical_out(l_%s);" % (qn, qn))
            else:
                # remain_dims of MPI_Cart_sub: one per dimension of the communicator's grid
                n = "*%s" % length if length != "*" else "aptus_f_cartdim(h_comm_)" if qn == "remain_dims" else None
                if n is None:
                    raise ValueError("LOGICAL array %s of unknown length" % qn)
                b.decls.append("int n_%s = 0, lb_%s[APTUS_F_STACK], *l_%s = NULL;" % (qn, qn, qn))
                b.pre.append("if ((n_%s = %s) > 0 && !(l_%s = aptus_f_logicals_in(%s, n_%s, lb_%s, %d))) goto nomem;"
                             % (qn, n, qn, qn, qn, qn, 1 if d == "out" else 0))
                b.args.append("l_%s" % qn)
                if d != "in":
                    b.post.append("if (l_%s) aptus_f_logicals_out(%s, n_%s, l_%s);" % (qn, qn, qn, qn))
                b.cleanup.append("if (l_%s != lb_%s) free(l_%s);" % (qn, qn, qn))
                b.nomem = True
            continue
        if kind == "STRING":
            b.fparams.append("char *%s" % qn)
            b.hidden.append("size_t %s_len" % qn)
            if d == "in":
                trim = "1" if name.startswith("mpi_info_") else "0"
                b.decls.append("char *s_%s = NULL;" % qn)
                b.pre.append("if (!(s_%s = aptus_f_string_in(%s, %s_len, %s))) goto nomem;" % (qn, qn, qn, trim))
                b.args.append("s_%s" % qn)
                b.cleanup.append("free(s_%s);" % qn)
            else:
                b.decls.append("char *s_%s = NULL;" % qn)
                b.pre.append("if (!(s_%s = aptus_f_string_buf(%s_len))) goto nomem;" % (qn, qn))
                b.args.append("s_%s" % qn)
                b.post.append("aptus_f_string_out(s_%s, %s, %s_len);" % (qn, qn, qn))
                b.cleanup.append("free(s_%s);" % qn)
            b.nomem = True
            continue
        if kind in ("STRING_ARRAY", "STRING_2DARRAY", "FUNCTION", "POLYFUNCTION", "F90_STATUS", "F08_STATUS",
                    "ARGUMENT_LIST"):
            raise ValueError("parameter %s of kind %s" % (qn, kind))
        if kind in ("BUFFER", "C_BUFFER2", "C_BUFFER3", "C_BUFFER4") and base in ("void *", "const void *"):
            b.fparams.append("void *%s" % qn)
            b.args.append("aptus_f_buf(%s)" % qn)
            continue
        if ct.endswith("[3]"):  # the rank triplets of MPI_Group_range_incl/excl
            b.fparams.append("MPI_Fint *%s" % qn)
            b.args.append("(int(*)[3])%s" % qn)
            continue
        if kind == "WEIGHT" and is_pointer(base):  # MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY
            b.fparams.append("MPI_Fint *%s" % qn)
            b.args.append("aptus_f_weights(%s)" % qn)
            continue
        if kind == "ERROR_CODE" and d == "out" and is_pointer(base) and length is not None:
            b.fparams.append("MPI_Fint *%s" % qn)  # an array of error codes
            b.args.append("aptus_f_errcodes(%s)" % qn)
            continue
        # Everything else is a number of the kind the C side takes (INTEGER is a C int,
        # INTEGER(KIND=MPI_ADDRESS_KIND / MPI_COUNT_KIND / MPI_OFFSET_KIND) are 8 bytes as
        # MPI_Aint, MPI_Count and MPI_Offset): passed through, by value where C takes a value.
        if base in ("int", "MPI_Aint", "MPI_Count", "MPI_Offset"):
            b.fparams.append("%s *%s" % (base if base != "int" else "MPI_Fint", qn))
            b.args.append("*%s" % qn)
        elif base in ("int *", "MPI_Aint *", "MPI_Count *", "MPI_Offset *", "void *"):
            b.fparams.append("%s%s" % (base if base != "int *" else "MPI_Fint *", qn))
            b.args.append("(%s)%s" % (base, qn) if base in ("void *",) else qn)
        else:
            raise ValueError("parameter %s of kind %s, C type %s" % (qn, kind, ct))
    if ci != len(ctypes):
        raise ValueError("%d C parameters, %d matched" % (len(ctypes), ci))
    return b, has_ierror


def render(name, p, proto, b, has_ierror):
    ret, cname, _ = proto
    fsig = ", ".join(b.fparams + b.hidden) or "void"
    lname = cname.lower()
    out = []
    comm_needed = any("h_comm_" in x for x in b.pre)
    if ret in ("double", "MPI_Aint"):
        out.append("static %s f_%s(int prof%s)" % (ret, lname, "".join(", " + x for x in b.fparams + b.hidden)))
        out.append("{")
        out.append("    return prof ? PMPI_%s(%s) : MPI_%s(%s);" % (cname, ", ".join(b.args), cname, ", ".join(b.args)))
        out.append("}")
        for pre in ("mpi", "pmpi"):
            out.append("%s %s_%s_(%s)" % (ret, pre, lname, fsig))
            out.append("{")
            out.append("    return f_%s(%d%s);" % (lname, pre == "pmpi", "".join(", " + re.split(r"[ *]", x)[-1] for x in b.fparams + b.hidden)))
            out.append("}")
        return "\n".join(out) + "\n"
    out.append("static void f_%s(int prof%s)" % (lname, "".join(", " + x for x in b.fparams + b.hidden)))
    out.append("{")
    if comm_needed:
        out.append("    MPI_Comm h_comm_ = MPI_Comm_fromint(*comm);")
    for d in b.decls:
        out.append("    " + d)
    out.append("    int rc;")
    for x in b.pre:
        out.append("    " + x)
    args = ", ".join(b.args)
    out.append("    rc = prof ? PMPI_%s(%s) : MPI_%s(%s);" % (cname, args, cname, args))
    for x in b.post:
        out.append("    " + x)
    if getattr(b, "nomem", False):
        out.append("    goto done;")
        out.append("nomem:")
        out.append("    rc = aptus_f_nomem(\"MPI_%s\");" % cname)
        out.append("done:")
    for x in b.cleanup:
        out.append("    " + x)
    if has_ierror:
        out.append("    *ierror = rc;")
    else:
        out.append("    (void)rc;")
    out.append("}")
    for pre in ("mpi", "pmpi"):
        out.append("void %s_%s_(%s)" % (pre, lname, fsig))
        out.append("{")
        out.append("    f_%s(%d%s);" % (lname, pre == "pmpi", "".join(", " + re.split(r"[ *]", x)[-1] for x in b.fparams + b.hidden)))
        out.append("}")
    return "\n".join(out) + "\n"


HEADER_C = '''/* Generated by tools/gen_fortran.py from the MPI Forum's API description (pympistandard) and
 * include/mpi.h: do not edit. The C entry points of mpif.h and the module `mpi`: mpi_xxx_ calls
 * MPI_Xxx, pmpi_xxx_ calls PMPI_Xxx; arguments by reference, handles through MPI_<Kind>_toint /
 * _fromint, LOGICALs through the values Fortran uses, strings with their hidden lengths. */
#include <stdlib.h>

#include "fortran/f_runtime.h"

'''


def clang_format(text, rel):
    """The project's C layout (.clang-format), as tests/style checks it."""
    return subprocess.run(["clang-format", "--assume-filename=" + os.path.join(ROOT, rel)], input=text.encode(),
                          stdout=subprocess.PIPE, check=True).stdout.decode()


def write_outputs(outputs, check):
    stale = []
    for rel, text in outputs.items():
        path = os.path.join(ROOT, rel)
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale.append(rel)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        print("gen_fortran.py: wrote %s" % rel)
    if stale:
        sys.exit("gen_fortran.py: out of date (run tools/gen_fortran.py): " + ", ".join(stale))


# Constants of include/mpi.h that are not plain values in Fortran: the sentinels (common blocks,
# written by constants_text), the predefined callbacks (procedures of f_hand.c) and the tool
# interface's handles (no Fortran binding).
NOT_VALUES = re.compile(r"^MPI_(BOTTOM|IN_PLACE|BUFFER_AUTOMATIC|STATUSE?S?_IGNORE|F_STATUSE?S?_IGNORE|"
                        r"F08_STATUSE?S?_IGNORE|ERRCODES_IGNORE|ARGVS?_NULL|UNWEIGHTED|WEIGHTS_EMPTY|"
                        r"\w*_FN|\w*_FN_NULL\w*|T_\w+|\w*_FUNCTION|VERSION|SUBVERSION)$")
HANDLE_CTYPES = ["MPI_Comm", "MPI_Datatype", "MPI_Errhandler", "MPI_File", "MPI_Group", "MPI_Info",
                 "MPI_Message", "MPI_Op", "MPI_Request", "MPI_Session", "MPI_Win"]


def constant_values():
    """(name, 'int' | 'offset', value) of every plain constant of include/mpi.h, read by compiling
    a program that prints them (handles print as their integer value: MPI_<Kind>_toint of a
    predefined handle is that value in the standard ABI)."""
    text = open(os.path.join(ROOT, "include", "mpi.h")).read()
    names = []
    for m in re.finditer(r"^#define\s+(MPI_\w+)\s+(\S.*)$|^\s+(MPI_\w+)\s*=", text, re.M):
        n = m.group(1) or m.group(3)
        if m.group(1) and "(" in n:
            continue
        if m.group(2) and m.group(2).startswith("(") and "*" in m.group(2).split(")")[0]:
            continue  # pointer-valued: sentinels and callbacks
        if NOT_VALUES.match(n) or n in names:
            continue
        names.append(n)
    prog = ["#include <stdio.h>", "#include <stdint.h>", "#include <mpi.h>", "int main(void) {"]
    for n in names:
        prog.append('    printf("%%s %%lld\\n", "%s", (long long)(intptr_t)(%s));' % (n, n))
    prog.append("    return 0;\n}\n")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "c.c"), os.path.join(tmp, "c")
        with open(src, "w") as f:
            f.write("\n".join(prog))
        cc = os.environ.get("CC", "cc")
        subprocess.check_call([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), src, "-o", exe])
        out = subprocess.check_output([exe]).decode()
    values = []
    for line in out.splitlines():
        n, v = line.split()
        values.append((n, "offset" if n == "MPI_DISPLACEMENT_CURRENT" else "int", int(v)))
    return values


def fixed(line):
    """A declaration line valid in fixed and free source form (column 7, at most 72 columns)."""
    line = "      " + line
    if len(line) > 72:
        raise SystemExit("gen_fortran.py: line too long for fixed form: " + line)
    return line


def constants_text(values):
    out = []
    w = out.append
    w("! Generated by tools/gen_fortran.py from include/mpi.h: do not edit.")
    w("! Valid in fixed and free source form.")
    kinds = [("MPI_ADDRESS_KIND", 8), ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8),
             ("MPI_INTEGER_KIND", 4), ("MPI_STATUS_SIZE", 8), ("MPI_SOURCE", 1), ("MPI_TAG", 2),
             ("MPI_ERROR", 3), ("MPI_F_SOURCE", 0), ("MPI_F_TAG", 1), ("MPI_F_ERROR", 2),
             ("MPI_VERSION", 5), ("MPI_SUBVERSION", 0)]
    for n, v in kinds:
        w(fixed("INTEGER %s" % n))
        w(fixed("PARAMETER (%s=%d)" % (n, v)))
    for n, k, v in values:
        if n in dict(kinds):
            continue
        if k == "offset":
            w(fixed("INTEGER(KIND=MPI_OFFSET_KIND) %s" % n))
        elif abs(v) >= 2 ** 31:
            raise SystemExit("gen_fortran.py: %s = %d does not fit an INTEGER" % (n, v))
        else:
            w(fixed("INTEGER %s" % n))
        w(fixed("PARAMETER (%s=%d)" % (n, v)))
    for n, v in (("MPI_SUBARRAYS_SUPPORTED", ".FALSE."), ("MPI_ASYNC_PROTECTS_NONBLOCKING", ".FALSE.")):
        w(fixed("LOGICAL %s" % n))
        w(fixed("PARAMETER (%s=%s)" % (n, v)))
    # The sentinels: variables whose addresses the C entry points recognise (f_runtime.c).
    for decl, name, block in (("INTEGER", "MPI_BOTTOM", "BOTTOM"), ("INTEGER", "MPI_IN_PLACE", "IN_PLACE"),
                              ("INTEGER", "MPI_BUFFER_AUTOMATIC", "BUFFER_AUTOMATIC"),
                              ("INTEGER", "MPI_STATUS_IGNORE(MPI_STATUS_SIZE)", "STATUS_IGNORE"),
                              ("INTEGER", "MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)", "STATUSES_IGNORE"),
                              ("INTEGER", "MPI_ERRCODES_IGNORE(1)", "ERRCODES_IGNORE"),
                              ("INTEGER", "MPI_UNWEIGHTED(1)", "UNWEIGHTED"),
                              ("INTEGER", "MPI_WEIGHTS_EMPTY(1)", "WEIGHTS_EMPTY"),
                              ("CHARACTER*1", "MPI_ARGV_NULL(1)", "ARGV_NULL"),
                              ("CHARACTER*1", "MPI_ARGVS_NULL(1,1)", "ARGVS_NULL")):
        w(fixed("%s %s" % (decl, name)))
        w(fixed("COMMON /APTUS_F_%s/ %s" % (block, name.split("(")[0])))
        w(fixed("SAVE /APTUS_F_%s/" % block))
    # Functions with a result, and the predefined callbacks (procedures of the library).
    w(fixed("DOUBLE PRECISION MPI_WTIME, MPI_WTICK"))
    w(fixed("DOUBLE PRECISION PMPI_WTIME, PMPI_WTICK"))
    w(fixed("EXTERNAL MPI_WTIME, MPI_WTICK, PMPI_WTIME, PMPI_WTICK"))
    w(fixed("INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF"))
    w(fixed("EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF"))
    for fn in CALLBACK_PROCEDURES:
        w(fixed("EXTERNAL %s" % fn))
    return "\n".join(out) + "\n"


def interface_text(name, p):
    """The explicit interface of one subroutine of the module `mpi`."""
    from pympistandard.f90 import F90Parameter
    f90 = p.express.f90
    params = [F90Parameter(q) for q in p._parseset["parameters"]
              if "f90_parameter" not in q["suppress"] and q["kind"] != "VARARGS" and not q["large_only"]]
    names = [x.name for x in params]
    out = ["    SUBROUTINE %s(%s)" % (f90.name, ", ".join(names)), "      IMPORT"]
    for x in params:
        t = x.type
        dims = x.dimensions
        if t in ("<type>", "<TYPE>"):
            out.append("      !GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % x.name)
            out.append("      TYPE(*), DIMENSION(*) :: %s" % x.name)
            continue
        if t == "CHARACTER*(*)":
            t = "CHARACTER(LEN=*)"
        if t.startswith("TYPE(MPI_"):
            return None
        out.append("      %s :: %s%s" % (t, x.name, dims) if t != "EXTERNAL" else "      EXTERNAL :: %s" % x.name)
    out.append("    END SUBROUTINE %s" % f90.name)
    return "\n".join(wrap(line) for line in out)


def wrap(line, width=100):
    """Free-form continuation for long lines."""
    if len(line) <= width:
        return line
    cut = line.rfind(", ", 0, width - 2)
    return line[:cut + 1] + " &\n" + wrap("        & " + line[cut + 2:], width)


def module_text(procs, names):
    out = ["! Generated by tools/gen_fortran.py from the MPI Forum's API description (pympistandard)",
           "! and include/mpi.h: do not edit. The module `mpi`: the constants of mpif.h and an explicit",
           "! interface for every subroutine (choice buffers unchecked: NO_ARG_CHECK).",
           "MODULE mpi",
           "  IMPLICIT NONE",
           "  INCLUDE 'mpif.h'",
           "  INTERFACE"]
    n = 0
    for name in names:
        p = procs[name]
        if p.express.f90.return_kind is not None:
            continue  # MPI_WTIME and the like: typed EXTERNAL in mpif.h
        text = interface_text(name, p)
        if text is None:
            continue
        out.append(text)
        n += 1
    out += ["  END INTERFACE", "END MODULE mpi", ""]
    return "\n".join(out), n


# The predefined callbacks a Fortran program passes by name (f_hand.c defines them).
CALLBACK_PROCEDURES = ["MPI_COMM_NULL_COPY_FN", "MPI_COMM_NULL_DELETE_FN", "MPI_COMM_DUP_FN",
                       "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_NULL_DELETE_FN", "MPI_TYPE_DUP_FN",
                       "MPI_WIN_NULL_COPY_FN", "MPI_WIN_NULL_DELETE_FN", "MPI_WIN_DUP_FN",
                       "MPI_NULL_COPY_FN", "MPI_NULL_DELETE_FN", "MPI_DUP_FN",
                       "MPI_CONVERSION_FN_NULL"]


def main():
    check = "--check" in sys.argv[1:]
    protos = c_prototypes()
    procs = fortran_procedures()
    entries = []
    bound, hand, failed = [], [], []
    failed += ["%s: named in HAND_WRITTEN, not a procedure of the standard" % n for n in sorted(HAND_WRITTEN - set(procs))]
    for name in sorted(procs):
        if name in HAND_WRITTEN:
            hand.append(name)
            continue
        if name not in protos:
            failed.append("%s: no C prototype in include/mpi.h" % name)
            continue
        try:
            b, has_ierror = bind(name, procs[name], protos[name])
        except ValueError as e:
            failed.append("%s: %s" % (name, e))
            continue
        entries.append(render(name, procs[name], protos[name], b, has_ierror))
        bound.append(name)
    if failed:
        sys.exit("gen_fortran.py: no rule for:\n  " + "\n  ".join(failed))
    consts = constants_text(constant_values())
    module, ninterfaces = module_text(procs, sorted(bound + hand))
    outputs = {
        "include/mpif.h": consts,
        "src/fortran/gen/mpi_module.f90": module,
        # every procedure of mpif.h / `mpi`: tests/fortran/symbols.sh checks that the library
        # exports mpi_<name>_ and pmpi_<name>_ for each
        "src/fortran/gen/procedures.txt": "".join(n + "\n" for n in sorted(bound + hand)),
        "src/fortran/gen/f_entries.c": clang_format(HEADER_C + "".join(e + "\n" for e in entries).rstrip("\n") + "\n",
                                                    "src/fortran/gen/f_entries.c"),
    }
    write_outputs(outputs, check)
    print("gen_fortran.py: %d procedures: %d generated, %d hand-written; %d interfaces in the module mpi"
          % (len(procs), len(bound), len(hand), ninterfaces))
    return bound, hand, entries


if __name__ == "__main__":
    main()
