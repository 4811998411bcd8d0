"""The answers the README promises, end to end: each test runs the command a user types and
checks the printed answer against the records it came from, computed here from the raw
JSON lines (not through the kit's own analysis).

- ``kit knee``: the window to type, for every client stack, in that stack's own API, and the
  ``kit run`` command that measures it again (stored sweeps in ``tests/fixtures/knee``, one per
  stack, and one tiny real sweep);
- the verdict every ``kit run`` table ends with names the limit that bound it: a stream
  window, a connection window, the link's rate, loss (the packet link's stored cells), the
  server's window, a slow reader (stored runs in ``tests/fixtures/runs/verdicts.jsonl``);
- ``kit run --interval``: the summary row is the min, median and max of the lines printed,
  and the lines stay inside the timed phase (a tiny real run).
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from cli_support import kit, kit_here
from stacks_support import need_built

from kit.plan.units import sig3, size_spec

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KNEES = FIXTURES / "knee"
VERDICTS = FIXTURES / "runs" / "verdicts.jsonl"
MIB = 2**20


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        if data.get("kind") == "measurement":
            out.append(data)
    return out


def _flat(text: str) -> str:
    """The report's text with its wrapped lines joined (a sentence may span lines)."""
    return " ".join(text.split())


# --- the knee: the window to type ----------------------------------------------------------


def _expected_knees(path: Path) -> list[dict[str, Any]]:
    """Per sweep (campaign): the smallest window whose median reaches 90% of the best median
    (of the link rate, when the rate is below the best), from the records alone."""
    by_campaign: dict[str, list[dict[str, Any]]] = {}
    for rec in _lines(path):
        by_campaign.setdefault(rec["tags"]["campaign"], []).append(rec)
    knees = []
    for recs in by_campaign.values():
        rates: dict[int, list[float]] = {}
        for rec in recs:
            if rec["status"] == "ok":
                result = rec["result"]
                mib_s = result["bytes"] / result["elapsed_s"] / MIB
                rates.setdefault(rec["trial"]["client"]["window_bytes"], []).append(mib_s)
        medians = {w: statistics.median(v) for w, v in rates.items()}
        best = max(medians.values())
        trial = recs[0]["trial"]
        rate = trial["link"]["rate_down_bits_s"]
        top = best if rate is None else min(best, rate / 8 / MIB)
        window = min(w for w, m in medians.items() if m >= 0.9 * top)
        knees.append({"window": window, "trial": trial, "windows": sorted(medians)})
    return knees


def _typed(kind: str, window: int, streams: int) -> str:
    """What the stack's own API takes for that window (the calls its program makes)."""
    conn = window * streams if kind in ("grpc-go", "tonic", "h2") else window
    return {
        "h2": f"--window {size_spec(window)} --conn-window {size_spec(window)}",
        "grpcio": f'options=[("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", {window})]',
        "grpc-go": f"grpc.WithStaticStreamWindowSize({window}), "
        f"grpc.WithStaticConnWindowSize({conn})",
        "grpc-java": f"NettyChannelBuilder.flowControlWindow({window})",
        "grpc-js": f"{{'grpc-node.flow_control_window': {window}}}",
        "tonic": f"Endpoint::initial_stream_window_size({window}) + "
        f"initial_connection_window_size({conn})",
    }[kind]


def _check_knee_answers(text: str, path: Path) -> None:
    answers = re.findall(r"answer: (.*?)(?= knee-|$)", _flat(text))
    expected = _expected_knees(path)
    assert len(answers) == len(expected), text
    for answer, knee in zip(answers, expected, strict=True):
        trial, window = knee["trial"], knee["window"]
        kind, streams = trial["client"]["kind"], trial["workload"]["streams"]
        assert f"type: {_typed(kind, window, streams)}" in answer, answer
        again = f"kit run --client {kind} --rtt 30ms --rate 100Mbit --window {size_spec(window)}"
        if kind != "h2" and streams == 1:
            assert f"measure it again: {again} --duration" in answer, answer
        assert " 0 B " not in answer and "(0)" not in answer
    # every window of a sweep is a row of its own, named by its size (never all "0 B")
    for knee in expected:
        for w in knee["windows"]:
            assert re.search(rf"^(\| )?{re.escape(_size(w))}( <- knee)? ", text, re.M), (w, text)


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n >= MIB else f"{n // 1024} KiB"


@pytest.mark.parametrize("stack", ["h2", "grpcio", "grpc-go", "grpc-java", "grpc-js", "tonic"])
def test_kit_report_of_a_knee_types_the_stacks_own_window(stack: str) -> None:
    path = KNEES / f"{stack}.jsonl"
    done = kit_here("report", str(path))
    assert done.returncode == 0, done.stderr
    _check_knee_answers(done.stdout, path)
    markdown = kit_here("report", "--markdown", str(path))
    _check_knee_answers(markdown.stdout, path)


