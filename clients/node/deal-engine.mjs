// A rules engine in JavaScript for the conformance kit's stdio protocol (docs/conformance.md):
// it answers the "deals" family with the reference deal of docs/deal-reference.mjs, and says
// every other family is unsupported. One JSON request per line in, one answer per line out:
//
//   dizhu conformance rules --engine "cmd:node clients/node/deal-engine.mjs" --family deals

import { createHash } from "node:crypto";
import { createInterface } from "node:readline";

// The reference checks its own vectors when loaded and says so on standard output, which is
// this engine's answer channel: that line goes to standard error instead.
const log = console.log;
console.log = console.error;
const { deal } = await import("../../docs/deal-reference.mjs");
console.log = log;

const VARIANTS = { "3p": { players: 3, decks: 1, handSize: 17 }, "4p": { players: 4, decks: 2, handSize: 25 } };

function answer({ family, query }) {
  if (family !== "deals") return { unsupported: `deal-engine answers deals only, not ${family}` };
  const seed = Buffer.from(query.seed, "hex");
  const dealt = deal(seed, VARIANTS[query.variant], query.dealer);
  return {
    hands: dealt.hands.map((hand) => [...hand].sort((a, b) => a - b)),
    kitty: dealt.kitty,
    face_up: dealt.faceUp,
    face_up_seat: dealt.faceUpSeat,
    commitment: createHash("sha256").update(seed).digest("hex"),
  };
}

for await (const line of createInterface({ input: process.stdin })) {
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (error) {
    reply = { error: String(error) };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
