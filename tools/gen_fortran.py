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
    "mpi_comm_delete_attr", "mpi_type_delete_attr", "mpi_win_delete_attr", "mpi_attr_delete",
    "mpi_info_get_string",
}
# MPI-1 routines removed in MPI 3.0 (not in the API description) that f_hand.c still offers to
# mpif.h and `mpi` programs.
REMOVED_MPI1 = ["mpi_address", "mpi_type_extent", "mpi_type_lb", "mpi_type_ub", "mpi_type_hvector",
                "mpi_type_hindexed", "mpi_type_struct", "mpi_errhandler_create", "mpi_errhandler_set",
                "mpi_errhandler_get"]

# Large-count forms that take a callback of their own kind: the C entry point is hand-written
# (f_hand.c: MPI_Op_create_c) or not offered (MPI_Register_datarep_c: no MPI-IO), so no rule
# writes it; LARGE_HAND_F08 of them still get their mpi_f08 specifics.
LARGE_HAND = {"mpi_op_create", "mpi_register_datarep"}
LARGE_HAND_F08 = {"mpi_op_create"}

# Procedures whose INDEX results are positions in the caller's array of requests.
INDEX_PROCS = ("mpi_waitany", "mpi_testany", "mpi_waitsome", "mpi_testsome", "mpi_request_get_status_any",
               "mpi_request_get_status_some")

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


def bind(name, p, proto, large=False):
    """The C entry point of procedure `name` as text, or raise ValueError naming what no rule
    converts."""
    ret, cname, ctypes = proto
    b = Body()
    ci = 0
    params = [q for q in p._parseset["parameters"] if large or not q["large_only"]]
    fnames = {q["name"] for q in params if ("f90_parameter" not in q["suppress"] or large) and q["kind"] != "VARARGS"
              and ("c_parameter" not in q["suppress"] or q["kind"] == "ERROR_CODE")}
    has_ierror = False
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
                # written on success only, and only when found where a flag says so (MPI_INFO_GET:
                # a missing key leaves the value as it was)
                has_flag = any(x["name"] == "flag" and x["param_direction"] == "out" for x in params)
                b.post.append("if (rc == MPI_SUCCESS%s) aptus_f_string_out(s_%s, %s, %s_len);"
                              % (" && l_flag" if has_flag else "", qn, qn, qn))
                b.cleanup.append("free(s_%s);" % qn)
            b.nomem = True
            continue
        if kind in ("STRING_ARRAY", "STRING_2DARRAY", "FUNCTION", "POLYFUNCTION", "F90_STATUS", "F08_STATUS",
                    "ARGUMENT_LIST"):
            raise ValueError("parameter %s of kind %s" % (qn, kind))
        if kind == "C_BUFFER2" and d == "out":
            # the detached buffer's address: C writes a pointer, the Fortran argument is the
            # buffer itself (perhaps smaller than a pointer): received in a C variable, not written
            b.fparams.append("void *%s" % qn)
            b.decls.append("void *p_%s = NULL;" % qn)
            b.args.append("&p_%s" % qn)
            b.post.append("(void)%s;" % qn)
            continue
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
    # Indices into an array of requests count from 1 in Fortran, from 0 in C.
    for q in params:
        if q["kind"] != "INDEX" or q["param_direction"] != "out" or not name.startswith(INDEX_PROCS):
            continue
        if q["length"] is None:
            b.post.append("if (*%s >= 0) (*%s)++;" % (q["name"], q["name"]))
        else:
            b.post.append("for (int i_ = 0; *outcount != MPI_UNDEFINED && i_ < *outcount; i_++) %s[i_]++;" % q["name"])
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
    prog = ["#include <stdio.h>", "#include <stdint.h>", "#include <mpi.h>",
            "#define KIND(x) _Generic((x), " + ", ".join("%s: \"%s\"" % (t, t) for t in HANDLE_CTYPES)
            + ", default: \"int\")", "int main(void) {"]
    for n in names:
        prog.append('    printf("%%s %%s %%lld\\n", "%s", KIND(%s), (long long)(intptr_t)(%s));' % (n, n, n))
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
        n, k, v = line.split()
        values.append((n, "offset" if n == "MPI_DISPLACEMENT_CURRENT" else k, int(v)))
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
    """Free-form continuation for long lines (cut after a comma)."""
    if "\n" in line:
        return "\n".join(wrap(x, width) for x in line.split("\n"))
    if len(line) <= width:
        return line
    cut = line.rfind(", ", 12, width - 2)
    if cut < 0:
        return line
    return line[:cut + 1] + " &\n" + wrap("        & " + line[cut + 2:], width)


# MPI_SIZEOF in the modules: a generic over every numeric and LOGICAL kind gfortran has, any rank.
SIZEOF_KINDS = [("INTEGER", k) for k in (1, 2, 4, 8, 16)] + [("REAL", k) for k in (4, 8, 10, 16)] + \
    [("COMPLEX", k) for k in (4, 8, 10, 16)] + [("LOGICAL", k) for k in (1, 2, 4, 8)] + [("CHARACTER", 1)]
# (CHARACTER is not numeric, so not in the standard's MPI_SIZEOF; programs call it all the same,
# and MPI_CHARACTER has a size: the length of the string in bytes)


