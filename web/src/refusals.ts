// What went wrong, in words a person reads: each refusal of the referee (errors.proto's
// ErrorReason) as a sentence, with the referee's own message and its code kept beside it
// (for a bug report, or a bot author comparing with docs/api.md); and the page shown when a
// link leads nowhere, always with a way back to the lobby.
import type { Refusal } from "./api";
import { fill, h } from "./dom";
import type { ErrorReason } from "./gen/dizhu/v1/errors_pb";

/**
 * The refusals a person meets at the table or in the lobby, said plainly: one for every
 * reason of errors.proto (the type is the generated enum's, so a new reason fails the build
 * until it has its words).
 */
const WORDS: Record<Exclude<keyof typeof ErrorReason, "UNSPECIFIED">, string> = {
  NOT_YOUR_TURN: "It is not your turn.",
  ILLEGAL_COMBINATION: "Those cards are not a legal play.",
  DOES_NOT_BEAT: "That play does not beat the play to beat.",
  CARDS_NOT_IN_HAND: "You do not hold those cards.",
  MUST_LEAD: "You lead this trick: you cannot pass.",
  BID_TOO_LOW: "A bid must be higher than the highest bid so far.",
  WRONG_PHASE: "That is not possible at this point of the round.",
  STALE_STATE: "The table moved on before your move arrived: look again and decide.",
  TABLE_NOT_FOUND: "There is no such table (it may have closed and expired).",
  TABLE_FULL: "This table has no free seat.",
  UNAUTHENTICATED: "This browser holds no seat at this table.",
  PERMISSION_DENIED: "You may not do that at this table.",
  INVALID_ARGUMENT: "The request was not valid.",
  TABLE_CLOSED: "This table is closed.",
  SEAT_TAKEN: "That seat is taken.",
  REQUEST_ID_REUSED: "That request was already used for something else.",
  SEQUENCE_OUT_OF_RANGE: "The table's story is no longer kept that far back.",
  UNAVAILABLE: "The referee cannot be reached just now: try again in a moment.",
  INTERNAL: "The referee failed on its side.",
  RATE_LIMITED: "Too many requests: wait a moment and try again.",
  QUOTA_EXCEEDED: "You have reached the number of tables you may keep open.",
  STORE_FULL: "The referee has no room for another table just now.",
};

/**
 * The reasons a call without the referee's ErrorInfo carries (api.ts: the transport's code
 * stands in): the referee was not reached, or did not answer in time.
 */
const UNREACHED = new Set(["Unknown", "Unavailable", "DeadlineExceeded", "Canceled", "Aborted"]);

/** Whether the refusal came from no referee at all (no answer), not from the referee's rules. */
function unreached(refused: Refusal): boolean {
  return UNREACHED.has(refused.reason);
}

/** A refusal in plain words (the referee's own message follows it on the page). */
export function refusalWords(refused: Refusal): string {
  if (unreached(refused)) return "The referee could not be reached: check the connection, then try again.";
  return (WORDS as Record<string, string>)[refused.reason] ?? "The referee refused.";
}

/** A refusal as the page shows it: the plain words, the referee's message, the code apart. */
export function refusalParts(refused: Refusal): Node[] {
  const parts: Node[] = [h("b", { "data-testid": "refusal-words" }, refusalWords(refused))];
  if (unreached(refused)) {
    // The browser's own words (a failed fetch), not a reason of the referee's.
    if (refused.message.trim()) parts.push(h("small", { class: "refusal-code" }, ` (${refused.message.trim()})`));
    return parts;
  }
  if (refused.message.trim()) parts.push(h("span", { class: "refusal-message" }, ` ${refused.message.trim()}`));
  parts.push(
    document.createTextNode(" "),
    h("small", { class: "refusal-code" }, "(code ", h("code", { "data-testid": "refusal-reason" }, refused.reason), ")"),
  );
  return parts;
}

/** The link back to the lobby every dead end offers. */
export function lobbyLink(): HTMLElement {
  return h("a", { href: location.pathname, "data-testid": "lobby-link" }, "Back to the lobby: open tables, a new table, replays");
}

/** A page that could not be shown: what happened (words, or a refusal), and the ways on. */
export function deadEnd(root: HTMLElement, title: string, what: (Node | string)[], ...links: HTMLElement[]): void {
  fill(
    root,
    h(
      "div",
      { class: "dead-end" },
      h("header", { class: "bar" }, h("a", { href: location.pathname, class: "home" }, "dizhu")),
      h("h1", { "data-testid": "dead-end-title" }, title),
      h("p", { class: "refusal", "data-testid": "refusal", role: "alert" }, ...what),
      h("ul", { class: "ways-on" }, [...links, lobbyLink()].map((link) => h("li", {}, link))),
    ),
  );
}
