// The browser table end to end (tests/test_web_table.py runs it against a live `bigtwo serve
// --web-port`): headless Chromium plays whole deals on the page served at /, by clicking (deal 1,
// Connect JSON, with one refused move) and by keyboard only (deal 2 of the same match; then a deal
// over gRPC-Web binary). Every answer the page received is decoded with the generated schemas and
// checked for another seat's cards. argv: base URL, screenshot folder, clients/ts. Prints one JSON line; exits
// 1 when a check fails. argv[4]: clients/ts, whose node_modules hold playwright-core (loaded from
// there at run time: it cannot be bundled into an ES module).
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary, fromJson, toJson, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import type { Page, Request, Response } from "playwright-core";
import { BigTwoService } from "../src/gen/bigtwo/v1/service_pb.js";

const baseUrl = (process.argv[2] ?? "").replace(/\/$/, "");
const shots = process.argv[3] ?? "";
const projectDir = process.argv[4] ?? process.cwd();
const loadFromProject = createRequire(join(projectDir, "package.json"));
const { chromium } = loadFromProject("playwright-core") as typeof import("playwright-core");
const failures: string[] = [];
const CHROMIUM_ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const PERSON = 2;
const CARD = /\b([3-9TJQKA2][DCHS])\b/g;
/** A card as people read it ("10♦", in events' descriptions), as the service's text ("TD"). */
const FACE = /(10|[3-9JQKA2])([♦♣♥♠])/g;
const SUIT_LETTER: Readonly<Record<string, string>> = { "♦": "D", "♣": "C", "♥": "H", "♠": "S" };

/** Every card a text names, in either form, as the service's text. */
function cardsNamed(text: string): string[] {
  const machine = [...text.matchAll(CARD)].map((match) => match[1] ?? "");
  const faces = [...text.matchAll(FACE)].map((match) => `${match[1] === "10" ? "T" : match[1]}${SUIT_LETTER[match[2] ?? ""] ?? ""}`);
  return [...machine, ...faces];
}
const WAIT_MS = 30_000;

function check(condition: boolean, what: string): void {
  if (!condition) {
    failures.push(what);
  }
}

// -- what went over the wire ---------------------------------------------------------------------

interface Exchange {
  readonly method: string;
  /** The answer as canonical JSON (undefined for an error answer). */
  readonly answer: JsonValue | undefined;
  readonly status: number;
}

const methods = new Map(BigTwoService.methods.map((method) => [method.name, method]));

/** gRPC-Web's length-prefixed frames: the messages (trailers dropped). */
function grpcWebMessages(body: Uint8Array): Uint8Array[] {
  const messages: Uint8Array[] = [];
  for (let at = 0; at + 5 <= body.length; ) {
    const flags = body[at] ?? 0;
    const length = new DataView(body.buffer, body.byteOffset + at + 1, 4).getUint32(0);
    const data = body.subarray(at + 5, at + 5 + length);
    if ((flags & 0x80) === 0) {
      messages.push(data);
    }
    at += 5 + length;
  }
  return messages;
}

/** Zeros and empty fields written out, so a winner of seat 0 reads as 0, not as missing. */
const ALL_FIELDS = { alwaysEmitImplicit: true } as const;

/** A body of any of the page's protocols as canonical JSON of `schema` (undefined when it holds none). */
function decode(schema: DescMessage, contentType: string, body: Uint8Array): JsonValue | undefined {
  const json = contentType.includes("json");
  const parse = (bytes: Uint8Array): JsonValue =>
    json
      ? toJson(schema, fromJson(schema, JSON.parse(new TextDecoder().decode(bytes)) as JsonValue, { ignoreUnknownFields: true }), ALL_FIELDS)
      : toJson(schema, fromBinary(schema, bytes), ALL_FIELDS);
  if (contentType.startsWith("application/grpc-web")) {
    const [first] = grpcWebMessages(body);
    return first === undefined ? undefined : parse(first);
  }
  return parse(body);
}

function methodOf(url: string): string | undefined {
  const match = /\/bigtwo\.v1\.BigTwoService\/(\w+)$/.exec(new URL(url).pathname);
  return match?.[1];
}

class Recorder {
  /** Every state token the page sent (a Game's state_token in any request), base64. */
  readonly sentTokens: string[] = [];
  private readonly pending: Promise<void>[] = [];
  private readonly slots: (Exchange | undefined)[] = [];

