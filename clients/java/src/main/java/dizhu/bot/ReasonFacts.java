package dizhu.bot;

import com.google.gson.Gson;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import dizhu.v1.ErrorCategory;
import dizhu.v1.ErrorFacts;
import dizhu.v1.ErrorReason;
import dizhu.v1.ErrorsProto;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the bot does after a failed call, decided from the contract's facts rather than from
 * lists of reasons typed here: the category of each ErrorReason (the (dizhu.v1.facts) option of
 * proto/dizhu/v1/errors.proto, read from the generated descriptor) and the retry policy every
 * client shares (retry_policy.json: the channel's service config, and the bot's own backoff).
 */
final class ReasonFacts {
  enum Decision {
    /** Nothing was applied: send the very same request again. */
    RETRY,
    /** The table is not where the bot thought: read it again and decide again. */
    MOVED_ON,
    /** The same request would be refused again. */
    FATAL
  }

  private static final String PREFIX = "ERROR_REASON_";
  private static final Map<String, ?> RETRY_POLICY = retryPolicy();
  /** The policy's first backoff, its cap (also the cap of a RetryInfo delay) and its multiplier. */
  static final long INITIAL_BACKOFF_MS = millis("initialBackoff");
  static final long MAX_BACKOFF_MS = millis("maxBackoff");
  static final double BACKOFF_MULTIPLIER = ((Number) retry().get("backoffMultiplier")).doubleValue();

  private ReasonFacts() {}

  /** retry_policy.json's retryPolicy object (the channel takes the whole file as its service config). */
  private static Map<?, ?> retry() {
    List<?> methods = (List<?>) RETRY_POLICY.get("methodConfig");
    return (Map<?, ?>) ((Map<?, ?>) methods.get(0)).get("retryPolicy");
  }

  private static Map<String, ?> retryPolicy() {
    try {
      return Referee.retryPolicy();
    } catch (java.io.IOException missing) {
      throw new IllegalStateException(missing);
    }
  }

  /** A service config duration ("0.05s") in milliseconds. */
  private static long millis(String key) {
    String text = (String) retry().get(key);
    return Math.round(Double.parseDouble(text.substring(0, text.length() - 1)) * 1000);
  }

  /** The backoff after delayMs: grown by the multiplier, capped at the maximum. */
  static long next(long delayMs) {
    return Math.min(Math.round(delayMs * BACKOFF_MULTIPLIER), MAX_BACKOFF_MS);
  }

  /** The wait before sending again: the backoff, or the RetryInfo delay when longer, capped. */
  static long waitMs(long delayMs, long retryInfoMs) {
    return Math.min(Math.max(delayMs, retryInfoMs), MAX_BACKOFF_MS);
  }

  /** The facts of the ErrorReason named reason (without its prefix); null for one this contract lacks. */
  static ErrorFacts factsOf(String reason) {
    EnumValueDescriptor value = ErrorReason.getDescriptor().findValueByName(PREFIX + reason);
    if (value == null || !value.getOptions().hasExtension(ErrorsProto.facts)) {
      return null;
    }
    return value.getOptions().getExtension(ErrorsProto.facts);
  }

  /** By the reason's category; for a reason without facts, by the policy's retryable codes alone. */
  static Decision decide(Status.Code code, String reason) {
    ErrorFacts facts = factsOf(reason);
    ErrorCategory category = facts == null ? ErrorCategory.ERROR_CATEGORY_UNSPECIFIED : facts.getCategory();
    return switch (category) {
      case ERROR_CATEGORY_RETRYABLE -> Decision.RETRY;
      case ERROR_CATEGORY_MOVED_ON -> Decision.MOVED_ON;
      case ERROR_CATEGORY_UNSPECIFIED -> ((List<?>) retry().get("retryableStatusCodes")).contains(code.name())
          ? Decision.RETRY : Decision.FATAL;
      default -> Decision.FATAL;
    };
  }

  /**
   * The hidden flag --print-reason-facts: the decision for every ErrorReason (with the code its
   * facts give) and for each code the policy retries, and the backoff, as one line of JSON
   * (tests/polyglot/test_reason_facts.py compares it with the contract).
   */
  static void print() {
    Map<String, String> decisions = new TreeMap<>();
    for (EnumValueDescriptor value : ErrorReason.getDescriptor().getValues()) {
      String reason = value.getName().substring(PREFIX.length());
      ErrorFacts facts = factsOf(reason);
      if (facts != null) {
        decisions.put(reason, label(decide(Status.Code.valueOf(facts.getCode()), reason)));
      }
    }
    for (Object code : (List<?>) retry().get("retryableStatusCodes")) {
      decisions.put((String) code, label(decide(Status.Code.valueOf((String) code), (String) code)));
    }
    Map<String, Object> line = new TreeMap<>();
    line.put("decisions", decisions);
    line.put("initial_backoff_ms", INITIAL_BACKOFF_MS);
    line.put("max_backoff_ms", MAX_BACKOFF_MS);
    line.put("backoff_multiplier", BACKOFF_MULTIPLIER);
    System.out.println(new Gson().toJson(line));
  }

  private static String label(Decision decision) {
    return decision.name().toLowerCase(java.util.Locale.ROOT);
  }
}
