"""Pure pieces of the h2 client: gRPC framing, message counting, credit policy, DATA repr."""

from __future__ import annotations

import binascii
import itertools

import pytest
from hyperframe.frame import DataFrame
from hypothesis import given
from hypothesis import strategies as st

from kit._proto import throughput_pb2 as pb
from kit.clients.h2 import speedups, wire
from kit.plan.units import MIB


def stream_of(lengths: list[int]) -> bytes:
    return b"".join(wire.grpc_message(b"\x5a" * n) for n in lengths)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def test_grpc_message_has_the_5_byte_prefix() -> None:
    assert wire.grpc_message(b"abc") == b"\x00\x00\x00\x00\x03abc"


def test_download_body_round_trips_through_protobuf() -> None:
    body = wire.download_body(7, 262_144)
    assert int.from_bytes(body[1:5], "big") == len(body) - 5
    request = pb.DownloadRequest.FromString(body[5:])
    assert (request.message_count, request.message_bytes) == (7, 262_144)


def test_request_headers_are_a_grpc_post() -> None:
    headers = dict(wire.request_headers(wire.DOWNLOAD_PATH, "127.0.0.1:5"))
    assert headers[b":method"] == b"POST"
    assert headers[b":path"] == b"/kit.throughput.Throughput/Download"
    assert headers[b"content-type"] == b"application/grpc"
    assert headers[b"te"] == b"trailers"


def test_grpc_status_from_trailers() -> None:
    assert wire.grpc_status([(b"grpc-status", b"0")]) == (0, "")
    assert wire.grpc_status([("grpc-status", "12"), ("grpc-message", "nope")]) == (12, "nope")
    assert wire.grpc_status([(b":status", b"200")]) == (None, "")
    assert wire.grpc_status([(b"grpc-status", b"x")]) == (-1, "")


def test_counter_counts_whole_messages_in_one_chunk() -> None:
    counter = wire.MessageCounter()
    assert counter.feed(stream_of([10, 0, 3])) == 3
    assert counter.messages == 3
    assert not counter.mid_message


def test_counter_waits_for_the_last_byte_and_a_split_prefix() -> None:
    counter = wire.MessageCounter()
    data = stream_of([4, 4])
    assert counter.feed(data[:8]) == 0  # prefix + 3 of 4 payload bytes
    assert counter.feed(data[8:11]) == 1  # last byte, then 2 bytes of the next prefix
    assert counter.mid_message
    assert counter.feed(data[11:]) == 1
    assert counter.messages == 2


@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=12),
    st.lists(st.integers(0, 10_000), max_size=30),
)
def test_counter_is_independent_of_how_frames_cut_the_stream(
    lengths: list[int], cuts: list[int]
) -> None:
    counter = wire.MessageCounter()
    data = stream_of(lengths)
    total = sum(counter.feed(memoryview(chunk)) for chunk in split(data, cuts))
    assert total == counter.messages == len(lengths)
    assert not counter.mid_message


def _original_repr(frame: DataFrame) -> str:
    data = frame.serialize_body()
    text = binascii.hexlify(data).decode("ascii")
    body = "None" if not data else "<hex:" + (text[:20] + "..." if len(text) > 20 else text) + ">"
    return f"DataFrame(stream_id={frame.stream_id}, flags={frame.flags!r}): {body}"


@pytest.mark.parametrize("size", [0, 1, 9, 10, 11, 12, 200_000])
@pytest.mark.parametrize("pad", [0, 1, 5, 20])
def test_cheap_data_repr_says_exactly_what_hyperframe_said(size: int, pad: int) -> None:
    frame = DataFrame(3, bytes(range(256)) * (size // 256) + bytes(size % 256))
    if pad:
        frame.flags.add("PADDED")
        frame.pad_length = pad
    assert repr(frame) == _original_repr(frame)


def test_the_cheap_data_repr_is_installed_by_importing_it_once() -> None:
    assert DataFrame._body_repr is speedups.cheap_data_body_repr


def test_the_cheap_data_repr_never_serializes_the_payload() -> None:
    frame = DataFrame(1, b"q" * (16 * MIB))

    def refuse() -> bytes:
        raise AssertionError("repr serialized the whole payload")

    frame.serialize_body = refuse  # type: ignore[method-assign]
    assert repr(frame).endswith("<hex:71717171717171717171...>")
