"""Pure: grpc-go's receiver (internal/transport/flowcontrol.go, bdp_estimator.go).

Source: google.golang.org/grpc v1.85.0 (the version the kit builds),
``internal/transport/bdp_estimator.go`` (``add``, ``timesnap``, ``calculate``),
``http2_client.go`` (``handleData`` 1222-1256: the BDP sample counts each DATA frame's
flow-controlled length before connection credit; ``fc.reset()`` flushes pending connection
credit just before the ``bdpPing``; ``updateFlowControl`` 1201-1220), ``flowcontrol.go``
(``trInFlow.onData``/``reset`` 94-108, ``inFlow.maybeAdjust``/``onRead`` 142-210) and
``controlbuf.go`` (``pingHandler`` 867: the RTT clock starts when loopy writes the PING;
loopy yields once with ``runtime.Gosched`` before flushing a batch under 1000 bytes, 707,
so a SETTINGS and a PING put together leave in one write).

Quarter thresholds with whole-message grants (``kit.clients.h2.credit``), connection credit
on receipt, and the BDP estimator (``kit.clients.h2.bdp``): a PING on the first DATA frame
after the last ack, connection credit flushed just before it (so a proxy does not count
PINGs without data moving), and on its ack both windows grow to 2 x the sample when it
grew; the connection by a stream-0 WINDOW_UPDATE of the difference, every stream by
SETTINGS_INITIAL_WINDOW_SIZE (grpc-go's ``updateFlowControl``). 65535 to start, 16 MiB cap.

Where the model cannot match grpc-go: the machine (measured 2026-12-03 against grpc-go
1.85.0 through the delay line, frames from the tap). The rules give the same frames; the
*times* differ, and the estimator turns times into windows:

- the Python client reads bigger batches (one ``recv`` after 64 KiB+ has queued, parsed at
  4-5 ms of CPU per MiB against grpc-go's 1.3-1.7) and sends what a read produced after
  the whole read: its next BDP PING leaves a median 3.4-3.8 ms after the ack reaches it,
  grpc-go's 0.9-2 ms (unlimited 20 ms link, 16 MiB);
- so the ack and the next DATA frame fall in one read more often, and the growth's
  SETTINGS and the next PING leave in one write. The server then acks that PING before it
  sends what the new window allows, the sample is about the old window (131083 where
  grpc-go's was 245758), below 2/3 of the new estimate: a step is skipped and the ramp
  loses a round (the second step: PING in the SETTINGS' write in 3 of 6 model runs, each
  of which skipped the next step; grpc-go's PING followed 0.4-0.6 ms later in 3 of 3);
- on a busy machine the Python client's PING round trips grow more than grpc-go's (its
  ack waits behind the data queued for it), which lowers bandwidth = sample / (1.5 x RTT)
  below the maximum and stops growth earlier.

On a bottleneck link the final window depends on a chain of new bandwidth maxima fed by
the queue the window itself builds (bufferbloat): one skipped step changes where the chain
ends, for grpc-go too (its final window on 100 Mbit/s x 20 ms: 4.2-25.6x the BDP, 32 MiB
runs). A small sample of runs decides nothing there (``docs/concepts/models.md``).
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
