#!/usr/bin/env python3
"""Test of the statistics files and aptus-report (tools/report/report_test.sh runs it): the numbers
aptus-report --json-out gives must be those the `[aptus stats]` lines of the same run printed
(APTUS_STATS=1 beside APTUS_STATS_FILE), the files those of every rank of the job, and the
picture a valid PNG (and SVG) with something drawn in it.

  check_report.py --stats OUTPUT --data DATA.json --files NAME --np N [--png PNG] [--svg SVG]
                  [--nodes K] [--distinct-netns] [--want-channel CH ...]

Prints what it compared; exit status 0 when all agree, 1 (with every difference) otherwise.
Python 3 alone (no matplotlib: the PNG is decoded with zlib)."""

import argparse
import json
import os
import re
import struct
import sys
import zlib

errors = []


def fail(msg):
    errors.append(msg)


def parse_stats(path):
    """{rank: {...}} from the `[aptus stats] rank R: ...` lines."""
    ranks = {}
    line_re = re.compile(r"^\[aptus stats\] rank (\d+): (.*)$")
    with open(path, errors="replace") as f:
        for raw in f:
            m = line_re.match(raw.rstrip("\n"))
            if not m:
                continue
            r, text = int(m.group(1)), m.group(2)
            s = ranks.setdefault(r, {"pairs": {}, "protocols": {}, "shares": None, "memory": None})
            m = re.match(r"^(\d+) +([a-z0-9-]+) +(\d+) +(\d+)$", text)
            if m:
                s["pairs"][(int(m.group(1)), m.group(2))] = (int(m.group(3)), int(m.group(4)))
                continue
            m = re.match(r"^channel memory (\d+) bytes \((.*)\)$", text)
            if m:
                parts = {} if m.group(2) == "none" else {
                    k: int(v) for k, v in (p.rsplit(" ", 1) for p in m.group(2).split(", "))}
                s["memory"] = (int(m.group(1)), parts)
                continue
            m = re.match(r"^channel shares of (\d+) messages sent: (.*)$", text)
            if m:
                sh = {}
                for part in m.group(2).split("; "):
                    mm = re.match(r"^([a-z0-9-]+) ([0-9.]+)% of messages, ([0-9.]+)% of bytes$", part)
                    if not mm:
                        fail("rank %d: cannot read the share '%s'" % (r, part))
                        continue
                    sh[mm.group(1)] = (float(mm.group(2)), float(mm.group(3)))
                s["shares"] = (int(m.group(1)), sh)
                continue
            m = re.match(r"^protocols to (\d+): eager (\d+), hybrid (\d+), send-rndv (\d+), recv-rndv (\d+) "
                         r"\(FIN eliminated (\d+)\)", text)
            if m:
                s["protocols"][int(m.group(1))] = tuple(int(x) for x in m.groups()[1:])
                continue
            m = re.match(r"^ud-sr engine: .*; datagrams (\d+), retransmitted (\d+) \(timeout\) (\d+) \(fast\) (\d+) "
                         r"\(tail-loss probe\), acks sent (\d+), duplicates dropped (\d+)", text)
            if m:
                g = [int(x) for x in m.groups()]
                s["engine"] = {"datagrams": g[0], "retransmitted": g[1] + g[2] + g[3], "duplicates_dropped": g[5]}
                continue
            m = re.match(r"^ud-sr: lossy paths .*peers moved off the connections (\d+) \(seen here\) (\d+) \(told\), "
                         r"holds renewed \d+, back \d+, moved now (\d+)", text)
            if m:
                s["ud_loss"] = (int(m.group(1)) + int(m.group(2)), int(m.group(3)))
                continue
            m = re.match(r"^rc-sr: connections opened (\d+) by this rank, (\d+) by peers, up (\d+); "
                         r"refused by the limit \(APTUS_RC_MAX=\d+\) (\d+)", text)
            if m:
                s["rc"] = tuple(int(x) for x in m.groups())
                continue
            m = re.match(r"^rc-sr: stalls: .*small messages moved off a connection (\d+) times \(\d+ told by the "
                         r"peer\), back \d+, moved now (\d+)", text)
            if m:
                s["rc_stall"] = (int(m.group(1)), int(m.group(2)))
    return ranks


