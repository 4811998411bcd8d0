"""Pure: grpc-go's receiver (internal/transport/flowcontrol.go, bdp_estimator.go).

Quarter thresholds with whole-message grants (``kit.clients.h2.credit``), connection credit
on receipt, and the BDP estimator (``kit.clients.h2.bdp``): a PING on the first DATA frame
after the last ack, connection credit flushed just before it (so a proxy does not count
PINGs without data moving), and on its ack both windows grow to 2 x the sample when it
grew; the connection by a stream-0 WINDOW_UPDATE of the difference, every stream by
SETTINGS_INITIAL_WINDOW_SIZE (grpc-go's ``updateFlowControl``). 65535 to start, 16 MiB cap.
"""

from __future__ import annotations

from kit.clients.h2.bdp import BDP_PING_DATA, INITIAL_BDP_BYTES, BdpEstimator
from kit.clients.h2.policies.base import NOTHING, Answer
from kit.clients.h2.policies.static import StaticPolicy
from kit.plan.trial import ConnCredit, CreditPolicy


class GrpcGoPolicy(StaticPolicy):
    """grpc-go's windows: ``StaticPolicy``'s credit plus the BDP estimator."""

    name = "grpc-go"
    ping_data = BDP_PING_DATA

    def __init__(
        self,
        stream_window_bytes: int = INITIAL_BDP_BYTES,
        conn_window_bytes: int = INITIAL_BDP_BYTES,
        credit_policy: CreditPolicy = "quarter",
        conn_credit: ConnCredit = "receipt",
    ) -> None:
        super().__init__(stream_window_bytes, conn_window_bytes, credit_policy, conn_credit)
        self.bdp: BdpEstimator | None = None

    @property
    def pings(self) -> bool:
        return self.bdp is not None and not self.bdp.capped

    def start(self, now_ns: int) -> Answer:
        """grpc-go's estimator runs from the connection's start (its 65535 start)."""
        self.bdp = BdpEstimator(initial_bytes=INITIAL_BDP_BYTES)
        return NOTHING

    def data(self, stream_id: int | None, size: int, padding: int, now_ns: int) -> Answer:
        credit = super().data(stream_id, size, padding, now_ns)
        if self.bdp is None or not self.bdp.on_data(size, now_ns):
            return credit
        self.ping_sent_ns = now_ns
        flush = self.conn.flush()
        conn = tuple(g for g in credit.grants if g[0] == 0)
        streams = tuple(g for g in credit.grants if g[0] != 0)
        return Answer((*conn, *((0, flush),) * (flush > 0), *streams), ping=True)

    def ping_written(self, now_ns: int) -> None:
        if self.bdp is not None:
            self.bdp.ping_written(now_ns)
            self.ping_sent_ns = self.bdp.ping_sent_ns

    def ping_acked(self, now_ns: int) -> Answer:
        grew = self.bdp.on_ping_ack(now_ns) if self.bdp is not None else None
        if grew is None:
            return NOTHING
        window = grew.window_bytes
        conn_delta = self.conn.new_limit(window)
        self.stream_window_bytes = window
        self.conn_window_bytes = max(self.conn_window_bytes, window)
        for flow in self.flows.values():
            flow.limit = window
        grant = ((0, conn_delta),) if conn_delta > 0 else ()
        return Answer(grant, stream_window=window, conn_window=window, settings=True)
