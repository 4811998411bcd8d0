package kit.grpcjava;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import kit.worker.Worker;
import org.junit.jupiter.api.Test;

/** The jobs in, the lines out: what a bad job prints and exits with. */
class JobsTest {
  static String resource(String name) throws IOException {
    try (InputStream in = JobsTest.class.getResourceAsStream("/jobs/" + name)) {
      return new String(Objects.requireNonNull(in, name).readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** The line a client prints for a failure, as Client.main prints it. */
  static String clientLine(Protocol.Failure f) {
    return Protocol.failureText(Client.WHO + ": " + f.getMessage(), f.exitCode);
  }

  static Protocol.Failure refused(String clientJob) {
    return assertThrows(Protocol.Failure.class, () -> Jobs.clientJob(clientJob));
  }

  @Test
  void theKitsExampleJobsDecode() throws IOException {
    Worker.ClientJob download = Jobs.clientJob(resource("client-grpc-go-static-download.json"));
    assertEquals(4, download.getDownload().getStreams());
    assertEquals(4194304, download.getWindows().getConnBytes());
    assertTrue(download.getWindows().getStatic());

    Worker.ClientJob slow = Jobs.clientJob(resource("client-grpc-go-dynamic-slow.json"));
    assertEquals(32, slow.getDownload().getMessagesPerStream()); // a uint64 given as a string
    assertEquals(1, slow.getDownload().getPacing().getSeed());
    assertEquals(0.5, slow.getDownload().getPacing().getJitter());

    Worker.ClientJob upload = Jobs.clientJob(resource("client-grpc-java-upload.json"));
    assertEquals(7.0, upload.getUpload().getCallTimeoutS());
    Options.Checked options = Client.check(upload);
    assertEquals(0.25f, options.windowUpdateRatio());
    assertTrue(options.nio());

    assertEquals(200, Jobs.clientJob(resource("client-tonic-unary.json")).getUnary().getCalls());
    Jobs.clientJob(resource("client-grpc-js-options.json")); // decodes; its option is refused

    Worker.ServerJob server = Jobs.serverJob(resource("server-grpc-go-static.json"));
    assertEquals(268435456L, server.getDownloadBudgetBytes());
    assertEquals(1032, server.getMaxConcurrentStreams());
    Server.check(server);
    assertEquals(2, Jobs.serverJob(resource("server-tonic-options.json")).getOptionsCount());
  }

  @Test
  void anUnknownFieldIsABadJobInTheLibrarysWords() {
    Protocol.Failure f = refused("{\"unary\":{\"calls\":1},\"nope\":1}");
    assertEquals(Protocol.BAD_JOB, f.exitCode);
    assertEquals(
        "{\"error\":\"grpc-java client: bad job: Cannot find field: nope in message"
            + " kit.worker.ClientJob\",\"exit_code\":2}",
        clientLine(f));
    Protocol.Failure nested = refused("{\"unary\":{\"calls\":1,\"extra\":true}}");
    assertTrue(nested.getMessage().contains("Cannot find field: extra in message kit.worker.Unary"));
  }

  @Test
  void aWrongTypeIsABadJob() {
    assertEquals("bad job: Not an uint32 value: \"x\"",
        refused("{\"connections\":\"x\",\"unary\":{}}").getMessage());
    assertEquals("bad job: Invalid bool value: \"yes\"",
        refused("{\"warmup\":\"yes\",\"unary\":{}}").getMessage());
    assertEquals("bad job: Out of range uint32 value: -1",
        refused("{\"target_port\":-1,\"unary\":{}}").getMessage());
  }

  @Test
  void textThatIsNotStrictJsonIsABadJob() {
    for (String text : List.of("not json", "", "{\"a\":", "{\"unary\":{}} trailing",
        "{'unary':{}}", "{unary:{}}")) {
      Protocol.Failure f = refused(text);
      assertEquals(Protocol.BAD_JOB, f.exitCode, text);
      assertTrue(f.getMessage().startsWith("bad job: not JSON: "), f.getMessage());
      assertTrue(!f.getMessage().contains("\n"), f.getMessage());
    }
    assertTrue(refused("{\"unary\":{},\"unary\":{}}").getMessage().contains("twice"));
    assertTrue(refused("[]").getMessage().startsWith("bad job: Expect message object"));
  }

  @Test
  void aClientJobWithNoWorkIsABadJob() {
    assertEquals("bad job: a ClientJob needs one of download, unary or upload",
        refused("{\"connections\":1}").getMessage());
    assertTrue(refused("{\"connections\":1,\"unary\":{},\"h2\":{}}").getMessage().contains("h2"));
    assertTrue(refused("{\"unary\":{}}").getMessage().contains("connections is 0"));
  }

  @Test
  void bytesThatAreNotUtf8() {
    byte[] bad = {'{', '"', (byte) 0xff, '"', '}'};
    Protocol.Failure f =
        assertThrows(Protocol.Failure.class, () -> Jobs.utf8(bad, "worker line"));
    assertEquals("{\"error\":\"grpc-java client: worker line: not UTF-8\",\"exit_code\":2}",
        clientLine(f));
    assertEquals("é", Jobs.utf8("é".getBytes(StandardCharsets.UTF_8), "--config"));
  }

  @Test
  void missingOrExtraArgumentsAreTheUsageLine() {
    for (String[] args : List.of(new String[0], new String[] {"--config"},
        new String[] {"--config", "{}", "more"}, new String[] {"--conf", "{}"})) {
      Protocol.Failure f =
          assertThrows(Protocol.Failure.class, () -> Jobs.configArg(args, Client.USAGE));
      assertEquals(Client.USAGE, f.getMessage());
      assertEquals(Protocol.BAD_JOB, f.exitCode);
    }
    assertEquals("{\"a\":1}", Jobs.configArg(new String[] {"--config={\"a\":1}"}, Client.USAGE));
  }

  @Test
  void anOptionTheStackDoesNotHaveListsTheOnesItHas() {
    Worker.Option option = Worker.Option.newBuilder().setName("Foo").setInt(1).build();
    Protocol.Failure f = assertThrows(Protocol.Failure.class,
        () -> Options.check(Options.CLIENT, List.of(option), NettyChannelBuilder.forTarget("x")));
    assertEquals(Protocol.BAD_JOB, f.exitCode);
    assertEquals(
        "{\"error\":\"grpc-java client: option \\u0027Foo\\u0027 is not one of SO_RCVBUF, SO_SNDBUF,"
            + " flowControlWindow, initialFlowControlWindow, keepAliveTime, keepAliveTimeout,"
            + " keepAliveWithoutCalls, maxInboundMessageSize, maxInboundMetadataSize,"
            + " useNioTransport, windowUpdateRatio\",\"exit_code\":2}",
        clientLine(f));
    Protocol.Failure server = assertThrows(Protocol.Failure.class,
        () -> Options.check(Options.SERVER, List.of(option), NettyServerBuilder.forPort(0)));
    assertEquals("option 'Foo' is not one of SO_RCVBUF, SO_SNDBUF, flowControlWindow,"
        + " initialFlowControlWindow, keepAliveTime, keepAliveTimeout,"
        + " maxConcurrentCallsPerConnection, maxInboundMessageSize, maxInboundMetadataSize,"
        + " permitKeepAliveTime, permitKeepAliveWithoutCalls, useNioTransport,"
        + " windowUpdateRatio", server.getMessage());
  }

  @Test
  void anOptionValueOfTheWrongKindOrOneGrpcJavaRefuses() {
    Worker.Option text = Worker.Option.newBuilder().setName("keepAliveTime").setText("5s").build();
    assertEquals("option keepAliveTime takes an integer (int), not text '5s'",
        assertThrows(Protocol.Failure.class, () -> Options.check(
            Options.CLIENT, List.of(text), NettyChannelBuilder.forTarget("x"))).getMessage());
    Worker.Option flag = Worker.Option.newBuilder().setName("windowUpdateRatio").setFlag(true)
        .build();
    assertTrue(assertThrows(Protocol.Failure.class, () -> Options.check(
        Options.CLIENT, List.of(flag), NettyChannelBuilder.forTarget("x"))).getMessage()
        .contains("takes a ratio (ratio), not flag true"));
    Worker.Option zero = Worker.Option.newBuilder().setName("flowControlWindow").setInt(0).build();
    Protocol.Failure f = assertThrows(Protocol.Failure.class, () -> Options.check(
        Options.SERVER, List.of(zero), NettyServerBuilder.forPort(0)));
    assertEquals(Protocol.BAD_JOB, f.exitCode);
    assertTrue(f.getMessage().startsWith("option flowControlWindow (int 0): grpc-java refuses"),
        f.getMessage());
    Worker.Option big = Worker.Option.newBuilder().setName("SO_RCVBUF").setInt(1L << 40).build();
    assertTrue(assertThrows(Protocol.Failure.class, () -> Options.check(
        Options.CLIENT, List.of(big), NettyChannelBuilder.forTarget("x"))).getMessage()
        .contains("int"));
  }

  @Test
  void theLinesAreTheProtosMessagesWithProtoFieldNames() {
    String ready = Protocol.readyText(4242, 0, true);
    assertEquals("{\"ready\":true,\"pid\":4242,\"stack\":\"grpc-java\",\"version\":\""
        + Main.version() + "\",\"worker\":true}", ready);
    Worker.ClientResult result = Worker.ClientResult.newBuilder().setClient("grpc-java")
        .setBytes(5).setTStartNs(7).addStreamFinishS(1.5).build();
    assertEquals("{\"result\":{\"client\":\"grpc-java\",\"bytes\":\"5\",\"t_start_ns\":\"7\","
        + "\"stream_finish_s\":[1.5]},\"client_trial\":3}", Protocol.clientAnswerText(result, 3));
    assertEquals("{\"result\":{\"rpcs\":\"3\",\"refused\":\"2\"}}", Protocol.serverAnswerText(
        Worker.ServerResult.newBuilder().setRpcs(3).setRefused(2).build()));
    assertEquals("{\"error\":\"a b\",\"exit_code\":4}", Protocol.failureText(" a\n  b ", 4));
  }
}
