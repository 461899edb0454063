// A table as one person sees it: the seat this browser holds (its token kept per table, so
// a reload resumes the same seat), or a spectator's view. The page shows only what the
// referee sends it: a seat's own hand, never anyone else's before the round is over.
//
// The table's WatchTable stream says what changed: its events are applied to the view
// (events.ts), and the table is read with GetTable only where the contract says to (at the
// start, after a gap, a fresh snapshot, a change no event states whole, the bids its seat may
// make when the auction comes to it: the view's legal_bids, which no event states). A lost stream
// resumes after the last sequence received. The log tells the round from the view's
// history, so a page opened (or reloaded) mid-round tells it from its first bid.
//
// Keyboard: ← → move along the hand, Space or Enter selects the card there, P plays the
// selection, S passes, H hints, C or Escape clears, 0-3 bid in the auction.
import { getOption } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { auth, refusal, requestId, retryable, rules, seatNames, tables, tokens, type Refusal } from "./api";
import { cardElement, cardId, formatRankList, formatRanks, kindName, ranksKey, sortCards } from "./cards";
import { fill, h, landlordBadge } from "./dom";
import { applyEvent } from "./events";
import { commitments, hex, seedMatches } from "./fairness";
import { CombinationKind, type Card, type Combination } from "./gen/dizhu/v1/cards_pb";
import { ErrorCategory, ErrorReasonSchema, facts } from "./gen/dizhu/v1/errors_pb";
import type { TableEvent } from "./gen/dizhu/v1/events_pb";
import type { LegalMove } from "./gen/dizhu/v1/rules_service_pb";
import { CloseReason, NextRound, Phase, RoundOutcome, type RoundSettlement, type TableView } from "./gen/dizhu/v1/table_pb";
import { deadEnd, refusalParts, refusalWords } from "./refusals";
import { frames, replayOf, type Frame } from "./replay";
import { describe, payout, RoundWalk, variantSizes } from "./round";

const IDLE_STREAM_MS = 45_000;
/** Reasons meaning the table moved on (errors.proto's facts: category MOVED_ON): read it again. */
const MOVED_ON = new Set(
  ErrorReasonSchema.values
    .filter((value) => getOption(value, facts).category === ErrorCategory.MOVED_ON)
    .map((value) => value.localName),
);
const OUTCOMES: Record<number, string> = {
  [RoundOutcome.LANDLORD_WON]: "the landlord won",
  [RoundOutcome.FARMERS_WON]: "the farmers won",
  [RoundOutcome.VOID]: "void: every deal was thrown in",
  [RoundOutcome.ABANDONED]: "abandoned",
};
/** Why a table closed (table.proto, CloseReason): its last round ended however it ended, or someone closed it. */
const CLOSE_REASONS: Record<number, string> = {
  [CloseReason.ROUND_LIMIT]: "its last round is over",
  [CloseReason.CLOSED_BY_CREATOR]: "closed by its creator",
  [CloseReason.ABANDONED]: "abandoned: nobody acted at it for too long",
};
/** The legal plays, grouped: each group a kind (bombs with the rocket), in this order. */
const GROUPS: [string, CombinationKind[]][] = [
  ["singles", [CombinationKind.SINGLE]],
  ["pairs", [CombinationKind.PAIR]],
  ["trios", [CombinationKind.TRIO, CombinationKind.TRIO_WITH_SINGLE, CombinationKind.TRIO_WITH_PAIR]],
  ["straights", [CombinationKind.STRAIGHT]],
  ["pair sequences", [CombinationKind.PAIR_SEQUENCE]],
  ["airplanes", [CombinationKind.TRIO_SEQUENCE, CombinationKind.AIRPLANE_WITH_SINGLES, CombinationKind.AIRPLANE_WITH_PAIRS]],
  ["four with two", [CombinationKind.QUAD_WITH_TWO_SINGLES, CombinationKind.QUAD_WITH_TWO_PAIRS]],
  ["bombs and rocket", [CombinationKind.BOMB, CombinationKind.ROCKET]],
];
/** Where each seat sits around the table, seen from the viewer's seat (the next seat to its right). */
const PLACES: Record<number, string[]> = { 3: ["bottom", "right", "left"], 4: ["bottom", "right", "top", "left"] };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The seats best first, each with its place: equal balances share a place and the places they
 * take up are skipped (docs/tables.md; balances 3, 3, -6 give places 1, 1, 3).
 */
export function standings<Seat extends { balance: bigint }>(seats: readonly Seat[]): { seat: Seat; place: number }[] {
  const sorted = [...seats].sort((a, b) => (a.balance === b.balance ? 0 : a.balance > b.balance ? -1 : 1));
  return sorted.map((seat) => ({ seat, place: 1 + sorted.filter((other) => other.balance > seat.balance).length }));
}

/**
 * Where the table is, for its header. Between rounds the view's round is the one about to
 * start (table.proto, TableView.round): the round that is over is the settled one.
 */
export function roundState(view: TableView, limit: string, phase: string): string {
  if (view.phase === Phase.ROUND_OVER && view.lastSettlement) return `round ${view.lastSettlement.round}${limit} over`;
  return `round ${view.round}${limit} · ${phase}`;
}

/** A card set that is no combination, with Classification.reason's why (rules_service.proto). */
function noCombination(reason: string): string {
  const why = reason === "NOT_IN_VARIANT" ? ": a kind this variant does not play" : ": no kind of play has these cards";
  return `${refusalWords({ code: "", reason: "ILLEGAL_COMBINATION", message: "", metadata: {} })} They are no combination${why}.`;
}

