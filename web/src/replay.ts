// The replay viewer: a finished round step by step, every hand shown, from the referee
// (GetReplay: ?replay=<table>&round=<n>), from a JSON file (dizhu replay > round.json), or
// from a URL (?replay_url=<url of the JSON>). The JSON is schema dizhu.replay/v1 (docs/replay.md).
import { refusal, tables, type Refusal } from "./api";
import { cardElement, cardId, parseCards, sortCards } from "./cards";
import { fill, h, landlordBadge } from "./dom";
import { fromHex, seedMatches } from "./fairness";
import type { Card } from "./gen/dizhu/v1/cards_pb";
import { Phase } from "./gen/dizhu/v1/table_pb";
import { deadEnd, refusalParts } from "./refusals";
import { describe, payout, RoundWalk, type Decision } from "./round";

interface ReplayAction {
  seat: number;
  bid?: number;
  play?: string;
  time: string;
  took_ms: number;
  timed_out: boolean;
}

interface ReplayDeal {
  deal_number: number;
  dealer: number;
  seed: string | null;
  commitment: string | null;
  face_up: string;
  face_up_seat: number;
  hands: string[];
  kitty: string;
  actions: ReplayAction[];
}

export interface ReplayDocument {
  schema: string;
  table_id: string;
  variant: string;
  round: number;
  deals: ReplayDeal[];
  result: {
    outcome: string;
    landlord: number | null;
    winner: number | null;
    forfeited_by: number | null;
    bid: number;
    doublings: number;
    spring: boolean;
    stake: number;
    changes: number[];
  };
  balances: number[];
}

/** What the table looked like after one step. */
export interface Frame {
  deal: number;
  text: string;
  seat: number | null;
  hands: Card[][];
  trick: { seat: number; cards: Card[] }[];
  landlord: number | null;
}

const same = (a: Card, b: Card) => cardId(a) === cardId(b);

/** A seat as the replay names it: the player's name when known. */
export type SeatName = (seat: number) => string;

/** Every step of the round: each deal as dealt, then one frame per action. */
export function frames(doc: ReplayDocument, name: SeatName = (seat) => `seat ${seat}`): Frame[] {
  const walk = new RoundWalk(doc.variant === "4p" ? 4 : 3);
  const result: Frame[] = [];
  for (const deal of doc.deals) {
    const hands = deal.hands.map(parseCards);
    const kitty = parseCards(deal.kitty);
    let landlord: number | null = null;
    let trick: { seat: number; cards: Card[] }[] = [];
    const push = (text: string, seat: number | null) =>
      result.push({ deal: deal.deal_number, text, seat, hands: hands.map((hand) => [...hand]), trick: [...trick], landlord });
    push(`Deal ${deal.deal_number}: ${name(deal.dealer)} deals; ${name(deal.face_up_seat)} drew the face-up card ${deal.face_up}`, null);
    for (const action of deal.actions) {
      const cards = parseCards(action.play ?? "");
      const decision: Decision = { deal: deal.deal_number, seat: action.seat, bid: action.bid, cards, timedOut: action.timed_out };
      const outcome = walk.next(decision);
      if (outcome.landlord) {
        landlord = outcome.landlord.seat;
        hands[landlord].push(...kitty);
      }
      if (action.bid === undefined) {
        hands[action.seat] = hands[action.seat].filter((card) => !cards.some((played) => same(card, played)));
        trick.push({ seat: action.seat, cards });
      }
      const left = action.bid === undefined && cards.length ? hands[action.seat].length : undefined;
      push(describe(decision, outcome, name, { kitty, left }), action.seat);
      if (outcome.trickOver) trick = [];
    }
  }
  return result;
}

/** The round's replay document from the referee (GetReplay: public once the round is over). */
export async function replayOf(tableId: string, round: number): Promise<ReplayDocument> {
  const answer = await tables.getReplay({ tableId, round });
  return parseReplay(answer.json);
}

/** Why a text is no replay a page can show, in words for the person who chose it. */
export class NotAReplay extends Error {}

/** A dizhu.replay/v1 document read from its JSON text; `NotAReplay` says why not. */
export function parseReplay(text: string): ReplayDocument {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new NotAReplay("it is not JSON at all: a replay record is the JSON that dizhu replay writes (docs/replay.md).");
  }
  const schema = typeof doc === "object" && doc !== null ? (doc as { schema?: unknown }).schema : undefined;
  if (schema !== "dizhu.replay/v1")
    throw new NotAReplay(
      schema === undefined
        ? "it is JSON, but not a replay record (it names no schema; a replay names dizhu.replay/v1)."
        : `it is a record of another kind (schema ${JSON.stringify(schema)}, not dizhu.replay/v1).`,
    );
  const replay = doc as ReplayDocument;
  if (!Array.isArray(replay.deals) || !replay.deals.length || typeof replay.result !== "object" || replay.result === null)
    throw new NotAReplay("it says it is a replay record, but its deals or its result are missing.");
  return replay;
}

