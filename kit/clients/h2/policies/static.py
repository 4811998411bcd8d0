"""Pure: fixed windows refilled by a threshold (``kit.clients.h2.credit``): the static policy.

Each stream keeps the window it was given (SETTINGS_INITIAL_WINDOW_SIZE) and the
connection its own; credit goes back as the threshold policy says (immediate, half,
quarter), stream credit on the application's read, connection credit on receipt or on
read (``ConnCredit``). grpc-go's receiver (``kit.clients.h2.policies.grpc_go``) is this
with quarter thresholds and a BDP estimator that grows the windows.
"""

from __future__ import annotations

from kit.clients.h2.credit import ConnFlow, StreamFlow
from kit.clients.h2.policies.base import NOTHING, Answer, WindowPolicy, grants
from kit.plan.trial import ConnCredit, CreditPolicy

HTTP2_INITIAL_CONN_WINDOW = 65_535  # RFC 9113: the connection window starts here


class StaticPolicy(WindowPolicy):
    """Windows that never grow; credit by ``credit_policy`` and ``conn_credit``."""

    name = "static"

    def __init__(
        self,
        stream_window_bytes: int,
        conn_window_bytes: int,
        credit_policy: CreditPolicy = "immediate",
        conn_credit: ConnCredit = "receipt",
    ) -> None:
        super().__init__(stream_window_bytes, conn_window_bytes)
        self.credit_policy = credit_policy
        self.on_receipt = conn_credit == "receipt"
        self.conn = ConnFlow(HTTP2_INITIAL_CONN_WINDOW, credit_policy)
        self.conn.new_limit(conn_window_bytes)
        self.flows: dict[int, StreamFlow] = {}
        self.grants_messages = credit_policy == "quarter"

    def stream_flow(self, stream_id: int) -> StreamFlow | None:
        return self.flows.get(stream_id)

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        self.flows[stream_id] = StreamFlow(self.stream_window_bytes, self.credit_policy)
        return NOTHING

    def data(self, stream_id: int | None, size: int, padding: int, now_ns: int) -> Answer:
        # Padding, and bytes of a stream nobody reads, are "read" on arrival.
        at_once = size if stream_id is None else padding
        conn = self.conn.returnable(size if self.on_receipt else at_once) if size else 0
        flow = self.flows.get(stream_id) if stream_id is not None else None
        if flow is None:
            return grants((0, conn))
        flow.received(size)
        return grants((0, conn), (stream_id or 0, flow.read(padding) if padding else 0))

    def read(self, stream_id: int, n: int, now_ns: int) -> Answer:
        conn = 0 if self.on_receipt else self.conn.returnable(n)
        flow = self.flows.get(stream_id)
        return grants((0, conn), (stream_id, flow.read(n) if flow is not None else 0))

    def message_started(self, stream_id: int, message_bytes: int) -> Answer:
        flow = self.flows.get(stream_id)
        return grants((stream_id, flow.message_started(message_bytes) if flow else 0))
