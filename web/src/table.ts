// A table as one person sees it: the seat this browser holds (its token kept per table, so
// a reload resumes the same seat), or a spectator's view. The page shows only what the
// referee sends it: a seat's own hand, never anyone else's before the round is over.
//
// The table's WatchTable stream says when something changed (and narrates it); the view
// itself is read with GetTable after every change, so the page never rebuilds the table
// from events. A lost stream resumes after the last sequence received.
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { auth, refusal, requestId, retryable, rules, tables, tokens, type Refusal } from "./api";
import { cardElement, cardId, formatRanks, kindName, sortCards } from "./cards";
import { fill, h } from "./dom";
import { commitments, hex, seedMatches } from "./fairness";
import type { Card } from "./gen/dizhu/v1/cards_pb";
import type { TableEvent } from "./gen/dizhu/v1/events_pb";
import type { LegalMove } from "./gen/dizhu/v1/rules_service_pb";
import { CloseReason, NextRound, Phase, RoundOutcome, type TableView } from "./gen/dizhu/v1/table_pb";

const IDLE_STREAM_MS = 45_000;
const SHOWN_MOVES = 40;
const OUT_OF_DATE = new Set(["STALE_STATE", "NOT_YOUR_TURN", "WRONG_PHASE"]);
const OUTCOMES: Record<number, string> = {
  [RoundOutcome.LANDLORD_WON]: "the landlord won",
  [RoundOutcome.FARMERS_WON]: "the farmers won",
  [RoundOutcome.VOID]: "void: every deal was thrown in",
  [RoundOutcome.ABANDONED]: "abandoned",
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class TablePage {
  private view: TableView | null = null;
  private token: string | null;
  private lastSequence: bigint | undefined;
  private stream: AbortController | null = null;
  private selected = new Set<number>();
  private legal: LegalMove[] = [];
  /** The version the legal moves were listed for ("" while none are), and the one being listed. */
  private legalFor = "";
  private legalAsked = "";
  private canPass = false;
  private busy = false;
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;
  private clockOffsetMs = 0;
  private readonly log: HTMLElement;
  private readonly parts: Record<"header" | "seats" | "center" | "me" | "refusal" | "result", HTMLElement>;

  constructor(
    private readonly root: HTMLElement,
    private readonly tableId: string,
    spectate: boolean,
  ) {
    this.token = spectate ? null : tokens.seat(tableId);
    this.parts = {
      header: h("header", { class: "bar" }),
      seats: h("section", { class: "seats", "data-testid": "seats" }),
      center: h("section", { class: "center", "data-testid": "center" }),
      me: h("section", { class: "me", "data-testid": "me" }),
      refusal: h("section", { class: "refusal", "data-testid": "refusal", role: "alert", hidden: true }),
      result: h("section", { class: "result", "data-testid": "result", hidden: true }),
    };
    this.log = h("ol", { class: "log", "data-testid": "log" });
    fill(
      root,
      h(
        "div",
        { class: "table-page", "data-testid": "table" },
        this.parts.header,
        this.parts.seats,
        this.parts.center,
        this.parts.refusal,
        this.parts.me,
        this.parts.result,
        h("details", { class: "log-box", open: true }, h("summary", {}, "What happened"), this.log),
      ),
    );
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
        fill(this.root, h("p", { class: "refusal", "data-testid": "refusal" }, `${refused.reason}: ${refused.message}`));
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
        const request = { tableId: this.tableId, afterSequence: this.lastSequence };
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
    if (event.time) this.clockOffsetMs = timestampMs(event.time) - Date.now();
    const payload = event.payload;
    switch (payload.case) {
      case "snapshot":
        this.setView(payload.value, true);
        return;
      case "heartbeat":
        return;
      case "seatPresence":
        if (this.view?.seats[payload.value.seat]) {
          this.view.seats[payload.value.seat].connected = payload.value.connected;
          this.render();
        }
        break;
      case "dealStarted":
        commitments.remember(this.tableId, payload.value.round, payload.value.dealNumber, payload.value.seedCommitment);
        break;
    }
    this.narrate(event);
    if (this.view === null || event.version > this.view.version) this.scheduleRefresh();
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
    if (response.table) this.setView(response.table, false);
  }

  private setView(view: TableView, snapshot: boolean): void {
    if (this.view && !snapshot && view.version < this.view.version) return;
    const changed = this.view?.version !== view.version;
    this.view = view;
    if (view.dealNumber) commitments.remember(this.tableId, view.round, view.dealNumber, view.seedCommitment);
    if (changed) this.selected.clear();
    void this.loadLegalMoves();
    this.render();
  }

  private myTurn(): boolean {
    const view = this.view;
    return !!view && view.yourSeat !== undefined && view.turnSeat === view.yourSeat;
  }

  /** The cards to beat: the trick's last play by another seat; none when leading. */
  private toBeat(): Card[] | undefined {
    const plays = this.view?.trick?.plays ?? [];
    for (let i = plays.length - 1; i >= 0; i--) {
      if (plays[i].cards.length) return plays[i].seat === this.view?.yourSeat ? undefined : plays[i].cards;
    }
    return undefined;
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
          if (answer.table) this.setView(answer.table, false);
          return;
        } catch (error) {
          if (!retryable(error) || attempt >= 4) throw error;
          await sleep(200 * attempt);
        }
      }
    } catch (error) {
      const refused = refusal(error);
      this.showRefusal(refused);
      if (OUT_OF_DATE.has(refused.reason)) this.scheduleRefresh();
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
    if (!confirm("Leave the table? During a round this forfeits it.")) return;
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

  private selectedCards(): Card[] {
    return (this.view?.yourHand ?? []).filter((card) => this.selected.has(cardId(card)));
  }

  // -- showing -------------------------------------------------------------------

  private status(text: string): void {
    const element = this.parts.header.querySelector("[data-testid=stream-status]");
    if (element) element.textContent = text;
  }

  private showRefusal(refused: Refusal): void {
    fill(
      this.parts.refusal,
      h("b", { "data-testid": "refusal-reason" }, refused.reason),
      " ",
      h("span", {}, refused.message),
      h("button", { class: "link", onclick: () => this.clearRefusal() }, "dismiss"),
    );
    this.parts.refusal.hidden = false;
  }

  private clearRefusal(): void {
    this.parts.refusal.hidden = true;
    fill(this.parts.refusal);
  }

  private name(seat: number): string {
    const player = this.view?.seats[seat]?.playerName;
    return player ? `${player} (seat ${seat})` : `seat ${seat}`;
  }

  private narrate(event: TableEvent): void {
    const p = event.payload;
    let line = "";
    switch (p.case) {
      case "seatJoined":
        line = `${p.value.playerName} takes seat ${p.value.seat}`;
        break;
      case "seatLeft":
        line = `${p.value.playerName} leaves seat ${p.value.seat}`;
        break;
      case "dealStarted":
        line = `Round ${p.value.round}, deal ${p.value.dealNumber}: ${this.name(p.value.faceUpSeat)} drew the face-up card and bids first`;
        break;
      case "bidMade":
        line = `${this.name(p.value.seat)} ${p.value.amount ? `bids ${p.value.amount}` : "passes"}${p.value.timedOut ? " (time ran out)" : ""}`;
        break;
      case "dealThrownIn":
        line = p.value.roundVoid ? "Everybody passed again: the round is void" : "Everybody passed: the cards are dealt again";
        break;
      case "landlordChosen":
        line = `${this.name(p.value.landlordSeat)} is the landlord at ${p.value.bid} and takes the kitty ${formatRanks(p.value.kitty)}`;
        break;
      case "cardsPlayed":
        line = p.value.cards.length
          ? `${this.name(p.value.seat)} plays ${kindName(p.value.combination?.kind)} ${formatRanks(p.value.cards)} (${p.value.cardsLeft} left)`
          : `${this.name(p.value.seat)} passes${p.value.trickClosed ? " — the trick is over" : ""}`;
        if (p.value.timedOut) line += " (time ran out)";
        break;
      case "roundEnded":
        line = `Round ${p.value.settlement?.round}: ${OUTCOMES[p.value.settlement?.outcome ?? 0] ?? "over"}, stake ${p.value.settlement?.stake}`;
        break;
      case "tableClosed":
        line = "The table is closed";
        break;
      case "seatPresence":
        line = `${this.name(p.value.seat)} ${p.value.connected ? "is here" : "went away"}`;
        break;
      default:
        return;
    }
    this.log.prepend(h("li", {}, line));
    while (this.log.childElementCount > 200) this.log.lastElementChild?.remove();
  }

  private render(): void {
    const view = this.view;
    if (!view) return;
    this.root.querySelector("[data-testid=table]")?.setAttribute("data-version", String(view.version));
    this.renderHeader(view);
    this.renderSeats(view);
    this.renderCenter(view);
    this.renderMe(view);
    this.renderResult(view);
    this.renderClock();
  }

  private renderHeader(view: TableView): void {
    const spectate = new URL(location.href);
    spectate.searchParams.set("spectate", "1");
    const phase = Phase[view.phase].toLowerCase().replaceAll("_", " ");
    const limit = view.settings?.roundLimit ? ` of ${view.settings.roundLimit}` : "";
    fill(
      this.parts.header,
      h("a", { href: location.pathname, class: "home" }, "dizhu"),
      h("span", { "data-testid": "table-id" }, `table ${view.tableId}`),
      h("span", { "data-testid": "phase" }, `round ${view.round}${limit} · ${phase}`),
      view.stake ? h("span", {}, `stake ${view.stake}`) : null,
      h("span", { class: "status", "data-testid": "stream-status" }, this.stream ? "live" : "connecting…"),
      h("a", { href: spectate.toString(), "data-testid": "spectate-link" }, "spectator link"),
    );
  }

  private renderSeats(view: TableView): void {
    // What each seat did last: in the auction its bid, in play its last move in the trick.
    const lastBy = new Map<number, string>();
    if (view.phase === Phase.AUCTION) for (const bid of view.bids) lastBy.set(bid.seat, bid.amount ? `bid ${bid.amount}` : "pass");
    for (const play of view.trick?.plays ?? []) lastBy.set(play.seat, play.cards.length ? formatRanks(play.cards) : "pass");
    fill(
      this.parts.seats,
      view.seats.map((seat) => {
        const role =
          view.landlordSeat === undefined ? "" : seat.seat === view.landlordSeat ? "landlord" : "farmer";
        const turn = view.turnSeat === seat.seat;
        return h(
          "div",
          {
            class: `seat${turn ? " turn" : ""}${seat.seat === view.yourSeat ? " mine" : ""}`,
            "data-testid": `seat-${seat.seat}`,
          },
          h(
            "div",
            { class: "who" },
            h("span", {
              class: `presence ${seat.connected ? "here" : "away"}`,
              "data-testid": `presence-${seat.seat}`,
              "data-connected": String(seat.connected),
              title: seat.connected ? "connected" : "not connected",
            }),
            h("b", {}, seat.occupied ? seat.playerName : "(free)"),
            seat.seat === view.yourSeat ? h("em", {}, " you") : null,
          ),
          role ? h("div", { class: `role ${role}` }, role === "landlord" ? "地主 landlord" : "farmer") : null,
          h("div", { class: "count" }, `${seat.cardsLeft} cards · balance ${seat.balance}`),
          lastBy.has(seat.seat) ? h("div", { class: "last" }, lastBy.get(seat.seat)!) : null,
          turn ? h("div", { class: "clock", "data-clock-seat": seat.seat }, "to act") : null,
        );
      }),
    );
  }

  private renderCenter(view: TableView): void {
    const parts: (Node | null)[] = [];
    if (view.phase === Phase.AUCTION) {
      parts.push(h("p", {}, `Auction: highest bid ${view.highestBid || "none yet"}`));
      if (view.faceUpCard)
        parts.push(h("p", {}, `Face-up card `, cardElement(view.faceUpCard), ` drawn by ${this.name(view.faceUpSeat ?? 0)}`));
    }
    if (view.kitty.length) parts.push(h("p", { class: "kitty" }, "Kitty ", ...sortCards(view.kitty).map((c) => cardElement(c))));
    if (view.phase === Phase.PLAY && view.trick) {
      parts.push(h("p", {}, `Trick led by ${this.name(view.trick.leaderSeat)}`));
      parts.push(
        h(
          "ol",
          { class: "trick", "data-testid": "trick" },
          view.trick.plays.map((play) =>
            h(
              "li",
              {},
              h("span", { class: "by" }, view.seats[play.seat]?.playerName || `seat ${play.seat}`),
              play.cards.length
                ? h("span", {}, ...sortCards(play.cards).map((c) => cardElement(c)), ` ${kindName(play.combination?.kind)}`)
                : h("span", { class: "pass" }, "pass"),
            ),
          ),
        ),
      );
    }
    if (view.phase === Phase.WAITING_FOR_PLAYERS) parts.push(h("p", {}, "Waiting for players…"));
    if (view.seedCommitment.length)
      parts.push(h("p", { class: "commitment" }, `Seed commitment ${hex(view.seedCommitment).slice(0, 16)}…`));
    fill(this.parts.center, parts);
  }

  private renderMe(view: TableView): void {
    const parts: (Node | null)[] = [];
    const seated = view.yourSeat !== undefined;
    if (!seated && view.phase !== Phase.CLOSED && view.seats.some((s) => !s.occupied)) {
      const input = h("input", { "data-testid": "sit-name", placeholder: "your name", maxlength: 32 });
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
          { class: "hand", "data-testid": "hand" },
          sortCards(view.yourHand).map((card) => {
            const id = cardId(card);
            return cardElement(card, {
              selected: this.selected.has(id),
              legal: legalIds.has(id),
              onClick: () => {
                if (this.selected.has(id)) this.selected.delete(id);
                else this.selected.add(id);
                this.render();
              },
            });
          }),
        ),
      );
    }
    if (this.myTurn()) parts.push(h("p", { class: "your-turn", "data-testid": "my-turn" }, "Your turn ", h("span", { "data-testid": "clock" })));
    if (this.myTurn() && view.phase === Phase.AUCTION) {
      parts.push(
        h(
          "div",
          { class: "actions" },
          [0, 1, 2, 3].map((amount) =>
            h(
              "button",
              {
                "data-testid": `bid-${amount}`,
                disabled: this.busy || (amount > 0 && amount <= view.highestBid),
                onclick: () => this.bid(amount),
              },
              amount ? `Bid ${amount}` : "Pass",
            ),
          ),
        ),
      );
    }
    if (this.myTurn() && view.phase === Phase.PLAY) {
      const selection = this.selectedCards();
      parts.push(
        h(
          "div",
          { class: "actions" },
          h("button", { "data-testid": "play", disabled: this.busy || !selection.length, onclick: () => this.play(selection) }, "Play"),
          h("button", { "data-testid": "pass", disabled: this.busy || !this.canPass, onclick: () => this.play([]) }, "Pass"),
          h("button", { "data-testid": "hint", disabled: !this.legal.length, onclick: () => this.choose(this.legal[0]) }, "Hint"),
          h("button", { "data-testid": "clear", onclick: () => (this.selected.clear(), this.render()) }, "Clear"),
        ),
        h(
          "ul",
          { class: "moves", "data-testid": "legal-moves" },
          this.legal.slice(0, SHOWN_MOVES).map((move) =>
            h(
              "li",
              {},
              h(
                "button",
                { class: "move", "data-testid": "legal-move", onclick: () => this.choose(move) },
                `${kindName(move.combination?.kind)} ${formatRanks(move.cards)}`,
              ),
            ),
          ),
          this.legal.length > SHOWN_MOVES ? h("li", {}, `… and ${this.legal.length - SHOWN_MOVES} more`) : null,
          this.legalFor && !this.legal.length ? h("li", {}, "nothing beats it: pass") : null,
        ),
      );
    }
    if (seated && view.phase === Phase.ROUND_OVER)
      parts.push(h("button", { "data-testid": "next-round", onclick: () => this.settle() }, "Next round"));
    const controls: (Node | null)[] = [];
    if (seated && view.phase !== Phase.CLOSED)
      controls.push(h("button", { class: "link", "data-testid": "leave", onclick: () => this.leave() }, "Leave the table"));
    if (tokens.creator(this.tableId) && view.phase !== Phase.CLOSED)
      controls.push(h("button", { class: "link", "data-testid": "close", onclick: () => this.close() }, "Close the table"));
    parts.push(h("div", { class: "controls" }, controls));
    fill(this.parts.me, parts);
  }

  private choose(move: LegalMove | undefined): void {
    if (!move) return;
    this.selected = new Set(move.cards.map(cardId));
    this.render();
  }

  private renderResult(view: TableView): void {
    const settlement = view.lastSettlement;
    const reveal = view.lastReveal;
    if (!settlement) {
      this.parts.result.hidden = true;
      return;
    }
    const parts: (Node | null)[] = [
      h("h2", {}, `Round ${settlement.round}: ${OUTCOMES[settlement.outcome] ?? "over"}`),
      h(
        "p",
        {},
        `bid ${settlement.bid}, ${settlement.doublings} doubling(s)${settlement.spring ? ", spring" : ""}: stake ${settlement.stake}`,
      ),
      h(
        "ul",
        { class: "changes" },
        settlement.balanceChanges.map((change, seat) =>
          h("li", {}, `${this.name(seat)}: ${change > 0n ? "+" : ""}${change} → ${view.seats[seat]?.balance ?? ""}`),
        ),
      ),
    ];
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
      const reason = view.closeReason === CloseReason.ROUND_LIMIT ? "the round limit was reached" : "closed by its creator";
      parts.push(
        h("h2", {}, `The table is closed (${reason})`),
        h(
          "ol",
          { "data-testid": "standings" },
          [...view.seats]
            .sort((a, b) => Number(b.balance - a.balance))
            .map((seat) => h("li", {}, `${seat.playerName || `seat ${seat.seat}`}: ${seat.balance}`)),
        ),
      );
    } else if (view.settings?.nextRound === NextRound.AUTOMATIC) {
      parts.push(h("p", {}, "The next round started at once."));
    }
    fill(this.parts.result, parts);
    this.parts.result.hidden = false;
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
