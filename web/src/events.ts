// A table view kept up to date from its WatchTable stream, the events applied one by one,
// so that a page reads the table (GetTable) only when the contract says it must: at the
// start, after a gap in the versions, when the stream begins again with a snapshot (a
// resume the referee could not serve, or a stream that fell too far behind), and for the
// few changes whose whole effect no event states (a seat left mid-round, the table closed,
// a bid or play stored by a referee that did not yet say who acts next). Who acts next and
// what a play doubled are the events' to say (next_seat, doubling): the page works out none.
// Nor the bids a seat may make (legal_bids): no event states them, so once the auction moves
// on the kept ones are dropped, and the table is read again when it is this page's seat to bid.
//
// A front end that follows a table can copy this file: it depends on the contract only.
import { create } from "@bufbuild/protobuf";
import { cardId } from "./cards";
import type { Card } from "./gen/dizhu/v1/cards_pb";
import type { TableEvent } from "./gen/dizhu/v1/events_pb";
import {
  AuctionBidSchema,
  DoublingCause,
  DoublingSchema,
  NextRound,
  Phase,
  RoundActionSchema,
  TrickPlaySchema,
  TrickSchema,
  type TableView,
} from "./gen/dizhu/v1/table_pb";
import { variantSizes } from "./round";

/**
 * What became of an event:
 *  "applied"  the view now includes it;
 *  "seen"     the view already included it (it was read at or after the event's version);
 *  "reread"   the view cannot follow from the events alone: read the table again.
 */
export type Applied = "applied" | "seen" | "reread";

const byId = (a: Card, b: Card) => cardId(a) - cardId(b);

/**
 * Apply `event` to `view` in place. `readAt` is the version of the last view read whole
 * (GetTable, a snapshot, a response): events up to it are in that view already. One change
 * can produce several events that share its version (the last card played ends the round
 * and deals the next), so an event of the view's own version still applies when the view
 * got there by events.
 */
