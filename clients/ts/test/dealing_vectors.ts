/**
 * Checks clients/ts/src/dealing.ts against the published deal-code vectors (docs/DEALING.md).
 * Bundled and run by tests/test_ts_dealing.py.
 *
 *   node dealing_vectors.mjs VECTORS.json         every case, the seed-0 deck, refusals, SHA-256
 *                                                 examples; one JSON summary line; exit 1 on a mismatch
 *   node dealing_vectors.mjs --deal REQUESTS.json [{code, ruleset}, ...] -> one JSON line of deals
 *   node dealing_vectors.mjs --sha256 HEX.json    ["hex bytes", ...] -> one JSON line of hex digests
 *   node dealing_vectors.mjs --deck DECKS.json    [{seed, round, divisor}, ...] -> one JSON line of
 *                                                 decks shuffled with the page's limit / divisor
 */

import { readFileSync } from "node:fs";

import {
  ALPHABET,
  CODE_LENGTH,
  DealCodeError,
  type DealCodeRefusal,
  type RulesetMapping,
  cardText,
  dealFromCode,
  dealOptionsOf,
  formatDealCode,
  handText,
  parseDealCode,
  rejectionLimit,
  shuffledDeck,
} from "../src/dealing";
import { sha256, toHex } from "../src/sha256";

interface VectorCase {
  code: string;
  seed: string;
  ruleset: RulesetMapping;
  hands: string[];
  shuffle_rounds: number;
  face_up_card?: string;
  face_up_seat?: number;
}

interface Vectors {
  shuffled_deck_seed0_round0: string;
  cases: VectorCase[];
}

interface DeckRequest {
  seed: string;
  round: number;
  divisor: number;
}

interface DealRequest {
  code: string;
  ruleset: RulesetMapping;
}