  constructor(page: Page) {
    page.on("response", (response) => this.pending.push(this.onResponse(response, this.pending.length)));
    page.on("request", (request) => this.onRequest(request));
  }

  private async onResponse(response: Response, slot: number): Promise<void> {
    const name = methodOf(response.url());
    if (name === undefined) {
      return;
    }
    const method = methods.get(name);
    let body: Uint8Array;
    try {
      body = new Uint8Array(await response.body());
    } catch (error) {
      // Only an answer the page itself never read goes missing (an error status it threw on).
      this.slots[slot] = { method: name, answer: undefined, status: response.status() };
      if (response.status() === 200) {
        failures.push(`${name}: the answer's body could not be read: ${String(error)}`);
      }
      return;
    }
    const contentType = response.headers()["content-type"] ?? "";
    let answer: JsonValue | undefined;
    // A failed Connect unary call answers with an HTTP error status and an error body, not a message.
    if (method !== undefined && response.status() === 200) {
      try {
        answer = decode(method.output, contentType, body);
      } catch (error) {
        failures.push(`${name}: the answer does not decode as ${method.output.typeName}: ${String(error)}`);
      }
    }
    this.slots[slot] = { method: name, answer, status: response.status() };
  }

  private onRequest(request: Request): void {
    const name = methodOf(request.url());
    const method = name === undefined ? undefined : methods.get(name);
    const body = request.postDataBuffer();
    if (method === undefined || body === null) {
      return;
    }
    const json = decode(method.input, request.headers()["content-type"] ?? "", new Uint8Array(body));
    walk(json, (key, value) => {
      if (key === "stateToken" && typeof value === "string" && value !== "") {
        this.sentTokens.push(value);
      }
    });
  }

  /** Every exchange so far, in the order the answers arrived. */
  async settled(): Promise<Exchange[]> {
    await Promise.all(this.pending);
    return this.slots.filter((exchange): exchange is Exchange => exchange !== undefined);
  }
}

/** Every (key, value) pair in a JSON tree; array items carry their parent's key. */
function walk(value: JsonValue | undefined, visit: (key: string, value: JsonValue) => void, key = ""): void {
  if (Array.isArray(value)) {
    value.forEach((item) => walk(item, visit, key));
  } else if (value !== null && typeof value === "object") {
    for (const [child, item] of Object.entries(value)) {
      visit(child, item as JsonValue);
      walk(item as JsonValue, visit, child);
    }
  }
}

/** Fields that name a card every seat is shown by the rules: the opening card, a face-up card. */
const PUBLIC_CARD_FIELDS = new Set(["openingCard", "faceUpCard"]);

/** The cards named anywhere in an answer (card texts, moves, descriptions); tokens are skipped. */
function cardsIn(answer: JsonValue | undefined): Set<string> {
  const cards = new Set<string>();
  walk(answer, (key, value) => {
    if (typeof value === "string" && !key.endsWith("Token") && !PUBLIC_CARD_FIELDS.has(key)) {
      for (const card of cardsNamed(value)) {
        cards.add(card);
      }
    }
  });
  return cards;
}

function field(value: JsonValue | undefined, ...path: (string | number)[]): JsonValue | undefined {
  let current = value;
  for (const step of path) {
    if (current === null || typeof current !== "object") {
      return undefined;
    }
    current = (current as Record<string, JsonValue>)[step as string];
  }
  return current;
}

