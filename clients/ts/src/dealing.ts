/**
 * Deal codes and the shuffle of docs/DEALING.md, so that a browser or Node front end deals the same
 * cards from a code as the engine (engine/dealing.py) does.
 *
 * Written from the page, not translated from the engine; tests/test_ts_dealing.py runs it against
 * the published vectors and against the engine for random seeds. Uses no Node-only API: the
 * browser table imports it too.
 */

import { sha256 } from "./sha256";

/** Crockford's base 32: no I, L, O, U. */
export const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export const SEED_SYMBOLS = 12;
export const SEED_BITS = 5 * SEED_SYMBOLS;
export const CODE_LENGTH = SEED_SYMBOLS + 1;
export const RANKS = "3456789TJQKA2";
export const SUITS = "DCHS";
export const DECK_SIZE = 52;

const SEED_LIMIT = 1n << BigInt(SEED_BITS);
const DOMAIN = new TextEncoder().encode("bigtwo-deal-v1");
const GF32_MODULUS = 0b100101; // X^5 + X^2 + 1
// The engine gives up after this many shuffle rounds; no seed is known to need more than a handful.
const MAX_ROUNDS = 10_000;

/** Symbol value of every character a deal code may hold, including the lenient readings. */
const SYMBOL_VALUES: ReadonlyMap<string, number> = new Map([
  ...Array.from(ALPHABET, (symbol, value): [string, number] => [symbol, value]),
  ["I", 1],
  ["L", 1],
  ["O", 0],
]);

/** Why a deal code was refused. */
export type DealCodeRefusal = "length" | "symbol" | "check" | "seed";

/** A deal code that is malformed or fails its check symbol: it is never dealt. */
export class DealCodeError extends Error {
  override readonly name = "DealCodeError";

  constructor(
    /** The text as given. */
    readonly code: string,
    readonly reason: DealCodeRefusal,
    message: string,
  ) {
    super(message);
  }
}

function timesX(value: number): number {
  const shifted = value << 1;
  return shifted & 0b100000 ? shifted ^ GF32_MODULUS : shifted;
}

/** Damm's check symbol over GF(32) for 12 canonical seed symbols. */
export function checkSymbol(seedSymbols: string): string {
  let acc = 0;
  for (const symbol of seedSymbols) {
    const value = ALPHABET.indexOf(symbol);
    if (value < 0) throw new RangeError(`${JSON.stringify(symbol)} is not a canonical deal-code symbol`);
    acc = timesX(acc) ^ value;
  }
  return ALPHABET[timesX(acc)]!;
}

/** The 13-symbol deal code of a 60-bit seed. */
export function formatDealCode(seed: bigint): string {
  if (seed < 0n || seed >= SEED_LIMIT) {
    throw new DealCodeError(String(seed), "seed", `a deal seed is a ${SEED_BITS}-bit number`);
  }
  let symbols = "";
  for (let i = SEED_SYMBOLS - 1; i >= 0; i--) {
    symbols += ALPHABET[Number((seed >> BigInt(5 * i)) & 31n)];
  }
  return symbols + checkSymbol(symbols);
}

/**
 * The seed of a deal code. Reads leniently where it is safe (any case, `-` and spaces ignored,
 * `I`/`L` as 1 and `O` as 0) and refuses anything else with a `DealCodeError`, including a code
 * whose check symbol does not match.
 */
export function parseDealCode(text: string): bigint {
  // Array.from counts code points, so an emoji is one wrong symbol rather than two.
  const symbols = Array.from(text.trim().toUpperCase().replace(/[- ]/g, ""));
  const shown = JSON.stringify(text);
  if (symbols.length !== CODE_LENGTH) {
    throw new DealCodeError(
      text,
      "length",
      `deal code ${shown} has ${symbols.length} symbols; a deal code has ${CODE_LENGTH} (e.g. 7K3M9QX2AB4H8)`,
    );
  }
  const values: number[] = [];
  for (const symbol of symbols) {
    const value = SYMBOL_VALUES.get(symbol);
    if (value === undefined) {
      throw new DealCodeError(
        text,
        "symbol",
        `deal code ${shown} holds ${JSON.stringify(symbol)}, which is not a deal-code symbol (0-9 and A-Z but U)`,
      );
    }
    values.push(value);
  }
  const body = values
    .slice(0, SEED_SYMBOLS)
    .map((value) => ALPHABET[value])
    .join("");
  if (checkSymbol(body) !== ALPHABET[values[SEED_SYMBOLS]!]) {
    throw new DealCodeError(text, "check", `deal code ${shown} fails its check symbol: it was probably mistyped`);
  }
  let seed = 0n;
  for (const value of values.slice(0, SEED_SYMBOLS)) seed = (seed << 5n) | BigInt(value);
  return seed;
}

