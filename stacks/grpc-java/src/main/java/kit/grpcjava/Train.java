package kit.grpcjava;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * {@code java -XX:ArchiveClassesAtExit=<jsa> -jar kit-grpc-java.jar train}: build.sh's training
 * run for the class-data-sharing archive. One process plays both roles over loopback (a server
 * on 127.0.0.1:0, then a few short client trials of every workload), so the archive holds the
 * classes either role loads; each later client then starts without loading and verifying them
 * again. Nothing is measured.
 */
final class Train {
  private Train() {}

  private static final String[] TRIALS = {
    // static windows with a connection window of their own (NettyFlow), two connections
    "{\"client\":{\"kind\":\"grpc-java\",\"window_mode\":\"static\",\"window_bytes\":65536,"
        + "\"connections\":2},\"workload\":{\"message_bytes\":65536,\"streams\":4,"
        + "\"bytes_per_stream\":1048576,\"timeout_s\":20}}",
    // dynamic, timed, with a slow reader
    "{\"client\":{\"kind\":\"grpc-java\"},\"workload\":{\"streams\":2,\"duration_s\":0.3,"
        + "\"slow_streams\":1,\"read_rate_bits_s\":50000000,\"timeout_s\":20}}",
    "{\"client\":{\"kind\":\"grpc-java\"},\"workload\":{\"kind\":\"unary\",\"calls\":50,"
        + "\"timeout_s\":20}}",
    "{\"client\":{\"kind\":\"grpc-java\"},\"workload\":{\"kind\":\"upload\","
        + "\"bytes_per_stream\":4194304,\"timeout_s\":20}}",
  };

  static void main() throws Exception {
    Config.ServerProcess serverProcess =
        Config.serverProcess(JsonParser.parseString("{\"config\":{\"kind\":\"grpc-java\"}}"));
    io.grpc.Server server =
        Server.start(serverProcess, Server.checkForStack(serverProcess.config()));
    try {
      for (String trial : TRIALS) {
        JsonObject json = new JsonObject();
        json.addProperty("target_port", server.getPort());
        json.add("trial", JsonParser.parseString(trial));
        Config.ClientProcess process =
            Config.clientProcess(Config.parseArgv(new String[] {"--config", json.toString()}, "x"));
        Client.measure(process, Client.checkForStack(process.trial()), System.nanoTime());
      }
    } finally {
      Server.stop(server);
    }
    System.err.println(Main.STACK + " train: done");
  }
}