def sizeof_text(prefix, optional):
    """The generic MPI_SIZEOF (and PMPI_SIZEOF) and its specifics (prefix: their names' start)."""
    names = ["%s_%s%d" % (prefix, "h" if t == "CHARACTER" else t.lower()[0], k) for t, k in SIZEOF_KINDS]
    generic = []
    for g in ("MPI_SIZEOF", "PMPI_SIZEOF"):
        generic += ["  INTERFACE %s" % g, "    MODULE PROCEDURE " + ", ".join(names), "  END INTERFACE %s" % g]
    body = []
    for (t, k), n in zip(SIZEOF_KINDS, names):
        body += ["  SUBROUTINE %s(x, size, ierror)" % n, "    %s(KIND=%d%s), DIMENSION(..), INTENT(IN) :: x" % (t, k, ", LEN=*" if t == "CHARACTER" else ""),
                 "    INTEGER, INTENT(OUT) :: size", "    INTEGER%s, INTENT(OUT) :: ierror" % (", OPTIONAL" if optional else ""),
                 "    size = STORAGE_SIZE(x) / 8"]
        body.append("    IF (PRESENT(ierror)) ierror = MPI_SUCCESS" if optional else "    ierror = MPI_SUCCESS")
        body.append("  END SUBROUTINE %s" % n)
    return [wrap(x) for x in generic], body, names


# Procedures the module mpi overloads with a TYPE(C_PTR) baseptr (f_hand.c: mpi_xxx_cptr_).
CPTR_FORMS = ["mpi_alloc_mem", "mpi_win_allocate", "mpi_win_allocate_shared", "mpi_win_shared_query"]


def module_text(procs, names):
    out = ["! Generated by tools/gen_fortran.py from the MPI Forum's API description (pympistandard)",
           "! and include/mpi.h: do not edit. The module `mpi`: the constants of mpif.h and an explicit",
           "! interface for every subroutine (choice buffers unchecked: NO_ARG_CHECK).",
           "MODULE mpi",
           "  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR",
           "  IMPLICIT NONE",
           "  PRIVATE :: C_PTR",
           "  INCLUDE 'mpif.h'",
           "  INTERFACE"]
    n = 0
    generics = []
    for name in names:
        p = procs[name]
        if p.express.f90.return_kind is not None or name == "mpi_sizeof":
            continue  # MPI_WTIME and the like: typed EXTERNAL in mpif.h; MPI_SIZEOF: generic below
        text = interface_text(name, p)
        if text is None:
            continue
        if name in CPTR_FORMS:
            # a generic of the same name over the INTEGER(KIND=MPI_ADDRESS_KIND) form and the
            # TYPE(C_PTR) form MPI_XXX_CPTR (MPI 4.1, 19.1.4: the mpi module overloads both)
            up = p.express.f90.name
            cptr = text.replace(up, up + "_CPTR").replace("INTEGER(KIND=MPI_ADDRESS_KIND) :: BASEPTR", "TYPE(C_PTR) :: BASEPTR")
            text = "  INTERFACE %s\n%s\n%s\n  END INTERFACE %s" % (up, text, cptr, up)
            generics.append(text)
            n += 1
            continue
        out.append(text)
        n += 1
    generic, body, _ = sizeof_text("aptus_sizeof", False)
    out += ["  END INTERFACE"] + generics + generic + ["CONTAINS"] + body + ["END MODULE mpi", ""]
    return "\n".join(out), n


# ---- the module mpi_f08 ---------------------------------------------------------------------

# The handle types of mpi_f08 and the C types of their constants.
F08_HANDLES = [("MPI_Comm", "MPI_Comm"), ("MPI_Datatype", "MPI_Datatype"), ("MPI_Errhandler", "MPI_Errhandler"),
               ("MPI_File", "MPI_File"), ("MPI_Group", "MPI_Group"), ("MPI_Info", "MPI_Info"),
               ("MPI_Message", "MPI_Message"), ("MPI_Op", "MPI_Op"), ("MPI_Request", "MPI_Request"),
               ("MPI_Session", "MPI_Session"), ("MPI_Win", "MPI_Win")]
# Written in Fortran in the module itself (F08_HAND) rather than over a C entry point.
F08_HAND = {"mpi_status_f2f08", "mpi_status_f082f", "mpi_sizeof"}


# Whose choice argument is an address, not data (the address of its first element is wanted, not
# that of a contiguous copy): kept assumed-size with NO_ARG_CHECK, as in the module mpi.
F08_ADDRESS_ONLY = ("MPI_Get_address", "MPI_F_sync_reg")


