"""Our .pftrace files checked against Perfetto's own schema: the official
`perfetto_trace_pb2` (PyPI package `perfetto`, generated from perfetto's
protos) parses them, no field is unknown to it, and interpreting the trace
the way trace processor does (sequence defaults, interned names, the
incremental clock of the ClockSnapshot, track descriptors) gives back
exactly the spans we wrote.

trace processor itself (a native binary the `perfetto` package downloads
at run time) cannot be fetched on these machines; this is the closest
offline check.
"""
import pytest

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                         reason="the perfetto package is not installed")
unknown_fields = pytest.importorskip("google.protobuf.unknown_fields")

from spanscope import profiler  # noqa: E402
from spanscope.profiler import record_function  # noqa: E402

TE = pb.TrackEvent


def no_unknown_fields(msg, path="packet"):
    """Raises if msg or any sub-message holds a field the schema lacks."""
    assert len(unknown_fields.UnknownFieldSet(msg)) == 0, f"unknown field in {path}"
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        items = [value] if hasattr(value, "ListFields") else list(value)
        for v in items:
            if hasattr(v, "ListFields"):
                no_unknown_fields(v, f"{path}.{fd.name}")


def interpret(data: bytes):
    """Spans (name, pid, tid, start_ns, end_ns) as trace processor reads
    them, plus the thread and process names."""
    trace = pb.Trace.FromString(data)
    defaults = {}
    names = {}
    tracks = {}
    clocks = {}   # incremental clock id -> current absolute ns
    incr = set()
    stacks = {}
    spans = []
    procs = {}
    counter_tracks = {}
    counters = []
    for pkt in trace.packet:
        no_unknown_fields(pkt)
        seq = pkt.trusted_packet_sequence_id
        if pkt.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            names.clear()
        if pkt.HasField("trace_packet_defaults"):
            defaults[seq] = pkt.trace_packet_defaults
        if pkt.HasField("clock_snapshot"):
            for c in pkt.clock_snapshot.clocks:
                if c.is_incremental:
                    incr.add(c.clock_id)
                clocks[c.clock_id] = c.timestamp
            mono = [c.timestamp for c in pkt.clock_snapshot.clocks if c.clock_id == 3]
            assert mono, "ClockSnapshot without BUILTIN_CLOCK_MONOTONIC"
            base = {c.clock_id: c.timestamp for c in pkt.clock_snapshot.clocks}
        if pkt.HasField("interned_data"):
            for en in pkt.interned_data.event_names:
                names[en.iid] = en.name
        if pkt.HasField("track_descriptor"):
            td = pkt.track_descriptor
            if td.HasField("thread"):
                tracks[td.uuid] = (td.thread.pid, td.thread.tid, td.thread.thread_name)
            elif td.HasField("process"):
                procs[td.process.pid] = td.process.process_name
            elif td.HasField("counter"):
                counter_tracks[td.uuid] = td.name
        if pkt.HasField("track_event"):
            d = defaults.get(seq)
            clock_id = pkt.timestamp_clock_id or (d.timestamp_clock_id if d else 0)
            assert clock_id in incr, "event on a clock that is not incremental"
            clocks[clock_id] += pkt.timestamp  # a delta on the incremental clock
            # the clock snapshot ties the incremental clock to MONOTONIC
            t = clocks[clock_id] - base[clock_id] + base[3]
            ev = pkt.track_event
            uuid = ev.track_uuid if ev.HasField("track_uuid") else \
                d.track_event_defaults.track_uuid
            if ev.type == TE.TYPE_COUNTER:
                assert uuid in counter_tracks, "counter event on a non-counter track"
                counters.append((counter_tracks[uuid], t, ev.double_counter_value))
                continue
            assert uuid in tracks, "event on an undeclared track"
            if ev.type == TE.TYPE_INSTANT:
                continue  # flow points (tests/python/test_timeline_extras.py)
            if ev.type == TE.TYPE_SLICE_BEGIN:
                name = names[ev.name_iid] if ev.HasField("name_iid") else ev.name
                stacks.setdefault(uuid, []).append((name, t))
            else:
                assert ev.type == TE.TYPE_SLICE_END
                name, start = stacks[uuid].pop()
                pid, tid, _ = tracks[uuid]
                spans.append((name, pid, tid, start, t))
    assert all(not s for s in stacks.values()), "slices left open"
    interpret.counters = counters
    return sorted(spans, key=lambda s: (s[3], -s[4])), tracks, procs


def test_profile_pftrace_matches_the_official_schema(tmp_path):
    import threading
    go = threading.Event()

    def worker():
        go.wait()
        for _ in range(3):
            with record_function("w"):
                pass

    t = threading.Thread(target=worker, name="worker")
    t.start()
    import spanscope
    with profiler.profile() as p:
        go.set()
        for i in range(50):
            with record_function("outer"):
                with record_function("inner"):
                    pass
            spanscope.counter("progress", i / 2)
        t.join()
    path = tmp_path / "t.pftrace"
    p.export_chrome_trace(str(path))
    spans, tracks, procs = interpret(path.read_bytes())
    want = sorted(((e.name, e.thread, e.start_ns, e.end_ns) for e in p.events()),
                  key=lambda s: (s[2], -s[3]))
    got = [(n, tid, s, e) for n, _, tid, s, e in spans]
    assert got == want  # every span, ns-exact, on its thread
    want_c = p.counters()["progress"]
    assert [(n, t, v) for n, t, v in interpret.counters] == \
        [("progress", int(t), float(v)) for t, v in zip(want_c["times_ns"], want_c["values"])]
    assert {name for _, _, name in tracks.values()} >= {"worker"}
    assert list(procs.values()) == ["spanscope"]


def test_merged_pftrace_has_a_process_per_rank(tmp_path):
    paths = []
    for rank in range(2):
        with profiler.profile() as p:
            with record_function(f"r{rank}"):
                pass
        path = tmp_path / f"r{rank}.json"
        p.export_chrome_trace(str(path))
        paths.append(path)
    out = tmp_path / "m.pftrace"
    profiler.merge_distributed_traces(paths, out)
    spans, tracks, procs = interpret(out.read_bytes())
    assert sorted(procs.values()) == ["rank 0", "rank 1"]
    assert sorted((n, pid) for n, pid, *_ in spans) == [("r0", 0), ("r1", 1)]
