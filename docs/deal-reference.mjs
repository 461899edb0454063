// Reference implementation of the dizhu deal (docs/deal.md), checked against the test vectors.
// Usage: node docs/deal-reference.mjs [docs/deal-vectors.json]   (Node.js >= 18, no dependencies)
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

const sha256 = (...parts) => createHash("sha256").update(Buffer.concat(parts)).digest();

// The deal of section 8: seed (32-byte Buffer) -> shuffled ids, hands, kitty, face-up card and seat.
export function deal(seed, { players, decks, handSize }, dealer) {
  let counter = 0;
  const words = [];
  const below = (n) => {                                     // step 2: uniform draw in 0..n-1
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (;;) {
      if (words.length === 0) {                              // step 1: next SHA-256 block, 8 words
        const index = Buffer.alloc(4);
        index.writeUInt32BE(counter++);
        const block = sha256(Buffer.from("dizhu/deal/v1"), seed, index);
        for (let offset = 0; offset < 32; offset += 4) words.push(block.readUInt32BE(offset));
      }
      const word = words.shift();
      if (word < limit) return word % n;
    }
  };
  const order = Array.from({ length: 54 * decks }, (_, id) => id);
  for (let i = order.length - 1; i > 0; i--) {               // step 3: Fisher-Yates from the top
    const j = below(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const dealt = players * handSize;
  const faceUp = below(dealt);                               // step 4: a dealt position
  const hands = Array.from({ length: players }, () => []);
  for (let p = 0; p < dealt; p++) hands[(dealer + 1 + p) % players].push(order[p]);  // step 5
  return { order, hands, kitty: order.slice(dealt), faceUp: order[faceUp], faceUpSeat: (dealer + 1 + faceUp) % players };
}

// A card's notation from its id (the id table of docs/deal.md): 54*copy + 4*rank + suit, jokers 52/53.
export function cardName(id) {
  const copy = Math.floor(id / 54), index = id % 54;
  const face = index >= 52 ? ["BJ", "RJ"][index - 52] : "3456789TJQKA2"[index >> 2] + "cdhs"[index & 3];
  return face + "'".repeat(copy);
}

const VARIANTS = { "3p": { players: 3, decks: 1, handSize: 17 }, "4p": { players: 4, decks: 2, handSize: 25 } };

function check(path) {
  const { vectors } = JSON.parse(readFileSync(path, "utf8"));
  const failures = [];
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const sorted = (ids) => [...ids].sort((a, b) => a - b);
  for (const v of vectors) {
    const seed = Buffer.from(v.seed, "hex");
    const got = deal(seed, VARIANTS[v.variant], v.dealer);
    const name = `${v.variant} dealer ${v.dealer} seed ${v.seed}`;
    const expect = (what, ok) => ok || failures.push(`${name}: ${what} differs`);
    expect("commitment", createHash("sha256").update(seed).digest("hex") === v.commitment);
    expect("shuffled order", same(got.order, v.shuffled));
    expect("face-up card", got.faceUp === v.face_up.id && cardName(got.faceUp) === v.face_up.card);
    expect("face-up seat", got.faceUpSeat === v.face_up.seat);
    expect("kitty", same(got.kitty, v.kitty.ids) && same(got.kitty.map(cardName), v.kitty.cards.split(" ")));
    got.hands.forEach((hand, seat) => {
      expect(`hand ${seat}`, same(sorted(hand), sorted(v.hands[seat].ids)));
      const names = v.hands[seat].ids.map(cardName).join(" ");
      expect(`hand ${seat} notation`, names === v.hands[seat].cards);
    });
  }
  if (failures.length) {
    console.log(failures.join("\n"));
    process.exit(1);
  }
  console.log(`ok: ${vectors.length} vectors reproduced`);
}

check(process.argv[2] ?? new URL("deal-vectors.json", import.meta.url));