/** Why a combination does not beat the play to beat (docs/rules.md §7): another kind, another size, not higher. */
function doesNotBeat(mine: Combination, theirs: Combination): string {
  const words = refusalWords({ code: "", reason: "DOES_NOT_BEAT", message: "", metadata: {} });
  const them = `${kindName(theirs.kind)} ${formatRankList(theirs.ranks)}`;
  if (mine.kind !== theirs.kind) return `${words} A ${kindName(mine.kind)} does not beat a ${them}: only a bomb or the rocket beats another kind.`;
  if (mine.size !== theirs.size) return `${words} The play to beat, ${them}, has ${theirs.size} cards; this has ${mine.size}: not enough cards, or too many.`;
  return `${words} ${formatRankList(mine.ranks)} is not higher than ${them}.`;
}

/** A finished round as the page shows it: what each seat still held, the last trick, the story. */
interface RoundEnd {
  round: number;
  last: Frame;
  lines: string[];
}

export class TablePage {
  private view: TableView | null = null;
  /** The version of the last view read whole (GetTable, a snapshot, an answer); events after it apply. */
  private readAt = 0n;
  private token: string | null;
  private lastSequence: bigint | undefined;
  /** The write id of the last event received: a store restored behind it answers with a snapshot. */
  private lastWriteId = 0n;
  private stream: AbortController | null = null;
  /** What the header says of the stream: connecting, live, reconnecting, the table closed. */
  private streamStatus = "connecting…";
  private selected = new Set<number>();
  private legal: LegalMove[] = [];
  /** The version the legal moves were listed for ("" while none are), and the one being listed. */
  private legalFor = "";
  private legalAsked = "";
  private canPass = false;
  /** Why the selection is no legal play, in the referee's words, by the selection's ranks. */
  private why: { key: string; text: string } = { key: "", text: "" };
  private busy = false;
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;
  private clockOffsetMs = 0;
  /** Whether a narrow screen shows the whole running trick, not just its play to beat and after. */
  private wholeTrick = false;
  /** The groups of legal plays the person opened. */
  private readonly openGroups = new Set<string>();
  /** The finished rounds this page told, newest last (read back with GetReplay, once each). */
  private readonly ended: RoundEnd[] = [];
  private endAsked = 0;
  /** Seats joining and leaving, as they happened while the page was open. */
  private readonly seatLines: string[] = [];
  private readonly parts: Record<"header" | "felt" | "me" | "moves" | "refusal" | "result" | "log", HTMLElement>;