function list(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

/** Cards made public by an answer: plays in its events, the bots' moves, the person's accepted play. */
function playedIn(exchange: Exchange): string[] {
  const cards: string[] = [];
  const add = (text: JsonValue | undefined) => {
    if (typeof text === "string") {
      cards.push(...cardsNamed(text));
    }
  };
  for (const event of list(field(exchange.answer, "events"))) {
    add(field(event, "cardsPlayed", "play", "cards", "text"));
  }
  for (const played of list(field(exchange.answer, "moves"))) {
    add(field(played, "move", "text"));
  }
  if (exchange.method === "ApplyMove" && field(exchange.answer, "outcome", "accepted") === true) {
    add(field(exchange.answer, "outcome", "play", "cards", "text"));
  }
  return cards;
}

interface DealAudit {
  readonly dealt: string;
  readonly answersChecked: number;
  readonly foreignCards: string[];
  readonly hiddenHandsShown: number;
  readonly foreignViews: number;
  readonly hostTokens: number;
  readonly moves: number;
  readonly over: boolean;
}

/**
 * The hidden-information check over one page's answers: from each Deal to the answer that ends it,
 * no card outside the person's dealt hand appears unless it was played by then; hidden hands are
 * empty, views are the person's, and no answer carries a host state token.
 */
function audit(exchanges: readonly Exchange[]): DealAudit[] {
  const deals: DealAudit[] = [];
  let current: { dealt: Set<string>; public: Set<string>; audit: DealAudit & { foreignCards: string[] } } | undefined;
  for (const exchange of exchanges) {
    const answer = exchange.answer;
    if (answer === undefined) {
      continue;
    }
    const hostToken = field(answer, "stateToken");
    const seatToken = field(answer, "seatToken");
    if (exchange.method === "Deal") {
      const dealt = String(field(answer, "view", "hand", "text") ?? "");
      current = {
        dealt: new Set(dealt.split(" ")),
        public: new Set(),
        audit: { dealt, answersChecked: 0, foreignCards: [], hiddenHandsShown: 0, foreignViews: 0, hostTokens: 0, moves: 0, over: false },
      };
      deals.push(current.audit);
    }
    if (current === undefined || current.audit.over) {
      continue;
    }
    const state = current;
    const tally = state.audit as { -readonly [K in keyof DealAudit]: DealAudit[K] };
    tally.answersChecked += 1;
    if (typeof hostToken === "string" && hostToken !== "" && hostToken !== seatToken) {
      tally.hostTokens += 1;
    }
    for (const card of playedIn(exchange)) {
      state.public.add(card);
    }
    tally.moves += list(field(answer, "moves")).length;
    if (exchange.method === "ApplyMove" && field(answer, "outcome", "accepted") === true) {
      tally.moves += 1;
    }
    for (const card of cardsIn(answer)) {
      if (!state.dealt.has(card) && !state.public.has(card)) {
        tally.foreignCards.push(`${exchange.method}: ${card}`);
      }
    }
    walk(answer, (key, value) => {
      if (key === "dealStarted") {
        list(field(value, "hands")).forEach((hand, seat) => {
          if (seat !== PERSON && String(field(hand, "text") ?? "") !== "") {
            tally.hiddenHandsShown += 1;
          }
        });
      }
      if (key === "view" && (field(value, "seat") ?? 0) !== PERSON) {
        tally.foreignViews += 1;
      }
    });
    if (field(answer, "table", "over") === true) {
      tally.over = true;
    }
  }
  return deals;
}

// -- driving the page ----------------------------------------------------------------------------

async function phase(page: Page, ...wanted: string[]): Promise<string> {
  const handle = await page.waitForFunction(
    (phases) => {
      const now = document.body.dataset["phase"] ?? "";
      return phases.includes(now) ? now : false;
    },
    wanted,
    { timeout: WAIT_MS, polling: 50 },
  );
  return String(await handle.jsonValue());
}

async function selectedCards(page: Page): Promise<string[]> {
  return page.$$eval('#hand button.card[aria-pressed="true"]', (buttons) => buttons.map((button) => button.getAttribute("data-card") ?? ""));
}

/** One person's turn: Hint, then Play what it selected, or Pass when it selects nothing. */
async function takeTurn(page: Page, keys: boolean, afterHint?: () => Promise<void>): Promise<void> {
  const hinted = page.waitForResponse((response) => methodOf(response.url()) === "NextHint");
  if (keys) {
    await page.keyboard.press("h");
  } else {
    await page.click("#hint");
  }
  await hinted;
  await phase(page, "your-turn");
  const selection = await selectedCards(page);
  await afterHint?.();
  if (keys) {
    await page.keyboard.press(selection.length > 0 ? "p" : "s");
  } else {
    await page.click(selection.length > 0 ? "#play" : "#pass");
  }
}

interface TurnHooks {
  /** At the person's first turn, before anything is played. */
  readonly first?: () => Promise<void>;
  /** After a hint, before its play: given whether a play is on the table. */
  readonly afterHint?: (contested: boolean) => Promise<void>;
}

async function playDeal(page: Page, keys: boolean, hooks: TurnHooks = {}): Promise<number> {
  let turns = 0;
  for (;;) {
    const now = await phase(page, "your-turn", "settled");
    if (now === "settled") {
      return turns;
    }
    if (turns === 0) {
      await hooks.first?.();
    }
    turns += 1;
    const afterHint = hooks.afterHint;
    await takeTurn(page, keys, afterHint && (async () => afterHint((await page.locator("#trick .trick-cards").count()) > 0)));
  }
}

async function shot(page: Page, name: string): Promise<void> {
  if (shots !== "") {
    await page.screenshot({ path: join(shots, `web-table-${name}.png`), fullPage: false });
  }
}

/** Two cards of different ranks (the hand sorted by rank: its first and last) can never be a play.
 * They are chosen by keyboard: focus the first card, Space, End, Enter. */
async function provokeRefusal(page: Page, recorder: Recorder): Promise<Record<string, JsonValue>> {
  const cards = page.locator("#hand button.card");
  await cards.first().focus();
  await page.keyboard.press("Space");
  await page.keyboard.press("End");
  const focusedLast = await cards.last().evaluate((card) => card === document.activeElement);
  await page.keyboard.press("Enter");
  const chosen = await selectedCards(page);
  const answered = page.waitForResponse((response) => methodOf(response.url()) === "ApplyMove");
  await page.click("#play");
  await answered;
  await page.waitForFunction(() => (document.getElementById("refusal")?.textContent ?? "") !== "", undefined, { timeout: WAIT_MS });
  await phase(page, "your-turn");
  const shown = (await page.textContent("#refusal")) ?? "";
  const announced = (await page.textContent("#announce")) ?? "";
  const exchanges = await recorder.settled();
  const last = [...exchanges].reverse().find((exchange) => exchange.method === "ApplyMove");
  const sentence = String(field(last?.answer, "outcome", "refusal", "message") ?? "");
  await shot(page, "refusal");
  await page.click("#clear");
  return {
    selection: chosen.join(" "),
    accepted: field(last?.answer, "outcome", "accepted") === true,
    reasonId: String(field(last?.answer, "outcome", "refusal", "reasonId") ?? ""),
    sentence,
    shown,
    announced,
    focusedLast,
    card: (await cards.first().getAttribute("data-card")) ?? "",
    label: (await cards.first().getAttribute("aria-label")) ?? "",
  };
}

function base64url(standard: string): string {
  return standard.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** What the settlement shows against what ScoreDeal and SettleMatch answered. */
async function settlementShown(page: Page, recorder: Recorder): Promise<Record<string, JsonValue>> {
  const rows = await page.$$eval("#scores tr", (trs) =>
    trs.map((tr) => ({
      seat: Number(tr.getAttribute("data-seat")),
      score: Number(tr.querySelector(".deal-score")?.textContent),
      total: Number(tr.querySelector(".total")?.textContent),
    })),
  );
  const exchanges = await recorder.settled();
  const score = [...exchanges].reverse().find((exchange) => exchange.method === "ScoreDeal");
  const settle = [...exchanges].reverse().find((exchange) => exchange.method === "SettleMatch");
  const scores = list(field(score?.answer, "scores")).map(Number);
  const totals = list(field(settle?.answer, "totals")).map(Number);
  const href = (await page.getAttribute("#replay", "href")) ?? "";
  const replay = new URL(href, baseUrl);
  const final = [...exchanges].reverse().find((exchange) => field(exchange.answer, "table", "over") === true);
  const dealCode = String(field(final?.answer, "table", "dealCode") ?? "");
  // The link as a person would follow it: the service's HTML replay of this very deal.
  const replayAnswer = await page.context().request.get(replay.href);
  const replayHtml = await replayAnswer.text();
  return {
    shownScores: rows.map((row) => row.score),
    shownTotals: rows.map((row) => row.total),
    scores,
    totals,
    winner: Number(field(score?.answer, "winner") ?? -1),
    replayPath: replay.pathname,
    replayTokenIsSeatToken: replay.searchParams.get("token") === base64url(String(field(final?.answer, "seatToken") ?? "")),
    replayStatus: replayAnswer.status(),
    replayType: replayAnswer.headers()["content-type"] ?? "",
    replayNamesDeal: dealCode !== "" && replayHtml.includes(dealCode),
    dealCode,
  };
}

let lastPage: Page | undefined;

/** The hand's order under U (by suit) and L (into plays: SplitHand's groups), then back to R. */
async function trySorts(page: Page, recorder: Recorder): Promise<Record<string, JsonValue>> {
  const order = () => page.$$eval("#hand button.card", (buttons) => buttons.map((button) => button.getAttribute("data-card") ?? ""));
  const byRank = await order();
  await page.keyboard.press("u");
  const bySuit = await order();
  const split = page.waitForResponse((response) => methodOf(response.url()) === "SplitHand");
  await page.keyboard.press("l");
  await split;
  await page.waitForFunction(() => document.querySelectorAll("#hand .card-group").length > 1 || document.querySelectorAll("#hand button.card").length < 2);
  const groups = await page.$$eval("#hand .card-group", (spans) =>
    spans.map((span) => [...span.querySelectorAll("button.card")].map((button) => button.getAttribute("data-card")).join(" ")),
  );
  const exchanges = await recorder.settled();
  const answer = [...exchanges].reverse().find((exchange) => exchange.method === "SplitHand")?.answer;
  const plays = list(field(answer, "plays")).map((play) => String(field(play, "cards", "text") ?? ""));
  await page.keyboard.press("r");
  return { byRank, bySuit, groups, plays, backToRank: (await order()).join(" ") === byRank.join(" ") };
}

async function openTable(query: string, userDataDir: string) {
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1100, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  lastPage = page;
  const recorder = new Recorder(page);
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${baseUrl}/${query}`);
  await page.waitForSelector("#start:not([disabled])", { timeout: WAIT_MS });
  await page.selectOption("#seat", String(PERSON));
  return { context, page, recorder, errors };
}

async function main(): Promise<Record<string, JsonValue>> {
  const home = mkdtempSync(join(tmpdir(), "bigtwo-table-"));
  try {
    // Deal 1 by clicking (Connect JSON), one refusal; deal 2 of the match by keyboard only.
    const first = await openTable("", join(home, "connect"));
    const { page, recorder } = first;
    await page.selectOption("#bot-0", "beginner");
    await page.click("#start");
    let refusal: Record<string, JsonValue> = {};
    let midDealShot = false;
    const clickTurns = await playDeal(page, false, {
      first: async () => {
        refusal = await provokeRefusal(page, recorder);
      },
      afterHint: async (contested) => {
        if (contested && !midDealShot && (await selectedCards(page)).length > 0) {
          midDealShot = true;
          await shot(page, "mid-deal");
        }
      },
    });
    await shot(page, "settlement");
    const deal1 = await settlementShown(page, recorder);
    await page.keyboard.press("n");
    let sorts: Record<string, JsonValue> = {};
    const keyTurns = await playDeal(page, true, {
      first: async () => {
        sorts = await trySorts(page, recorder);
      },
    });
    const deal2 = await settlementShown(page, recorder);
    const connectExchanges = await recorder.settled();
    const connectAudit = audit(connectExchanges);
    const received = new Set<string>();
    for (const exchange of connectExchanges) {
      const token = field(exchange.answer, "seatToken");
      if (typeof token === "string" && token !== "") {
        received.add(token);
      }
    }
    const foreignTokensSent = recorder.sentTokens.filter((token) => !received.has(token)).length;
    await first.context.close();

    // A deal over gRPC-Web (binary), by keyboard.
    const second = await openTable("?protocol=grpc-web", join(home, "grpc-web"));
    await second.page.click("#start");
    const grpcWebTurns = await playDeal(second.page, true);
    const grpcWebDeal = await settlementShown(second.page, second.recorder);
    const grpcWebAudit = audit(await second.recorder.settled());
    const connection = (await second.page.textContent("#connection")) ?? "";
    await second.context.close();

    const errors = [...first.errors, ...second.errors];
    check(errors.length === 0, `page errors: ${errors.join("; ")}`);
    return {
      refusal,
      sorts,
      deals: [
        { turns: clickTurns, ...deal1 },
        { turns: keyTurns, ...deal2 },
        { turns: grpcWebTurns, ...grpcWebDeal, connection },
      ],
      audits: [...connectAudit, ...grpcWebAudit] as unknown as JsonValue,
      tokens: { sent: recorder.sentTokens.length, notSeatTokens: foreignTokensSent },
    };
  } catch (error) {
    await lastPage?.screenshot({ path: join(shots || home, "web-table-failure.png") }).catch(() => undefined);
    throw error;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

main()
  .then((summary) => {
    console.log(JSON.stringify({ ok: failures.length === 0, failures, ...summary }));
    process.exit(failures.length === 0 ? 0 : 1);
  })
  .catch((error: unknown) => {
    console.log(JSON.stringify({ ok: false, failures: [...failures, String(error instanceof Error ? error.stack : error)] }));
    process.exit(1);
  });
