package kit.grpcjava;

import io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.internal.ObjectPool;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.DefaultHttp2LocalFlowController;
import io.netty.handler.codec.http2.Http2LocalFlowController;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.util.AsciiString;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * What grpc-java has no knob for, set on its Netty HTTP/2 handler: a connection window of its
 * own and Netty's window-update ratio (its local flow controller), and (servers) when the
 * concurrent-stream limit starts to hold.
 *
 * <p>grpc-java's handler (AbstractNettyHandler.sendInitialConnectionWindow) grants the connection
 * exactly flowControlWindow, the stream window, and builds its DefaultHttp2LocalFlowController
 * with DEFAULT_WINDOW_UPDATE_RATIO 0.5 (NettyClientHandler / NettyServerHandler .newHandler): a
 * WINDOW_UPDATE goes out once half a window is consumed. This negotiator is grpc-java's own
 * plaintext one (InternalProtocolNegotiators.plaintext / serverPlaintext) with one handler in
 * front: once the channel is active and grpc-java's handler is installed (and has sent its
 * initial window), it moves the connection window to the target
 * (Http2LocalFlowController.incrementWindowSize on the connection stream: one WINDOW_UPDATE on
 * stream 0; later refills top up to the new size) and sets the ratio for the connection and for
 * every stream opened after (DefaultHttp2LocalFlowController.windowUpdateRatio), then leaves the
 * pipeline.
 */
final class NettyFlow {
  private final Integer connWindow; // null: grpc-java's own (flowControlWindow)
  private final Float ratio; // null: grpc-java's own (0.5)
  private final boolean streamLimitOnAck;
  /** Connections it was applied to (checked after warm-up). */
  final AtomicInteger applied = new AtomicInteger();

  NettyFlow(Integer connWindow, Float ratio) {
    this(connWindow, ratio, false);
  }

  /**
   * {@code streamLimitOnAck} (servers): SETTINGS_MAX_CONCURRENT_STREAMS is enforced from the
   * peer's SETTINGS ACK on, as C-core enforces it, not before. grpc-java's handler enforces its
   * maxConcurrentCallsPerConnection from the first frame (connection.remote().maxActiveStreams),
   * and Netty then answers a DATA frame on a stream it refused that way (one opened before the
   * peer could know the limit) with a connection error (PROTOCOL_ERROR "Stream N does not
   * exist": DefaultHttp2ConnectionDecoder.verifyStreamMayHaveExisted), which ends every call on
   * the connection. Netty applies the limit itself once our SETTINGS are acked
   * (DefaultHttp2ConnectionDecoder.applyLocalSettings), so it is lifted here until then.
   */
  NettyFlow(Integer connWindow, Float ratio, boolean streamLimitOnAck) {
    this.connWindow = connWindow;
    this.ratio = ratio;
    this.streamLimitOnAck = streamLimitOnAck;
  }

  /** For NettyChannelBuilder (InternalNettyChannelBuilder.setProtocolNegotiatorFactory). */
  InternalProtocolNegotiator.ClientFactory clientFactory() {
    return new InternalProtocolNegotiator.ClientFactory() {
      @Override
      public InternalProtocolNegotiator.ProtocolNegotiator newNegotiator() {
        return wrap(InternalProtocolNegotiators::plaintext);
      }

      @Override
      public int getDefaultPort() {
        return 80;
      }
    };
  }

  /** For NettyServerBuilder (InternalNettyServerCredentials.create). */
  InternalProtocolNegotiator.ServerFactory serverFactory() {
    return new InternalProtocolNegotiator.ServerFactory() {
      @Override
      public InternalProtocolNegotiator.ProtocolNegotiator newNegotiator(
          ObjectPool<? extends Executor> offloadExecutorPool) {
        return wrap(InternalProtocolNegotiators::serverPlaintext);
      }
    };
  }

  private InternalProtocolNegotiator.ProtocolNegotiator wrap(
      Supplier<InternalProtocolNegotiator.ProtocolNegotiator> plain) {
    InternalProtocolNegotiator.ProtocolNegotiator inner = plain.get();
    return new InternalProtocolNegotiator.ProtocolNegotiator() {
      @Override
      public AsciiString scheme() {
        return inner.scheme();
      }

      @Override
      public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
        return new Installer(inner.newHandler(grpcHandler), grpcHandler);
      }

      @Override
      public void close() {
        inner.close();
      }
    };
  }

  private final class Installer extends ChannelInboundHandlerAdapter {
    private final ChannelHandler next;
    private final GrpcHttp2ConnectionHandler grpcHandler;
    private boolean done;
    private int tries;

    Installer(ChannelHandler next, GrpcHttp2ConnectionHandler grpcHandler) {
      this.next = next;
      this.grpcHandler = grpcHandler;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      ctx.pipeline().addAfter(ctx.name(), null, next);
      if (ctx.channel().isActive()) { // a server's accepted connection: already active
        ctx.executor().execute(() -> apply(ctx));
      }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
      // grpc-java's negotiation runs inside this call: it installs its HTTP/2 handler, which
      // sends the preface, its SETTINGS and its initial connection window.
      ctx.fireChannelActive();
      apply(ctx);
    }

    private void apply(ChannelHandlerContext ctx) {
      if (done || !ctx.channel().isActive()) {
        return;
      }
      if (ctx.pipeline().context(grpcHandler) == null) {
        if (++tries <= 2000) { // not installed yet: look again shortly (on the event loop)
          ctx.executor().schedule(() -> apply(ctx), 1, TimeUnit.MILLISECONDS);
        }
        return;
      }
      done = true;
      try {
        if (streamLimitOnAck && grpcHandler.connection().remote().lastStreamCreated() == 0) {
          grpcHandler.connection().remote().maxActiveStreams(Integer.MAX_VALUE);
        }
        Http2Stream connection = grpcHandler.connection().connectionStream();
        Http2LocalFlowController flow = grpcHandler.decoder().flowController();
        if (ratio != null) {
          DefaultHttp2LocalFlowController netty = (DefaultHttp2LocalFlowController) flow;
          netty.windowUpdateRatio(ratio); // every stream opened from now on
          netty.windowUpdateRatio(connection, ratio);
        }
        if (connWindow != null) {
          int current = flow.initialWindowSize(connection);
          if (connWindow != current) {
            flow.incrementWindowSize(connection, connWindow - current);
          }
        }
        ctx.flush();
        applied.incrementAndGet();
      } catch (Exception | AssertionError e) {
        System.err.println(Main.STACK + ": could not tune Netty's flow controller: " + e);
      }
      ctx.pipeline().remove(this);
    }
  }
}