/** The largest round number (GetReplayRequest.round is a uint32). */
const LAST_ROUND = 4294967295;

/** Whether the text of a link's round is a round number: 1, 2, 3, … up to the largest. */
export function isRoundNumber(text: string): boolean {
  return /^[0-9]{1,10}$/.test(text.trim()) && Number(text) >= 1 && Number(text) <= LAST_ROUND;
}

/** The page of a replay link whose round is no round number (?replay=ID&round=abc, -1, 0, too large). */
export function badRound(root: HTMLElement, tableId: string, round: string): void {
  const what = /^\s*[-+]?[0-9]+\s*$/.test(round) ? "is no round number" : "is not a number";
  deadEnd(
    root,
    "No such round",
    [`The round in this link, “${round}”, ${what}: rounds are numbered 1, 2, 3, … up to ${LAST_ROUND}.`],
    replayLink(tableId, 1, "The replay of round 1 of this table"),
  );
}

function replayLink(tableId: string, round: number, text: string): HTMLElement {
  const url = new URL(location.pathname, location.href);
  url.search = new URLSearchParams({ replay: tableId, round: String(round) }).toString();
  return h("a", { href: url.toString(), "data-testid": "replay-round-link" }, text);
}

function tableLink(tableId: string): HTMLElement {
  const url = new URL(location.pathname, location.href);
  url.search = new URLSearchParams({ table: tableId, spectate: "1" }).toString();
  return h("a", { href: url.toString(), "data-testid": "table-link" }, `Watch table ${tableId}`);
}

export class ReplayPage {
  private doc: ReplayDocument | null = null;
  private steps: Frame[] = [];
  private step = 0;
  /** The players' names by seat, when the table is known to the referee (a file carries none). */
  private names: string[] = [];

  constructor(private readonly root: HTMLElement) {
    document.addEventListener("keydown", (event) => {
      if (event.target instanceof HTMLInputElement && event.target.type !== "range") return;
      if (event.key === "ArrowRight") this.go(this.step + 1);
      if (event.key === "ArrowLeft") this.go(this.step - 1);
    });
  }

  async fromReferee(tableId: string, round: number): Promise<void> {
    let text: string;
    try {
      text = (await tables.getReplay({ tableId, round })).json;
    } catch (error) {
      await this.noReplay(tableId, round, refusal(error));
      return;
    }
    try {
      const table = await tables.getTable({ tableId });
      this.names = table.table?.seats.map((seat) => seat.playerName) ?? [];
    } catch {
      // The names are a nicety: a replay kept after its table expired still shows, by seat.
    }
    this.open(text, "The referee's record of this round");
  }

  /** Why the referee has no replay of round `round` of `tableId`: no such table, or no such finished round. */
  private async noReplay(tableId: string, round: number, refused: Refusal): Promise<void> {
    if (refused.reason !== "TABLE_NOT_FOUND") {
      deadEnd(this.root, "The replay could not be read", refusalParts(refused));
      return;
    }
    let played: number | null = null;
    try {
      const view = (await tables.getTable({ tableId })).table;
      // A closed table's round is the number it played; an open one's, the round it is at.
      if (view) played = view.phase === Phase.CLOSED ? view.round : view.round - 1;
    } catch {
      played = null;
    }
    if (played === null) {
      deadEnd(this.root, "No such table", [`There is no table “${tableId}”: it may have closed and expired, or the id is mistyped.`]);
      return;
    }
    const rounds = played > 0 ? `it has finished ${played === 1 ? "round 1" : `rounds 1 to ${played}`}` : "it has finished no round yet";
    deadEnd(
      this.root,
      "No such round",
      [`Round ${round} of table ${tableId} does not exist or is not over: ${rounds}.`],
      ...(played > 0 ? [replayLink(tableId, Math.min(round, played), `The replay of round ${Math.min(round, played)}`)] : []),
      tableLink(tableId),
    );
  }