  constructor(
    private readonly root: HTMLElement,
    private readonly tableId: string,
    spectate: boolean,
  ) {
    this.token = spectate ? null : tokens.seat(tableId);
    this.parts = {
      header: h("header", { class: "bar" }),
      felt: h("section", { class: "felt", "data-testid": "seats", "aria-label": "the table" }),
      // The seat's hand and its buttons stay on the screen whatever is scrolled (app.css, .me).
      me: h("section", { class: "me", "data-testid": "me", "aria-label": "your hand" }),
      moves: h("section", { class: "below-me", "aria-label": "your legal plays and the table's controls" }),
      refusal: h("section", { class: "refusal", "data-testid": "refusal", role: "alert", hidden: true }),
      result: h("section", { class: "result", "data-testid": "result", "aria-label": "the round's result", hidden: true }),
      log: h("ol", { class: "log", "data-testid": "log", reversed: true, tabindex: 0, "aria-label": "what happened, newest first" }),
    };
    fill(
      root,
      h(
        "div",
        { class: "table-page", "data-testid": "table" },
        this.parts.header,
        this.parts.felt,
        this.parts.refusal,
        this.parts.me,
        this.parts.moves,
        this.parts.result,
        h(
          "details",
          { class: "log-box", open: true },
          h("summary", {}, "What happened ", h("small", {}, "(newest first)")),
          this.parts.log,
        ),
      ),
    );
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  /** Read the table (falling back to a spectator's view if the kept token is refused), then follow it. */
  async start(): Promise<void> {
    try {
      await this.refresh();
    } catch (error) {
      const refused = refusal(error);
      if (refused.reason === "UNAUTHENTICATED" && this.token) {
        tokens.forgetSeat(this.tableId);
        this.token = null;
        await this.refresh();
      } else {
        if (refused.reason === "TABLE_NOT_FOUND")
          deadEnd(this.root, "No such table", [
            `There is no table “${this.tableId}”: it may have closed and expired, or the id is mistyped.`,
          ]);
        else deadEnd(this.root, "The table could not be opened", refusalParts(refused));
        return;
      }
    }
    setInterval(() => this.renderClock(), 250);
    void this.follow();
  }

  // -- the stream ---------------------------------------------------------------

  private async follow(): Promise<void> {
    let delay = 250;
    for (;;) {
      const controller = new AbortController();
      this.stream = controller;
      let idle = 0;
      const awake = () => {
        clearTimeout(idle);
        idle = window.setTimeout(() => controller.abort(), IDLE_STREAM_MS);
      };
      try {
        awake();
        const request = { tableId: this.tableId, afterSequence: this.lastSequence, afterWriteId: this.lastWriteId };
        for await (const response of tables.watchTable(request, auth(this.token, controller.signal))) {
          awake();
          delay = 250;
          this.status("live");
          if (response.event) this.onEvent(response.event);
        }
        this.status("the table is closed");
        return;
      } catch (error) {
        const refused = refusal(error);
        if (refused.reason === "SEQUENCE_OUT_OF_RANGE") {
          this.lastSequence = undefined;
        } else if (refused.reason === "UNAUTHENTICATED" && this.token) {
          this.token = null;
          this.lastSequence = undefined;
        } else if (!retryable(error) && !controller.signal.aborted) {
          this.status(`the stream ended: ${refused.reason}`);
          return;
        }
        this.status("reconnecting…");
        await sleep(delay);
        delay = Math.min(delay * 2, 5000);
      } finally {
        clearTimeout(idle);
      }
    }
  }

  /** Start the stream again from a snapshot (after taking or leaving a seat). */
  private restartStream(): void {
    this.lastSequence = undefined;
    this.stream?.abort();
  }

  private onEvent(event: TableEvent): void {
    this.lastSequence = event.sequence;
    this.lastWriteId = event.writeId;
    if (event.time) this.clockOffsetMs = timestampMs(event.time) - Date.now();
    const payload = event.payload;
    if (payload.case === "snapshot") {
      this.setView(payload.value, true);
      return;
    }
    if (payload.case === "heartbeat") return;
    if (payload.case === "dealStarted")
      commitments.remember(this.tableId, payload.value.round, payload.value.dealNumber, payload.value.seedCommitment);
    if (payload.case === "seatJoined") this.seatLines.push(`${payload.value.playerName} takes seat ${payload.value.seat}`);
    if (payload.case === "seatLeft") {
      this.seatLines.push(`${payload.value.playerName} leaves seat ${payload.value.seat}`);
      seatNames.remember(this.tableId, payload.value.seat, payload.value.playerName);
    }
    const view = this.view;
    if (!view) return;
    const before = view.version;
    const applied = applyEvent(view, event, this.readAt);
    if (applied === "reread") {
      this.scheduleRefresh();
      return;
    }
    if (applied === "applied") {
      if (view.version !== before) this.selected.clear();
      void this.loadLegalMoves();
      this.render();
    }
  }

  // -- reading the table ---------------------------------------------------------

  private scheduleRefresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        try {
          await this.refresh();
        } catch (error) {
          if (!retryable(error)) this.showRefusal(refusal(error));
        }
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = null;
    });
  }

  private async refresh(): Promise<void> {
    const response = await tables.getTable({ tableId: this.tableId }, auth(this.token));
    if (response.table) this.setView(response.table);
  }

  /**
   * A view read whole: GetTable's or an action's answer (never an older one than shown), or
   * the stream's snapshot (which replaces whatever the page kept, as the contract says).
   */
  private setView(view: TableView, snapshot = false): void {
    if (this.view && !snapshot && view.version < this.view.version) return;
    const changed = this.view?.version !== view.version;
    this.view = view;
    this.readAt = view.version;
    for (const seat of view.seats) if (seat.playerName) seatNames.remember(this.tableId, seat.seat, seat.playerName);
    if (view.dealNumber) commitments.remember(this.tableId, view.round, view.dealNumber, view.seedCommitment);
    if (changed) this.selected.clear();
    void this.loadLegalMoves();
    this.render();
  }

  private myTurn(): boolean {
    const view = this.view;
    return !!view && view.yourSeat !== undefined && view.turnSeat === view.yourSeat;
  }

  /** The cards to beat (the view's); none when leading (the view leaves it unset then). */
  private toBeat(): Card[] | undefined {
    return this.view?.toBeat?.cards;
  }

  private async loadLegalMoves(): Promise<void> {
    const view = this.view;
    if (!view || view.phase !== Phase.PLAY || !this.myTurn()) {
      this.legal = [];
      this.legalFor = this.legalAsked = "";
      return;
    }
    const key = `${view.version}`;
    if (this.legalAsked === key) return;
    this.legalAsked = key;
    this.legal = [];
    this.legalFor = "";
    this.canPass = false;
    const beat = this.toBeat();
    try {
      const answer = await rules.listLegalMoves({
        variant: view.settings?.variant,
        hand: { cards: view.yourHand },
        toBeat: beat ? { cards: beat } : undefined,
      });
      if (this.legalAsked !== key) return;
      this.legal = answer.moves;
      this.canPass = answer.canPass;
      this.legalFor = key;
    } catch (error) {
      this.legalAsked = "";
      this.showRefusal(refusal(error));
    }
    this.render();
  }

  /** The finished round's replay, read once per round: what each seat still held, the last trick. */
  private async loadRoundEnd(settlement: RoundSettlement): Promise<void> {
    const round = settlement.round;
    if (this.endAsked >= round || this.ended.some((end) => end.round === round)) return;
    this.endAsked = round;
    try {
      const steps = frames(await replayOf(this.tableId, round), (seat) => this.name(seat));
      this.ended.push({ round, last: steps[steps.length - 1], lines: steps.map((step) => step.text) });
      this.render();
    } catch (error) {
      this.showRefusal(refusal(error));
    }
  }

  // -- acting ------------------------------------------------------------------

  /** One decision: the same request (same request id) is retried while the referee is unreachable. */
  private async act(call: (id: string) => Promise<{ table?: TableView }>): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.clearRefusal();
    const id = requestId();
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          const answer = await call(id);
          if (answer.table) this.setView(answer.table);
          return;
        } catch (error) {
          if (!retryable(error) || attempt >= 4) throw error;
          await sleep(200 * attempt);
        }
      }
    } catch (error) {
      const refused = refusal(error);
      this.showRefusal(refused);
      if (MOVED_ON.has(refused.reason)) this.scheduleRefresh();
    } finally {
      this.busy = false;
      this.render();
    }
  }

  private bid(amount: number): void {
    const view = this.view!;
    void this.act((id) =>
      tables.bid({ tableId: this.tableId, requestId: id, expectedVersion: view.version, amount }, auth(this.token)),
    );
  }

  private play(cards: Card[]): void {
    const view = this.view!;
    void this.act((id) =>
      tables.play({ tableId: this.tableId, requestId: id, expectedVersion: view.version, cards }, auth(this.token)),
    );
  }

  private settle(): void {
    void this.act((id) => tables.settle({ tableId: this.tableId, requestId: id }, auth(this.token)));
  }

  private async sit(name: string): Promise<void> {
    await this.act(async (id) => {
      const joined = await tables.joinTable({ tableId: this.tableId, requestId: id, playerName: name });
      tokens.setSeat(this.tableId, joined.seatToken);
      this.token = joined.seatToken;
      this.restartStream();
      return joined;
    });
  }

  private leave(): void {
    const phase = this.view?.phase;
    const consequence =
      phase === Phase.AUCTION
        ? " The auction is running: leaving abandons the round, and nobody pays for it."
        : phase === Phase.PLAY
          ? " A round is being played: leaving forfeits it, and you pay as its loser."
          : "";
    if (!confirm(`Leave the table?${consequence}`)) return;
    void this.act(async (id) => {
      const left = await tables.leaveTable({ tableId: this.tableId, requestId: id }, auth(this.token));
      tokens.forgetSeat(this.tableId);
      this.token = null;
      this.restartStream();
      return left;
    });
  }

  private close(): void {
    if (!confirm("Close the table for everyone?")) return;
    const creator = tokens.creator(this.tableId);
    void this.act((id) => tables.closeTable({ tableId: this.tableId, requestId: id }, auth(creator)));
  }

  /**
   * Whether `selection` may be sent: some cards, and a legal play once the legal plays are
   * known (before they are, the referee judges it, and its refusal says why).
   */
  private playable(selection: Card[]): boolean {
    if (!selection.length) return false;
    return !this.legalFor || this.legal.some((move) => ranksKey(move.cards) === ranksKey(selection));
  }

  /**
   * Why `selection` is no legal play now, as the referee would refuse it (refusals.ts): no
   * combination, or one that does not beat the play to beat (another kind, another number of
   * cards, not higher). Asked of RulesService once per selection; until it answers, a placeholder.
   */
  private whyNot(selection: Card[]): string {
    const key = ranksKey(selection);
    if (this.why.key === key) return this.why.text;
    this.why = { key, text: "not a legal play now" };
    void this.explain(selection, key);
    return this.why.text;
  }

  private async explain(selection: Card[], key: string): Promise<void> {
    const variant = this.view?.settings?.variant;
    const beat = this.toBeat();
    try {
      let text: string;
      if (!beat) {
        const answer = await rules.classify({ variant, cards: { cards: selection } });
        text = noCombination(answer.classification?.reason ?? "");
      } else {
        const answer = await rules.compare({ variant, a: { cards: beat }, b: { cards: selection } });
        const mine = answer.b?.combinations[0];
        const theirs = answer.a?.combinations[0];
        text = !mine ? noCombination(answer.b?.reason ?? "") : answer.beats || !theirs ? "not a legal play now" : doesNotBeat(mine, theirs);
      }
      if (this.why.key !== key) return;
      this.why = { key, text };
      this.render();
    } catch (error) {
      if (this.why.key === key) this.why = { key, text: "not a legal play now" };
      this.showRefusal(refusal(error));
    }
  }

  private selectedCards(): Card[] {
    return (this.view?.yourHand ?? []).filter((card) => this.selected.has(cardId(card)));
  }

  private toggle(card: Card): void {
    const id = cardId(card);
    if (this.selected.has(id)) this.selected.delete(id);
    else this.selected.add(id);
    this.render();
  }

  private choose(move: LegalMove | undefined): void {
    if (!move) return;
    this.selected = new Set(move.cards.map(cardId));
    this.render();
  }

  /** The keys of the table (see the top of this file); none while typing in a field. */
  private onKey(event: KeyboardEvent): void {
    const target = event.target as HTMLElement | null;
    if (!this.view || event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
    const view = this.view;
    const key = event.key.toLowerCase();
    if (key === "arrowleft" || key === "arrowright") {
      const cards = [...this.parts.me.querySelectorAll<HTMLElement>("[data-testid=hand] .card")];
      if (!cards.length) return;
      const at = cards.indexOf(document.activeElement as HTMLElement);
      const next = at < 0 ? 0 : Math.max(0, Math.min(cards.length - 1, at + (key === "arrowright" ? 1 : -1)));
      cards[next].focus();
      event.preventDefault();
      return;
    }
    if (!this.myTurn()) return;
    if (view.phase === Phase.AUCTION && /^[0-3]$/.test(key)) {
      const amount = Number(key);
      if (view.legalBids.includes(amount)) this.bid(amount);
    } else if (view.phase === Phase.PLAY && key === "p" && this.playable(this.selectedCards())) this.play(this.selectedCards());
    else if (view.phase === Phase.PLAY && key === "s" && this.canPass) this.play([]);
    else if (view.phase === Phase.PLAY && key === "h") this.choose(this.legal[0]);
    else if (key === "c" || key === "escape") {
      this.selected.clear();
      this.render();
    } else return;
    event.preventDefault();
  }

  // -- showing -------------------------------------------------------------------

  private status(text: string): void {
    this.streamStatus = text;
    const element = this.parts.header.querySelector("[data-testid=stream-status]");
    if (element) element.textContent = text;
  }

  private showRefusal(refused: Refusal): void {
    fill(this.parts.refusal, ...refusalParts(refused), h("button", { class: "link", onclick: () => this.clearRefusal() }, "dismiss"));
    this.parts.refusal.hidden = false;
  }

  private clearRefusal(): void {
    this.parts.refusal.hidden = true;
    fill(this.parts.refusal);
  }

  /** A seat's player by name; one who left by the name this tab saw (reloads too), marked as gone. */
  private name(seat: number): string {
    const now = this.view?.seats[seat]?.playerName;
    if (now) return now;
    const known = seatNames.seen(this.tableId, seat);
    return known ? `${known} (left)` : `seat ${seat} (free)`;
  }

  private render(): void {
    const view = this.view;
    if (!view) return;
    // Everything is drawn anew: keep the keyboard's place (the card or button it was on).
    const focused = (document.activeElement as HTMLElement | null)?.dataset.focus;
    this.root.querySelector("[data-testid=table]")?.setAttribute("data-version", String(view.version));
    if (view.lastSettlement) void this.loadRoundEnd(view.lastSettlement);
    this.renderHeader(view);
    this.renderFelt(view);
    this.renderMe(view);
    this.renderResult(view);
    this.renderLog(view);
    this.renderClock();
    if (focused) this.root.querySelector<HTMLElement>(`[data-focus="${focused}"]`)?.focus();
  }

  private renderHeader(view: TableView): void {
    const spectate = new URL(location.href);
    spectate.searchParams.set("spectate", "1");
    const phase = Phase[view.phase].toLowerCase().replaceAll("_", " ");
    const limit = view.settings?.roundLimit ? ` of ${view.settings.roundLimit}` : "";
    fill(
      this.parts.header,
      h("a", { href: location.pathname, class: "home" }, "dizhu"),
      h("h1", { "data-testid": "table-id" }, `table ${view.tableId}`),
      h("span", { "data-testid": "phase" }, roundState(view, limit, phase)),
      view.stake ? h("span", { "data-testid": "stake" }, `stake ${view.stake}`) : null,
      h("span", { class: "status", "data-testid": "stream-status", "aria-live": "polite" }, this.streamStatus),
      h("a", { href: spectate.toString(), "data-testid": "spectate-link" }, "spectator link"),
    );
  }

  /** The seats around the table, the viewer's at the bottom, and the trick or auction in the middle. */
  private renderFelt(view: TableView): void {
    // Between rounds the seats hold nothing: show how the last round ended instead.
    const end = view.dealNumber ? undefined : this.ended.find((e) => e.round === view.lastSettlement?.round);
    const viewer = view.yourSeat ?? 0;
    const places = PLACES[view.seats.length] ?? PLACES[3];
    const lastBy = new Map<number, Node>();
    if (view.phase === Phase.AUCTION) for (const bid of view.bids) lastBy.set(bid.seat, h("span", {}, bid.amount ? `bid ${bid.amount}` : "pass"));
    for (const play of view.trick?.plays ?? [])
      lastBy.set(
        play.seat,
        play.cards.length ? h("span", { class: "hand small" }, sortCards(play.cards).map((c) => cardElement(c))) : h("span", { class: "pass" }, "pass"),
      );
    const seats = view.seats.map((seat) => {
      const turn = view.turnSeat === seat.seat;
      const landlord = view.landlordSeat === seat.seat;
      const place = places[(seat.seat - viewer + view.seats.length) % view.seats.length];
      return h(
        "div",
        {
          class: `seat ${place}${turn ? " turn" : ""}${seat.seat === view.yourSeat ? " mine" : ""}${landlord ? " is-landlord" : ""}`,
          "data-testid": `seat-${seat.seat}`,
          "aria-label": `seat ${seat.seat}`,
          "aria-current": turn ? "true" : undefined,
        },
        h(
          "div",
          { class: "who" },
          h("span", {
            class: `presence ${seat.connected ? "here" : "away"}`,
            "data-testid": `presence-${seat.seat}`,
            "data-connected": String(seat.connected),
            role: "img",
            "aria-label": seat.connected ? "connected" : "not connected",
            title: seat.connected ? "connected" : "not connected",
          }),
          h("b", { "data-testid": `name-${seat.seat}` }, seat.occupied ? seat.playerName : "(free)"),
          seat.seat === view.yourSeat ? h("em", {}, " (you)") : null,
        ),
        landlord ? landlordBadge() : view.landlordSeat !== undefined ? h("span", { class: "badge farmer" }, "farmer") : null,
        h(
          "div",
          { class: "count", "data-testid": `cards-left-${seat.seat}` },
          end ? `held ${end.last.hands[seat.seat].length} at the end · balance ${seat.balance}` : `${seat.cardsLeft} cards · balance ${seat.balance}`,
        ),
        lastBy.has(seat.seat) ? h("div", { class: "last" }, lastBy.get(seat.seat)!) : null,
        turn ? h("div", { class: "clock", "data-clock-seat": seat.seat }, "to act") : null,
      );
    });
    fill(this.parts.felt, seats, this.centre(view, end));
  }

  private centre(view: TableView, end: RoundEnd | undefined): HTMLElement {
    const parts: (Node | null)[] = [];
    if (end && view.lastSettlement) {
      parts.push(h("p", { class: "turn-banner" }, `Round ${end.round}: ${OUTCOMES[view.lastSettlement.outcome] ?? "over"} (below: what it paid)`));
      if (end.last.trick.length) parts.push(h("p", {}, "The last trick"), this.trickList(end.last.trick));
    }
    if (view.turnSeat !== undefined)
      parts.push(
        h(
          "p",
          { class: "turn-banner", "data-testid": "turn" },
          view.turnSeat === view.yourSeat ? "Your turn" : `${this.name(view.turnSeat)} to ${view.phase === Phase.AUCTION ? "bid" : "play"}`,
          " ",
          h("span", { "data-testid": "clock" }),
        ),
      );
    if (view.phase === Phase.AUCTION) {
      parts.push(h("p", {}, `Auction: highest bid ${view.highestBid || "none yet"}`));
      if (view.faceUpCard)
        parts.push(h("p", {}, "Face-up card ", cardElement(view.faceUpCard), ` drawn by ${this.name(view.faceUpSeat ?? 0)}`));
    }
    if (view.kitty.length)
      parts.push(
        h(
          "p",
          { class: "kitty", "data-testid": "kitty" },
          `Kitty, taken by the landlord ${this.name(view.landlordSeat ?? 0)}: `,
          ...sortCards(view.kitty).map((c) => cardElement(c)),
        ),
      );
    if (view.phase === Phase.PLAY && view.trick) {
      const plays = view.trick.plays;
      parts.push(
        h("p", {}, plays.length ? `Trick led by ${this.name(view.trick.leaderSeat)}` : `${this.name(view.trick.leaderSeat)} leads a new trick`),
        this.trickList(plays, "trick", true),
      );
    }
    if (view.phase === Phase.WAITING_FOR_PLAYERS) parts.push(h("p", {}, "Waiting for players…"));
    if (view.seedCommitment.length)
      parts.push(h("p", { class: "commitment" }, `Seed commitment ${hex(view.seedCommitment).slice(0, 16)}…`));
    return h("div", { class: "centre", "data-testid": "center" }, parts);
  }

  /**
   * A trick's plays in order, each with its seat, cards and (when known) kind. In the running
   * trick (`running`) its last play is the play to beat, marked in words; the plays before it
   * are "earlier", which a narrow screen folds away (a toggle shows them) so that the hand
   * stays on the screen however long the trick.
   */
  private trickList(
    plays: { seat: number; cards: Card[]; combination?: { kind: CombinationKind } }[],
    testid?: string,
    running = false,
  ): HTMLElement {
    let toBeat = -1;
    if (running) for (let i = plays.length - 1; i >= 0 && toBeat < 0; i--) if (plays[i].cards.length) toBeat = i;
    const list = h(
      "ol",
      { class: `trick${running && !this.wholeTrick ? " folded" : ""}`, "data-testid": testid, "aria-label": "the trick" },
      plays.map((play, index) =>
        h(
          "li",
          { class: index === toBeat ? "to-beat" : index < toBeat ? "earlier" : undefined },
          h("span", { class: "by" }, this.name(play.seat)),
          play.cards.length
            ? h("span", {}, ...sortCards(play.cards).map((c) => cardElement(c)), play.combination ? ` ${kindName(play.combination.kind)}` : "")
            : h("span", { class: "pass" }, "pass"),
          index === toBeat ? h("strong", { class: "to-beat-mark", "data-testid": "to-beat" }, "to beat") : null,
        ),
      ),
    );
    if (toBeat < 1) return list;
    const toggle = h(
      "button",
      { type: "button", class: "link trick-toggle", "data-testid": "trick-toggle", "aria-expanded": String(this.wholeTrick) },
      this.wholeTrick ? "fold the earlier plays" : `show the ${toBeat} earlier play${toBeat === 1 ? "" : "s"}`,
    );
    toggle.addEventListener("click", () => {
      this.wholeTrick = !this.wholeTrick;
      this.render();
    });
    return h("div", { class: "trick-box" }, list, toggle);
  }

  private renderMe(view: TableView): void {
    const parts: (Node | null)[] = [];
    const seated = view.yourSeat !== undefined;
    if (!seated && view.phase !== Phase.CLOSED && view.seats.some((s) => !s.occupied)) {
      const input = h("input", { "data-testid": "sit-name", placeholder: "your name", maxlength: 32, "aria-label": "your name" });
      parts.push(
        h(
          "form",
          { class: "sit", onsubmit: (e: Event) => (e.preventDefault(), void this.sit(input.value.trim() || "guest")) },
          input,
          h("button", { "data-testid": "sit" }, "Take a free seat"),
        ),
      );
    }
    if (seated && view.yourHand.length) {
      const legalIds = new Set(this.legal.flatMap((move) => move.cards.map(cardId)));
      parts.push(
        h(
          "div",
          { class: "hand", "data-testid": "hand", role: "group", "aria-label": "your cards: ← → to move, Space to select" },
          sortCards(view.yourHand).map((card) =>
            cardElement(card, { selected: this.selected.has(cardId(card)), legal: legalIds.has(cardId(card)), onClick: () => this.toggle(card) }),
          ),
        ),
      );
    }
    // The bids come once the view says which this seat may make (legal_bids: never empty on its
    // turn, as a pass is always allowed); between the event that brought the turn and that view,
    // no button stands for a bid that may be refused.
    if (this.myTurn() && view.phase === Phase.AUCTION && view.legalBids.length) {
      parts.push(
        h(
          "div",
          { class: "actions" },
          [0, 1, 2, 3].map((amount) =>
            h(
              "button",
              {
                "data-testid": `bid-${amount}`,
                "data-focus": `bid-${amount}`,
                disabled: this.busy || !view.legalBids.includes(amount),
                onclick: () => this.bid(amount),
              },
              amount ? `Bid ${amount}` : "Pass",
              h("kbd", {}, String(amount)),
            ),
          ),
        ),
      );
    }
    const below: (Node | null)[] = [];
    if (this.myTurn() && view.phase === Phase.PLAY) {
      parts.push(...this.playControls());
      below.push(this.legalPlays());
    }
    if (seated && view.phase === Phase.ROUND_OVER)
      parts.push(h("button", { "data-testid": "next-round", "data-focus": "next-round", onclick: () => this.settle() }, "Next round"));
    const controls: (Node | null)[] = [];
    if (seated && view.phase !== Phase.CLOSED)
      controls.push(h("button", { class: "link", "data-testid": "leave", onclick: () => this.leave() }, "Leave the table"));
    if (tokens.creator(this.tableId) && view.phase !== Phase.CLOSED)
      controls.push(h("button", { class: "link", "data-testid": "close", onclick: () => this.close() }, "Close the table"));
    if (seated && view.yourHand.length) controls.push(h("p", { class: "keys" }, "Keys: ← → move along your cards, Space selects, P play, S pass, H hint, C clear, 0–3 bid."));
    below.push(h("div", { class: "controls" }, controls));
    fill(this.parts.me, parts);
    this.parts.me.classList.toggle("docked", parts.length > 0);
    fill(this.parts.moves, below);
  }

  /** Play, pass, hint, clear, and what the selection is. */
  private playControls(): Node[] {
    const selection = this.selectedCards();
    const chosen = selection.length ? this.legal.find((move) => ranksKey(move.cards) === ranksKey(selection)) : undefined;
    const button = (testid: string, key: string, text: string, disabled: boolean, onclick: () => void) =>
      h("button", { "data-testid": testid, "data-focus": testid, disabled, onclick }, text, h("kbd", {}, key));
    const preview = !selection.length
      ? "Select cards to play."
      : chosen
        ? `${kindName(chosen.combination?.kind)} ${formatRanks(selection)}: a legal play`
        : this.legalFor
          ? `${formatRanks(selection)}: ${this.whyNot(selection)}`
          : "";
    return [
      h("p", { class: "your-turn", "data-testid": "my-turn" }, "Your turn ", h("span", { "data-testid": "clock" })),
      h("p", { class: `preview${chosen ? " good" : ""}`, "data-testid": "selection", "aria-live": "polite" }, preview),
      h(
        "div",
        { class: "actions" },
        button("play", "P", "Play", this.busy || !this.playable(selection), () => this.play(selection)),
        button("pass", "S", "Pass", this.busy || !this.canPass, () => this.play([])),
        button("hint", "H", "Hint", !this.legal.length, () => this.choose(this.legal[0])),
        button("clear", "C", "Clear", false, () => (this.selected.clear(), this.render())),
      ),
    ];
  }

  /** Every legal play, grouped by kind. */
  private legalPlays(): Node {
    const groups = GROUPS.map(([label, kinds]) => [label, this.legal.filter((move) => kinds.includes(move.combination?.kind ?? 0))] as const).filter(
      ([, moves]) => moves.length,
    );
    return h(
      "div",
      { class: "moves", "data-testid": "legal-moves" },
      this.legalFor && !this.legal.length ? h("p", {}, "Nothing beats it: pass.") : null,
      groups.map(([label, moves]) => {
        const group = h(
          "details",
          { class: "group", "data-testid": "legal-group", open: this.openGroups.has(label) || groups.length === 1 },
          h("summary", { "data-focus": `group-${label}` }, `${label} (${moves.length})`),
          h(
            "ul",
            {},
            moves.map((move) =>
              h(
                "li",
                {},
                h(
                  "button",
                  { class: "move", "data-testid": "legal-move", "data-focus": `move-${ranksKey(move.cards)}`, onclick: () => this.choose(move) },
                  `${kindName(move.combination?.kind)} ${formatRanks(move.cards)}`,
                ),
              ),
            ),
          ),
        );
        group.addEventListener("toggle", () => {
          if (group.open) this.openGroups.add(label);
          else this.openGroups.delete(label);
        });
        return group;
      }),
    );
  }

  /** The end of a round: what it paid and why, each seat's change and the cards it still held, the last trick. */
  private renderResult(view: TableView): void {
    const settlement = view.lastSettlement;
    const reveal = view.lastReveal;
    if (!settlement) {
      this.parts.result.hidden = true;
      return;
    }
    const end = this.ended.find((e) => e.round === settlement.round);
    const landlord = settlement.landlordSeat;
    const parts: (Node | null)[] = [
      h("h2", {}, `Round ${settlement.round}: ${OUTCOMES[settlement.outcome] ?? "over"}`),
      h("p", { "data-testid": "payout" }, payout({ ...settlement }, view.seats.length)),
      h(
        "table",
        { class: "changes", "data-testid": "changes" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "seat"), h("th", { scope: "col" }, "won or lost"), h("th", { scope: "col" }, "balance"), h("th", { scope: "col" }, "cards still held"))),
        h(
          "tbody",
          {},
          settlement.balanceChanges.map((change, seat) =>
            h(
              "tr",
              { "data-testid": `change-${seat}` },
              h("th", { scope: "row" }, this.name(seat), seat === landlord ? landlordBadge() : null),
              h("td", {}, `${change > 0n ? "+" : ""}${change}`),
              h("td", {}, String(view.seats[seat]?.balance ?? "")),
              h(
                "td",
                { class: "held", "data-testid": `held-${seat}` },
                end ? (end.last.hands[seat].length ? sortCards(end.last.hands[seat]).map((c) => cardElement(c)) : "out: no card left") : "…",
              ),
            ),
          ),
        ),
      ),
    ];
    if (end && end.last.trick.length)
      parts.push(
        h(
          "div",
          { class: "last-trick", "data-testid": "last-trick" },
          h("h3", {}, "The last trick"),
          this.trickList(end.last.trick),
        ),
      );
    if (reveal && reveal.seed.length) {
      const commitment = commitments.seen(this.tableId, reveal.round, reveal.dealNumber);
      const check =
        commitment === null
          ? "the commitment was published before this page opened"
          : seedMatches(reveal.seed, commitment)
            ? "✓ sha256(seed) equals the commitment published before the auction"
            : "✗ sha256(seed) does NOT equal the commitment published before the auction";
      parts.push(
        h("p", { class: "seed" }, `Seed ${hex(reveal.seed)}`),
        h("p", { "data-testid": "seed-check", class: commitment && !seedMatches(reveal.seed, commitment) ? "bad" : "good" }, check),
        h(
          "details",
          {},
          h("summary", {}, "Hands as dealt"),
          reveal.hands.map((hand) => h("p", {}, `${this.name(hand.seat)}: `, ...sortCards(hand.cards).map((c) => cardElement(c)))),
          h("p", {}, "Kitty: ", ...sortCards(reveal.kitty).map((c) => cardElement(c))),
        ),
      );
    }
    const replay = new URL(location.pathname, location.href);
    replay.search = new URLSearchParams({ replay: this.tableId, round: String(settlement.round) }).toString();
    parts.push(h("a", { href: replay.toString(), "data-testid": "replay-link" }, "Replay this round move by move"));
    if (view.phase === Phase.CLOSED) {
      const reason = CLOSE_REASONS[view.closeReason] ?? "closed";
      parts.push(
        h("h2", {}, `The table is closed (${reason})`),
        h(
          "ol",
          { "data-testid": "standings" },
          standings(view.seats).map(({ seat, place }) =>
            h("li", { value: place, "data-place": place, "data-testid": "standing" }, `${this.name(seat.seat)}: ${seat.balance}`),
          ),
        ),
      );
    } else if (view.settings?.nextRound === NextRound.AUTOMATIC) {
      parts.push(h("p", {}, "The next round started at once."));
    }
    fill(this.parts.result, parts);
    this.parts.result.hidden = false;
  }

  /** The log, newest first: the running round from the view's history, then the rounds before. */
  private renderLog(view: TableView): void {
    const { players, hand } = variantSizes(view.settings?.variant);
    const walk = new RoundWalk(players);
    const left = view.seats.map(() => hand);
    const lines: string[] = [];
    let deal = 0;
    for (const action of view.history) {
      if (action.dealNumber !== deal) {
        deal = action.dealNumber;
        lines.push(`Round ${view.round}, deal ${deal}`);
        left.fill(hand);
      }
      const decision = { deal, seat: action.seat, bid: action.bid, cards: action.cards, timedOut: action.timedOut };
      const outcome = walk.next(decision);
      if (outcome.landlord) left[outcome.landlord.seat] += variantSizes(view.settings?.variant).kitty;
      if (action.bid === undefined) left[action.seat] -= action.cards.length;
      const kitty = outcome.landlord && deal === view.dealNumber ? view.kitty : undefined;
      lines.push(describe(decision, outcome, (seat) => this.name(seat), { left: action.cards.length ? left[action.seat] : undefined, kitty }));
    }
    const earlier = this.ended.flatMap((end) => [`Round ${end.round}`, ...end.lines, this.resultLine(end.round, view)]);
    const all = [...this.seatLines, ...earlier, ...lines];
    fill(this.parts.log, all.map((line) => h("li", {}, line)).reverse());
  }

  private resultLine(round: number, view: TableView): string {
    const settlement = view.lastSettlement?.round === round ? view.lastSettlement : undefined;
    return settlement ? `Round ${round}: ${OUTCOMES[settlement.outcome] ?? "over"}, stake ${settlement.stake}` : `Round ${round} is over`;
  }

  private renderClock(): void {
    const view = this.view;
    const deadline = view?.turnDeadline ? timestampMs(view.turnDeadline) : null;
    const text =
      deadline === null ? "" : `${Math.max(0, Math.ceil((deadline - Date.now() - this.clockOffsetMs) / 1000))} s left`;
    for (const element of this.root.querySelectorAll("[data-testid=clock], [data-clock-seat]")) {
      element.textContent = text || (element.hasAttribute("data-clock-seat") ? "to act" : "");
    }
  }
}