/** Whether `text` would be accepted by `parseDealCode`. */
export function isDealCode(text: string): boolean {
  try {
    parseDealCode(text);
    return true;
  } catch (error) {
    if (error instanceof DealCodeError) return false;
    throw error;
  }
}

/** Card text such as `4D` for a card index `rank * 4 + suit`. */
export function cardText(card: number): string {
  if (!Number.isInteger(card) || card < 0 || card >= DECK_SIZE) throw new RangeError(`no card has index ${card}`);
  return RANKS[card >> 2]! + SUITS[card & 3]!;
}

/** The card index of a text such as `4D` or `td`. */
export function parseCard(text: string): number {
  const upper = text.trim().toUpperCase();
  const rank = RANKS.indexOf(upper.charAt(0));
  const suit = SUITS.indexOf(upper.charAt(1));
  if (upper.length !== 2 || rank < 0 || suit < 0) throw new RangeError(`${JSON.stringify(text)} is not a card`);
  return rank * 4 + suit;
}

/** A hand's canonical text: ascending by rank, then `D C H S`, whatever the suit order. */
export function handText(cards: readonly number[]): string {
  return [...cards]
    .sort((a, b) => a - b)
    .map(cardText)
    .join(" ");
}

/** The SHA-256 counter stream of one shuffle round, as big-endian 32-bit words. */
class WordStream {
  private readonly message: Uint8Array;
  private readonly messageView: DataView;
  private words: DataView = new DataView(new ArrayBuffer(0));
  private position = 0;
  private block = 0;

  constructor(seed: bigint, round: number) {
    this.message = new Uint8Array(DOMAIN.length + 8 + 4 + 4);
    this.message.set(DOMAIN);
    this.messageView = new DataView(this.message.buffer);
    this.messageView.setBigUint64(DOMAIN.length, seed);
    this.messageView.setUint32(DOMAIN.length + 8, round);
  }

  next(): number {
    if (this.position === this.words.byteLength) {
      this.messageView.setUint32(DOMAIN.length + 12, this.block++);
      const digest = sha256(this.message);
      this.words = new DataView(digest.buffer, digest.byteOffset, digest.byteLength);
      this.position = 0;
    }
    const word = this.words.getUint32(this.position);
    this.position += 4;
    return word;
  }
}

/** The page's rejection limit for `word % n`: words at or above it are drawn again, so `j` is unbiased. */
export function rejectionLimit(n: number): number {
  return 2 ** 32 - (2 ** 32 % n);
}

/**
 * The deck (card indices) after shuffle round `round` of `seed`. `limitOf` is the page's limit
 * unless a test lowers it: the page's limit rejects a word about once in 7 million shuffles, a lower
 * one rejects most, which exercises the rejection and the blocks past the usual seven.
 */
export function shuffledDeck(seed: bigint, round = 0, limitOf: (n: number) => number = rejectionLimit): number[] {
  if (seed < 0n || seed >= SEED_LIMIT) throw new RangeError(`a deal seed is a ${SEED_BITS}-bit number`);
  if (!Number.isInteger(round) || round < 0 || round > 0xffff_ffff) throw new RangeError(`bad shuffle round ${round}`);
  const deck = Array.from({ length: DECK_SIZE }, (_, card) => card);
  const stream = new WordStream(seed, round);
  for (let i = DECK_SIZE - 1; i >= 1; i--) {
    const n = i + 1;
    const limit = limitOf(n);
    let word = stream.next();
    while (word >= limit) word = stream.next();
    const j = word % n;
    [deck[i], deck[j]] = [deck[j]!, deck[i]!];
  }
  return deck;
}

export type Players = 2 | 3 | 4;
export type CardsEach = 13 | 17;
export type SuitOrder = "DCHS" | "CDHS" | "CSHD";
export type TwoPlayerStart = "lowest-dealt-card" | "reshuffle-until-lowest";

/** The ruleset options that decide the hands (RULES.md); every other option leaves them alone. */
export interface DealOptions {
  players: Players;
  /** Two players only: 13 or 17. Three players always get 17, four always 13. */
  cardsEach: CardsEach;
  suitOrder: SuitOrder;
  twoPlayerStart: TwoPlayerStart;
}

/** A ruleset as the service's JSON gives it: a preset plus options in RULES.md's names. */
export interface RulesetMapping {
  preset?: string;
  players?: number;
  cards_each?: number;
  suit_order?: string;
  two_player_start?: string;
  [option: string]: unknown;
}

const CLASSIC_DEAL: DealOptions = {
  players: 4,
  cardsEach: 13,
  suitOrder: "DCHS",
  twoPlayerStart: "lowest-dealt-card",
};

