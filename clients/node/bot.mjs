#!/usr/bin/env node
// A random dizhu bot in Node.js: it takes a seat (or plays a seat token it is given),
// follows the table with WatchTable, and whenever a change may ask something of its seat
// (concernsSeat) reads its view with GetTable; on its turn it bids at random, or asks
// RulesService.ListLegalMoves for the moves of its exact hand and plays one of them at
// random (passing included when allowed), until the table closes.
//
//   node bot.mjs --target 127.0.0.1:50051 --table <table id> [--token <seat token> | --name <name>] [--seed 7]
//
// --target is host:port or unix:/path/to/socket. Joining prints {"table_id", "seat", "seat_token"}
// at once: --token plays that seat again (after a crash, say), where joining anew would find the
// table full. Failed calls are sent again, and a lost stream reopened, for RETRY_HORIZON_MS: the
// bot rides out a restart of the referee.
//
// As a module: `playSeat({ target, tableId, token, name, seed, log })` resolves to
// { seat, standings, decisions, reads, resumes, view } once the table is closed (the standings
// are those of the TableClosed event; reads counts its GetTable calls).

import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

import {
  MOVED_ON_REASONS,
  RETRYABLE,
  RETRY_HORIZON_MS,
  bearer,
  call as retried,
  codeName,
  connect,
  errorDetails,
  grpc,
  newRequestId,
  plainStandings,
  sleep,
} from "./dizhu.mjs";

/** A small seeded generator (mulberry32): the same seed, the same game choices. */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform choices among the legal ones: a bid (or pass) above the highest, a legal move (or pass). */
export class RandomBot {
  constructor(seed = Date.now()) {
    this.random = seededRandom(seed);
  }

  pick(options) {
    return options[Math.floor(this.random() * options.length)];
  }

  // The view's legal_bids: 0 (a pass), then every amount above the highest bid.
  chooseBid(view) {
    return this.pick(view.legal_bids?.length ? view.legal_bids : [0]);
  }

  choosePlay(view, moves, canPass) {
    const options = moves.map((move) => move.cards);
    if (canPass || options.length === 0) options.push([]);
    return this.pick(options);
  }
}

/**
 * The table's events for `token`'s holder, resuming after a lost stream: on UNAVAILABLE,
 * CANCELLED, DEADLINE_EXCEEDED, a dropped connection or `idleMs` without any message (not
 * even a heartbeat), it reconnects with after_sequence = the last sequence received and
 * after_write_id = its write_id (a store restored behind that event answers with a fresh
 * snapshot); on OUT_OF_RANGE it reconnects without (a fresh snapshot). It gives up once
 * `horizonMs` passed without a message. Ends after table_closed.
 */
export async function* watchTable(
  tables,
  tableId,
  token,
  { afterSequence = null, idleMs = 45_000, horizonMs = RETRY_HORIZON_MS, onResume } = {},
) {
  let last = afterSequence;
  let lastWrite = 0;
  let lostSince = null;
  let delay = 50;
  for (;;) {
    const request = { table_id: tableId };
    if (last !== null) {
      request.after_sequence = last;
      request.after_write_id = lastWrite;
    }
    const stream = tables.WatchTable(request, bearer(token));
    let idle;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => stream.cancel(), idleMs);
    };
    try {
      arm();
      for await (const message of stream) {
        arm();
        lostSince = null;
        delay = 50;
        const event = message.event;
        last = event.sequence;
        lastWrite = event.write_id ?? 0;
        yield event;
        if (event.payload === "table_closed") return;
      }
      return; // ended with OK: the table is closed
    } catch (error) {
      if (error.code === grpc.status.OUT_OF_RANGE && last !== null) {
        last = null;
        lastWrite = 0;
      } else if (!RETRYABLE.has(error.code) || Date.now() - (lostSince ??= Date.now()) > horizonMs) {
        throw error;
      } else {
        onResume?.(error, last);
        await sleep(delay * (0.5 + Math.random() / 2));
        delay = Math.min(delay * 2, 2000);
      }
    } finally {
      clearTimeout(idle);
      stream.cancel();
    }
  }
}

