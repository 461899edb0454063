#!/usr/bin/env node
// A gRPC entrant for `dizhu tournament` (docs/tournaments.md, "gRPC executables"): it plays
// its seat itself through the referee, with the random bot of bot.mjs.
//
// Per game (`per_game = true`, the default): the runner starts it with the seat in its
// environment -- DIZHU_TARGET, DIZHU_TABLE_ID, DIZHU_SEAT_TOKEN (also DIZHU_SEAT, DIZHU_GAME,
// DIZHU_VARIANT, DIZHU_ENTRANT) -- and it exits when the table is closed.
//
// For many games (`per_game = false`): started once without DIZHU_TABLE_ID, it reads one
// JSON line per game on standard input, {"protocol": "dizhu.exec/v1", "type": "game",
// "target": ..., "table_id": ..., "seat_token": ..., "game": ...}, plays each, and exits at
// the end of its input.
//
// Referees serving TLS: DIZHU_TLS is set, and DIZHU_TLS_CA names their authority's certificate
// (PEM) when it is not one of the system's.

import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

import grpc from "@grpc/grpc-js";

import { playSeat } from "./bot.mjs";

const seedOf = (game) => [...(game ?? "")].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
const credentials = process.env.DIZHU_TLS
  ? grpc.credentials.createSsl(process.env.DIZHU_TLS_CA ? readFileSync(process.env.DIZHU_TLS_CA) : null)
  : undefined;

async function play({ target, table_id: tableId, seat_token: token, game }) {
  const result = await playSeat({ target, tableId, token, seed: seedOf(game), credentials });
  console.error(`${game}: seat ${result.seat} made ${result.decisions} decisions`);
}

if (process.env.DIZHU_TABLE_ID) {
  const env = process.env;
  await play({ target: env.DIZHU_TARGET, table_id: env.DIZHU_TABLE_ID, seat_token: env.DIZHU_SEAT_TOKEN, game: env.DIZHU_GAME });
} else {
  const games = [];
  for await (const line of createInterface({ input: process.stdin })) {
    const assignment = JSON.parse(line);
    if (assignment.type === "game") games.push(play(assignment).catch((error) => console.error(`${assignment.game}: ${error.message}`)));
  }
  await Promise.all(games);
}
