package dizhu.bot;

import dizhu.v1.BidRequest;
import dizhu.v1.Card;
import dizhu.v1.CardSet;
import dizhu.v1.CreateTableRequest;
import dizhu.v1.CreateTableResponse;
import dizhu.v1.GetTableRequest;
import dizhu.v1.JoinTableRequest;
import dizhu.v1.JoinTableResponse;
import dizhu.v1.LegalMove;
import dizhu.v1.ListLegalMovesRequest;
import dizhu.v1.ListLegalMovesResponse;
import dizhu.v1.Phase;
import dizhu.v1.PlayRequest;
import dizhu.v1.SeatView;
import dizhu.v1.SettleRequest;
import dizhu.v1.SettleResponse;
import dizhu.v1.TableEvent;
import dizhu.v1.TableSettings;
import dizhu.v1.TableView;
import dizhu.v1.Variant;
import dizhu.v1.WatchTableRequest;
import dizhu.v1.WatchTableResponse;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Plays a seat of a dizhu table at random among the legal choices, through the referee's gRPC API
 * (docs/api.md), until the table closes.
 *
 * <pre>
 *   java -jar dizhu-bot.jar --create [--variant 3p|4p] [--rounds 1]    create a table, print {"table_id", "creator_token"}
 *   java -jar dizhu-bot.jar --table ID [--name NAME | --token TOKEN]  take a seat (or play a token's) to the end
 * </pre>
 *
 * Joining prints {"table_id", "seat", "seat_token"} at once: --token plays that seat again (after a
 * crash, say), where joining anew would find the table full. --target is host:port or
 * unix:/path/to/socket.
 *
 * <p>With --games it plays many tables in one warmed JVM, as a `dizhu tournament` gRPC entrant with
 * `per_game = false`: one JSON line per game on standard input ({"protocol": "dizhu.exec/v1",
 * "type": "game", "target", "table_id", "seat_token", "game", ...}), each game on a thread of its
 * own, until the input ends and the games are over.
 *
 * Without flags it reads DIZHU_TARGET, DIZHU_TABLE_ID and DIZHU_SEAT_TOKEN (and DIZHU_TLS,
 * DIZHU_TLS_CA), as `dizhu tournament` starts a gRPC entrant. At the end it prints {"table_id",
 * "seat", "decisions", "reads", "balances"} as one line of JSON.
 */
public final class DizhuBot {
  /**
   * Silence after which a WatchTable stream counts as lost: the referee sends a heartbeat on an
   * idle stream every 20 s, so a longer silence is a dead connection nobody told the bot about.
   */
  private static final long IDLE_STREAM_MS = 45_000;

  private final Referee referee;
  private final String tableId;
  private final Random random;
  private final Object changed = new Object();
  private long latestVersion;
  private boolean streamEnded;
  private RuntimeException streamError;
  /** The open WatchTable call (cancelled when silent for IDLE_STREAM_MS) and when it last spoke. */
  private Context.CancellableContext stream;
  private long lastMessageNanos;
  private int decisions;
  /** Its GetTable calls. */
  private int reads;
  private long settledRound;

  private DizhuBot(Referee referee, String tableId, long seed) {
    this.referee = referee;
    this.tableId = tableId;
    this.random = new Random(seed);
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> env = System.getenv();
    String target = env.getOrDefault("DIZHU_TARGET", "127.0.0.1:50051");
    String tableId = env.getOrDefault("DIZHU_TABLE_ID", "");
    String token = env.getOrDefault("DIZHU_SEAT_TOKEN", "");
    String name = env.getOrDefault("DIZHU_ENTRANT", "java-bot");
    String apiKey = env.getOrDefault("DIZHU_API_KEY", "");
    String variant = "3p";
    int rounds = 1;
    boolean create = false;
    boolean games = false;
    Long seed = null;
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (flag.equals("--create")) {
        create = true;
        continue;
      }
      if (flag.equals("--print-reason-facts")) {
        ReasonFacts.print();
        return;
      }
      if (flag.equals("--games")) {
        games = true;
        continue;
      }
      if (i + 1 >= args.length) {
        usage();
      }
      String value = args[++i];
      switch (flag) {
        case "--target" -> target = value;
        case "--table" -> tableId = value;
        case "--token" -> token = value;
        case "--name" -> name = value;
        case "--api-key" -> apiKey = value;
        case "--variant" -> variant = value;
        case "--rounds" -> rounds = number(value, 1, Integer.MAX_VALUE).intValue();
        case "--seed" -> seed = number(value, Long.MIN_VALUE, Long.MAX_VALUE);
        default -> usage();
      }
    }
    if (!variant.equals("3p") && !variant.equals("4p") || !create && !games && tableId.isEmpty()) {
      usage();
    }
    if (games) {
      GameLines.play(env.containsKey("DIZHU_TLS"), env.get("DIZHU_TLS_CA"));
      return;
    }
    try (Referee referee = new Referee(target, env.containsKey("DIZHU_TLS"), env.get("DIZHU_TLS_CA"))) {
      if (create) {
        if (!apiKey.isEmpty()) {
          referee.useApiKey(apiKey);
        }
        CreateTableRequest request = CreateTableRequest.newBuilder()
            .setRequestId(Referee.newRequestId())
            .setSettings(TableSettings.newBuilder()
                .setVariant(variant.equals("4p") ? Variant.VARIANT_FOUR_PLAYER : Variant.VARIANT_THREE_PLAYER)
                .setRoundLimit(rounds))
            .build();
        CreateTableResponse created = fail("CreateTable", () ->
            referee.call("CreateTable", referee.tables(), stub -> stub.createTable(request)));
        // The creator token closes the table (`dizhu table close`); keep it.
        printLine(String.format("{\"table_id\":\"%s\",\"creator_token\":\"%s\"}",
            created.getTableId(), created.getCreatorToken()));
        return;
      }
      if (token.isEmpty()) {
        // A JoinTable whose deadline passes may have taken a seat: the same request_id sent
        // again returns that seat instead of taking a second one.
        JoinTableRequest join = JoinTableRequest.newBuilder()
            .setTableId(tableId).setRequestId(Referee.newRequestId()).setPlayerName(name).build();
        JoinTableResponse joined = fail("JoinTable", () ->
            referee.call("JoinTable", referee.tables(), stub -> stub.joinTable(join)));
        token = joined.getSeatToken();
        System.err.printf("joined table %s at seat %d as %s%n", tableId, joined.getSeat(), name);
        printLine(String.format("{\"table_id\":\"%s\",\"seat\":%d,\"seat_token\":\"%s\"}",
            tableId, joined.getSeat(), token));
      }
      referee.useToken(token);
      DizhuBot bot = new DizhuBot(referee, tableId, seed != null ? seed : (tableId + "/" + name + "/" + token).hashCode());
      String table = tableId;
      TableView view = fail("playing table " + table, bot::play);
      List<String> balances = new ArrayList<>();
      for (SeatView seat : view.getSeatsList()) {
        balances.add(Long.toString(seat.getBalance()));
      }
      printLine(String.format("{\"table_id\":\"%s\",\"seat\":%d,\"decisions\":%d,\"reads\":%d,\"balances\":[%s]}",
          tableId, view.getYourSeat(), bot.decisions, bot.reads, String.join(",", balances)));
    }
  }

  /**
   * One line on stdout in one write: the bots of a table often share a pipe (the README's step 3),
   * and a line printed in pieces interleaves with theirs.
   */
  private static void printLine(String line) {
    byte[] bytes = (line + "\n").getBytes(StandardCharsets.UTF_8);
    System.out.flush();
    System.out.write(bytes, 0, bytes.length);
    System.out.flush();
  }

  /** The flag's value as a whole number in [min, max]; exit status 2 (usage) if it is none. */
  private static Long number(String value, long min, long max) {
    try {
      long parsed = Long.parseLong(value);
      if (parsed >= min && parsed <= max) {
        return parsed;
      }
    } catch (NumberFormatException notANumber) {
      // Falls through to the usage line.
    }
    usage();
    return null;
  }

  private static void usage() {
    System.err.println("usage: dizhu-bot --create [--variant 3p|4p] [--rounds N] | --table ID [--name NAME | --token TOKEN] | --games");
    System.exit(2);
  }

  private interface Step<T> {
    T run();
  }

  /** The step's result, or exit status 1 with the refusal's status, reason and metadata. */
  private static <T> T fail(String what, Step<T> step) {
    try {
      return step.run();
    } catch (StatusRuntimeException error) {
      System.err.println(what + ": " + Referee.ErrorDetails.of(error));
      System.exit(1);
      return null;
    }
  }

  private TableView read() {
    reads++;
    GetTableRequest request = GetTableRequest.newBuilder().setTableId(tableId).build();
    return referee.call("GetTable", referee.tables(), stub -> stub.getTable(request)).getTable();
  }

  /**
   * Whether the change {@code event} is part of may ask something of {@code seat} (a turn, a deal,
   * the end of the auction or the round, the close): anything but a bid or play that hands the
   * turn to another seat (its next_seat), another seat's Settle or clock, or a presence. Unknown:
   * yes (the seat not known yet, a move without next_seat, a kind of event this bot does not know).
   */
  static boolean concerns(TableEvent event, Integer seat) {
    if (seat == null) {
      return true;
    }
    return switch (event.getPayloadCase()) {
      case BID_MADE -> !event.getBidMade().hasNextSeat() || event.getBidMade().getNextSeat() == seat;
      case CARDS_PLAYED -> !event.getCardsPlayed().hasNextSeat() || event.getCardsPlayed().getNextSeat() == seat;
      case SEAT_SETTLED -> event.getSeatSettled().getSeat() == seat;
      case TURN_DEADLINE -> event.getTurnDeadline().getSeat() == seat;
      case SEAT_PRESENCE -> false;
      default -> true;
    };
  }

  /**
   * Follows the table with WatchTable and tells of every new version of a change that may ask
   * something of the seat ({@link #concerns}). A lost or silent stream is opened again after the
   * last event received (after_sequence, after_write_id), with a capped backoff, for up to
   * Referee.RETRY_HORIZON_MS without a message.
   */
  private void follow() {
    WatchTableRequest.Builder request = WatchTableRequest.newBuilder().setTableId(tableId);
    // The seat, from the stream's snapshot (the stream is opened with its token).
    Integer seat = null;
    long delayMs = ReasonFacts.INITIAL_BACKOFF_MS;
    long lostSince = 0;
    ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(task -> {
      Thread thread = new Thread(task, "watch-table-idle");
      thread.setDaemon(true);
      return thread;
    });
    watchdog.scheduleWithFixedDelay(this::cancelIfSilent, 1, 1, TimeUnit.SECONDS);
    while (true) {
      Context.CancellableContext context = Context.current().withCancellation();
      synchronized (changed) {
        stream = context;
        lastMessageNanos = System.nanoTime();
      }
      Context previous = context.attach();
      try {
        Iterator<WatchTableResponse> events = referee.tables().watchTable(request.build());
        while (events.hasNext()) {
          TableEvent event = events.next().getEvent();
          request.setAfterSequence(event.getSequence()).setAfterWriteId(event.getWriteId());
          lostSince = 0;
          delayMs = ReasonFacts.INITIAL_BACKOFF_MS;
          if (event.hasSnapshot() && event.getSnapshot().hasYourSeat()) {
            seat = event.getSnapshot().getYourSeat();
          }
          synchronized (changed) {
            lastMessageNanos = System.nanoTime();
            if (concerns(event, seat)) {
              latestVersion = Math.max(latestVersion, event.getVersion());
            }
            changed.notifyAll();
          }
        }
        break; // OK: after TableClosed
      } catch (StatusRuntimeException error) {
        Status.Code code = error.getStatus().getCode();
        if (code == Status.Code.OUT_OF_RANGE) {
          // Resumed beyond the table's latest event (a recreated or restored table): start over.
          request.clearAfterSequence().clearAfterWriteId();
          continue;
        }
        lostSince = lostSince == 0 ? System.nanoTime() : lostSince;
        if (!Referee.ErrorDetails.of(error).retryable() || System.nanoTime() - lostSince > TimeUnit.MILLISECONDS.toNanos(Referee.RETRY_HORIZON_MS)) {
          synchronized (changed) {
            streamError = error;
          }
          break;
        }
        System.err.printf("WatchTable: %s; opening it again in %d ms%n", Referee.ErrorDetails.of(error), delayMs);
        referee.sleepBeforeRetry(delayMs, error);
        delayMs = ReasonFacts.next(delayMs);
      } finally {
        context.detach(previous);
        context.cancel(null);
      }
    }
    watchdog.shutdownNow();
    synchronized (changed) {
      streamEnded = true;
      changed.notifyAll();
    }
  }

  /** Cancels the open stream when it said nothing, not even a heartbeat, for IDLE_STREAM_MS. */
  private void cancelIfSilent() {
    synchronized (changed) {
      if (stream != null && System.nanoTime() - lastMessageNanos > TimeUnit.MILLISECONDS.toNanos(IDLE_STREAM_MS)) {
        stream.cancel(Status.CANCELLED.withDescription("no message, not even a heartbeat").asRuntimeException());
      }
    }
  }

  /** Returns once the table's version is past {@code seen}, or its stream ended. */
  private void waitBeyond(long seen) throws InterruptedException {
    synchronized (changed) {
      while (latestVersion <= seen && !streamEnded) {
        changed.wait();
      }
      if (streamEnded && streamError != null && latestVersion <= seen) {
        throw streamError;
      }
    }
  }

  /** Plays a seat token's seat of a table until it closes (on the calling thread); the closed table's view. */
  static TableView playSeat(Referee referee, String tableId, String token, long seed) {
    referee.useToken(token);
    return new DizhuBot(referee, tableId, seed).play();
  }

  /** Plays the seat until the table closes; the closed table's view. */
  private TableView play() {
    Thread follower = new Thread(this::follow, "watch-table");
    follower.setDaemon(true);
    follower.start();
    TableView view = read();
    while (view.getPhase() != Phase.PHASE_CLOSED) {
      try {
        TableView after = act(view);
        if (after != null) {
          decisions++;
          view = after;
          continue;
        }
        waitBeyond(view.getVersion());
      } catch (StatusRuntimeException error) {
        // Moved on: read the table and decide again. Any other refusal ends the bot, unless the
        // table has closed meanwhile (a refusal of a closed table ends the game).
        Referee.ErrorDetails details = Referee.ErrorDetails.of(error);
        System.err.printf("seat %d: %s; reading the table again%n", view.getYourSeat(), details);
        view = read();
        if (details.decision() != ReasonFacts.Decision.MOVED_ON && view.getPhase() != Phase.PHASE_CLOSED) {
          throw error;
        }
        continue;
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(interrupted);
      }
      view = read();
    }
    return view;
  }

  /** Makes the seat's decision if the table waits for one; null if it does not. */
  private TableView act(TableView view) {
    String requestId = Referee.newRequestId();
    if (view.getPhase() == Phase.PHASE_ROUND_OVER && view.getLastSettlement().getRound() > settledRound) {
      SettleRequest request = SettleRequest.newBuilder().setTableId(tableId).setRequestId(requestId).build();
      SettleResponse settled = referee.call("Settle", referee.tables(), stub -> stub.settle(request));
      settledRound = settled.getSettlement().getRound();
      return settled.getTable();
    }
    // turn_seat and your_seat are optional: getTurnSeat() reads 0 when unset, which is seat
    // 0's number. Ask for presence first.
    if (!view.hasTurnSeat() || !view.hasYourSeat() || view.getTurnSeat() != view.getYourSeat()) {
      return null;
    }
    if (view.getPhase() == Phase.PHASE_AUCTION) {
      List<Integer> amounts = view.getLegalBidsList(); // 0 (a pass), then every amount above the highest bid
      if (amounts.isEmpty()) {
        return null;
      }
      BidRequest request = BidRequest.newBuilder().setTableId(tableId).setRequestId(requestId)
          .setExpectedVersion(view.getVersion()).setAmount(amounts.get(random.nextInt(amounts.size()))).build();
      return referee.call("Bid", referee.tables(), stub -> stub.bid(request)).getTable();
    }
    if (view.getPhase() == Phase.PHASE_PLAY) {
      ListLegalMovesRequest.Builder ask = ListLegalMovesRequest.newBuilder()
          .setVariant(view.getSettings().getVariant())
          .setHand(CardSet.newBuilder().addAllCards(view.getYourHandList()));
      List<Card> toBeat = toBeat(view);
      if (toBeat != null) {
        ask.setToBeat(CardSet.newBuilder().addAllCards(toBeat));
      }
      ListLegalMovesResponse legal = referee.call("ListLegalMoves", referee.rules(), stub -> stub.listLegalMoves(ask.build()));
      List<List<Card>> choices = new ArrayList<>();
      for (LegalMove move : legal.getMovesList()) {
        choices.add(move.getCardsList());
      }
      if (legal.getCanPass() || choices.isEmpty()) {
        choices.add(List.of()); // a pass
      }
      PlayRequest request = PlayRequest.newBuilder().setTableId(tableId).setRequestId(requestId)
          .setExpectedVersion(view.getVersion()).addAllCards(choices.get(random.nextInt(choices.size()))).build();
      return referee.call("Play", referee.tables(), stub -> stub.play(request)).getTable();
    }
    return null;
  }

  /** The view's play to beat; null when the bot leads (the view leaves it unset then). */
  private static List<Card> toBeat(TableView view) {
    if (!view.hasToBeat()) {
      return null;
    }
    return view.getToBeat().getCardsList();
  }
}
