package kit.grpcjava;

import io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.InternalProtocolNegotiators;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.Http2LocalFlowController;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.util.AsciiString;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A connection window of its own for a grpc-java client connection.
 *
 * <p>grpc-java has no knob for it: its Netty handler (AbstractNettyHandler
 * .sendInitialConnectionWindow) grants the connection exactly flowControlWindow, the stream
 * window. This plaintext negotiator is grpc-java's own (InternalProtocolNegotiators.plaintext)
 * with one handler in front: once the channel is active and grpc-java's handler has sent its
 * initial window, it moves the connection's window on Netty's local flow controller to the
 * target (Http2LocalFlowController.incrementWindowSize on the connection stream: one
 * WINDOW_UPDATE on stream 0; later refills top up to the new size). Used only for static
 * windows, where grpc-java's BDP pinger is off and nothing else changes the connection window.
 */
final class ConnWindow implements InternalProtocolNegotiator.ClientFactory {
  private final int target;
  /** Connections whose window was set (for the check after warm-up). */
  final AtomicInteger applied = new AtomicInteger();
  /** The connection window grpc-java itself had granted (the stream window). */
  final AtomicInteger grpcWindow = new AtomicInteger();

  ConnWindow(int target) {
    this.target = target;
  }

  @Override
  public InternalProtocolNegotiator.ProtocolNegotiator newNegotiator() {
    InternalProtocolNegotiator.ProtocolNegotiator plaintext = InternalProtocolNegotiators.plaintext();
    return new InternalProtocolNegotiator.ProtocolNegotiator() {
      @Override
      public AsciiString scheme() {
        return plaintext.scheme();
      }

      @Override
      public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
        return new Installer(plaintext.newHandler(grpcHandler), grpcHandler);
      }

      @Override
      public void close() {
        plaintext.close();
      }
    };
  }

  @Override
  public int getDefaultPort() {
    return 80;
  }

  private final class Installer extends ChannelInboundHandlerAdapter {
    private final ChannelHandler next;
    private final GrpcHttp2ConnectionHandler grpcHandler;
    private int tries;

    Installer(ChannelHandler next, GrpcHttp2ConnectionHandler grpcHandler) {
      this.next = next;
      this.grpcHandler = grpcHandler;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      ctx.pipeline().addAfter(ctx.name(), null, next);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
      // grpc-java's negotiation runs inside this call: it installs its HTTP/2 handler, which
      // sends the preface, its SETTINGS and its initial connection window.
      ctx.fireChannelActive();
      apply(ctx);
    }

    private void apply(ChannelHandlerContext ctx) {
      if (!ctx.channel().isActive()) {
        return;
      }
      if (ctx.pipeline().context(grpcHandler) == null) {
        if (++tries <= 1000) { // not installed yet: look again shortly (on the event loop)
          ctx.executor().schedule(() -> apply(ctx), 1, TimeUnit.MILLISECONDS);
        }
        return;
      }
      try {
        Http2Stream connection = grpcHandler.connection().connectionStream();
        Http2LocalFlowController flow = grpcHandler.decoder().flowController();
        int current = flow.initialWindowSize(connection);
        grpcWindow.set(current);
        if (target != current) {
          flow.incrementWindowSize(connection, target - current);
        }
        ctx.flush();
        applied.incrementAndGet();
      } catch (Exception e) {
        System.err.println("grpc-java client: could not set the connection window: " + e);
      }
      ctx.pipeline().remove(this);
    }
  }
}
