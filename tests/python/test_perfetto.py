"""Decodes the Perfetto traces that tests/c/test_perfetto.c leaves in its
scratch directory with a small protobuf wire-format decoder written here
(independent of the C reader), and checks their structure: packets, one
sequence, clock snapshot and defaults, interned names, track descriptors,
begin/end pairs and timestamps.

Run ctest first (the C test writes the files into $SPS_BUILD/tests/c/tmp);
a missing file is skipped with the reason.
"""
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("SPS_BUILD", REPO / "build"))
TMP = Path(os.environ.get("SPS_TEST_TMP", BUILD / "tests" / "c" / "tmp"))


def path_of(name):
    p = TMP / name
    if not p.exists():
        pytest.skip(f"{p} is missing: run ctest first (test_perfetto writes it)")
    return p


# --- wire format ------------------------------------------------------------

def varint(buf, i):
    """Returns (value, next index); raises on truncation or > 10 bytes."""
    v = 0
    for k in range(10):
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << (7 * k)
        if not b & 0x80:
            return v, i
    raise ValueError("varint longer than 10 bytes")


def fields(buf):
    """Yields (field number, wire type, value) over one message; value is an
    int for varint/fixed fields and bytes for length-delimited ones."""
    i = 0
    while i < len(buf):
        tag, i = varint(buf, i)
        num, wt = tag >> 3, tag & 7
        assert num > 0
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            v = int.from_bytes(buf[i:i + 8], "little"); i += 8
        elif wt == 5:
            v = int.from_bytes(buf[i:i + 4], "little"); i += 4
        elif wt == 2:
            n, i = varint(buf, i)
            assert i + n <= len(buf), "length beyond the buffer"
            v = bytes(buf[i:i + n]); i += n
        else:
            raise ValueError(f"wire type {wt}")
        yield num, wt, v
    assert i == len(buf)


def msg(buf):
    """A dict field -> list of values."""
    d = {}
    for num, _, v in fields(buf):
        d.setdefault(num, []).append(v)
    return d


def one(d, k, default=None):
    v = d.get(k)
    return v[-1] if v else default


