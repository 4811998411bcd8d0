"""kit.results: typed records, their JSON (one codec, versioned), and records files that
survive torn and corrupt lines; release 0.1's lines are converted on read."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kit.errors import RecordsError, UsageError
from kit.plan.tables import TablesSettings
from kit.plan.trial import ClientConfig, Link, Trial
from kit.results.client import ClientResult
from kit.results.codec import from_json, to_json
from kit.results.records import (
    FrameSummary,
    MachineLoad,
    Measurement,
    PingRtt,
    PingRtts,
    ProcessCpu,
    RunMeta,
    RunTags,
    SessionRecord,
    SideFrames,
    StreamWindowPoint,
    WindowStep,
)
from kit.results.store import (
    RECORDS_SCHEMA,
    RecordsRead,
    append_record,
    decode_record,
    encode_record,
    read_records,
)

RELEASE_0_1 = Path(__file__).resolve().parents[1] / "fixtures" / "release-0.1"
TRIAL = Trial(link=Link(2.5, 2.5), client=ClientConfig(window_mode="static", window_bytes=65536))


def _measurement(throughput_bytes: int = 2**20, run_id: str = "r0:a:0") -> Measurement:
    return Measurement(
        trial=TRIAL,
        status="ok",
        result=ClientResult(client="grpcio", bytes=throughput_bytes, elapsed_s=1.0),
        theory_mib_s=12.5,
        cpu=(ProcessCpu("client", 0.4),),
        meta=RunMeta(host="test"),
        tags=RunTags(run_id=run_id),
    )


def _line(m: Measurement) -> str:
    return json.dumps(encode_record(m))


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    first, second = _measurement(run_id="r0:a:0"), _measurement(2 * 2**20, "r0:b:0")
    append_record(path, first)
    append_record(path, second)
    read = read_records(path)
    assert read == RecordsRead(measurements=(first, second))
    assert read.measurements[1].throughput_mib_s == pytest.approx(2.0)


def test_every_line_carries_the_schema_version_and_kind(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    session = SessionRecord("t", 1.0, 1, 1, True, (0.1, None))
    for record in (_measurement(), TablesSettings(), session):
        append_record(path, record)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(d["schema"], d["kind"]) for d in lines] == [
        (RECORDS_SCHEMA, "measurement"),
        (RECORDS_SCHEMA, "tables-plan"),
        (RECORDS_SCHEMA, "tables-session"),
    ]
    read = read_records(path)
    assert read.tables_plans == (TablesSettings(),) and read.sessions == (session,)


def test_a_full_record_round_trips_through_json() -> None:
    m = Measurement(
        trial=TRIAL,
        status="ok",
        result=ClientResult(client="h2", window_trace=((0.5, 65535), (40.0, 131070))),
        frames=FrameSummary(
            client=SideFrames(
                settings={"INITIAL_WINDOW_SIZE": 65535},
                window_growth=(WindowStep(7, 65535), WindowStep(None, 131070)),
            ),
            ping_rtt_ms=PingRtts(PingRtt(3, 2.0, 2.5), PingRtt(3, 4.5, 5.0)),
            server=SideFrames(pings_sent=2, settings_changes=1),
        ),
        meta=RunMeta(machine=MachineLoad(1.5, 1.2, 0.3, 2.0)),
        tags=RunTags(campaign="c", run_id="r0:k:1", round=0, key="k", copy=1, control=True),
    )
    assert decode_record(json.loads(json.dumps(encode_record(m)))) == m


def test_decoding_names_the_bad_field() -> None:
    data = to_json(TRIAL)
    data["link"]["delay_up_ms"] = "soon"
    with pytest.raises(UsageError, match=r"trial\.link\.delay_up_ms: 'soon' is not a finite"):
        from_json(Trial, data, "trial")
    data = to_json(TRIAL) | {"colour": "blue"}
    with pytest.raises(UsageError, match="unknown field"):
        from_json(Trial, data, "trial")
    with pytest.raises(UsageError, match="is outside"):  # the config's own validation runs
        from_json(Trial, to_json(TRIAL) | {"link": {"delay_up_ms": -1.0}}, "trial")


def test_release_0_1_lines_are_converted_on_read() -> None:
    """Release 0.1 wrote bare measurements (no schema), derived throughput in the result,
    dict-shaped frame summaries, bare window-growth lists: all of it still loads."""
    runs = read_records(RELEASE_0_1 / "runs.jsonl")
    assert not runs.warnings and len(runs.measurements) == 5
    h2 = runs.measurements[0]
    assert h2.trial.client.kind == "h2" and h2.trial.client.window_bytes == 256 * 1024
    assert h2.frames is not None and h2.frames.client.settings["INITIAL_WINDOW_SIZE"] == 262144
    assert h2.frames.ping_rtt_ms.client.median_ms is not None
    assert h2.meta.machine is not None and h2.tags.command == "run"
    grpcio = runs.measurements[1]
    assert grpcio.frames is not None
    assert [s.window_bytes for s in grpcio.frames.client.window_growth][:2] == [4 << 20, 8 << 20]
    assert all(s.t_ns is None for s in grpcio.frames.client.window_growth)
    failed = runs.measurements[-1]
    assert (
        failed.status == "failed" and failed.result is None and "RESOURCE_EXHAUSTED" in failed.error
    )
    tables = read_records(RELEASE_0_1 / "tables.jsonl")
    ran = ("windows", "wire", "starvation", "unary")  # 0.1 had no uploads table
    assert tables.tables_plans == (TablesSettings(quick=True, rounds=1, seed=1, only=ran),)
    assert len(tables.sessions) == 1 and tables.sessions[0].complete


TABLES_QUICK = RELEASE_0_1.parent / "tables-quick"
# Schema 2's twin fields of the frame summary and where schema 3 keeps each.
SCHEMA_2_SIDES = {
    "client_settings": ("client", "settings"),
    "client_settings_changes": ("client", "settings_changes"),
    "conn_window_updates": ("client", "conn_window_updates"),
    "stream_window_updates": ("client", "stream_window_updates"),
    "pings_sent": ("client", "pings_sent"),
    "window_growth": ("client", "window_growth"),
    "server_settings": ("server", "settings"),
    "server_settings_changes": ("server", "settings_changes"),
    "server_conn_window_updates": ("server", "conn_window_updates"),
    "server_stream_window_updates": ("server", "stream_window_updates"),
    "server_pings_sent": ("server", "pings_sent"),
    "server_window_growth": ("server", "window_growth"),
}


# Fields of the frame summary added after schema 2, with the default an older record reads as.
NEWER_THAN_SCHEMA_2: dict[str, object] = {
    "conn_window_start_bytes": None,
    "opened_ns": 0,
    "goaways": [],
    "resets": [],
}


def test_schema_2_frame_summaries_read_as_one_record_per_endpoint() -> None:
    """Every field of a stored schema-2 summary lands where schema 3 keeps it, unchanged."""
    path = TABLES_QUICK / "uploads.jsonl"
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    stored = [line["frames"] for line in raw if line["kind"] == "measurement"]
    read = read_records(path)
    assert not read.warnings and len(read.measurements) == len(stored) > 0
    assert {line["schema"] for line in raw} == {2}
    for m, old in zip(read.measurements, stored, strict=True):
        assert m.frames is not None
        for name, (side, field) in SCHEMA_2_SIDES.items():
            assert to_json(getattr(getattr(m.frames, side), field)) == old[name], name
        rest = {k: v for k, v in to_json(m.frames).items() if k not in ("client", "server")}
        newer = {k: rest.pop(k) for k in NEWER_THAN_SCHEMA_2}
        assert rest == {k: v for k, v in old.items() if k not in SCHEMA_2_SIDES}
        assert newer == NEWER_THAN_SCHEMA_2  # fields added later read as their defaults
    assert any(m.frames and m.frames.server.settings for m in read.measurements)


def test_schema_4_writes_each_endpoint_as_one_object_and_reads_it_back() -> None:
    sides = FrameSummary(client=SideFrames(pings_sent=3), server=SideFrames(pings_sent=1))
    m = replace(_measurement(), frames=sides)
    line = encode_record(m)
    assert line["schema"] == RECORDS_SCHEMA == 4
    assert line["frames"]["client"]["pings_sent"] == 3 and "pings_sent" not in line["frames"]
    assert line["frames"]["server"]["pings_sent"] == 1 and "server_pings_sent" not in line["frames"]
    assert decode_record(json.loads(json.dumps(line))) == m


def test_a_schema_2_summary_with_a_schema_3_field_is_refused() -> None:
    """Schema 2 had no ``client`` object: one there is a bad line, not today's field."""
    line = encode_record(_measurement()) | {"schema": 2}
    line["frames"] = {"client": {"pings_sent": 3}, "pings_sent": 1}
    with pytest.raises(UsageError, match=r"measurement\.frames: unknown field\(s\) client"):
        decode_record(line)
    line["frames"] = {"pings_sent": 1, "server_pings_sent": 2}
    converted = decode_record(line)
    assert isinstance(converted, Measurement) and converted.frames is not None
    assert (converted.frames.client.pings_sent, converted.frames.server.pings_sent) == (1, 2)