export function applyEvent(view: TableView, event: TableEvent, readAt: bigint): Applied {
  const payload = event.payload;
  if (payload.case === "heartbeat") return "seen";
  if (payload.case === "seatPresence") {
    // Presence is no change of the table's state: it carries the current version.
    const seat = view.seats[payload.value.seat];
    if (seat) seat.connected = payload.value.connected;
    return "applied";
  }
  if (event.version <= readAt) return "seen";
  if (event.version > view.version + 1n) return "reread";
  view.version = event.version;
  const { hand } = variantSizes(view.settings?.variant);
  switch (payload.case) {
    case "seatJoined": {
      const seat = view.seats[payload.value.seat];
      if (!seat) return "reread";
      seat.occupied = true;
      seat.playerName = payload.value.playerName;
      return "applied";
    }
    case "seatLeft": {
      const seat = view.seats[payload.value.seat];
      if (!seat) return "reread";
      seat.occupied = seat.connected = false;
      seat.playerName = "";
      if (view.yourSeat === payload.value.seat) view.yourSeat = undefined;
      // Leaving mid-round forfeits or abandons it, and what the table does next depends on
      // who is still seated: the view says it best.
      return view.phase === Phase.AUCTION || view.phase === Phase.PLAY ? "reread" : "applied";
    }
    case "dealStarted": {
      const deal = payload.value;
      if (deal.dealNumber === 1) view.history = [];
      Object.assign(view, {
        phase: Phase.AUCTION,
        round: deal.round,
        dealNumber: deal.dealNumber,
        redeals: deal.dealNumber - 1,
        dealerSeat: deal.dealerSeat,
        faceUpCard: deal.faceUpCard,
        faceUpSeat: deal.faceUpSeat,
        seedCommitment: deal.seedCommitment,
        ...noAuctionNorPlay(),
        turnSeat: deal.faceUpSeat,
        yourHand: view.yourSeat === undefined ? [] : [...deal.yourHand],
      });
      for (const seat of view.seats) seat.cardsLeft = hand;
      return toBidNext(view);
    }
    case "bidMade": {
      const { seat, amount, timedOut, nextSeat, auctionClosed } = payload.value;
      // Stored by a referee that did not say who bids next yet: the view says it.
      if (nextSeat === undefined && !auctionClosed) return "reread";
      view.bids.push(create(AuctionBidSchema, { seat, amount }));
      view.history.push(create(RoundActionSchema, { dealNumber: view.dealNumber, seat, bid: amount, timedOut }));
      // Shown as the auction's state only: which amounts may follow is legal_bids', never worked out from it.
      view.highestBid = Math.max(view.highestBid, amount);
      // Unset once the auction closed: the landlordChosen or dealThrownIn that comes next says who acts.
      view.turnSeat = nextSeat;
      view.turnDeadline = undefined;
      return toBidNext(view);
    }
    case "dealThrownIn":
      view.lastReveal = payload.value.reveal;
      view.turnSeat = undefined;
      view.legalBids = [];
      return "applied";
    case "landlordChosen": {
      const { landlordSeat, bid, kitty } = payload.value;
      Object.assign(view, {
        phase: Phase.PLAY,
        landlordSeat,
        highestBid: bid,
        stake: BigInt(bid),
        kitty: [...kitty],
        turnSeat: landlordSeat,
        trick: create(TrickSchema, { leaderSeat: landlordSeat, plays: [] }),
        legalBids: [],
      });
      view.seats[landlordSeat].cardsLeft += kitty.length;
      if (view.yourSeat === landlordSeat) view.yourHand = [...view.yourHand, ...kitty].sort(byId);
      return "applied";
    }
    case "cardsPlayed": {
      const played = payload.value;
      // Stored by a referee that did not say who plays next, or what the play doubled, yet: the view says it.
      const older =
        (played.nextSeat === undefined && played.cardsLeft > 0) ||
        (played.doubling === DoublingCause.UNSPECIFIED && played.stake !== view.stake);
      if (!view.trick || older) return "reread";
      view.history.push(
        create(RoundActionSchema, { dealNumber: view.dealNumber, seat: played.seat, cards: played.cards, timedOut: played.timedOut }),
      );
      const play = create(TrickPlaySchema, { seat: played.seat, cards: played.cards, combination: played.combination });
      view.trick.plays.push(play);
      if (play.cards.length) view.toBeat = play;
      view.seats[played.seat].cardsLeft = played.cardsLeft;
      if (played.doubling !== DoublingCause.UNSPECIFIED) {
        const { doubling: cause, seat, cards } = played;
        view.doublingPlays.push(create(DoublingSchema, { cause, seat, cards, trick: view.tricksCompleted }));
        view.doublings += 1;
      }
      view.stake = played.stake;
      if (view.yourSeat === played.seat) {
        const gone = new Set(played.cards.map(cardId));
        view.yourHand = view.yourHand.filter((card) => !gone.has(cardId(card)));
      }
      view.turnDeadline = undefined;
      if (played.trickClosed && played.nextSeat !== undefined) {
        view.tricksCompleted += 1;
        view.trick = create(TrickSchema, { leaderSeat: played.nextSeat, plays: [] });
        view.toBeat = undefined;
      }
      // Unset once the seat went out: the round is over, and the roundEnded that says so comes
      // next. (A turn handed on here would make a page ask for legal plays in an ended round.)
      view.turnSeat = played.nextSeat;
      return "applied";
    }
    case "roundEnded": {
      const ended = payload.value;
      const settlement = ended.settlement;
      Object.assign(view, {
        phase: view.settings?.nextRound === NextRound.WHEN_ALL_SETTLED ? Phase.ROUND_OVER : Phase.WAITING_FOR_PLAYERS,
        round: (settlement?.round ?? view.round) + 1,
        ...noAuctionNorPlay(),
        dealNumber: 0,
        turnSeat: undefined,
        faceUpCard: undefined,
        faceUpSeat: undefined,
        seedCommitment: new Uint8Array(),
        yourHand: [],
        history: [],
        lastSettlement: settlement,
      });
      if (ended.reveal) view.lastReveal = ended.reveal;
      view.seats.forEach((seat, index) => {
        seat.cardsLeft = 0;
        seat.timeBankLeft = undefined;
        seat.balance = ended.balances[index] ?? seat.balance;
      });
      // With a seat free the table waits for players, or first for the others' Settle.
      return view.seats.every((seat) => seat.occupied) ? "applied" : "reread";
    }
    case "seatSettled":
      return "applied";
    case "turnDeadline": {
      view.turnDeadline = payload.value.deadline;
      const seat = view.seats[payload.value.seat];
      if (seat) seat.timeBankLeft = payload.value.timeBankLeft;
      return "applied";
    }
    case "tableClosed":
      // The final round count and standings are the view's to say.
      view.phase = Phase.CLOSED;
      view.turnSeat = undefined;
      return "reread";
    default:
      // A kind of event this page does not know (the contract may add some): read the table.
      return "reread";
  }
}

/**
 * After a change of the auction's turn: the bids kept were the last seat's, so they go; when
 * the seat to bid now is this page's own, the table is read again for the ones it may make.
 */
function toBidNext(view: TableView): Applied {
  view.legalBids = [];
  return view.yourSeat !== undefined && view.turnSeat === view.yourSeat ? "reread" : "applied";
}

/** The fields of a view that a new deal, or the end of a round, starts afresh. */
function noAuctionNorPlay(): Partial<TableView> {
  return {
    turnDeadline: undefined,
    bids: [],
    highestBid: 0,
    legalBids: [],
    landlordSeat: undefined,
    kitty: [],
    trick: undefined,
    toBeat: undefined,
    tricksCompleted: 0,
    doublings: 0,
    doublingPlays: [],
    stake: 0n,
  };
}
