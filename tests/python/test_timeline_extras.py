"""Counters and flows in our .pftrace files checked against Perfetto's own
schema (the official `perfetto_trace_pb2`): the files that
tests/c/test_counters_tl.c and tests/c/test_flows.c leave in their scratch
directory parse with no unknown field, counter samples are TYPE_COUNTER
events with double_counter_value on counter tracks (CounterDescriptor)
parented to a process track, flow points are named TYPE_INSTANT events
with flow_ids / terminating_flow_ids.  Run ctest first (a missing file is
skipped).
"""
import os
from pathlib import Path

import pytest

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                         reason="the perfetto package is not installed")
unknown_fields = pytest.importorskip("google.protobuf.unknown_fields")

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("SPS_BUILD", REPO / "build"))
TMP = Path(os.environ.get("SPS_TEST_TMP", BUILD / "tests" / "c" / "tmp"))
TE = pb.TrackEvent


def packets(name):
    p = TMP / name
    if not p.exists():
        pytest.skip(f"{p} is missing: run ctest first")
    for pkt in pb.Trace.FromString(p.read_bytes()).packet:
        assert len(unknown_fields.UnknownFieldSet(pkt)) == 0
        if pkt.HasField("track_event"):
            assert len(unknown_fields.UnknownFieldSet(pkt.track_event)) == 0
        if pkt.HasField("track_descriptor"):
            assert len(unknown_fields.UnknownFieldSet(pkt.track_descriptor)) == 0
        yield pkt


def test_counters():
    procs, counters, samples = set(), {}, []
    for pkt in packets("counters.pftrace"):
        if pkt.HasField("track_descriptor"):
            td = pkt.track_descriptor
            if td.HasField("process"):
                procs.add(td.uuid)
            if td.HasField("counter"):
                counters[td.uuid] = (td.name, td.parent_uuid)
        if pkt.HasField("track_event") and pkt.track_event.type == TE.TYPE_COUNTER:
            ev = pkt.track_event
            assert ev.HasField("double_counter_value")
            samples.append((counters[ev.track_uuid][0], ev.double_counter_value))
    assert all(parent in procs for _, parent in counters.values())
    assert ("gpu.temp", 70.25) in samples and ("q", -3e-5) in samples
    assert len(samples) == 7


def test_flows():
    names, ids, term = {}, [], []
    for pkt in packets("flows.pftrace"):
        if pkt.HasField("interned_data"):
            names.update({e.iid: e.name for e in pkt.interned_data.event_names})
        if pkt.HasField("track_event") and pkt.track_event.type == TE.TYPE_INSTANT:
            ev = pkt.track_event
            assert names[ev.name_iid]
            ids += list(ev.flow_ids)
            term += list(ev.terminating_flow_ids)
    assert 42 in ids and 42 in term and 99 in ids and 2**64 - 1 in ids
    assert len(ids) + len(term) == 8