def check_png(path):
    with open(path, "rb") as f:
        b = f.read()
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        return fail("%s: not a PNG (no signature)" % path)
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(b):
        n, kind = struct.unpack(">I4s", b[pos:pos + 8])
        body = b[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", b[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(kind + body) & 0xffffffff != crc:
            return fail("%s: chunk %s has a bad CRC" % (path, kind))
        if kind == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + n
    if w < 600 or h < 600:
        fail("%s: %dx%d pixels, a picture of the report is larger" % (path, w, h))
    try:
        pixels = zlib.decompress(idat)
    except zlib.error as e:
        return fail("%s: the image data does not decompress: %s" % (path, e))
    distinct = len(set(pixels[:: max(1, len(pixels) // 200000)]))
    if distinct < 32:
        fail("%s: only %d distinct byte values in the image: nothing drawn" % (path, distinct))
    print("check_report: %s: a PNG of %dx%d pixels, %d bytes, %d distinct sample values" % (
        path, w, h, len(b), distinct))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stats", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--files", required=True, help="APTUS_STATS_FILE's value (no %%r)")
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--png")
    ap.add_argument("--svg")
    ap.add_argument("--distinct-netns", action="store_true")
    ap.add_argument("--want-channel", action="append", default=[])
    a = ap.parse_args()

    # The files: one per rank, NAME.RANK.json, of one job, each naming its rank.
    docs = {}
    for r in range(a.np):
        path = "%s.%d.json" % (a.files, r)
        if not os.path.isfile(path):
            fail("rank %d wrote no statistics file %s" % (r, path))
            continue
        with open(path) as f:
            d = json.load(f)
        docs[r] = d
        if d.get("schema") != 1 or d.get("format") != "aptus-stats" or d.get("rank") != r or d.get("size") != a.np:
            fail("%s: schema %s, format %s, rank %s, size %s" % (path, d.get("schema"), d.get("format"), d.get("rank"),
                                                                 d.get("size")))
    extra = [f for f in os.listdir(os.path.dirname(a.files) or ".") if f.endswith(".tmp")]
    if extra:
        fail("temporary files left: %s" % extra)
    if len({d.get("job") for d in docs.values()}) > 1:
        fail("the files are of several jobs")
    if a.nodes:
        nodes = {d.get("node") for d in docs.values()}
        if len(nodes) != a.nodes:
            fail("the ranks' files name %d nodes, not %d" % (len(nodes), a.nodes))
        if a.distinct_netns:
            by_node = {}
            for d in docs.values():
                by_node.setdefault(d.get("node"), set()).add(d.get("net_namespace"))
            seen = [ns for v in by_node.values() for ns in v]
            if any(len(v) != 1 for v in by_node.values()) or len(set(seen)) != len(by_node):
                fail("the nodes' ranks are not each in a network namespace of their own: %s" % by_node)
            else:
                print("check_report: %d nodes, each in its own network namespace" % len(by_node))

    lines = parse_stats(a.stats)
    with open(a.data) as f:
        data = json.load(f)
    if data["size"] != a.np or data["ranks_missing"]:
        fail("the report has size %s, missing %s" % (data["size"], data["ranks_missing"]))
    if sorted(lines) != list(range(a.np)):
        fail("statistics lines of ranks %s, not of all %d" % (sorted(lines), a.np))
    compared = 0
    used = set()
    for r in range(a.np):
        s = lines.get(r)
        if not s:
            continue
        # per peer and channel: messages, bytes
        got = {}
        for c in data["channels"]:
            for q in range(a.np):
                m, b = data["messages"][c][r][q], data["bytes"][c][r][q]
                if m or b:
                    got[(q, c)] = (m, b)
        if got != s["pairs"]:
            fail("rank %d: per peer and channel, the report has %s, the lines %s" % (r, sorted(got.items()),
                                                                                     sorted(s["pairs"].items())))
        compared += len(got)
        used |= {c for (_, c) in got}
        # channel memory
        if s["memory"] is None:
            fail("rank %d printed no channel memory line" % r)
        else:
            tot, parts = s["memory"]
            if data["memory_total"][r] != tot:
                fail("rank %d: channel memory %s in the report, %d in the line" % (r, data["memory_total"][r], tot))
            for c, v in data["memory"].items():
                if (v[r] or 0) != parts.get(c, 0):
                    fail("rank %d: memory of %s %s in the report, %s in the line" % (r, c, v[r], parts.get(c, 0)))
            for c in parts:
                if c not in data["memory"]:
                    fail("rank %d: the line has memory of %s, the report none" % (r, c))
        # channel shares (the line rounds to 0.1 %)
        if s["shares"]:
            n, sh = s["shares"]
            if data["totals"]["messages"][r] != n:
                fail("rank %d: %s messages in the report, %d in the shares line" % (r, data["totals"]["messages"][r], n))
            for c in sh:
                if c not in data["channels"]:
                    fail("rank %d: the line has a share of %s, the report none" % (r, c))
            for c in data["channels"]:
                pm, pb = data["shares_pct"]["messages"][c][r], data["shares_pct"]["bytes"][c][r]
                lm, lb = sh.get(c, (0.0, 0.0))
                if c not in sh and (pm or pb):
                    fail("rank %d: the report has a share of %s, the line none" % (r, c))
                elif abs(pm - lm) > 0.051 or abs(pb - lb) > 0.051:
                    fail("rank %d: %s share %.3f%%/%.3f%% in the report, %.1f%%/%.1f%% in the line" % (
                        r, c, pm, pb, lm, lb))
        # protocols per peer (the lines leave out the peers with nothing)
        for q in range(a.np):
            got = tuple(data["protocols"][k][r][q] for k in ("eager", "hybrid", "send_rndv", "recv_rndv",
                                                               "fin_eliminated"))
            want = s["protocols"].get(q, (0, 0, 0, 0, 0))
            if got != want:
                fail("rank %d: protocols to %d %s in the report, %s in the line" % (r, q, got, want))
        # the reliability engine, routes moved, RC connections
        for key, dkey in (("datagrams", "datagrams"), ("retransmitted", "retransmitted"),
                          ("duplicates_dropped", "duplicates_dropped")):
            want = s.get("engine", {}).get(key, 0)
            if (data["reliability"][dkey][r] or 0) != want:
                fail("rank %d: UD engine %s %s in the report, %s in the line" % (r, key, data["reliability"][dkey][r],
                                                                                want))
        rm = data["routes_moved"]
        if (rm["ud_loss_moves"][r], rm["ud_loss_moved_now"][r]) != s.get("ud_loss", (0, 0)):
            fail("rank %d: lossy-path moves %s in the report, %s in the line" % (
                r, (rm["ud_loss_moves"][r], rm["ud_loss_moved_now"][r]), s.get("ud_loss")))
        if (rm["rc_stall_moves"][r], rm["rc_stall_moved_now"][r]) != s.get("rc_stall", (0, 0)):
            fail("rank %d: stall moves %s in the report, %s in the line" % (
                r, (rm["rc_stall_moves"][r], rm["rc_stall_moved_now"][r]), s.get("rc_stall")))
        rc = data["rc_connections"]
        got = (rc["opened_here"][r], rc["opened_by_peers"][r], rc["up"][r], rc["refused_by_limit"][r])
        if got != s.get("rc", (0, 0, 0, 0)):
            fail("rank %d: RC connections %s in the report, %s in the line" % (r, got, s.get("rc")))
    for c in a.want_channel:
        if c not in used:
            fail("no message went by %s (the run was to use it)" % c)
    print("check_report: %d ranks; %d rank-peer-channel counts, memory, shares, protocols, UD engine, routes moved "
          "and RC connections compared; channels %s" % (len(lines), compared, ", ".join(sorted(used))))
    if a.png:
        check_png(a.png)
    if a.svg:
        with open(a.svg, errors="replace") as f:
            head = f.read(4096)
        if "<svg" not in head or os.path.getsize(a.svg) < 10000:
            fail("%s: not an SVG picture" % a.svg)
    for e in errors:
        print("check_report: FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