/** The cards to beat (the view's to_beat); null when the seat leads (the view leaves it unset then). */
export function toBeat(view) {
  return view.to_beat ? view.to_beat.cards : null;
}

const version = (view) => BigInt(view.version ?? 0);

/**
 * Whether the change `event` is part of may ask something of `seat` (a turn, a deal, the end of
 * the auction or the round, the close): anything but a bid or play that hands the turn to
 * another seat (its next_seat), another seat's Settle or clock, or a presence. Unknown: yes (the
 * seat not known yet, a move without next_seat, a kind of event this bot does not know).
 */
export function concernsSeat(event, seat) {
  if (seat === undefined) return true;
  switch (event.payload) {
    case "bid_made":
    case "cards_played": {
      const next = event[event.payload].next_seat; // optional: a seat 0 stays 0, an unset one undefined
      return next === undefined || next === seat;
    }
    case "seat_settled":
      return (event.seat_settled.seat ?? 0) === seat;
    case "turn_deadline":
      return (event.turn_deadline.seat ?? 0) === seat;
    case "seat_presence":
      return false;
    default:
      return true;
  }
}
const myTurn = (view) => view.turn_seat !== undefined && view.your_seat !== undefined && view.turn_seat === view.your_seat;
// The table moved on (a reason of the MOVED_ON category, from the error's ErrorInfo): read it
// again and decide again.
const outOfTurn = (error) => MOVED_ON_REASONS.has(errorDetails(error).reason);
/** One line about a failed call: its code, reason and facts. */
export const describeError = (error) => {
  const { reason, metadata } = errorDetails(error);
  const facts = Object.entries(metadata).map(([key, value]) => ` ${key}=${value}`).join("");
  return `${codeName(error.code)} ${reason}: ${error.details}${facts}`;
};

const RIDE_OUT = { attempts: Infinity, horizonMs: RETRY_HORIZON_MS };