def varint_bytes(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def s32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


# --- trace decoding ---------------------------------------------------------

def decode(path):
    data = path.read_bytes()
    packets = []
    for num, wt, v in fields(data):
        assert (num, wt) == (1, 2), "a Trace holds only packet = 1 fields"
        packets.append(msg(v))
    return data, packets


def analyse(packets):
    """Returns a dict with names, processes, threads, spans (as tuples
    (thread uuid, name, start, end)) and per-sequence facts."""
    first = packets[0]
    assert one(first, 13, 0) & 1, "first packet clears incremental state"
    seqs = {one(p, 10) for p in packets}
    assert seqs == {1}, f"one trusted_packet_sequence_id, got {seqs}"

    defaults = msg(one(first, 59))
    assert one(defaults, 58) == 64, "default clock is sequence clock 64"
    def_track = one(msg(one(defaults, 11)), 11)
    snap = msg(one(first, 6))
    clocks = {}
    for c in snap[1]:
        c = msg(c)
        clocks[one(c, 1)] = c
    assert 64 in clocks and 3 in clocks
    assert one(clocks[64], 3) == 1, "clock 64 is incremental"
    assert one(clocks[64], 4) == 1, "unit 1 ns"
    assert one(snap, 2) == 3, "primary trace clock MONOTONIC"
    mono_ref = one(clocks[3], 2)
    clk = one(clocks[64], 2)
    clk_ref = clk

    names, procs, threads, uuids = {}, {}, {}, set()
    stacks, spans, last = {}, [], {}
    for p in packets:
        if 12 in p:
            for en in msg(one(p, 12)).get(2, []):
                en = msg(en)
                iid = one(en, 1)
                assert iid and iid not in names
                names[iid] = one(en, 2, b"").decode("utf-8")
        if 60 in p:
            td = msg(one(p, 60))
            u = one(td, 1)
            assert u and u not in uuids, "track uuids unique"
            uuids.add(u)
            if 3 in td:
                pd = msg(one(td, 3))
                procs[u] = (s32(one(pd, 1)), one(pd, 6, b"").decode())
            if 4 in td:
                th = msg(one(td, 4))
                threads[u] = (one(td, 5), s32(one(th, 1)), s32(one(th, 2)),
                              one(th, 5, b"").decode())
        if 11 in p:
            ev = msg(one(p, 11))
            assert 8 in p, "events carry a timestamp"
            if one(p, 58) is None:  # clock 64, a delta
                clk += one(p, 8)
                t = clk - clk_ref + mono_ref
            else:
                assert one(p, 58) == 3
                t = one(p, 8)
            track = one(ev, 11, def_track)
            assert t >= last.get(track, t), "monotonic per track"
            last[track] = t
            typ = one(ev, 9)
            if typ == 1:
                stacks.setdefault(track, []).append((names[one(ev, 10)], t))
            else:
                assert typ == 2 and 10 not in ev
                nm, st = stacks[track].pop()
                spans.append((track, nm, st, t))
    assert all(not s for s in stacks.values()), "every begin has an end"
    for u, (parent, pid, _, _) in threads.items():
        assert parent in procs and procs[parent][0] == pid
    return dict(names=names, procs=procs, threads=threads, spans=spans,
                base=mono_ref, def_track=def_track)


def read_expected(path):
    exp = dict(names=[], procs=[], threads=[], spans=[])
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line:
            continue
        kind, _, rest = line.partition(" ")
        if kind == "base":
            exp["base"] = int(rest)
        elif kind == "name":
            exp["names"].append(rest)
        elif kind == "proc":
            pid, _, name = rest.partition(" ")
            exp["procs"].append((int(pid), name))
        elif kind == "thread":
            pid, tid, name = (rest.split(" ", 2) + [""])[:3]
            exp["threads"].append((int(pid), int(tid), name))
        elif kind == "span":
            th, nm, st, en = map(int, rest.split())
            exp["spans"].append((th, nm, st, en))
    return exp


def test_roundtrip_structure():
    p = path_of("perfetto_rt.pftrace")
    exp = read_expected(path_of("perfetto_rt.pftrace.expected.txt"))
    _, packets = decode(p)
    got = analyse(packets)
    assert got["base"] == exp["base"]
    assert [got["names"][i + 1] for i in range(len(exp["names"]))] == exp["names"]
    assert len(got["names"]) == len(exp["names"])
    assert sorted(got["procs"].values()) == sorted(exp["procs"])
    thread_uuid = {}
    for u, (_, pid, tid, name) in got["threads"].items():
        thread_uuid[(pid, tid)] = u
        assert (pid, tid, name) in exp["threads"]
    assert len(got["threads"]) == len(exp["threads"])
    want = sorted(
        (thread_uuid[exp["threads"][th][:2]], exp["names"][nm], st, en)
        for th, nm, st, en in exp["spans"])
    assert sorted(got["spans"]) == want


def test_loop_size():
    p = path_of("perfetto_loop.pftrace")
    data, packets = decode(p)
    got = analyse(packets)
    spans = got["spans"]
    assert len(spans) == 100000
    events = [pk for pk in packets if 11 in pk]
    assert len(events) == 2 * len(spans)
    ev_bytes = 0  # Trace.packet tag + length + TracePacket, per event
    for num, _, v in fields(data):
        if 11 in msg(v):
            ev_bytes += 1 + len(varint_bytes(len(v))) + len(v)
    assert ev_bytes / len(spans) <= 24
    # on the default track: no explicit track_uuid
    assert all(11 not in msg(one(pk, 11)) for pk in events)
    for i, (_, nm, st, en) in enumerate(sorted(spans, key=lambda s: s[2])):
        assert nm == "step" and en - st == 600
