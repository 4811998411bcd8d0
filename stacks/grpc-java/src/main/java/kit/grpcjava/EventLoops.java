package kit.grpcjava;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.NettyRuntime;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Netty event loops grpc-java would make for itself (io.grpc.netty.Utils
 * DEFAULT_WORKER_EVENT_LOOP_GROUP / DEFAULT_BOSS_EVENT_LOOP_GROUP: epoll when it loads, else NIO;
 * availableProcessors() worker threads, one boss thread; daemon threads of the same names), but
 * owned here, so the process can stop them before it exits: HotSpot's exit waits up to 300 ms
 * for threads that are in native code (an event loop in epoll_wait is), and grpc-java's shared
 * groups outlive their channels by a second.
 */
final class EventLoops {
  private static final List<EventLoopGroup> ALL = new ArrayList<>();

  final boolean epoll;
  final EventLoopGroup worker;
  final EventLoopGroup boss; // servers only

  @SuppressWarnings("deprecation") // the 4.1-style constructors grpc-java 1.85 itself calls
  private EventLoops(boolean nio, boolean server) {
    epoll = !nio && Epoll.isAvailable();
    String prefix = epoll ? "grpc-default-" : "grpc-nio-";
    int threads =
        System.getProperty("io.netty.eventLoopThreads") == null
            ? NettyRuntime.availableProcessors()
            : 0;
    worker = group(threads, prefix + "worker-ELG");
    boss = server ? group(1, prefix + "boss-ELG") : null;
  }

  @SuppressWarnings("deprecation")
  private EventLoopGroup group(int threads, String name) {
    DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
    EventLoopGroup group =
        epoll ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
    synchronized (ALL) {
      ALL.add(group);
    }
    return group;
  }

  static EventLoops client(boolean nio) {
    return new EventLoops(nio, false);
  }

  static EventLoops server(boolean nio) {
    return new EventLoops(nio, true);
  }

  Class<? extends Channel> channelType() {
    return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  Class<? extends ServerChannel> serverChannelType() {
    return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  String name() {
    return epoll ? "epoll" : "NIO";
  }

  /** Stop these event loops (a client's, after its trial), waiting at most {@code timeoutMs}. */
  void shutdown(long timeoutMs) {
    List<EventLoopGroup> mine = new ArrayList<>();
    mine.add(worker);
    if (boss != null) {
      mine.add(boss);
    }
    synchronized (ALL) {
      ALL.removeAll(mine);
    }
    stop(mine, timeoutMs);
  }

  /** Stop every event loop at once, waiting at most {@code timeoutMs} in all. */
  static void shutdownAll(long timeoutMs) {
    List<EventLoopGroup> groups;
    synchronized (ALL) {
      groups = new ArrayList<>(ALL);
    }
    stop(groups, timeoutMs);
  }

  private static void stop(List<EventLoopGroup> groups, long timeoutMs) {
    for (EventLoopGroup g : groups) {
      g.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
    }
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    for (EventLoopGroup g : groups) {
      try {
        g.awaitTermination(Math.max(1, until - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