def test_a_file_a_later_release_appended_to_reads_whole(tmp_path: Path) -> None:
    """A run resumed by this release appends schema-3 lines to its schema-2 file."""
    path = tmp_path / "sharing.jsonl"
    path.write_bytes((TABLES_QUICK / "sharing.jsonl").read_bytes())
    before = read_records(path)
    append_record(path, _measurement())
    after = read_records(path)
    assert after.measurements == (*before.measurements, _measurement())
    assert after.tables_plans == before.tables_plans and not after.warnings


def test_legacy_machine_load_in_tags_moves_to_meta() -> None:
    old = {
        "trial": to_json(TRIAL),
        "status": "ok",
        "result": {"client": "h2", "bytes": 1, "elapsed_s": 1.0, "throughput_mib_s": 1e-6},
        "tags": {
            "campaign": "c",
            "machine": {"busy_cores": 1.0, "path_cores": 0.5, "other_cores": 0.5, "cpus": 2.0},
        },
    }
    m = decode_record(old)
    assert isinstance(m, Measurement)
    assert m.meta.machine == MachineLoad(1.0, 0.5, 0.5, 2.0) and m.tags.campaign == "c"


def test_creates_parent_directories(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "runs.jsonl"
    append_record(path, _measurement())
    assert len(read_records(path).measurements) == 1


def test_one_record_per_line_even_with_newlines_in_strings(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    failed = Measurement(trial=TRIAL, status="failed", error="timeout\nafter 60 s")
    append_record(path, failed)
    assert path.read_bytes().count(b"\n") == 1
    assert read_records(path).measurements == (failed,)


def test_unknown_kinds_and_schemas_are_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(
        '{"kind": "header", "seed": 7}\n'
        '{"schema": 9, "kind": "measurement"}\n'
        f"{_line(_measurement())}\n"
    )
    read = read_records(path)
    assert len(read.measurements) == 1
    assert [w.split(":")[0] for w in read.warnings] == ["line 1", "line 2"]
    assert "unknown record kind" in read.warnings[0] and "schema 9" in read.warnings[1]


def test_torn_last_line_is_skipped_with_warning(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    append_record(path, _measurement())
    line = _line(_measurement())
    with path.open("ab") as f:
        f.write(line[: len(line) // 2].encode())  # power cut mid-write
    read = read_records(path)
    assert len(read.measurements) == 1
    assert len(read.warnings) == 1
    assert read.warnings[0].startswith("line 2: torn last line")


def test_append_after_torn_line_starts_a_fresh_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    append_record(path, _measurement(run_id="r0:a:0"))
    with path.open("ab") as f:
        f.write(b'{"trial": {"lab')
    append_record(path, _measurement(run_id="r0:b:0"))
    read = read_records(path)
    assert [m.tags.run_id for m in read.measurements] == ["r0:a:0", "r0:b:0"]
    assert len(read.warnings) == 1
    assert read.warnings[0].startswith("line 2: not valid JSON")


def test_corrupt_middle_lines_are_named(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    good = _line(_measurement())
    bad_record = json.dumps({"trial": 3, "status": "ok"})
    path.write_bytes(
        b"\n".join([good.encode(), b"\xff\xfe", b"[1, 2]", bad_record.encode(), b"", good.encode()])
        + b"\n"
    )
    read = read_records(path)
    assert len(read.measurements) == 2
    assert [w.split(":")[0] for w in read.warnings] == ["line 2", "line 3", "line 4"]
    assert "not UTF-8" in read.warnings[0]
    assert "JSON object, not list" in read.warnings[1]


def test_record_whose_result_reports_cannot_read_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    bad = {
        "trial": to_json(TRIAL),
        "status": "ok",
        "result": {"client": "x", "bytes": "many", "elapsed_s": 1},
    }
    path.write_text(json.dumps(bad) + "\n")
    read = read_records(path)
    assert read.measurements == ()
    assert read.warnings[0].startswith("line 1: not a valid record")
    assert "result.bytes" in read.warnings[0]


def test_missing_file_is_a_records_error(tmp_path: Path) -> None:
    with pytest.raises(RecordsError, match="records file not found"):
        read_records(tmp_path / "nope.jsonl")


def test_directory_is_a_records_error(tmp_path: Path) -> None:
    with pytest.raises(RecordsError, match="directory"):
        read_records(tmp_path)


def test_unwritable_path_is_a_records_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RecordsError, match="cannot append"):
        append_record(blocker / "runs.jsonl", _measurement())


def _read_or_records_error(path: Path) -> RecordsRead | None:
    try:
        return read_records(path)
    except RecordsError:
        return None


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=2000))
def test_reader_never_raises_on_random_bytes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.jsonl"
        path.write_bytes(data)
        _read_or_records_error(path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
record_like = st.fixed_dictionaries(
    {"trial": json_values, "status": json_values},
    optional={
        "schema": st.sampled_from([1, 2, 3]),
        "kind": st.sampled_from(["measurement", "tables-plan", "x"]),
        "result": json_values,
        "cpu": json_values,
        "theory_mib_s": json_values,
        "frames": json_values,
        "meta": json_values,
        "tags": json_values,
        "error": json_values,
    },
)


@settings(max_examples=100)
@given(lines=st.lists(record_like | json_values, max_size=6), tail=st.binary(max_size=40))
def test_reader_never_raises_on_record_shaped_lines(lines: list[object], tail: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.jsonl"
        body = "".join(json.dumps(line) + "\n" for line in lines).encode() + tail
        path.write_bytes(body)
        read = _read_or_records_error(path)
        assert read is not None
        for m in read.measurements:
            assert decode_record(json.loads(_line(m))) == m  # what was accepted is usable


def test_a_non_finite_number_is_refused_when_written(tmp_path: Path) -> None:
    """JSON has no NaN: writing one would make a line no reader accepts."""
    with pytest.raises(RecordsError, match="JSON"):
        append_record(
            tmp_path / "runs.jsonl",
            Measurement(trial=TRIAL, status="ok", theory_mib_s=float("nan")),
        )


def test_a_write_that_fails_part_way_leaves_no_torn_line(tmp_path: Path) -> None:
    """A disk that fills mid-line (here: RLIMIT_FSIZE, in a child) cuts the line back off."""
    import subprocess
    import sys

    path = tmp_path / "runs.jsonl"
    path.write_bytes(b'{"kept": 1}\n')
    child = (
        "import resource, signal, sys\n"
        "from kit.plan.trial import Trial\n"
        "from kit.results.records import Measurement\n"
        "from kit.results.store import append_record\n"
        "from kit.errors import RecordsError\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))\n"
        "try:\n"
        "    append_record(sys.argv[1], Measurement(trial=Trial(), status='failed', error='x'))\n"
        "except RecordsError as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", child, str(path)], capture_output=True, text=True, timeout=60
    )
    assert "cannot append to records file" in proc.stdout, proc.stderr
    assert path.read_bytes() == b'{"kept": 1}\n'


def test_a_line_longer_than_the_limit_is_skipped_without_being_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kit.results import store

    good = json.dumps(store.encode_record(Measurement(trial=Trial(), status="failed", error="x")))
    monkeypatch.setattr(store, "MAX_LINE_BYTES", 2000)
    monkeypatch.setattr(store, "_CHUNK_BYTES", 100)
    assert len(good) < 2000
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join([good, "x" * 5000, good]) + "\n")
    read = store.read_records(path)
    assert len(read.measurements) == 2
    assert read.warnings == ("line 2: longer than 1.95 KiB, skipped",)


def test_schema_4_keeps_the_stream_window_samples_as_columns_and_reads_schema_3() -> None:
    """The samples that made an h2 run's line ~100 KB are stored as one list per field,
    times as steps; a schema-3 line (one object per sample) reads as the same record."""
    points = tuple(
        StreamWindowPoint(10**13 + 5_000_000 * i, 1 + 2 * (i % 3), 65_535 * i) for i in range(300)
    )
    m = replace(_measurement(), frames=FrameSummary(stream_windows=points))
    line = encode_record(m)
    columns = line["frames"]["stream_windows"]
    assert columns["t_ns"][:3] == [10**13, 5_000_000, 5_000_000]
    assert columns["stream_id"][:4] == [1, 3, 5, 1]
    assert decode_record(json.loads(json.dumps(line))) == m
    as_rows = [
        {"t_ns": p.t_ns, "stream_id": p.stream_id, "window_bytes": p.window_bytes} for p in points
    ]
    schema_3 = line | {"schema": 3, "frames": line["frames"] | {"stream_windows": as_rows}}
    assert decode_record(schema_3) == m
    assert len(json.dumps(line)) < 0.5 * len(json.dumps(schema_3))
    broken = line | {"frames": line["frames"] | {"stream_windows": columns | {"stream_id": [1]}}}
    with pytest.raises(UsageError, match="stream_windows: lists of one length"):
        decode_record(broken)
