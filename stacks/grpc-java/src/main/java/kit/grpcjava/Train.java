package kit.grpcjava;

import kit.worker.Worker;

/**
 * {@code java -XX:ArchiveClassesAtExit=<jsa> -jar kit-grpc-java.jar train}: build.sh's training
 * run for the class-data-sharing archive. One process plays both roles over loopback (a server
 * on 127.0.0.1:0, then a few short client jobs of every kind of work), decoding its jobs and
 * printing its lines as the programs do, so the archive holds the classes either role loads;
 * each later client then starts without loading and verifying them again. Nothing is measured
 * and nothing is printed on stdout.
 */
final class Train {
  private Train() {}

  private static final String SERVER =
      "{\"listen_host\":\"127.0.0.1\",\"windows\":{\"static\":true,\"stream_bytes\":1048576},"
          + "\"download_budget_bytes\":\"268435456\",\"shared_message_max_bytes\":\"16777216\","
          + "\"message_cache_bytes\":\"67108864\",\"max_message_bytes\":\"67108864\","
          + "\"max_echo_bytes\":\"1048576\",\"max_concurrent_streams\":1032,\"workers\":1032}";

  private static final String[] CLIENTS = {
    // static windows with a connection window of their own (NettyFlow), two connections, fixed
    "{\"windows\":{\"static\":true,\"stream_bytes\":65536,\"conn_bytes\":131072},"
        + "\"connections\":2,\"warmup\":true,\"timeout_s\":20,\"message_bytes\":65536,"
        + "\"download\":{\"streams\":4,\"timed_s\":2,\"messages_per_stream\":\"16\"}}",
    // dynamic, timed, with a slow reader, an option and a short idle gap
    "{\"connections\":1,\"warmup\":true,\"timeout_s\":20,\"idle_s\":0.05,"
        + "\"options\":[{\"name\":\"keepAliveTime\",\"int\":\"60000\"}],"
        + "\"message_bytes\":262144,\"download\":{\"streams\":2,\"timed_s\":0.3,"
        + "\"slow_streams\":1,\"pacing\":{\"rate_bytes_s\":6250000,\"jitter\":0.5,\"seed\":\"1\"}}}",
    "{\"connections\":1,\"warmup\":true,\"timeout_s\":20,\"message_bytes\":262144,"
        + "\"unary\":{\"calls\":50}}",
    "{\"connections\":1,\"warmup\":true,\"timeout_s\":20,\"message_bytes\":262144,"
        + "\"upload\":{\"timed_s\":2,\"messages\":\"16\",\"call_timeout_s\":20}}",
  };

  static void main() throws Exception {
    Worker.ServerJob serverJob = Jobs.serverJob(SERVER);
    Server server = Server.start(serverJob, Server.check(serverJob));
    int port = server.grpc.getPort();
    String lines = Protocol.readyText(ProcessHandle.current().pid(), port, false);
    try {
      int trial = 0;
      for (String text : CLIENTS) {
        String withTarget = "{\"target_host\":\"127.0.0.1\",\"target_port\":" + port + ","
            + text.substring(1);
        Worker.ClientJob job = Jobs.clientJob(withTarget);
        Worker.ClientResult result = Client.measure(job, Client.check(job), System.nanoTime());
        lines += Protocol.clientAnswerText(result, ++trial);
      }
    } finally {
      server.stop();
    }
    lines += Protocol.serverAnswerText(server.result());
    try { // a bad job's path too: the library's exception and message
      Jobs.clientJob("{\"no_such_field\":1}");
    } catch (Protocol.Failure f) {
      lines += f.getMessage();
    }
    lines += Protocol.failureText(Main.STACK + " train: done", Protocol.OK);
    System.err.println(Main.STACK + " train: done (" + lines.length() + " characters of lines)");
  }
}
