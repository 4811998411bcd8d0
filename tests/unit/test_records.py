"""kit.records: JSON-lines append and a reader that survives torn and corrupt lines."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kit.errors import RecordsError
from kit.measure import Measurement, ProcessCpu
from kit.records import RecordsRead, append_record, read_records


def _measurement(throughput_bytes: int = 2**20, run_id: str = "r0:a:0") -> Measurement:
    return Measurement(
        trial={"label": "static 64KiB", "link": {"delay_up_ms": 2.5, "delay_down_ms": 2.5}},
        status="ok",
        result={"client": "grpcio", "bytes": throughput_bytes, "elapsed_s": 1.0},
        theory_mib_s=12.5,
        cpu=(ProcessCpu("client", 0.4),),
        meta={"host": "test"},
        tags={"run_id": run_id},
    )


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    first, second = _measurement(run_id="r0:a:0"), _measurement(2 * 2**20, "r0:b:0")
    append_record(path, first)
    append_record(path, second)
    read = read_records(path)
    assert read == RecordsRead(measurements=(first, second))
    assert read.measurements[1].throughput_mib_s == pytest.approx(2.0)


def test_creates_parent_directories(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "runs.jsonl"
    append_record(path, _measurement())
    assert len(read_records(path).measurements) == 1


def test_one_record_per_line_even_with_newlines_in_strings(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    failed = Measurement(trial={}, status="failed", error="timeout\nafter 60 s")
    append_record(path, failed)
    assert path.read_bytes().count(b"\n") == 1
    assert read_records(path).measurements == (failed,)


def test_dict_lines_are_kept_apart(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    append_record(path, {"kind": "header", "seed": 7})
    append_record(path, _measurement())
    read = read_records(path)
    assert read.others == ({"kind": "header", "seed": 7},)
    assert len(read.measurements) == 1
    assert read.warnings == ()


def test_torn_last_line_is_skipped_with_warning(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    append_record(path, _measurement())
    line = json.dumps(_measurement().to_dict())
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
    assert [m.tags["run_id"] for m in read.measurements] == ["r0:a:0", "r0:b:0"]
    assert len(read.warnings) == 1
    assert read.warnings[0].startswith("line 2: not valid JSON")


def test_corrupt_middle_lines_are_named(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    good = json.dumps(_measurement().to_dict())
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
    bad = {"trial": {}, "status": "ok", "result": {"client": "x", "bytes": "many", "elapsed_s": 1}}
    path.write_text(json.dumps(bad) + "\n")
    read = read_records(path)
    assert read.measurements == ()
    assert read.warnings[0].startswith("line 1: not a valid record")


def test_missing_file_is_a_records_error(tmp_path: Path) -> None:
    with pytest.raises(RecordsError, match="records file not found"):
        read_records(tmp_path / "nope.jsonl")


def test_directory_is_a_records_error(tmp_path: Path) -> None:
    with pytest.raises(RecordsError, match="directory"):
        read_records(tmp_path)


def test_unserialisable_record_is_a_records_error(tmp_path: Path) -> None:
    with pytest.raises(RecordsError, match="JSON"):
        append_record(tmp_path / "runs.jsonl", {"when": object()})


def test_unwritable_path_is_a_records_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RecordsError, match="cannot append"):
        append_record(blocker / "runs.jsonl", {"a": 1})


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
        "result": json_values,
        "cpu": json_values,
        "theory_mib_s": json_values,
        "frames": json_values,
        "meta": json_values,
        "tags": json_values,
        "error": json_values,
    },
)


@settings(max_examples=300)
@given(lines=st.lists(record_like | json_values, max_size=6), tail=st.binary(max_size=40))
def test_reader_never_raises_on_record_shaped_lines(lines: list[object], tail: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.jsonl"
        body = "".join(json.dumps(line) + "\n" for line in lines).encode() + tail
        path.write_bytes(body)
        read = _read_or_records_error(path)
        assert read is not None
        for m in read.measurements:
            m.to_dict()  # what was accepted is a usable record