/** FIPS 180-2's examples, plus the empty message. */
const SHA256_EXAMPLES: ReadonlyArray<readonly [string, string]> = [
  ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
  ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
  [
    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  ],
  [
    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
  ],
  ["a".repeat(1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
];

/** Characters that are no deal-code symbol under any reading. */
const BAD_SYMBOLS = ["U", "u", "!", "*", "_", "Ü", "😀"];

function readJson(path: string): unknown {
  // Seeds reach 2^60, past a JSON number's exact range: read them as text so BigInt gets every digit.
  const text = readFileSync(path, "utf8").replace(/"seed"\s*:\s*(\d+)/g, '"seed": "$1"');
  return JSON.parse(text);
}

function refusalOf(text: string): DealCodeRefusal | "accepted" {
  try {
    parseDealCode(text);
    return "accepted";
  } catch (error) {
    if (error instanceof DealCodeError) return error.reason;
    throw error;
  }
}

function checkVectors(path: string): void {
  const vectors = readJson(path) as Vectors;
  const failures: string[] = [];
  const counts = { cases: 0, sha256: 0, deck: 0, lenient: 0, refusals: 0 };
  const expect = (what: string, got: unknown, want: unknown): void => {
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      failures.push(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
  };
  const expectRefused = (text: string, want: DealCodeRefusal): void => {
    counts.refusals++;
    expect(`refusal of ${JSON.stringify(text)}`, refusalOf(text), want);
  };

  for (const [message, digest] of SHA256_EXAMPLES) {
    counts.sha256++;
    expect(`sha256 of ${message.length} bytes`, toHex(sha256(new TextEncoder().encode(message))), digest);
  }

  counts.deck++;
  expect("seed 0 round 0 deck", shuffledDeck(0n, 0).map(cardText).join(" "), vectors.shuffled_deck_seed0_round0);

  const codes = new Set<string>();
  for (const vector of vectors.cases) {
    counts.cases++;
    const label = `${vector.code} ${JSON.stringify(vector.ruleset)}`;
    const seed = BigInt(vector.seed);
    expect(`${label} seed`, String(parseDealCode(vector.code)), vector.seed);
    expect(`${label} code`, formatDealCode(seed), vector.code);
    const dealt = dealFromCode(vector.code, vector.ruleset);
    expect(`${label} hands`, dealt.hands.map(handText), vector.hands);
    expect(`${label} shuffle_rounds`, dealt.shuffleRounds, vector.shuffle_rounds);
    const faceUp = dealt.faceUpCard === null ? undefined : cardText(dealt.faceUpCard);
    expect(`${label} face_up_card`, faceUp, vector.face_up_card);
    expect(`${label} face_up_seat`, dealt.faceUpSeat ?? undefined, vector.face_up_seat);
    codes.add(vector.code);
  }

  for (const code of codes) {
    const seed = String(parseDealCode(code));
    const grouped = `${code.slice(0, 4)}-${code.slice(4, 8)} ${code.slice(8)}`;
    const aliased = code.replace(/0/g, "O").replace(/1/g, "l");
    for (const variant of [code.toLowerCase(), grouped, ` ${aliased} `, aliased.toLowerCase().replace(/l/g, "i")]) {
      counts.lenient++;
      expect(`lenient reading ${JSON.stringify(variant)}`, String(parseDealCode(variant)), seed);
    }
    for (let position = 0; position < CODE_LENGTH; position++) {
      for (const symbol of ALPHABET) {
        if (symbol !== code[position]) expectRefused(code.slice(0, position) + symbol + code.slice(position + 1), "check");
      }
      for (const symbol of BAD_SYMBOLS) {
        expectRefused(code.slice(0, position) + symbol + code.slice(position + 1), "symbol");
      }
    }
    for (let position = 0; position + 1 < CODE_LENGTH; position++) {
      const [left, right] = [code[position]!, code[position + 1]!];
      if (left !== right) expectRefused(code.slice(0, position) + right + left + code.slice(position + 2), "check");
    }
    expectRefused(code.slice(1), "length");
    expectRefused(`${code}0`, "length");
  }
  expectRefused("", "length");

  for (const failure of failures) console.error(`MISMATCH ${failure}`);
  console.log(JSON.stringify({ ok: failures.length === 0, ...counts, mismatches: failures.length }));
  if (failures.length > 0) process.exitCode = 1;
}

function dealRequests(path: string): void {
  const requests = readJson(path) as DealRequest[];
  const deals = requests.map(({ code, ruleset }) => {
    const seed = parseDealCode(code);
    const dealt = dealFromCode(code, ruleset);
    return {
      seed: String(seed),
      code: formatDealCode(seed),
      options: dealOptionsOf(ruleset),
      hands: dealt.hands.map(handText),
      shuffle_rounds: dealt.shuffleRounds,
      face_up_card: dealt.faceUpCard === null ? null : cardText(dealt.faceUpCard),
      face_up_seat: dealt.faceUpSeat,
    };
  });
  console.log(JSON.stringify(deals));
}

function hashMessages(path: string): void {
  const messages = readJson(path) as string[];
  const digests = messages.map((hex) => {
    const bytes = Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
    return toHex(sha256(bytes));
  });
  console.log(JSON.stringify(digests));
}

function shuffleDecks(path: string): void {
  const requests = readJson(path) as DeckRequest[];
  const decks = requests.map(({ seed, round, divisor }) =>
    shuffledDeck(BigInt(seed), round, (n) => Math.floor(rejectionLimit(n) / divisor))
      .map(cardText)
      .join(" "),
  );
  console.log(JSON.stringify(decks));
}

const [mode, path] = process.argv.slice(2);
if (mode === "--deal" && path !== undefined) {
  dealRequests(path);
} else if (mode === "--deck" && path !== undefined) {
  shuffleDecks(path);
} else if (mode === "--sha256" && path !== undefined) {
  hashMessages(path);
} else if (mode !== undefined && !mode.startsWith("--")) {
  checkVectors(mode);
} else {
  console.error("usage: dealing_vectors.mjs VECTORS.json | --deal REQUESTS.json | --deck DECKS.json | --sha256 HEX.json");
  process.exitCode = 2;
}
