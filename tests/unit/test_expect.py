"""``kit check``'s expectations (``kit.analysis.expect``): parsed once, at the edge, into
typed records; judged on the median of the rows they keep; every mistake a one-line
``UsageError`` naming the expression."""

from __future__ import annotations

import statistics

import pytest

from kit.analysis.expect import (
    OPERATORS,
    Condition,
    Expectation,
    judge,
    number_text,
    parse_expectation,
)
from kit.analysis.flat import Row
from kit.errors import UsageError
from kit.report.expect import failed_line, judgement_json, judgement_line


@pytest.mark.parametrize("op", list(OPERATORS))
def test_each_operator_parses_with_or_without_spaces(op: str) -> None:
    for text in (f"efficiency{op}0.9", f"  efficiency {op} 0.9 "):
        e = parse_expectation(text)
        assert (e.column, e.op, e.threshold, e.where) == ("efficiency", op, 0.9, ())
        assert e.text == f"efficiency{op}0.9"


def test_where_keeps_rows_whose_columns_equal_every_value() -> None:
    e = parse_expectation("throughput_mib_s>=100 where client=grpc-go, rtt_ms=20")
    assert e.where == (Condition("client", "grpc-go", "str"), Condition("rtt_ms", "20", "float"))
    assert e.text == "throughput_mib_s>=100 where client=grpc-go,rtt_ms=20"
    assert e.keeps({"client": "grpc-go", "rtt_ms": 20.0})
    assert not e.keeps({"client": "grpc-go", "rtt_ms": 5.0})
    assert not e.keeps({"client": "h2", "rtt_ms": 20.0})


def test_a_value_may_hold_commas_and_equals_signs() -> None:
    """A candidate's spec is a cell key: a comma splits only before a known column."""
    e = parse_expectation(
        "throughput_mib_s>1 where tags_key=h2:window=4MiB,conn-window=16MiB,credit=half,client=h2"
    )
    assert [c.text for c in e.where] == [
        "tags_key=h2:window=4MiB,conn-window=16MiB,credit=half",
        "client=h2",
    ]


def test_booleans_and_nulls_match_as_typed() -> None:
    e = parse_expectation("throughput_mib_s>0 where tags_control=true,window_bytes=null")
    assert e.keeps({"tags_control": True, "window_bytes": None})
    assert not e.keeps({"tags_control": False, "window_bytes": None})
    assert not e.keeps({"tags_control": True, "window_bytes": 65536})


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("efficency>=0.9", "the flat row has no column 'efficency' (closest: efficiency)"),
        ("efficiency=>0.9", "not an expectation; write COLUMN OP NUMBER"),
        ("efficiency>=0.9x", "'0.9x' is not a number"),
        ("efficiency>=nan", "'nan' is not a number"),
        ("client>=1", "client is text, not a number: filter on it with where client=VALUE"),
        ("tags_control>=1", "tags_control is true or false, not a number"),
        ("stream_throughput_mib_s>=1", "is a list or an object, not a number"),
        ("link_rtt_ms>=20", "link_rtt_ms repeats rtt_ms: use rtt_ms"),
        ("efficiency>=0.9 where clinet=h2", "no column 'clinet' (closest: client)"),
        ("efficiency>=0.9 where client", "where 'client' is not COL=VALUE"),
        ("efficiency>=0.9 where rtt_ms=20ms", "where rtt_ms=20ms: rtt_ms is a number"),
        ("efficiency>=0.9 where tags_control=yes", "tags_control is true or false"),
        ("efficiency>=0.9 where interval_mib_s=1", "holds a list or an object"),
        ("", "not an expectation"),
    ],
)
def test_every_mistake_is_one_line_naming_the_expression(text: str, said: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_expectation(text)
    message = str(raised.value)
    assert message.startswith(f"--expect {text!r}: ") and said in message
    assert "\n" not in message


def _rows() -> list[Row]:
    return [
        {"client": "h2", "rtt_ms": 20.0, "throughput_mib_s": 10.0, "efficiency": 0.9},
        {"client": "h2", "rtt_ms": 20.0, "throughput_mib_s": 30.0, "efficiency": 0.95},
        {"client": "h2", "rtt_ms": 20.0, "throughput_mib_s": None, "efficiency": None},
        {"client": "grpcio", "rtt_ms": 20.0, "throughput_mib_s": 100.0, "efficiency": 1.2},
    ]


def test_judged_on_the_median_of_the_kept_rows_with_a_value() -> None:
    h2, everyone = (
        parse_expectation("throughput_mib_s>=15 where client=h2"),
        parse_expectation("efficiency<1"),
    )
    first, second = judge([h2, everyone], iter(_rows()))
    assert (first.median, first.rows, first.values, first.holds) == (20.0, 3, 2, True)
    assert second.median == statistics.median([0.9, 0.95, 1.2]) and second.holds
    assert judgement_line(first) == (
        "✓ holds  throughput_mib_s>=15 where client=h2: median 20 of 2 row(s); "
        "1 of 3 without a value, left out"
    )


def test_an_expectation_that_keeps_nothing_does_not_hold() -> None:
    nothing = parse_expectation("throughput_mib_s>=1 where client=grpc-go")
    no_value = parse_expectation("latency_p99_ms<=5")
    first, second = judge([nothing, no_value], _rows())
    assert not first.holds and first.rows == 0 and first.median is None
    assert judgement_line(first) == (
        "✗ fails  throughput_mib_s>=1 where client=grpc-go: no row matches (client is h2, grpcio)"
    )
    assert not second.holds and second.rows == 4
    assert "no value of latency_p99_ms in the 4 matching row(s)" in judgement_line(second)
    assert failed_line([first, second]) == (
        "2 of 2 expectation(s) failed: throughput_mib_s>=1 where client=grpc-go; latency_p99_ms<=5"
    )


def test_the_threshold_prints_as_it_reads_back() -> None:
    for value in (100.0, 0.9, 1234567.0, 0.1 + 0.2):
        assert float(number_text(value)) == value
    assert Expectation("efficiency", ">=", 0.9).text == "efficiency>=0.9"


def test_the_json_entry_names_everything_the_line_says() -> None:
    (j,) = judge([parse_expectation("throughput_mib_s>=15 where client=h2")], _rows())
    assert judgement_json(j) == {
        "expectation": "throughput_mib_s>=15 where client=h2",
        "column": "throughput_mib_s",
        "op": ">=",
        "threshold": 15.0,
        "where": [{"column": "client", "value": "h2"}],
        "median": 20.0,
        "rows": 3,
        "values": 2,
        "holds": True,
    }
