// A round's decisions walked in order, as both the table's log and the replay viewer read
// them: who bid or played, when the auction chose its landlord or threw the deal in, when a
// trick was over (docs/rules.md sections 4 and 5). The referee is the judge of every move;
// this only follows the ones it accepted, so that a page can tell them as a story.
import { formatRanks } from "./cards";
import { Variant, type Card } from "./gen/dizhu/v1/cards_pb";

/** One accepted decision: a bid (0 passes) or a play (no cards passes). */
export interface Decision {
  deal: number;
  seat: number;
  bid?: number;
  cards: Card[];
  timedOut: boolean;
}

/** What a decision led to, beyond itself. */
export interface Outcome {
  /** The auction ended: this seat is the landlord at this bid. */
  landlord?: { seat: number; bid: number };
  /** Everyone passed: the deal is thrown in. */
  thrownIn?: boolean;
  /** This pass ended the trick: `leader` (the seat of the last play) leads the next one. */
  trickOver?: { leader: number };
}

/** The sizes of a variant: seats, cards dealt to each, kitty. */
export function variantSizes(variant: Variant | undefined): { players: number; hand: number; kitty: number } {
  return variant === Variant.FOUR_PLAYER ? { players: 4, hand: 25, kitty: 8 } : { players: 3, hand: 17, kitty: 3 };
}

/** Follows one round's decisions; `next` says what each one led to. */
export class RoundWalk {
  private deal = 0;
  private highest = 0;
  private highestSeat = 0;
  private passes = 0;
  private lastPlayer = 0;

  constructor(private readonly players: number) {}

  next(decision: Decision): Outcome {
    if (decision.deal !== this.deal) {
      this.deal = decision.deal;
      this.highest = this.passes = 0;
    }
    if (decision.bid !== undefined) {
      if (decision.bid) {
        this.highest = decision.bid;
        this.highestSeat = decision.seat;
        this.passes = 0;
      } else this.passes += 1;
      if (this.highest === 3 || (this.highest > 0 && this.passes === this.players - 1)) {
        this.passes = 0;
        return { landlord: { seat: this.highestSeat, bid: this.highest } };
      }
      return this.highest === 0 && this.passes === this.players ? { thrownIn: true } : {};
    }
    if (decision.cards.length) {
      this.passes = 0;
      this.lastPlayer = decision.seat;
      return {};
    }
    this.passes += 1;
    if (this.passes < this.players - 1) return {};
    this.passes = 0;
    return { trickOver: { leader: this.lastPlayer } };
  }
}

/** A decision and what it led to in words, for a log: "Ann plays pair 5 5 (12 left)". */
export function describe(
  decision: Decision,
  outcome: Outcome,
  name: (seat: number) => string,
  detail: { kind?: string; left?: number; kitty?: Card[] } = {},
): string {
  const late = decision.timedOut ? " (time ran out)" : "";
  let text: string;
  if (decision.bid !== undefined) text = `${name(decision.seat)} ${decision.bid ? `bids ${decision.bid}` : "passes"}${late}`;
  else if (decision.cards.length) {
    const left = detail.left === undefined ? "" : ` (${detail.left} left)`;
    text = `${name(decision.seat)} plays ${detail.kind ? `${detail.kind} ` : ""}${formatRanks(decision.cards)}${left}${late}`;
  } else text = `${name(decision.seat)} passes${late}`;
  if (outcome.landlord) {
    const kitty = detail.kitty?.length ? ` and takes the kitty ${formatRanks(detail.kitty)}` : " and takes the kitty";
    text += ` — ${name(outcome.landlord.seat)} is the landlord at ${outcome.landlord.bid}${kitty}`;
  }
  if (outcome.thrownIn) text += " — everybody passed: the cards are dealt again";
  if (outcome.trickOver) text += ` — the trick is over, ${name(outcome.trickOver.leader)} leads`;
  return text;
}

/** What a round paid and why: "8 per farmer: bid 2, × 2 for 1 bomb or rocket, × 2 for the spring". */
export function payout(
  result: { bid: number; doublings: number; spring: boolean; stake: number | bigint },
  players = 3,
): string {
  if (!Number(result.stake)) return "Nothing was paid: the round settled nothing.";
  const why = [`bid ${result.bid}`];
  if (result.doublings)
    why.push(`× ${2 ** result.doublings} for ${result.doublings} ${result.doublings === 1 ? "bomb or rocket" : "bombs or rockets"}`);
  if (result.spring) why.push("× 2 for the spring (one side never played)");
  // A person who saw a bomb of four played in 4p and no doubling asks why: say the rule.
  const rule = players === 4 ? " (In 4p only a rocket or a bomb of 6 or more cards doubles the stake.)" : "";
  return `Stake ${result.stake} per farmer: ${why.join(", ")}.${rule}`;
}