  async fromUrl(url: string): Promise<void> {
    let text: string;
    try {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`the server answered HTTP ${response.status}`);
      text = await response.text();
    } catch (error) {
      deadEnd(this.root, "The replay could not be fetched", [`${url}: ${error instanceof Error ? error.message : String(error)}`]);
      return;
    }
    this.open(text, url);
  }

  /** Show a replay record given as JSON text; `source` names where it came from (a file, a URL). */
  open(text: string, source = "This file"): void {
    let doc: ReplayDocument;
    try {
      doc = parseReplay(text);
      this.steps = frames(doc, (seat) => this.name(seat));
    } catch (error) {
      const why = error instanceof NotAReplay ? error.message : "it is damaged: a part of it could not be read.";
      deadEnd(this.root, "Not a replay", [`${source} is not a replay the page can show: ${why}`]);
      return;
    }
    this.show(doc);
  }

  private show(doc: ReplayDocument): void {
    this.doc = doc;
    this.steps = frames(doc, (seat) => this.name(seat));
    this.step = 0;
    this.render();
  }

  private name(seat: number): string {
    return this.names[seat] || `seat ${seat}`;
  }

  private go(step: number): void {
    if (!this.doc) return;
    this.step = Math.max(0, Math.min(this.steps.length - 1, step));
    this.render();
  }

  private render(): void {
    const doc = this.doc!;
    const frame = this.steps[this.step];
    const last = this.step === this.steps.length - 1;
    const deal = doc.deals.find((d) => d.deal_number === frame.deal)!;
    const verified = deal.seed && deal.commitment ? seedMatches(fromHex(deal.seed), fromHex(deal.commitment)) : null;
    const focused = (document.activeElement as HTMLElement | null)?.dataset.focus;
    const slider = h("input", {
      type: "range",
      min: 0,
      max: this.steps.length - 1,
      value: this.step,
      "aria-label": "step",
      "data-testid": "replay-slider",
      "data-focus": "slider",
    });
    slider.addEventListener("input", () => this.go(Number(slider.value)));
    const button = (testid: string, label: string, text: string, step: number) =>
      h("button", { "data-testid": testid, "data-focus": testid, "aria-label": label, onclick: () => this.go(step) }, text);
    fill(
      this.root,
      h(
        "div",
        { class: "replay-page" },
        h(
          "header",
          { class: "bar" },
          h("a", { href: location.pathname, class: "home" }, "dizhu"),
          h("h1", {}, `Replay of table ${doc.table_id}, round ${doc.round} (${doc.variant})`),
        ),
        h(
          "div",
          { class: "actions" },
          button("replay-first", "first step", "|◀", 0),
          button("replay-previous", "previous step", "◀", this.step - 1),
          h("span", { "data-testid": "replay-step", "aria-live": "polite" }, `step ${this.step + 1} / ${this.steps.length}`),
          button("replay-next", "next step", "▶", this.step + 1),
          button("replay-last", "last step", "▶|", this.steps.length - 1),
          slider,
        ),
        h("p", { class: "step-text", "data-testid": "replay-text" }, frame.text),
        h(
          "section",
          { class: "seats replay", "aria-label": "hands" },
          frame.hands.map((hand, seat) =>
            h(
              "div",
              { class: `seat${frame.seat === seat ? " turn" : ""}`, "data-testid": `replay-seat-${seat}` },
              h(
                "div",
                { class: "who" },
                h("b", { "data-testid": `replay-name-${seat}` }, this.name(seat)),
                frame.landlord === seat ? landlordBadge() : null,
              ),
              h("div", { class: "count" }, `${hand.length} cards`),
              h("div", { class: "hand small" }, sortCards(hand).map((card) => cardElement(card))),
            ),
          ),
        ),
        h(
          "ol",
          { class: "trick", "aria-label": "the trick" },
          frame.trick.map((play) =>
            h(
              "li",
              {},
              h("span", { class: "by" }, this.name(play.seat)),
              play.cards.length ? h("span", {}, ...sortCards(play.cards).map((c) => cardElement(c))) : h("span", { class: "pass" }, "pass"),
            ),
          ),
        ),
        h(
          "p",
          { "data-testid": "replay-seed-check", class: verified === false ? "bad" : "good" },
          verified === null
            ? "This deal was not drawn from a seed."
            : verified
              ? "✓ sha256(seed) equals the published commitment"
              : "✗ sha256(seed) does NOT equal the published commitment",
        ),
        last
          ? h(
              "section",
              { class: "result", "data-testid": "replay-result" },
              h("h2", {}, `Result: ${doc.result.outcome.replaceAll("_", " ")}`),
              h("p", {}, payout(doc.result, doc.variant === "4p" ? 4 : 3)),
              h("p", {}, `changes: ${doc.result.changes.map((c, seat) => `${this.name(seat)} ${c > 0 ? "+" : ""}${c}`).join(", ")}`),
            )
          : null,
      ),
    );
    if (focused) this.root.querySelector<HTMLElement>(`[data-focus="${focused}"]`)?.focus();
  }
}
