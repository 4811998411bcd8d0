"""The one patch the h2 client applies to its libraries, applied once, when imported.

h2 4.4 builds ``repr(frame)`` for every received frame even with logging off, and
hyperframe's DATA repr serializes and hex-encodes the whole payload only to show its first
10 bytes: about half the client's CPU at loopback speed. ``cheap_data_body_repr`` hexes
those bytes alone and yields the same text, so the patch changes cost, never output.

Importing this module installs it (``kit.clients.h2.connection`` imports it); nothing
else in the kit patches a library.
"""

from __future__ import annotations

from hyperframe import frame as hframe

# hyperframe shows 10 bytes of body; an 11th tells it whether to append "...".
_REPR_BYTES = 11


def cheap_data_body_repr(self: hframe.DataFrame) -> str:
    """hyperframe's ``DataFrame._body_repr`` text in O(1): only the first 11 body bytes."""
    head = self.serialize_padding_data() + bytes(self.data[:_REPR_BYTES])
    head = (head + b"\0" * self.pad_length)[:_REPR_BYTES]
    return hframe._raw_data_repr(head)


hframe.DataFrame._body_repr = cheap_data_body_repr  # type: ignore[method-assign,assignment]
