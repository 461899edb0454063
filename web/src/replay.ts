// The replay viewer: a finished round step by step, every hand shown, from the referee
// (GetReplay: ?replay=<table>&round=<n>), from a JSON file (dizhu replay > round.json), or
// from a URL (?replay_url=<url of the JSON>). The JSON is schema dizhu.replay/v1 (docs/replay.md).
import { refusal, tables } from "./api";
import { cardElement, cardId, formatRanks, parseCards, sortCards } from "./cards";
import { fill, h } from "./dom";
import { fromHex, seedMatches } from "./fairness";
import type { Card } from "./gen/dizhu/v1/cards_pb";

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

interface ReplayDocument {
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
interface Frame {
  deal: number;
  text: string;
  seat: number | null;
  hands: Card[][];
  trick: { seat: number; cards: Card[] }[];
  landlord: number | null;
}

const same = (a: Card, b: Card) => cardId(a) === cardId(b);

/** Every step of the round: each deal as dealt, then one frame per action. */
export function frames(doc: ReplayDocument): Frame[] {
  const players = doc.variant === "4p" ? 4 : 3;
  const result: Frame[] = [];
  for (const deal of doc.deals) {
    const hands = deal.hands.map(parseCards);
    const kitty = parseCards(deal.kitty);
    let landlord: number | null = null;
    let highest = 0;
    let highestSeat = 0;
    let passes = 0;
    let trick: { seat: number; cards: Card[] }[] = [];
    const push = (text: string, seat: number | null) =>
      result.push({ deal: deal.deal_number, text, seat, hands: hands.map((hand) => [...hand]), trick: [...trick], landlord });
    push(`Deal ${deal.deal_number}: seat ${deal.dealer} deals; seat ${deal.face_up_seat} drew the face-up card ${deal.face_up}`, null);
    for (const action of deal.actions) {
      const late = action.timed_out ? " (time ran out)" : "";
      if (action.bid !== undefined) {
        if (action.bid) {
          highest = action.bid;
          highestSeat = action.seat;
          passes = 0;
        } else passes += 1;
        let text = `seat ${action.seat} ${action.bid ? `bids ${action.bid}` : "passes"}${late}`;
        if (highest === 3 || (highest > 0 && passes === players - 1)) {
          landlord = highestSeat;
          hands[landlord].push(...kitty);
          passes = 0;
          text += ` — seat ${landlord} is the landlord and takes the kitty ${formatRanks(kitty)}`;
        }
        push(text, action.seat);
        continue;
      }
      const cards = parseCards(action.play ?? "");
      hands[action.seat] = hands[action.seat].filter((card) => !cards.some((played) => same(card, played)));
      trick.push({ seat: action.seat, cards });
      let text = cards.length ? `seat ${action.seat} plays ${formatRanks(cards)}${late}` : `seat ${action.seat} passes${late}`;
      passes = cards.length ? 0 : passes + 1;
      if (passes === players - 1) text += " — the trick is over";
      push(text, action.seat);
      if (passes === players - 1) {
        trick = [];
        passes = 0;
      }
    }
  }
  return result;
}

export class ReplayPage {
  private doc: ReplayDocument | null = null;
  private steps: Frame[] = [];
  private step = 0;

  constructor(private readonly root: HTMLElement) {
    document.addEventListener("keydown", (event) => {
      if (event.key === "ArrowRight") this.go(this.step + 1);
      if (event.key === "ArrowLeft") this.go(this.step - 1);
    });
  }

  async fromReferee(tableId: string, round: number): Promise<void> {
    try {
      const answer = await tables.getReplay({ tableId, round });
      this.open(answer.json);
    } catch (error) {
      const refused = refusal(error);
      this.fail(`${refused.reason}: ${refused.message}`);
    }
  }

  async fromUrl(url: string): Promise<void> {
    try {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
      this.open(await response.text());
    } catch (error) {
      this.fail(String(error));
    }
  }

  open(text: string): void {
    try {
      const doc = JSON.parse(text) as ReplayDocument;
      if (doc.schema !== "dizhu.replay/v1") throw new Error(`not a dizhu.replay/v1 record (schema ${doc.schema})`);
      this.doc = doc;
      this.steps = frames(doc);
      this.step = 0;
      this.render();
    } catch (error) {
      this.fail(String(error));
    }
  }

  private fail(text: string): void {
    fill(this.root, h("p", { class: "refusal", "data-testid": "refusal" }, text), h("a", { href: location.pathname }, "back"));
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
    const slider = h("input", { type: "range", min: 0, max: this.steps.length - 1, value: this.step, "data-testid": "replay-slider" });
    slider.addEventListener("input", () => this.go(Number(slider.value)));
    fill(
      this.root,
      h(
        "div",
        { class: "replay-page" },
        h(
          "header",
          { class: "bar" },
          h("a", { href: location.pathname, class: "home" }, "dizhu"),
          h("span", {}, `replay of table ${doc.table_id}, round ${doc.round} (${doc.variant})`),
        ),
        h(
          "div",
          { class: "actions" },
          h("button", { "data-testid": "replay-first", onclick: () => this.go(0) }, "|◀"),
          h("button", { "data-testid": "replay-previous", onclick: () => this.go(this.step - 1) }, "◀"),
          h("span", { "data-testid": "replay-step" }, `step ${this.step + 1} / ${this.steps.length}`),
          h("button", { "data-testid": "replay-next", onclick: () => this.go(this.step + 1) }, "▶"),
          h("button", { "data-testid": "replay-last", onclick: () => this.go(this.steps.length - 1) }, "▶|"),
          slider,
        ),
        h("p", { class: "step-text", "data-testid": "replay-text" }, frame.text),
        h(
          "section",
          { class: "seats replay" },
          frame.hands.map((hand, seat) =>
            h(
              "div",
              { class: `seat${frame.seat === seat ? " turn" : ""}`, "data-testid": `replay-seat-${seat}` },
              h("div", { class: "who" }, h("b", {}, `seat ${seat}`), frame.landlord === seat ? h("span", { class: "role landlord" }, " landlord") : null),
              h("div", { class: "count" }, `${hand.length} cards`),
              h("div", { class: "hand small" }, sortCards(hand).map((card) => cardElement(card))),
            ),
          ),
        ),
        h(
          "ol",
          { class: "trick" },
          frame.trick.map((play) =>
            h("li", {}, h("span", { class: "by" }, `seat ${play.seat}`), play.cards.length ? h("span", {}, ...sortCards(play.cards).map((c) => cardElement(c))) : h("span", { class: "pass" }, "pass")),
          ),
        ),
        h(
          "p",
          { "data-testid": "replay-seed-check", class: verified === false ? "bad" : "good" },
          verified === null ? "This deal was not drawn from a seed." : verified ? "✓ sha256(seed) equals the published commitment" : "✗ sha256(seed) does NOT equal the published commitment",
        ),
        last
          ? h(
              "section",
              { class: "result", "data-testid": "replay-result" },
              h("h2", {}, `Result: ${doc.result.outcome.replaceAll("_", " ")}`),
              h("p", {}, `bid ${doc.result.bid}, ${doc.result.doublings} doubling(s)${doc.result.spring ? ", spring" : ""}: stake ${doc.result.stake}`),
              h("p", {}, `changes: ${doc.result.changes.map((c, seat) => `seat ${seat} ${c > 0 ? "+" : ""}${c}`).join(", ")}`),
            )
          : null,
      ),
    );
  }
}
