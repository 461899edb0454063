#!/usr/bin/env node
// Creates a table with every seat pre-assigned, runs one random bot per seat (bot.mjs) to
// the end and prints the final standings as JSON on stdout (progress goes to stderr).
//
//   node play-table.mjs --target 127.0.0.1:50051 [--variant 3p|4p] [--rounds 1] [--seed 1] [--verbose]
//
// Output: {"table_id": "...", "rounds": 1, "standings": [{"place": 1, "seat": 2, "player_name": "node-2", "balance": 4}, ...],
//          "seats": [{"seat": 0, "decisions": 17, "reads": 18}, ...]}

import { parseArgs } from "node:util";

import { describeError, playSeat } from "./bot.mjs";
import { call, connect, newRequestId } from "./dizhu.mjs";

const VARIANTS = { "3p": ["VARIANT_THREE_PLAYER", 3], "4p": ["VARIANT_FOUR_PLAYER", 4] };

async function main() {
  const { values } = parseArgs({
    options: {
      target: { type: "string", default: "127.0.0.1:50051" },
      variant: { type: "string", default: "3p" },
      rounds: { type: "string", default: "1" },
      seed: { type: "string", default: "1" },
      verbose: { type: "boolean", default: false },
    },
  });
  const [variant, players] = VARIANTS[values.variant] ?? [];
  const rounds = Number(values.rounds);
  if (!variant || !Number.isInteger(rounds) || rounds < 1) {
    console.error("usage: node play-table.mjs --target HOST:PORT [--variant 3p|4p] [--rounds N>=1] [--seed N]");
    process.exit(2);
  }
  const log = values.verbose ? (line) => console.error(line) : () => {};

  const { tables, close } = connect(values.target);
  let created;
  try {
    created = await call(tables, "CreateTable", {
      request_id: newRequestId(),
      settings: { variant, round_limit: rounds },
      player_names: Array.from({ length: players }, (_, seat) => `node-${seat}`),
    });
  } finally {
    close();
  }
  console.error(`table ${created.table_id}: ${players} random bots, ${rounds} round(s)`);

  const seed = Number(values.seed);
  const results = await Promise.all(
    created.seat_tokens.map((seatToken) =>
      playSeat({
        target: values.target,
        tableId: created.table_id,
        token: seatToken.token,
        seed: seed * 1000 + (seatToken.seat ?? 0),
        log,
      }),
    ),
  );
  const standings = results[0].standings;
  const decisions = results.reduce((sum, result) => sum + result.decisions, 0);
  console.error(`closed after ${decisions} decisions`);
  const seats = results.map(({ seat, decisions, reads }) => ({ seat: seat ?? 0, decisions, reads }));
  console.log(JSON.stringify({ table_id: created.table_id, rounds, standings, seats }));
}

main().catch((error) => {
  console.error(`play-table failed: ${error.code !== undefined ? describeError(error) : error.stack}`);
  process.exit(1);
});
