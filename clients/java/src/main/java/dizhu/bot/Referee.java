package dizhu.bot;

import com.google.gson.Gson;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import dizhu.v1.RulesServiceGrpc;
import dizhu.v1.TableServiceGrpc;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** One connection to a dizhu referee, the seat token the bot acts with, and how calls are retried. */
final class Referee implements AutoCloseable {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> API_KEY =
      Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * How long a failed call is sent again, and a lost stream opened again, before the bot gives
   * up: long enough to ride out a referee's restart (a minute is the horizon of every example bot).
   */
  static final long RETRY_HORIZON_MS = 90_000;

  private final ManagedChannel channel;
  private final Metadata headers = new Metadata();
  /** Each attempt of a call gets this long; one that runs past it is sent again, same request_id. */
  private final long callTimeoutMs = 10_000;

  /** A channel to target: "host:port", or "unix:/path/to/socket" (gRPC's own name syntax). */
  Referee(String target, boolean tls, String caFile) throws IOException {
    ChannelCredentials credentials = InsecureChannelCredentials.create();
    if (tls) {
      TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder();
      if (caFile != null && !caFile.isEmpty()) {
        builder.trustManager(new File(caFile));
      }
      credentials = builder.build();
    }
    // The retry policy every dizhu client follows: grpc-java sends a call that failed on one of
    // its codes again by itself, before call() below sees the failure.
    channel = Grpc.newChannelBuilder(target, credentials).defaultServiceConfig(retryPolicy()).enableRetry().build();
  }

  /** retry_policy.json (a gRPC service config), which the build copies into the jar from the Python SDK. */
  static Map<String, ?> retryPolicy() throws IOException {
    try (InputStream json = Referee.class.getResourceAsStream("/retry_policy.json")) {
      if (json == null) {
        throw new IOException("retry_policy.json is missing from the jar");
      }
      Map<String, ?> config = new Gson().fromJson(new InputStreamReader(json, StandardCharsets.UTF_8), Map.class);
      return config;
    }
  }

  /** Acts with this seat token from now on: `authorization: Bearer <token>` on every call. */
  void useToken(String token) {
    headers.removeAll(AUTHORIZATION);
    headers.put(AUTHORIZATION, "Bearer " + token);
  }

  void useApiKey(String key) {
    headers.put(API_KEY, key);
  }

  TableServiceGrpc.TableServiceBlockingStub tables() {
    return withHeaders(TableServiceGrpc.newBlockingStub(channel));
  }

  RulesServiceGrpc.RulesServiceBlockingStub rules() {
    return withHeaders(RulesServiceGrpc.newBlockingStub(channel));
  }

  private <S extends AbstractStub<S>> S withHeaders(S stub) {
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
  }

  static String newRequestId() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /**
   * Runs one RPC on a stub with a fresh deadline, sending the very same request again while the
   * failure says it may not have been applied (a deadline, a lost connection, a referee
   * restarting) or asks to come back later (a reason of the RETRYABLE category, after its
   * RetryInfo delay), for up to {@link #RETRY_HORIZON_MS}, backing off as retry_policy.json says.
   */
  <S extends AbstractStub<S>, R> R call(String name, S stub, Function<S, R> rpc) {
    long delayMs = ReasonFacts.INITIAL_BACKOFF_MS;
    long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_HORIZON_MS);
    while (true) {
      try {
        return rpc.apply(stub.withDeadlineAfter(callTimeoutMs, TimeUnit.MILLISECONDS));
      } catch (StatusRuntimeException error) {
        ErrorDetails details = ErrorDetails.of(error);
        if (!details.retryable() || System.nanoTime() > giveUp) {
          throw error;
        }
        long waitMs = ReasonFacts.waitMs(delayMs, details.retryDelayMs);
        System.err.printf("%s: %s; sending it again with the same request_id in %d ms%n", name, details, waitMs);
        sleepBeforeRetry(waitMs, error);
        delayMs = ReasonFacts.next(delayMs);
      }
    }
  }

  /**
   * Waits before a retry. A lost connection is dialled again at once afterwards: grpc-java's own
   * reconnect backoff grows to two minutes, long past a referee that is back.
   */
  void sleepBeforeRetry(long waitMs, StatusRuntimeException error) {
    try {
      Thread.sleep(waitMs);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw error;
    }
    channel.resetConnectBackoff();
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  /** What a refusal says in its google.rpc.Status details (docs/api.md, "Errors"). */
  static final class ErrorDetails {
    final Status.Code code;
    final String message;
    /** ErrorInfo.reason: the ErrorReason's name without ERROR_REASON_, or the code's name. */
    final String reason;
    final Map<String, String> metadata = new TreeMap<>();
    final StringBuilder violations = new StringBuilder();
    long retryDelayMs;

    private ErrorDetails(Status status, String reason) {
      this.code = status.getCode();
      this.message = status.getDescription() == null ? "" : status.getDescription();
      this.reason = reason;
    }

    static ErrorDetails of(Throwable error) {
      Status status = Status.fromThrowable(error);
      com.google.rpc.Status details = StatusProto.fromThrowable(error);
      String reason = status.getCode().name();
      ErrorInfo info = null;
      BadRequest badRequest = null;
      RetryInfo retry = null;
      if (details != null) {
        try {
          for (Any any : details.getDetailsList()) {
            if (any.is(ErrorInfo.class)) {
              info = any.unpack(ErrorInfo.class);
              reason = info.getReason();
            } else if (any.is(BadRequest.class)) {
              badRequest = any.unpack(BadRequest.class);
            } else if (any.is(RetryInfo.class)) {
              retry = any.unpack(RetryInfo.class);
            }
          }
        } catch (InvalidProtocolBufferException malformed) {
          // A detail that does not decode tells nothing more than the status code.
        }
      }
      ErrorDetails result = new ErrorDetails(status, reason);
      if (info != null) {
        result.metadata.putAll(info.getMetadataMap());
      }
      if (badRequest != null) {
        badRequest.getFieldViolationsList().forEach(v ->
            result.violations.append(" [").append(v.getField()).append(": ").append(v.getDescription()).append(']'));
      }
      if (retry != null) {
        result.retryDelayMs = retry.getRetryDelay().getSeconds() * 1000 + retry.getRetryDelay().getNanos() / 1_000_000;
      }
      return result;
    }

    ReasonFacts.Decision decision() {
      return ReasonFacts.decide(code, reason);
    }

    boolean retryable() {
      return decision() == ReasonFacts.Decision.RETRY;
    }

    /** Like "FAILED_PRECONDITION NOT_YOUR_TURN: ... table_id=abc turn_seat=2". */
    @Override
    public String toString() {
      StringBuilder line = new StringBuilder(code.name()).append(' ').append(reason).append(": ").append(message);
      metadata.forEach((key, value) -> line.append(' ').append(key).append('=').append(value));
      return line.append(violations).toString();
    }
  }
}
