package dizhu.bot;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonSyntaxException;
import io.grpc.StatusRuntimeException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The bot as a persistent `dizhu tournament` gRPC entrant (`per_game = false`, protocol
 * dizhu.exec/v1, docs/tournaments.md): one JVM, started once and warmed by its first games, plays
 * every game the runner hands it on standard input, several at once. A JVM started per game spends
 * a second or more of CPU starting and compiling before its first decision, which on a busy machine
 * can run past a turn's clock.
 */
final class GameLines {
  private GameLines() {}

  /** Plays each game line of standard input on a thread of its own; returns once the input ended and every game is over. */
  static void play(boolean tls, String caFile) throws IOException, InterruptedException {
    ExecutorService games = Executors.newCachedThreadPool();
    BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = input.readLine(); line != null; line = input.readLine()) {
      JsonObject assignment;
      try {
        assignment = JsonParser.parseString(line).getAsJsonObject();
      } catch (JsonSyntaxException | IllegalStateException notAnObject) {
        System.err.println("not a game line: " + line);
        continue;
      }
      if (!assignment.has("type") || !assignment.get("type").getAsString().equals("game")) {
        continue;
      }
      games.submit(() -> playGame(assignment, tls, caFile));
    }
    games.shutdown();
    games.awaitTermination(Long.MAX_VALUE, TimeUnit.DAYS);
  }

  private static void playGame(JsonObject assignment, boolean tls, String caFile) {
    String game = assignment.get("game").getAsString();
    String tableId = assignment.get("table_id").getAsString();
    try (Referee referee = new Referee(assignment.get("target").getAsString(), tls, caFile)) {
      DizhuBot.playSeat(referee, tableId, assignment.get("seat_token").getAsString(), (game + "/" + tableId).hashCode());
      System.err.printf("%s: table %s played to its end%n", game, tableId);
    } catch (StatusRuntimeException error) {
      System.err.printf("%s: %s%n", game, Referee.ErrorDetails.of(error));
    } catch (IOException | InterruptedException | RuntimeException error) {
      System.err.printf("%s: %s%n", game, error);
    }
  }
}
