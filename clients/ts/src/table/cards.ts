// Cards as the service writes them ("3D", "TS", "2H": rank then suit letter), named for screen
// readers and ordered the ways the table offers. The rank order is the same under every ruleset
// (3 lowest, 2 highest); the suit order is the ruleset's suit_order option.

export const RANKS = "3456789TJQKA2";
const RANK_NAMES: Readonly<Record<string, string>> = {
  "3": "Three", "4": "Four", "5": "Five", "6": "Six", "7": "Seven", "8": "Eight", "9": "Nine",
  T: "Ten", J: "Jack", Q: "Queen", K: "King", A: "Ace", "2": "Two",
};
const RANK_FACES: Readonly<Record<string, string>> = { T: "10" };
const SUIT_NAMES: Readonly<Record<string, string>> = { D: "Diamonds", C: "Clubs", H: "Hearts", S: "Spades" };
const SUIT_SYMBOLS: Readonly<Record<string, string>> = { D: "♦", C: "♣", H: "♥", S: "♠" };
export const DEFAULT_SUIT_ORDER = "DCHS";

/** The cards of a card text ("3D 3S"; "" and "pass" hold none). */
export function parseCards(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === "" || trimmed.toLowerCase() === "pass" ? [] : trimmed.split(/\s+/).map((card) => card.toUpperCase());
}

export function rankOf(card: string): string {
  return card.slice(0, -1);
}

export function suitOf(card: string): string {
  return card.slice(-1);
}

/** "Three of Diamonds". */
export function cardName(card: string): string {
  return `${RANK_NAMES[rankOf(card)] ?? rankOf(card)} of ${SUIT_NAMES[suitOf(card)] ?? suitOf(card)}`;
}

/** A list of cards in words: "Three of Diamonds, Three of Spades". */
export function cardsInWords(cards: readonly string[]): string {
  return cards.map(cardName).join(", ");
}

/** The face printed on a card: "10♦". */
export function cardFace(card: string): { rank: string; suit: string; red: boolean } {
  const rank = rankOf(card);
  const suit = suitOf(card);
  return { rank: RANK_FACES[rank] ?? rank, suit: SUIT_SYMBOLS[suit] ?? suit, red: suit === "D" || suit === "H" };
}

function rankIndex(card: string): number {
  return RANKS.indexOf(rankOf(card));
}

function suitIndex(card: string, suitOrder: string): number {
  return suitOrder.indexOf(suitOf(card));
}

/** Weakest first: by rank, then suit under the ruleset's suit order. */
export function sortByRank(cards: readonly string[], suitOrder = DEFAULT_SUIT_ORDER): string[] {
  return [...cards].sort((a, b) => rankIndex(a) - rankIndex(b) || suitIndex(a, suitOrder) - suitIndex(b, suitOrder));
}

/** Grouped by suit (lowest suit first), each suit by rank. */
export function sortBySuit(cards: readonly string[], suitOrder = DEFAULT_SUIT_ORDER): string[] {
  return [...cards].sort((a, b) => suitIndex(a, suitOrder) - suitIndex(b, suitOrder) || rankIndex(a) - rankIndex(b));
}