/** Plays one seat until the table closes; see the header. `onJoined({ table_id, seat, seat_token })` is told of a seat taken. */
export async function playSeat({
  target,
  tableId,
  token = null,
  name = "node-bot",
  seed,
  bot,
  log = () => {},
  onJoined = () => {},
  credentials,
}) {
  const { tables, rules, close } = connect(target, { credentials });
  bot ??= new RandomBot(seed);
  // Through a referee's restart: the same request again until it answers.
  const call = (stub, method, request, token) => retried(stub, method, request, token, RIDE_OUT);
  try {
    if (!token) {
      const joined = await call(tables, "JoinTable", { table_id: tableId, request_id: newRequestId(), player_name: name });
      token = joined.seat_token;
      log(`joined seat ${joined.seat} as ${name}`);
      onJoined({ table_id: tableId, seat: joined.seat ?? 0, seat_token: token });
    }
    // latest: the highest version of a change that may ask something of the seat (concernsSeat).
    const state = { latest: 0n, seat: undefined, closed: false, standings: null, resumes: 0, wake: null };
    const changed = () => {
      state.wake?.();
      state.wake = null;
    };
    const following = (async () => {
      const events = watchTable(tables, tableId, token, { onResume: () => (state.resumes += 1) });
      for await (const event of events) {
        if (event.payload === "heartbeat") continue;
        if (version(event) > state.latest && concernsSeat(event, state.seat)) state.latest = version(event);
        if (event.payload === "table_closed") {
          state.closed = true;
          state.standings = event.table_closed.standings ?? [];
        } else if (event.payload === "snapshot" && event.snapshot.phase === "PHASE_CLOSED") {
          state.closed = true;
        }
        changed();
      }
      state.closed = true;
      changed();
    })();
    following.catch(() => changed()); // surfaced below

    let reads = 0;
    const read = async () => {
      reads += 1;
      return (await call(tables, "GetTable", { table_id: tableId }, token)).table;
    };
    const waitForChange = async (seen) => {
      while (!state.closed && state.latest <= seen) {
        await Promise.race([new Promise((resolve) => (state.wake = resolve)), following]);
      }
    };

    let settledRound = 0;
    let decisions = 0;
    let refusals = 0;
    const act = async (view) => {
      const mutation = { table_id: tableId, request_id: newRequestId(), expected_version: view.version };
      if (view.phase === "PHASE_ROUND_OVER" && (view.last_settlement?.round ?? 0) > settledRound) {
        const settled = await call(tables, "Settle", { table_id: tableId, request_id: mutation.request_id }, token);
        settledRound = Math.max(settledRound, settled.settlement?.round ?? 0);
        return settled.table;
      }
      if (!myTurn(view)) return null;
      if (view.phase === "PHASE_AUCTION") {
        const amount = bot.chooseBid(view);
        const response = await call(tables, "Bid", { ...mutation, amount }, token);
        log(`seat ${view.your_seat} ${amount ? `bids ${amount}` : "passes"}`);
        return response.table;
      }
      if (view.phase === "PHASE_PLAY") {
        const beat = toBeat(view);
        const legal = await call(rules, "ListLegalMoves", {
          variant: view.settings.variant,
          hand: { cards: view.your_hand },
          ...(beat ? { to_beat: { cards: beat } } : {}),
        });
        const cards = bot.choosePlay(view, legal.moves, legal.can_pass ?? false);
        const response = await call(tables, "Play", { ...mutation, cards }, token);
        log(`seat ${view.your_seat} ${cards.length ? `plays ${cards.length} card(s)` : "passes"}`);
        return response.table;
      }
      return null;
    };

    let view = await read();
    const seat = view.your_seat;
    state.seat = seat;
    while (view.phase !== "PHASE_CLOSED") {
      let after = null;
      try {
        after = await act(view);
        refusals = 0;
      } catch (error) {
        // Any other refusal ends the bot, unless the table has closed meanwhile (a refusal of a
        // closed table ends the game: the bot learns it from the view).
        if (error.code === undefined || ++refusals > 50) throw error;
        log(`seat ${seat}: ${describeError(error)}; reading again`);
        view = await read();
        if (!outOfTurn(error) && view.phase !== "PHASE_CLOSED") throw error;
        continue;
      }
      if (after) {
        decisions += 1;
        view = after;
        continue;
      }
      await waitForChange(version(view));
      view = await read();
    }
    // The stream ends right after table_closed, which carries the final standings.
    let timer;
    await Promise.race([following, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
    clearTimeout(timer);
    if (state.standings === null) throw new Error("the stream ended without the table_closed event");
    return { seat, standings: plainStandings(state.standings), decisions, reads, resumes: state.resumes, view };
  } finally {
    close();
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      target: { type: "string", default: "127.0.0.1:50051" },
      table: { type: "string" },
      token: { type: "string" },
      name: { type: "string", default: "node-bot" },
      seed: { type: "string" },
      quiet: { type: "boolean", default: false },
    },
  });
  if (!values.table) {
    console.error("usage: node bot.mjs --target HOST:PORT|unix:PATH --table TABLE_ID [--token SEAT_TOKEN | --name NAME] [--seed N]");
    process.exit(2);
  }
  const result = await playSeat({
    target: values.target,
    tableId: values.table,
    token: values.token ?? null,
    name: values.name,
    seed: values.seed === undefined ? Date.now() : Number(values.seed),
    log: values.quiet ? () => {} : (line) => console.error(line),
    onJoined: (seat) => console.log(JSON.stringify(seat)),
  });
  console.log(JSON.stringify({ seat: result.seat, decisions: result.decisions, standings: result.standings }));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(`bot failed: ${error.code !== undefined ? describeError(error) : error.stack}`);
    process.exit(1);
  });
}
