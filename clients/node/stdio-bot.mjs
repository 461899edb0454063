#!/usr/bin/env node
// A stdio bot for `dizhu tournament` (protocol dizhu.stdio/v1, docs/tournaments.md): no gRPC,
// no dependencies. It reads one JSON request per line on standard input and answers each
// with one JSON line on standard output, for as long as the runner keeps it running:
//
//   {"protocol": "dizhu.stdio/v1", "id": 7, "type": "bid",  "view": {...}, "time_left_ms": 4980, ...}
//   {"id": 7, "bid": 1}
//   {"protocol": "dizhu.stdio/v1", "id": 8, "type": "play", "view": {...}, "legal": ["3c", "3c 3d", ...], "can_pass": true, ...}
//   {"id": 8, "cards": "3c 3d"}                   ("" passes)
//
// Its strategy is deliberately plain: bid 1 with a joker or two 2s when the view's legal_bids
// hold 1, else pass; lead the move that sheds the most cards starting from the lowest one;
// follow with the first move that beats the trick, unless the farmer partner owns it.
// Anything written on standard error is kept by the runner beside the game's replay.

import { createInterface } from "node:readline";

const RANKS = ["3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "BJ", "RJ"];
const rankOf = (card) => RANKS.indexOf(card.startsWith("BJ") || card.startsWith("RJ") ? card.slice(0, 2) : card[0]);
const cardsOf = (text) => (text ? text.split(" ") : []);
const lowest = (move) => Math.min(...cardsOf(move).map(rankOf));

function bid(view) {
  const hand = cardsOf(view.hand);
  const strong = hand.filter((card) => rankOf(card) >= RANKS.indexOf("BJ")).length + hand.filter((card) => card[0] === "2").length / 2;
  return (view.legal_bids ?? []).includes(1) && strong >= 1 ? 1 : 0;
}

function play(view, legal, canPass) {
  if (legal.length === 0) return "";
  if (!canPass) {
    // Leading: the lowest starting card, then the most cards.
    return [...legal].sort((a, b) => lowest(a) - lowest(b) || cardsOf(b).length - cardsOf(a).length)[0];
  }
  const partner = view.landlord !== null && view.to_beat_seat !== view.landlord && view.seat !== view.landlord;
  return partner ? "" : legal[0];
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    console.error(`not JSON: ${line.slice(0, 80)}`);
    continue;
  }
  const reply =
    request.type === "bid"
      ? { id: request.id, bid: bid(request.view) }
      : { id: request.id, cards: play(request.view, request.legal, request.can_pass) };
  console.error(`${request.game} #${request.id} ${request.type}: ${JSON.stringify(reply)}`);
  process.stdout.write(JSON.stringify(reply) + "\n");
}