def test_a_real_knee_sweep_answers_from_its_own_records(tmp_path: Path) -> None:
    need_built("grpc-go")
    records = tmp_path / "knee.jsonl"
    done = kit(
        "knee", "--client", "grpc-go", "--rtt", "30ms", "--rate", "100Mbit", "--streams", "1",
        "--min-window", "64KiB", "--max-window", "256KiB", "--rounds", "1",
        "--duration", "0.3s", "--records", str(records), "--markdown", str(tmp_path / "k.md"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _check_knee_answers(done.stdout, records)
    _check_knee_answers((tmp_path / "k.md").read_text(encoding="utf-8"), records)


# --- the verdict: what limited a run ---------------------------------------------------------


def _verdicts() -> list[tuple[dict[str, Any], str]]:
    """Each stored run and the sentence its ``kit report`` table ends with."""
    recs = _lines(VERDICTS)
    done = kit_here("report", "--all", str(VERDICTS))
    assert done.returncode == 0, done.stderr
    tables = re.split(r"^run \d+ of \d+$", done.stdout, flags=re.M)[1:]
    assert len(tables) == len(recs)
    out = []
    for rec, table in zip(recs, tables, strict=True):
        closing = table.rstrip().split("\n")
        rules = [i for i, line in enumerate(closing) if line.startswith("----")]
        out.append((rec, _flat("\n".join(closing[rules[-1] + 1 :]))))
    return out


def _mib_s(rec: dict[str, Any]) -> float:
    return float(rec["result"]["bytes"] / rec["result"]["elapsed_s"] / MIB)


def _busy(rec: dict[str, Any]) -> bool:
    """A process near a full core, or the machine's cores near full (the kit's 90%)."""
    machine = rec["meta"].get("machine") or {}
    saturated = machine.get("cpus") and machine["busy_cores"] >= 0.9 * machine["cpus"]
    return bool(saturated) or any(c["cpu_fraction"] >= 0.9 for c in rec["cpu"])


def test_the_verdict_names_the_stream_window_the_connection_window_and_the_rate() -> None:
    seen = set()
    for rec, sentence in _verdicts():
        client, workload = rec["trial"]["client"], rec["trial"]["workload"]
        link = rec["trial"]["link"]
        if workload["slow_streams"] or workload["kind"] != "download":
            continue
        eff = _mib_s(rec) / rec["theory_mib_s"]
        if link["rate_down_bits_s"] is not None:
            assert sentence.startswith("Limited by the link's rate:"), sentence
            assert f"{sig3(_mib_s(rec) * MIB * 8 / 1e6)} Mbit/s of 50 Mbit/s" in sentence
            seen.add("rate")
        elif sentence.startswith("What limited it: not decided:"):  # below its credit rule
            assert f"it moved {eff:.2f} of its window / RTT" in sentence, sentence
            seen.add("not decided")
        elif client["conn_window_bytes"] is not None and workload["streams"] > 1:
            assert sentence.startswith("Limited by the connection window (64 KiB shared by 4")
            assert f"it moved {sig3(eff)} of the" in sentence, sentence
            seen.add("connection")
        else:
            window = _size(client["window_bytes"])
            assert sentence.startswith(f"Limited by the stream window ({window}): it moved")
            assert f"it moved {sig3(eff)} of the" in sentence, sentence
            seen.add("stream")
        band = _path_band(rec)
        if band is not None:  # the rule's band at the RTT the run's own PINGs measured
            assert band in sentence, (band, sentence)
            seen.add("path")
    assert seen >= {"connection", "rate", "stream", "path"}


def _path_band(rec: dict[str, Any]) -> str | None:
    """What the h2 client's immediate credit (0.88-1.00 of window / RTT) moves at the RTT
    its PINGs measured, from the record alone, where they took 2-50% longer than the link's."""
    pings, link = rec["result"]["ping_rtt_ms"], rec["trial"]["link"]
    rtt = link["delay_up_ms"] + link["delay_down_ms"]
    client = rec["trial"]["client"]
    immediate = client.get("credit_policy") in (None, "immediate")
    if client["kind"] != "h2" or client["window_mode"] != "static" or not immediate or not pings:
        return None
    ping = statistics.median(pings)
    if not 1.02 * rtt < ping <= 1.5 * rtt:
        return None
    return f"{0.88 * rtt / ping:.2f}-{rtt / ping:.2f} at the {ping:.3g} ms RTT the PINGs measured"


def test_the_verdict_of_a_slow_reader_says_whether_it_held_the_others() -> None:
    found = set()
    for rec, sentence in _verdicts():
        workload = rec["trial"]["workload"]
        if not workload["slow_streams"]:
            continue
        assert sentence.startswith("Limited by a slow reader (stream 1 read at 8 Mbit/s);")
        result, n = rec["result"], workload["streams"]
        pairs = zip(result["stream_bytes"], result["stream_finish_s"], strict=True)
        rates = [b / t / MIB for b, t in pairs]
        if rec["theory_mib_s"] is None:
            assert "not decided, no theory to judge them by" in sentence, sentence
            found.add("no theory")
            continue
        fast = sum(rates[1:]) / (rec["theory_mib_s"] * (n - 1) / n)
        # the credit rule's low figure less 0.15: h2's immediate credit 0.88, C-core's 0.85
        floor = (0.88 if rec["trial"]["client"]["kind"] == "h2" else 0.85) - 0.15
        assert f"moved {sig3(fast)} of" in sentence or "not decided" in sentence, sentence
        client = rec["trial"]["client"]
        own = client["kind"] == "h2" and client["window_mode"] in ("static", "dynamic")
        if own and client["conn_credit"] == "receipt":  # flow control ties no stream to another
            assert "it did not hold the others (connection credit goes back on receipt" in sentence
            short = ", short of the client's rule for another reason"
            assert (short in sentence) is (fast < floor), sentence
            found.add("cannot hold")
        elif fast >= floor:
            assert "it did not hold the others" in sentence, sentence
            found.add("not held")
        elif _busy(rec):
            assert "not decided, the machine was busy" in sentence, sentence
            found.add("busy")
        else:
            assert "it held the others" in sentence, sentence
            found.add("held")
    assert {"no theory", "cannot hold"} <= found and found & {"not held", "held", "busy"}


def test_a_slow_grpcio_stream_says_what_was_read_and_what_was_received() -> None:
    done = kit_here("report", "--all", str(VERDICTS))
    text = _flat(done.stdout)
    rec = next(r for r, _ in _verdicts() if r["trial"]["workload"]["bytes_per_stream"])
    read = rec["result"]["stream_bytes"][0]
    assert f"stream 1: read, received read {_size(read)} in" in text
    assert "(whole messages, the first on arrival)" in text
    assert "C-core buffered the rest unread" in text


def test_the_verdict_of_an_upload_names_the_servers_window() -> None:
    uploads = [(r, s) for r, s in _verdicts() if r["trial"]["workload"]["kind"] == "upload"]
    assert uploads
    for rec, sentence in uploads:
        eff = _mib_s(rec) / rec["theory_mib_s"]
        assert sentence.startswith(
            f"Limited by the server's receive window (64 KiB): it moved {sig3(eff)}x the"
        ), sentence
        assert "C-core) grants extra credit" in sentence


def test_the_verdict_on_a_lossy_packet_link_names_loss_and_the_mathis_bound() -> None:
    path = FIXTURES / "tables-quick" / "loss.jsonl"
    recs = {r["tags"]["key"]: r for r in _lines(path)}
    rec = recs["4MiB-loss1%"]
    lone = dict(rec, tags={**rec["tags"], "campaign": "", "key": ""})
    single = path.parent / "loss-1pct.jsonl"
    try:
        single.write_text(json.dumps(lone) + "\n", encoding="utf-8")
        done = kit_here("report", str(single))
    finally:
        single.unlink()
    sentence = _flat(done.stdout.rstrip().split("-" * 20)[-1].split("\n", 1)[-1])
    mbit = rec["result"]["bytes"] / rec["result"]["elapsed_s"] * 8 / 1e6
    assert sentence.startswith("Limited by loss: 1% of packets with reno, whose Mathis bound is")
    assert f"it carried {mbit:.3g} Mbit/s" in sentence, sentence
    assert "congestion control reno" in _flat(done.stdout)
    assert "drop-tail queue 610 KiB" in _flat(done.stdout)  # three figures, as elsewhere


# --- --interval: the summary is the printed lines' ----------------------------------------------


def test_the_interval_summary_is_the_min_median_max_of_the_printed_lines(tmp_path: Path) -> None:
    records = tmp_path / "runs.jsonl"
    done = kit(
        "run", "--client", "h2", "--rtt", "10ms", "--window", "256KiB", "--duration", "0.55s",
        "--interval", "100ms", "--records", str(records),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = re.findall(
        r"^\s*([\d.]+)-\s*([\d.]+) s\s+[\d.]+ MiB\s+([\d.]+)( \(partial\))?$", done.stdout, re.M
    )
    assert len(lines) >= 5, done.stdout
    whole = sorted(float(rate) for _, _, rate, partial in lines if not partial)
    summary = re.search(
        r"min ([\d.]+), median ([\d.]+), max ([\d.]+) MiB/s over (\d+)", done.stdout
    )
    assert summary is not None, done.stdout
    lo, mid, hi, n = summary.groups()
    assert (float(lo), float(hi), int(n)) == (whole[0], whole[-1], len(whole))
    assert float(mid) == pytest.approx(statistics.median(whole), rel=5e-3)
    elapsed = json.loads(records.read_text().splitlines()[-1])["result"]["elapsed_s"]
    assert float(lines[-1][1]) <= round(elapsed, 2) + 0.005  # inside the timed phase
    assert "live" not in done.stdout  # the live lines went to stderr, as progress