/** The dealing options of engine/rules.py's presets (the test compares them with the engine). */
export const PRESET_DEAL_OPTIONS: Readonly<Record<string, Readonly<DealOptions>>> = {
  classic: CLASSIC_DEAL,
  web: CLASSIC_DEAL,
  "hong-kong": CLASSIC_DEAL,
  "hong-kong-strict": CLASSIC_DEAL,
  taiwan: { ...CLASSIC_DEAL, suitOrder: "CDHS", twoPlayerStart: "reshuffle-until-lowest" },
  "pusoy-dos": { ...CLASSIC_DEAL, suitOrder: "CSHD" },
};

function oneOf<T extends string | number>(option: string, value: unknown, valid: readonly T[]): T {
  const found = valid.find((candidate) => candidate === value);
  if (found === undefined) {
    throw new RangeError(`${option}: unknown value ${JSON.stringify(value)}; valid values: ${valid.join(", ")}`);
  }
  return found;
}

/** The dealing options of a ruleset mapping (preset `classic` unless it names another). */
export function dealOptionsOf(ruleset: RulesetMapping): DealOptions {
  const presetName = ruleset.preset || "classic";
  const base = oneOf("preset", presetName, Object.keys(PRESET_DEAL_OPTIONS));
  return normalizeDealOptions({
    ...PRESET_DEAL_OPTIONS[base]!,
    ...(ruleset.players !== undefined && { players: oneOf("players", ruleset.players, [2, 3, 4] as const) }),
    ...(ruleset.cards_each !== undefined && { cardsEach: oneOf("cards_each", ruleset.cards_each, [13, 17] as const) }),
    ...(ruleset.suit_order !== undefined && {
      suitOrder: oneOf("suit_order", ruleset.suit_order, ["DCHS", "CDHS", "CSHD"] as const),
    }),
    ...(ruleset.two_player_start !== undefined && {
      twoPlayerStart: oneOf("two_player_start", ruleset.two_player_start, [
        "lowest-dealt-card",
        "reshuffle-until-lowest",
      ] as const),
    }),
  });
}

/** Options as RULES.md settles them: three players always get 17 cards, four never get 17. */
export function normalizeDealOptions(options: DealOptions): DealOptions {
  if (options.players === 3) return { ...options, cardsEach: 17 };
  if (options.players === 4 && options.cardsEach === 17) {
    throw new RangeError("cards_each: 4 players always get 13 cards each (17 is for 2 or 3 players)");
  }
  return { ...options };
}

/** The lowest card of the deck under a suit order: the 3 of the order's first suit. */
export function lowestCard(suitOrder: SuitOrder): number {
  return SUITS.indexOf(suitOrder.charAt(0));
}

/** Who holds what at the start of a deal, before any play. */
export interface DealtCards {
  /** One hand a seat: card indices, ascending. */
  hands: number[][];
  /** Three players: the 52nd card, dealt face up to the holder of the lowest card. */
  faceUpCard: number | null;
  faceUpSeat: number | null;
  /** How many shuffle rounds the deal took (1 unless a reshuffle rule applied). */
  shuffleRounds: number;
}

/** Deal a seed under the given dealing options. */
export function dealFromSeed(seed: bigint, options: DealOptions): DealtCards {
  const { players, cardsEach, suitOrder, twoPlayerStart } = normalizeDealOptions(options);
  const handSize = players === 3 ? 17 : players === 4 ? 13 : cardsEach;
  const lowest = lowestCard(suitOrder);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const deck = shuffledDeck(seed, round);
    const hands: number[][] = Array.from({ length: players }, () => []);
    for (let position = 0; position < players * handSize; position++) hands[position % players]!.push(deck[position]!);
    const holder = hands.findIndex((hand) => hand.includes(lowest));
    if (players === 3) {
      const extra = deck[DECK_SIZE - 1]!;
      // RULES.md Decision: the face-up card may not be the lowest card itself.
      if (extra === lowest) continue;
      hands[holder]!.push(extra);
      return { hands: sortHands(hands), faceUpCard: extra, faceUpSeat: holder, shuffleRounds: round + 1 };
    }
    if (players === 2 && twoPlayerStart === "reshuffle-until-lowest" && holder < 0) continue;
    return { hands: sortHands(hands), faceUpCard: null, faceUpSeat: null, shuffleRounds: round + 1 };
  }
  throw new Error(`deal seed ${seed} found no valid shuffle in ${MAX_ROUNDS} rounds`);
}

/** Deal a code (refused with `DealCodeError` if mistyped) under a ruleset mapping or options. */
export function dealFromCode(code: string, rules: DealOptions | RulesetMapping): DealtCards {
  const options = isDealOptions(rules) ? rules : dealOptionsOf(rules);
  return dealFromSeed(parseDealCode(code), options);
}

function isDealOptions(rules: DealOptions | RulesetMapping): rules is DealOptions {
  return "suitOrder" in rules && "twoPlayerStart" in rules && "cardsEach" in rules;
}

function sortHands(hands: number[][]): number[][] {
  return hands.map((hand) => hand.sort((a, b) => a - b));
}
