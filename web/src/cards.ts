// Cards as people read them, and the project's card notation ("3c 3d Th' BJ").
import { create } from "@bufbuild/protobuf";
import { CardSchema, CombinationKind, Rank, Suit, type Card } from "./gen/dizhu/v1/cards_pb";

const SYMBOLS = ["3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "BJ", "RJ"];
const SUIT_LETTERS = "cdhs";
const SUIT_GLYPHS = ["♣", "♦", "♥", "♠"];

/** The notation of a rank: "3" .. "T" .. "2", "BJ", "RJ". */
export function rankSymbol(rank: Rank): string {
  return SYMBOLS[rank - 1] ?? "?";
}

/** The canonical card id: 54*copy + 4*(rank-1) + (suit-1); jokers 54*copy + 52 / 53. */
export function cardId(card: Card): number {
  if (card.rank >= Rank.BLACK_JOKER) return 54 * card.copy + 52 + (card.rank - Rank.BLACK_JOKER);
  return 54 * card.copy + 4 * (card.rank - 1) + (card.suit - 1);
}

/** Low to high by rank, then suit, then deck: the order hands are shown in. */
export function sortCards(cards: readonly Card[]): Card[] {
  return [...cards].sort((a, b) => a.rank - b.rank || a.suit - b.suit || a.copy - b.copy);
}

/** What a card face shows: the rank ("10" for T), the suit glyph, whether it is red. */
export function cardFace(card: Card): { rank: string; suit: string; red: boolean } {
  if (card.rank === Rank.BLACK_JOKER) return { rank: "BJ", suit: "★", red: false };
  if (card.rank === Rank.RED_JOKER) return { rank: "RJ", suit: "★", red: true };
  const rank = card.rank === Rank.TEN ? "10" : rankSymbol(card.rank);
  return { rank, suit: SUIT_GLYPHS[card.suit - 1] ?? "?", red: card.suit === Suit.DIAMONDS || card.suit === Suit.HEARTS };
}

/** Cards in notation, low to high: "3c 3d Th BJ". */
export function formatCards(cards: readonly Card[]): string {
  return sortCards(cards)
    .map((card) => {
      const suit = card.rank >= Rank.BLACK_JOKER ? "" : SUIT_LETTERS[card.suit - 1];
      return rankSymbol(card.rank) + suit + "'".repeat(card.copy);
    })
    .join(" ");
}

/** Ranks only, for narration: "5 5 5 9 9". */
export function formatRanks(cards: readonly Card[]): string {
  return sortCards(cards)
    .map((card) => (card.rank === Rank.TEN ? "10" : rankSymbol(card.rank)))
    .join(" ");
}

/** Ranks of a combination (Combination.ranks), as formatRanks writes them: "5 5 5 9 9". */
export function formatRankList(ranks: readonly Rank[]): string {
  return [...ranks]
    .sort((a, b) => a - b)
    .map((rank) => (rank === Rank.TEN ? "10" : rankSymbol(rank)))
    .join(" ");
}

/** Cards written in full in notation (as replays write them: "3c Th' BJ"); an empty string is no card. */
export function parseCards(text: string): Card[] {
  const cards: Card[] = [];
  for (const token of text.split(/[\s,]+/).filter(Boolean)) {
    const match = /^(BJ|RJ|10|[2-9TJQKA])([cdhs])?(')?$/i.exec(token);
    if (!match) throw new Error(`${JSON.stringify(token)} is not a card`);
    const symbol = match[1].toUpperCase() === "10" ? "T" : match[1].toUpperCase();
    const rank = (SYMBOLS.indexOf(symbol) + 1) as Rank;
    const joker = rank >= Rank.BLACK_JOKER;
    if (joker === Boolean(match[2])) throw new Error(`${JSON.stringify(token)}: jokers alone have no suit`);
    const suit = joker ? Suit.JOKER : ((SUIT_LETTERS.indexOf(match[2].toLowerCase()) + 1) as Suit);
    cards.push(create(CardSchema, { rank, suit, copy: match[3] ? 1 : 0 }));
  }
  return cards;
}

const KIND_NAMES: Record<number, string> = {
  [CombinationKind.SINGLE]: "single",
  [CombinationKind.PAIR]: "pair",
  [CombinationKind.TRIO]: "trio",
  [CombinationKind.TRIO_WITH_SINGLE]: "trio + single",
  [CombinationKind.TRIO_WITH_PAIR]: "trio + pair",
  [CombinationKind.STRAIGHT]: "straight",
  [CombinationKind.PAIR_SEQUENCE]: "pair sequence",
  [CombinationKind.TRIO_SEQUENCE]: "airplane",
  [CombinationKind.AIRPLANE_WITH_SINGLES]: "airplane + singles",
  [CombinationKind.AIRPLANE_WITH_PAIRS]: "airplane + pairs",
  [CombinationKind.BOMB]: "bomb",
  [CombinationKind.ROCKET]: "rocket",
  [CombinationKind.QUAD_WITH_TWO_SINGLES]: "four + two singles",
  [CombinationKind.QUAD_WITH_TWO_PAIRS]: "four + two pairs",
};

/** A combination kind in words: "trio + pair". */
export function kindName(kind: CombinationKind | undefined): string {
  return kind === undefined ? "play" : (KIND_NAMES[kind] ?? "play");
}

const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];

/**
 * A card in words, for screen readers, starting with what its face shows (so that a person
 * who sees "J♦" and says "J" finds it): "J of diamonds", "RJ red joker", "7 of spades, second deck".
 */
export function cardName(card: Card): string {
  const deck = card.copy ? ", second deck" : "";
  const face = cardFace(card);
  if (card.rank === Rank.BLACK_JOKER) return `BJ black joker${deck}`;
  if (card.rank === Rank.RED_JOKER) return `RJ red joker${deck}`;
  return `${face.rank} of ${SUIT_NAMES[card.suit - 1] ?? "?"}${deck}`;
}

/** The cards' ranks as one key (a combination's type follows from its ranks alone). */
export function ranksKey(cards: readonly Card[]): string {
  return cards
    .map((card) => card.rank)
    .sort((a, b) => a - b)
    .join(",");
}

/**
 * One card drawn as a small face (a span), a toggle button when `onClick` is given. The
 * second deck's copy of a card (4p) is tinted and marked (class "copy", app.css), so that
 * the two copies of a card never look alike; screen readers say "second deck".
 */
export function cardElement(card: Card, options: { selected?: boolean; legal?: boolean; onClick?: () => void } = {}): HTMLElement {
  const face = cardFace(card);
  const element = document.createElement(options.onClick ? "button" : "span");
  element.className =
    "card" + (face.red ? " red" : "") + (card.copy ? " copy" : "") + (options.selected ? " selected" : "") + (options.legal ? " legal" : "");
  element.dataset.card = formatCards([card]);
  const rank = document.createElement("b");
  rank.textContent = face.rank;
  const suit = document.createElement("i");
  suit.textContent = face.suit;
  element.append(rank, suit);
  if (options.onClick) {
    element.setAttribute("aria-label", cardName(card));
    element.setAttribute("aria-pressed", String(Boolean(options.selected)));
    element.dataset.focus = `card-${cardId(card)}`;
    element.addEventListener("click", options.onClick);
  } else {
    element.setAttribute("role", "img");
    element.setAttribute("aria-label", cardName(card));
  }
  return element;
}