def f08_decl_lines(text, keep_assumed_rank=True):
    """The f08 declaration lines of pympistandard's rendering. Choice buffers stay assumed-rank
    (TYPE(*), DIMENSION(..)) as the standard declares them; the specific passes them on to the
    entry point's assumed-size argument, for which the compiler makes a contiguous copy of a
    non-contiguous section in the calls that complete before they return (the calls that keep their
    buffer describe a section by a datatype instead: f08_section_branch). With keep_assumed_rank false
    they are assumed-size with NO_ARG_CHECK."""
    out = []
    for line in text.splitlines()[1:]:
        line = line.strip()
        if line.startswith("USE, INTRINSIC"):
            continue
        if "DIMENSION(..)" in line and not keep_assumed_rank:
            names = line.split("::")[1].strip()
            out.append("!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % names)
            line = line.replace("DIMENSION(..)", "DIMENSION(*)")
        out.append(line)
    return out


# How the calls that keep their buffer take a non-contiguous section (f_section.c): SINGLE, one
# message of COUNT copies of DATATYPE; ELEM, split by the library (collectives, partitions), the
# datatype restrided; BLOCK, ELEM or one datatype per block of COUNT; ADDR, the first element only;
# the rest need contiguous memory (refused). f08_buffer_mode refines it per buffer.
F08_SECTION_NONE = {"MPI_Buffer_attach", "MPI_Comm_attach_buffer", "MPI_Session_attach_buffer", "MPI_Win_create",
                    "MPI_Win_attach", "MPI_Win_detach", "MPI_Free_mem", "MPI_Ialltoallw", "MPI_Alltoallw_init",
                    "MPI_Ineighbor_alltoallw", "MPI_Neighbor_alltoallw_init"}
F08_SECTION_SINGLE = {"MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend", "MPI_Irecv", "MPI_Imrecv",
                      "MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Recv_init",
                      "MPI_Isendrecv", "MPI_Isendrecv_replace", "MPI_Ibcast", "MPI_Bcast_init", "MPI_Put", "MPI_Get",
                      "MPI_Rput", "MPI_Rget", "MPI_Accumulate", "MPI_Raccumulate", "MPI_Get_accumulate",
                      "MPI_Rget_accumulate"}
F08_SECTION_ADDR = {"MPI_Fetch_and_op", "MPI_Compare_and_swap"}
# partitioned communication keeps its buffer though pympistandard does not declare it ASYNCHRONOUS
F08_KEPT_EXTRA = {"MPI_Psend_init", "MPI_Precv_init"}
SECTION_MODES = {"SINGLE": 1, "ELEM": 2, "ADDR": 3, "BLOCK": 4}


def f08_section_mode(name):
    if name in F08_SECTION_NONE:
        return None
    if name in F08_SECTION_ADDR or (name.startswith("MPI_File_") and name.endswith("_end")):
        return "ADDR"
    if name in F08_SECTION_SINGLE or name.startswith("MPI_File_"):
        return "SINGLE"
    return "ELEM"


def f08_buffer_mode(name, buf, count, shared):
    """How buffer `buf` of procedure `name` takes a non-contiguous section: the call's way, except
    in the collectives, where a buffer that is one message (the send buffer of a gather, the
    receive buffer of a scatter) is SINGLE, and one split by one count and a datatype of its own
    is BLOCK (ELEM, or blocks of COUNT elements that repeat at one distance)."""
    mode = f08_section_mode(name)
    if mode == "SINGLE" and count is None:
        return "ADDR"
    if mode != "ELEM":
        return mode
    base = name[4:-5] if name.endswith("_init") else name[5:]
    base = base.lower()
    if (buf == "sendbuf" and base in ("gather", "gatherv", "allgather", "allgatherv", "neighbor_allgather",
                                      "neighbor_allgatherv")) or (buf == "recvbuf" and base in ("scatter", "scatterv")):
        return "SINGLE"
    return "BLOCK" if count is not None and not shared else "ELEM"


def f08_section_args(buf, args):
    """The count and datatype arguments describing choice buffer `buf` (count None: none)."""
    stem = {"buf": "", "buffer": "", "sendbuf": "send", "recvbuf": "recv", "origin_addr": "origin_",
            "result_addr": "result_", "compare_addr": "compare_"}[buf]
    count = stem + "count" if stem + "count" in args else "count" if "count" in args and stem in ("", "send", "recv") else None
    for t in (stem + "type", stem + "datatype", "datatype"):
        if t in args:
            return count, t
    return count, None


def f08_section_branch(name, f77, kept, args, decls):
    """The lines of a specific that pass non-contiguous sections of its kept buffers on as
    datatypes over the user's memory (or refuse them)."""
    test = " .AND. ".join("IS_CONTIGUOUS(%s)" % v for v in kept)
    out = []
    mode = f08_section_mode(name)
    if mode is None:
        out += ["    IF (.NOT. (%s)) THEN" % test, "      CALL f77_APTUS_F08_NONCONTIG('%s', ierror_)" % name,
                "      IF (PRESENT(ierror)) ierror = ierror_", "      RETURN", "    END IF"]
        return out
    ctype = {}
    for x in decls:
        names = [v.strip().split("(")[0] for v in x.split("::")[1].split(",")]
        for v in names:
            ctype[v] = x.split("::")[0].split(",")[0].strip()
    body, decl, frees, owner = [], [], [], {}
    call = list(args)
    call[call.index("ierror")] = "ierror_"
    described = [(v,) + f08_section_args(v, args) for v in kept]
    dtypes = [d for _, _, d in described]
    for v, count, dtype in described:
        bmode = f08_buffer_mode(name, v, count, dtypes.count(dtype) > 1)
        if dtype is None and bmode != "ADDR":
            raise ValueError("%s: no datatype argument for buffer %s" % (name, v))
        elif dtype is None:  # the end of a split collective: the buffer of its begin
            dtype = "MPI_DATATYPE_NULL"
        decl += ["    TYPE(MPI_Datatype) :: t_%s" % v, "    TYPE(C_PTR) :: p_%s" % v,
                 "    INTEGER(KIND=1), POINTER :: b_%s(:)" % v, "    INTEGER(KIND=MPI_ADDRESS_KIND) :: s_%s" % v,
                 "    INTEGER(KIND=MPI_COUNT_KIND) :: n_%s" % v]
        recount = bmode in ("SINGLE", "BLOCK")  # the count may become 1
        body.append("      t_%s = %s" % (v, dtype))
        body.append("      n_%s = %s" % (v, count if recount else "0"))
        body.append("      IF (ierror_ == MPI_SUCCESS) &\n        & CALL f77_APTUS_F08_SECTION(%s, %d_C_INT, '%s' // C_NULL_CHAR, n_%s, %s, "
                    "t_%s, p_%s, s_%s, ierror_)" % (v, SECTION_MODES[bmode], name, v, dtype, v, v, v))
        call[call.index(v)] = "b_%s" % v
        if recount:
            decl.append("    %s :: c_%s" % (ctype[count], v))
            body.append("      c_%s = INT(n_%s, KIND(c_%s))" % (v, v, v))
            call[call.index(count)] = "c_%s" % v
        if dtype in owner and bmode != "ELEM" and bmode != "ADDR":
            raise ValueError("%s: buffer %s shares the datatype argument %s" % (name, v, dtype))
        if dtype in owner and bmode == "ADDR":
            pass
        elif dtype in owner:  # one datatype argument for two buffers (the reductions)
            w = owner[dtype]
            body.append("      IF (ierror_ == MPI_SUCCESS) &\n        & CALL f77_APTUS_F08_SECTION_PAIR('%s' // C_NULL_CHAR, t_%s, s_%s, "
                        "t_%s, s_%s, %s, ierror_)" % (name, w, w, v, v, dtype))
        else:
            owner[dtype] = v
            if dtype in call:
                call[call.index(dtype)] = "t_%s" % v
        frees.append("      CALL f77_APTUS_F08_SECTION_FREE(t_%s, %s)" % (v, dtype))
    out += decl
    out += ["    ierror_ = MPI_SUCCESS", "    IF (.NOT. (%s)) THEN" % test] + body
    out.append("      IF (ierror_ == MPI_SUCCESS) THEN")
    for v in kept:
        out.append("        CALL C_F_POINTER(p_%s, b_%s, [1])" % (v, v))
    out.append("        CALL %s(%s)" % (f77, ", ".join(call)))
    out.append("      END IF")
    out += frees
    out += ["      IF (PRESENT(ierror)) ierror = ierror_", "      RETURN", "    END IF"]
    return out


def f08_specific(p, prof, large=False):
    """The specific procedure (MPI_Xxx_f08 or PMPI_Xxx_f08; MPI_Xxx_c_f08 over the large-count
    entry point) over the C entry point."""
    f08 = p.express.embiggen.f08 if large else p.express.f08
    text = str(f08)
    head = text.splitlines()[0]
    is_function = not head.startswith("MPI_")
    m = re.match(r"^(?:(.*?)\s+)?(MPI_\w+)\((.*)\)$", head)
    rtype, name, args = m.group(1), m.group(2), m.group(3)
    pre = "P" if prof else ""
    # the standard's names (MPI 4.1, Table 19.1, MPI_SUBARRAYS_SUPPORTED .TRUE.): MPI_Send_f08ts,
    # MPI_Send_c_f08ts for procedures with choice buffers, MPI_Comm_rank_f08 for the others
    spec = pre + name + ("_c" if large and not name.endswith("_c") else "") + \
        ("_f08ts" if "DIMENSION(..)" in text else "_f08")
    arglist = [a.strip() for a in args.split(",")] if args.strip() else []
    f77 = "f77_" + f08_entry_name(p, prof, large)
    out = []
    if is_function:
        out.append("%s FUNCTION %s(%s)" % (rtype, spec, ", ".join(arglist)))
    else:
        out.append("SUBROUTINE %s(%s)" % (spec, ", ".join(arglist)))
    head = out[0]
    decls = f08_decl_lines(text, keep_assumed_rank=name not in F08_ADDRESS_ONLY)
    # A non-contiguous section given to a call that keeps its buffer (ASYNCHRONOUS: nonblocking,
    # persistent, one-sided, attached buffers) is described by a datatype over the user's memory
    # (src/fortran/f_section.c), never copied; what no datatype can describe is refused.
    if name in F08_KEPT_EXTRA:  # declared without ASYNCHRONOUS by pympistandard, kept all the same
        decls = [x.replace("DIMENSION(..), INTENT(IN) ::", "DIMENSION(..), INTENT(IN), ASYNCHRONOUS ::")
                 .replace("DIMENSION(..) ::", "DIMENSION(..), ASYNCHRONOUS ::") for x in decls]
    # an external procedure (its linker name the standard's, so that a tool can replace it and
    # call PMPI_Xxx), whose explicit interface the module aptus_f08_impl declares
    iface = ["    " + head, "      IMPORT"] + ["      " + x for x in decls] + \
        ["    END %s %s" % ("FUNCTION" if is_function else "SUBROUTINE", spec)]
    kept = []
    for x in decls:
        if "DIMENSION(..)" in x and "ASYNCHRONOUS" in x:
            kept += [v.strip() for v in x.split("::")[1].split(",")]
    entries = ["%s => %s" % (f77, f77[4:])]
    branch = f08_section_branch(name, f77, kept, arglist, decls) if kept and "ierror" in arglist else []
    if branch:
        entries += ["f77_APTUS_F08_NONCONTIG => APTUS_F08_NONCONTIG"] if f08_section_mode(name) is None else \
            ["f77_APTUS_F08_SECTION => APTUS_F08_SECTION", "f77_APTUS_F08_SECTION_FREE => APTUS_F08_SECTION_FREE"] + \
            (["f77_APTUS_F08_SECTION_PAIR => APTUS_F08_SECTION_PAIR"] if "_PAIR(" in "\n".join(branch) else [])
    out.append("  USE aptus_f08_types")
    out.append("  USE aptus_f08_entries, ONLY : " + ", ".join(entries))
    if kept and "ierror" in arglist and f08_section_mode(name) is not None:
        out.append("  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR, C_INT, C_NULL_CHAR, C_F_POINTER")
    out.append("  IMPLICIT NONE")
    out += ["    " + x for x in decls]
    call_args = [a for a in arglist]
    if branch:
        out.append("    INTEGER :: ierror_")
        out += branch
    if is_function:
        out.append("    %s = %s(%s)" % (spec, f77, ", ".join(call_args)))
        out.append("END FUNCTION %s" % spec)
    elif "ierror" in arglist:
        if not kept:
            out.append("    INTEGER :: ierror_")
        call_args[call_args.index("ierror")] = "ierror_"
        out.append("    CALL %s(%s)" % (f77, ", ".join(call_args)))
        out.append("    IF (PRESENT(ierror)) ierror = ierror_")
        out.append("END SUBROUTINE %s" % spec)
    else:
        out.append("    CALL %s(%s)" % (f77, ", ".join(call_args)))
        out.append("END SUBROUTINE %s" % spec)
    return spec, name, "\n".join(wrap(x) for x in out), "\n".join(wrap(x) for x in iface)


def f08_signature(p, large):
    """What tells the specifics of a generic apart: the types and kinds of the arguments that are
    not TYPE(*) (kinds of 8 bytes all alike)."""
    text = str(p.express.embiggen.f08 if large else p.express.f08)
    sig = []
    for line in f08_decl_lines(text):
        if "::" not in line or line.startswith("!"):
            continue
        decl, names = line.split("::", 1)
        t = decl.split(",")[0].strip()
        if t.startswith("TYPE(*)"):
            continue
        t = re.sub(r"MPI_(ADDRESS|COUNT|OFFSET)_KIND", "8", t)
        for n in re.findall(r"(\w+)(\([^)]*\))?", names):
            sig.append((n[0].lower(), t, bool(n[1])))
    return sorted(sig)


# Procedures whose mpi_f08 form returns a C_PTR that mpif.h's does not (the detached buffer's
# address): their specifics call entry points of their own (f_hand.c, aptus_f08_[p]xxx_).
F08_OWN_ENTRY = {"mpi_buffer_detach", "mpi_comm_detach_buffer", "mpi_session_detach_buffer"}


def f08_entry_name(p, prof, large):
    """The Fortran name of the C entry point an f08 specific calls."""
    f90 = p.express.f90.name
    if p._parseset["name"].lower() in F08_OWN_ENTRY:
        return ("APTUS_F08_P" if prof else "APTUS_F08_") + f90[4:] + ("_C" if large else "")
    return ("P" if prof else "") + f90 + ("_C" if large else "")


def f08_entry_interface(p, prof, large=False):
    """The interface of a C entry point as the f08 specifics call it: every argument but strings
    and procedures of any type (NO_ARG_CHECK), so that handles, statuses and C_PTRs pass as the
    INTEGERs they are laid out as."""
    from pympistandard.f90 import F90Parameter
    f90 = p.express.f90
    params = [F90Parameter(q) for q in p._parseset["parameters"]
              if ("f90_parameter" not in q["suppress"] or (large and "c_parameter" not in q["suppress"]))
              and q["kind"] != "VARARGS" and (large or not q["large_only"])]
    name = f08_entry_name(p, prof, large)
    if f90.return_kind is not None:
        out = ["    FUNCTION %s(%s)" % (name, ", ".join(x.name for x in params)), "      IMPORT",
               "      %s :: %s" % (f90.return_type, name)]
    else:
        out = ["    SUBROUTINE %s(%s)" % (name, ", ".join(x.name for x in params)), "      IMPORT"]
    for x in params:
        if x.type == "CHARACTER*(*)":
            out.append("      CHARACTER(LEN=*) :: %s%s" % (x.name, "(*)" if x.dimensions else ""))
        elif x.type == "EXTERNAL":
            out.append("      EXTERNAL :: %s" % x.name)
        else:
            out.append("      !GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % x.name)
            out.append("      TYPE(*), DIMENSION(*) :: %s" % x.name)
    out.append("    END %s %s" % ("FUNCTION" if f90.return_kind is not None else "SUBROUTINE", name))
    return name, "\n".join(wrap(x) for x in out)


def f08_text(procs, names, values, large):
    """The modules behind `use mpi_f08`: aptus_f08_types (kinds, handle types, constants,
    sentinels, callback interfaces), aptus_f08_entries (the C entry points, untyped),
    aptus_f08_impl (the specifics) and mpi_f08 (the generics)."""
    ints = [(n, k, v) for n, k, v in values if k in ("int", "offset")]
    handles = [(n, k, v) for n, k, v in values if k not in ("int", "offset")]
    t = ["! Generated by tools/gen_fortran.py from the MPI Forum's API description (pympistandard)",
         "! and include/mpi.h: do not edit. The module mpi_f08 and the modules behind it.",
         "MODULE aptus_f08_types",
         "  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR, C_INT, C_CHAR",
         "  IMPLICIT NONE",
         "  INTEGER, PARAMETER :: MPI_ADDRESS_KIND = 8, MPI_OFFSET_KIND = 8, MPI_COUNT_KIND = 8",
         "  INTEGER, PARAMETER :: MPI_INTEGER_KIND = 4, MPI_STATUS_SIZE = 8",
         "  INTEGER, PARAMETER :: MPI_SOURCE = 1, MPI_TAG = 2, MPI_ERROR = 3",
         "  INTEGER, PARAMETER :: MPI_VERSION = 5, MPI_SUBVERSION = 0",
         "  LOGICAL, PARAMETER :: MPI_SUBARRAYS_SUPPORTED = .TRUE., MPI_ASYNC_PROTECTS_NONBLOCKING = .FALSE."]
    for ht, _ in F08_HANDLES:
        t += ["  TYPE, BIND(C) :: %s" % ht, "    INTEGER(C_INT) :: MPI_VAL", "  END TYPE %s" % ht]
    t += ["  TYPE, BIND(C) :: MPI_Status",
          "    INTEGER(C_INT) :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
          "    INTEGER(C_INT) :: MPI_internal(5)",
          "  END TYPE MPI_Status"]
    for n, k, v in ints:
        if n in ("MPI_VERSION", "MPI_SUBVERSION"):
            continue
        kind = "INTEGER(KIND=MPI_OFFSET_KIND)" if k == "offset" else "INTEGER"
        t.append("  %s, PARAMETER :: %s = %d" % (kind, n, v))
    for n, k, v in handles:
        t.append("  TYPE(%s), PARAMETER :: %s = %s(%d)" % (k, n, k, v))
    # sentinels: variables the C entry points recognise by address (f_runtime.c)
    for decl, name, label in (("INTEGER(C_INT)", "MPI_BOTTOM", "bottom"), ("INTEGER(C_INT)", "MPI_IN_PLACE", "in_place"),
                              ("INTEGER(C_INT)", "MPI_BUFFER_AUTOMATIC", "buffer_automatic"),
                              ("TYPE(MPI_Status)", "MPI_STATUS_IGNORE", "status_ignore"),
                              ("TYPE(MPI_Status)", "MPI_STATUSES_IGNORE(1)", "statuses_ignore"),
                              ("INTEGER(C_INT)", "MPI_ERRCODES_IGNORE(1)", "errcodes_ignore"),
                              ("INTEGER(C_INT)", "MPI_UNWEIGHTED(1)", "unweighted"),
                              ("INTEGER(C_INT)", "MPI_WEIGHTS_EMPTY(1)", "weights_empty"),
                              ("CHARACTER(KIND=C_CHAR)", "MPI_ARGV_NULL(1)", "argv_null"),
                              ("CHARACTER(KIND=C_CHAR)", "MPI_ARGVS_NULL(1,1)", "argvs_null")):
        t.append("  %s, BIND(C, NAME='aptus_f08_%s') :: %s" % (decl, label, name))
    for c in sorted(std.CALLBACKS):
        if c.startswith("mpi_t_"):
            continue
        body = [x.strip() for x in str(std.CALLBACKS[c].express.f08).splitlines()]
        if len(body) < 2:
            continue  # no f08 form (the removed MPI-1 copy and delete functions)
        if c == "mpi_user_function":  # and its large-count form
            big = [x.strip() for x in str(std.CALLBACKS[c].express.embiggen.f08).splitlines()]
            t += ["  ABSTRACT INTERFACE", "    SUBROUTINE " + big[1], "      IMPORT"]
            t += ["      " + x for x in big[2:] if not x.startswith("USE, INTRINSIC")]
            t += ["    END SUBROUTINE", "  END INTERFACE"]
        t.append("  ABSTRACT INTERFACE")
        head = body[1]
        t.append("    SUBROUTINE " + head)
        t.append("      IMPORT")
        for x in body[2:]:
            if x.startswith("USE, INTRINSIC"):
                continue
            t.append("      " + x)
        t.append("    END SUBROUTINE")
        t.append("  END INTERFACE")
    for fn, iface in (("MPI_COMM_NULL_COPY_FN", "MPI_Comm_copy_attr_function"), ("MPI_COMM_DUP_FN", "MPI_Comm_copy_attr_function"),
                      ("MPI_COMM_NULL_DELETE_FN", "MPI_Comm_delete_attr_function"),
                      ("MPI_TYPE_NULL_COPY_FN", "MPI_Type_copy_attr_function"), ("MPI_TYPE_DUP_FN", "MPI_Type_copy_attr_function"),
                      ("MPI_TYPE_NULL_DELETE_FN", "MPI_Type_delete_attr_function"),
                      ("MPI_WIN_NULL_COPY_FN", "MPI_Win_copy_attr_function"), ("MPI_WIN_DUP_FN", "MPI_Win_copy_attr_function"),
                      ("MPI_WIN_NULL_DELETE_FN", "MPI_Win_delete_attr_function"),
                      ("MPI_CONVERSION_FN_NULL", "MPI_Datarep_conversion_function")):
        t.append("  PROCEDURE(%s) :: %s" % (iface, fn))
    # == and /= between handles of one kind
    ops = []
    for op, cmp in (("eq", "=="), ("ne", "/=")):
        t.append("  INTERFACE OPERATOR(%s)" % ("==" if op == "eq" else "/="))
        t.append("    MODULE PROCEDURE " + ", ".join("aptus_%s_%s" % (h[4:].lower(), op) for h, _ in F08_HANDLES))
        t.append("  END INTERFACE")
        for h, _ in F08_HANDLES:
            fn = "aptus_%s_%s" % (h[4:].lower(), op)
            ops += ["  ELEMENTAL LOGICAL FUNCTION %s(a, b)" % fn, "    TYPE(%s), INTENT(IN) :: a, b" % h,
                    "    %s = a%%MPI_VAL %s b%%MPI_VAL" % (fn, cmp), "  END FUNCTION %s" % fn]
    t.append("CONTAINS")
    t += ops
    t.append("END MODULE aptus_f08_types")
    t.append("")

    e = ["MODULE aptus_f08_entries",
         "  USE aptus_f08_types, ONLY : MPI_ADDRESS_KIND, MPI_Datatype",
         "  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_INT, C_CHAR, C_PTR, C_INT64_T", "  IMPLICIT NONE", "  INTERFACE",
         "    SUBROUTINE APTUS_F08_NONCONTIG(NAME, IERROR)", "      CHARACTER(LEN=*) :: NAME", "      INTEGER :: IERROR",
         "    END SUBROUTINE APTUS_F08_NONCONTIG",
         # src/fortran/f_section.c: a non-contiguous section as a datatype over the user's memory
         "    SUBROUTINE APTUS_F08_SECTION(BUF, MODE, NAME, COUNT, DATATYPE, NEWTYPE, BASE, STRIDE, IERROR) &",
         "        & BIND(C, NAME='aptus_f08_section')", "      IMPORT", "      TYPE(*), DIMENSION(..) :: BUF",
         "      INTEGER(C_INT), VALUE :: MODE", "      CHARACTER(KIND=C_CHAR), DIMENSION(*) :: NAME",
         "      INTEGER(C_INT64_T) :: COUNT", "      TYPE(MPI_Datatype) :: DATATYPE, NEWTYPE",
         "      TYPE(C_PTR) :: BASE", "      INTEGER(C_INT64_T) :: STRIDE", "      INTEGER(C_INT) :: IERROR",
         "    END SUBROUTINE APTUS_F08_SECTION",
         "    SUBROUTINE APTUS_F08_SECTION_PAIR(NAME, T1, S1, T2, S2, DATATYPE, IERROR) &",
         "        & BIND(C, NAME='aptus_f08_section_pair')", "      IMPORT",
         "      CHARACTER(KIND=C_CHAR), DIMENSION(*) :: NAME", "      TYPE(MPI_Datatype) :: T1, T2, DATATYPE",
         "      INTEGER(C_INT64_T) :: S1, S2", "      INTEGER(C_INT) :: IERROR",
         "    END SUBROUTINE APTUS_F08_SECTION_PAIR",
         "    SUBROUTINE APTUS_F08_SECTION_FREE(NEWTYPE, DATATYPE) BIND(C, NAME='aptus_f08_section_free')",
         "      IMPORT", "      TYPE(MPI_Datatype) :: NEWTYPE, DATATYPE", "    END SUBROUTINE APTUS_F08_SECTION_FREE"]
    impl = ["MODULE aptus_f08_impl", "  USE aptus_f08_types"]
    specs, ifaces = [], []
    generics = {}
    for name in names:
        if name in F08_HAND or not procs[name]._parseset["attributes"]["f08_expressible"]:
            continue
        p = procs[name]
        for prof in (0, 1):
            ename, eiface = f08_entry_interface(p, prof)
            e.append(eiface)
            spec, gname, body, iface = f08_specific(p, prof)
            specs.append(body)
            ifaces.append(iface)
            generics.setdefault(("P" if prof else "") + gname, []).append(spec)
            if name not in large:
                continue
            ename, eiface = f08_entry_interface(p, prof, large=True)
            e.append(eiface)
            spec, gname, body, iface = f08_specific(p, prof, large=True)
            specs.append(body)
            ifaces.append(iface)
            # under the generic name unless no argument tells the two apart (both kinds of 8
            # bytes): then under MPI_Xxx_c
            if f08_signature(p, False) == f08_signature(p, True):
                gname += "_c"
            generics.setdefault(("P" if prof else "") + gname, []).append(spec)
    e += ["  END INTERFACE", "END MODULE aptus_f08_entries", ""]
    # (a PUBLIC statement of its own per few names: a compiler may bound continuation lines)
    pub = [s for g in generics.values() for s in g] + sizeof_text("aptus_sizeof", True)[2] + ["MPI_Status_f2f08_f08", "MPI_Status_f082f_f08",
                                                      "PMPI_Status_f2f08_f08", "PMPI_Status_f082f_f08"]
    impl += ["  IMPLICIT NONE", "  PRIVATE"] + ["  PUBLIC :: " + ", ".join(pub[i:i + 6]) for i in range(0, len(pub), 6)]
    impl += ["  INTERFACE"] + ifaces + ["  END INTERFACE"]
    impl.append("CONTAINS")
    impl += F08_FORTRAN_SPECIFICS
    _, sbody, snames = sizeof_text("aptus_sizeof", True)
    impl += sbody
    for g in ("MPI_Sizeof", "PMPI_Sizeof"):
        generics.setdefault(g, []).extend(snames)
    impl += ["END MODULE aptus_f08_impl", ""]
    for g, extra in (("MPI_Status_f2f08", "MPI_Status_f2f08_f08"), ("MPI_Status_f082f", "MPI_Status_f082f_f08"),
                     ("PMPI_Status_f2f08", "PMPI_Status_f2f08_f08"), ("PMPI_Status_f082f", "PMPI_Status_f082f_f08")):
        generics.setdefault(g, []).append(extra)
    m = ["MODULE mpi_f08", "  USE aptus_f08_types", "  USE aptus_f08_impl", "  IMPLICIT NONE"]
    for g in sorted(generics):
        m += ["  INTERFACE %s" % g, "    PROCEDURE %s" % ", ".join(generics[g]), "  END INTERFACE %s" % g]
    m += ["END MODULE mpi_f08", ""]
    text = "\n".join(wrap(x) for x in t) + "\n" + "\n".join(e) + "\n" + "\n".join(wrap(x) for x in impl) + "\n" + \
        "\n".join(wrap(x) for x in m) + "\n! The specifics: external procedures under the standard's names\n" + "\n".join(specs) + "\n"
    externals = sorted(x.lower() for x in re.findall(r"^(?:SUBROUTINE|.* FUNCTION) (MPI_\w+)\(", "\n".join(specs), re.M))
    return text, len([g for g in generics if not g.startswith("P")]), externals


def f08_calls_text(procs, names, large):
    """A program that calls every generic of mpi_f08 once with arguments of the declared types:
    compiled (never run) by tests/fortran to show every generic resolves."""
    out = ["! Generated by tools/gen_fortran.py: do not edit. Calls every generic of mpi_f08 once",
           "! (compiled by the test fortran.f08_every_generic, never run).", "MODULE f08_calls", "  USE mpi_f08",
           "  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR", "  IMPLICIT NONE", "CONTAINS"]
    n = 0
    for name in names:
        p = procs[name]
        if not p._parseset["attributes"]["f08_expressible"]:
            continue
        for lg in ((False, True) if name in large else (False,)):
            text = str(p.express.embiggen.f08 if lg else p.express.f08)
            head = text.splitlines()[0]
            m = re.match(r"^(?:(.*?)\s+)?(MPI_\w+)\((.*)\)$", head)
            rtype, gname, args = m.group(1), m.group(2), m.group(3)
            if lg and f08_signature(p, False) == f08_signature(p, True):
                gname += "_c"
            n += 1
            out.append("  SUBROUTINE call_%d()" % n)
            for line in text.splitlines()[1:]:
                line = line.strip()
                if line.startswith("USE, INTRINSIC"):
                    continue
                decl, vars_ = line.split("::", 1)
                parts = [x.strip() for x in decl.split(",")]
                t = parts[0]
                if t.startswith("TYPE(*)"):
                    t = "INTEGER"
                    vars_ = ", ".join(re.sub(r"\(.*\)", "", v).strip() + "(4)" for v in re.findall(r"\w+(?:\([^)]*\))?", vars_))
                elif t.startswith("PROCEDURE("):
                    t = t + ", POINTER"
                    vars_ = ", ".join(v.strip() + " => NULL()" for v in vars_.split(","))
                else:
                    if t.startswith("CHARACTER(LEN=") and not t.startswith("CHARACTER(LEN=MPI_"):
                        t = "CHARACTER(LEN=16)"  # * or the length argument
                    extra = [x for x in parts[1:] if x.startswith("DIMENSION")]
                    # arrays: constant extents kept, any other extent 2
                    vars_ = ", ".join(re.sub(r"\(([^)]*)\)", lambda mm: "(" + ",".join(d.strip() if re.match(r"^(MPI_\w+|\d+)$", d.strip()) else "2"
                                                                             for d in mm.group(1).split(",")) + ")", v)
                                      for v in re.findall(r"\w+(?:\([^)]*\))?", vars_))
                    t = ", ".join([t] + [x.replace("..", "2").replace("*", "2") for x in extra])
                out.append("    %s :: %s" % (t, vars_))
            call = "%s(%s)" % (gname, args)
            if rtype:
                out.append("    %s :: r" % rtype)
                out.append("    r = " + call)
            else:
                out.append("    CALL " + call)
            out.append("  END SUBROUTINE call_%d" % n)
    out += ["END MODULE f08_calls", ""]
    return "\n".join(wrap(x) for x in out), n


# The status conversions of mpi_f08, written in Fortran (the two layouts are the same).
F08_FORTRAN_SPECIFICS = []
for _pre in ("", "P"):
    F08_FORTRAN_SPECIFICS += [
        "  SUBROUTINE %sMPI_Status_f2f08_f08(f_status, f08_status, ierror)" % _pre,
        "    INTEGER, INTENT(IN) :: f_status(MPI_STATUS_SIZE)",
        "    TYPE(MPI_Status), INTENT(OUT) :: f08_status",
        "    INTEGER, OPTIONAL, INTENT(OUT) :: ierror",
        "    f08_status = MPI_Status(f_status(1), f_status(2), f_status(3), f_status(4:8))",
        "    IF (PRESENT(ierror)) ierror = MPI_SUCCESS",
        "  END SUBROUTINE %sMPI_Status_f2f08_f08" % _pre,
        "  SUBROUTINE %sMPI_Status_f082f_f08(f08_status, f_status, ierror)" % _pre,
        "    TYPE(MPI_Status), INTENT(IN) :: f08_status",
        "    INTEGER, INTENT(OUT) :: f_status(MPI_STATUS_SIZE)",
        "    INTEGER, OPTIONAL, INTENT(OUT) :: ierror",
        "    f_status(1:3) = [f08_status%MPI_SOURCE, f08_status%MPI_TAG, f08_status%MPI_ERROR]",
        "    f_status(4:8) = f08_status%MPI_internal",
        "    IF (PRESENT(ierror)) ierror = MPI_SUCCESS",
        "  END SUBROUTINE %sMPI_Status_f082f_f08" % _pre]


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
    bound, hand, failed, large = [], [], [], []
    failed += ["%s: named in HAND_WRITTEN, not a procedure of the standard" % n for n in sorted(HAND_WRITTEN - set(procs))]
    for name in sorted(procs):
        if name in HAND_WRITTEN:
            hand.append(name)
            if name in LARGE_HAND_F08:
                large.append(name)
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
        # the large-count form (mpi_f08 only): mpi_xxx_c_ over MPI_Xxx_c
        if name + "_c" in protos and name in LARGE_HAND_F08:
            large.append(name)
        if name + "_c" in protos and name not in LARGE_HAND:
            try:
                b, has_ierror = bind(name + "_c", procs[name], protos[name + "_c"], large=True)
            except ValueError as e:
                failed.append("%s_c: %s" % (name, e))
                continue
            entries.append(render(name + "_c", procs[name], protos[name + "_c"], b, has_ierror))
            large.append(name)
    if failed:
        sys.exit("gen_fortran.py: no rule for:\n  " + "\n  ".join(failed))
    values = constant_values()
    consts = constants_text(values)
    f08, ngenerics, f08_externals = f08_text(procs, sorted(bound + hand), values, set(large))
    module, ninterfaces = module_text(procs, sorted(bound + hand))
    calls, ncalls = f08_calls_text(procs, sorted(bound + hand), set(large))
    outputs = {
        "include/mpif.h": consts,
        "src/fortran/gen/mpi_module.f90": module,
        "src/fortran/gen/mpi_f08.f90": f08,
        "tests/fortran/gen/f08_calls.f90": calls,
        # every procedure of mpif.h / `mpi`, and every specific of mpi_f08 under its standard
        # name (mpi_send_f08ts): tests/fortran/symbols.sh checks that the library exports
        # mpi_<name>_ and pmpi_<name>_ for each
        "src/fortran/gen/procedures.txt": "".join(n + "\n" for n in sorted(bound + hand + [x + "_c" for x in large]
                                                                          + REMOVED_MPI1
                                                                          + [x + "_cptr" for x in CPTR_FORMS]
                                                                          + f08_externals)),
        "src/fortran/gen/f_entries.c": clang_format(HEADER_C + "".join(e + "\n" for e in entries).rstrip("\n") + "\n",
                                                    "src/fortran/gen/f_entries.c"),
    }
    write_outputs(outputs, check)
    print("gen_fortran.py: %d procedures: %d generated, %d hand-written, %d large-count forms; %d interfaces in "
          "the module mpi, %d generics in mpi_f08" % (len(procs), len(bound), len(hand), len(large), ninterfaces,
                                                       ngenerics))
    return bound, hand, entries


if __name__ == "__main__":
    main()
