// The browser table as a phone app (tests/test_web_table_phone.py runs it against a live `bigtwo
// serve --web-port`): headless Chromium at 390 px plays a whole deal by keyboard, the layout is
// measured at 360, 390, 1280 and 1440 px (no sideways scroll; the hand wraps on a phone), the
// table is photographed at 390 and 1280 px, and then the service is stopped under a running game:
// the page must say so in words, keep the game, tell the truth in its header and go on after
// "Try again" once the service is back.
// argv: base URL, screenshot folder, clients/ts (whose node_modules hold playwright-core), and a
// folder for the hand-over with the test: this script writes `ready-to-stop` and waits for
// `stopped`, then writes `ready-to-start` and waits for `started`.
// Prints one JSON line; exits 1 when a check fails.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";

const baseUrl = (process.argv[2] ?? "").replace(/\/$/, "");
const shots = process.argv[3] ?? "";
const projectDir = process.argv[4] ?? process.cwd();
const signals = process.argv[5] ?? "";
const { chromium } = createRequire(join(projectDir, "package.json"))("playwright-core") as typeof import("playwright-core");
const failures: string[] = [];
const WAIT_MS = 30_000;
const MACHINE_CARD = /\b[2-9TJQKA][DCHS]\b/;
const SEAT_FROM_ZERO = /\bseat \d/i;

function check(condition: boolean, what: string): void {
  if (!condition) {
    failures.push(what);
  }
}

async function handOver(mine: string, theirs: string): Promise<void> {
  writeFileSync(join(signals, mine), "");
  const deadline = Date.now() + 120_000;
  while (!existsSync(join(signals, theirs))) {
    if (Date.now() > deadline) {
      throw new Error(`no ${theirs} from the test within 120 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

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

interface Layout {
  readonly width: number;
  readonly scrollWidth: number;
  readonly handRows: number;
  readonly cardsOutside: number;
}

/** How the page lies at one width: sideways overflow, the hand's rows, cards beyond the edge. */
async function layoutAt(page: Page, width: number): Promise<Layout> {
  await page.setViewportSize({ width, height: 844 });
  await page.waitForTimeout(100);
  return page.evaluate(() => {
    const cards = [...document.querySelectorAll<HTMLElement>("#hand button.card")];
    const rows = new Set(cards.map((card) => Math.round(card.getBoundingClientRect().top)));
    return {
      width: window.innerWidth,
      scrollWidth: document.documentElement.scrollWidth,
      handRows: rows.size,
      cardsOutside: cards.filter((card) => card.getBoundingClientRect().right > window.innerWidth).length,
    };
  });
}

/** One turn by keyboard: H, then P (the hint's play) or S (nothing beats the table). */
async function takeTurn(page: Page): Promise<number> {
  const hinted = page.waitForResponse((response) => response.url().endsWith("/NextHint"));
  await page.keyboard.press("h");
  await hinted;
  await phase(page, "your-turn");
  const chosen = await page.locator('#hand button.card[aria-pressed="true"]').count();
  await page.keyboard.press(chosen > 0 ? "p" : "s");
  return 1;
}

/** The person's turns by keyboard until the deal is settled. */
async function playDeal(page: Page): Promise<number> {
  let turns = 0;
  while ((await phase(page, "your-turn", "settled")) !== "settled") {
    turns += await takeTurn(page);
  }
  return turns;
}

/** The page from its top: the whole page on a phone (what a person scrolls through), the window on a desktop. */
async function shot(page: Page, name: string, fullPage = false): Promise<void> {
  if (shots !== "") {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(shots, name), fullPage });
  }
}

async function main(): Promise<Record<string, unknown>> {
  const home = mkdtempSync(join(tmpdir(), "bigtwo-phone-"));
  const context = await chromium.launchPersistentContext(home, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 1,
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${baseUrl}/`);
    await page.waitForSelector("#start:not([disabled])", { timeout: WAIT_MS });
    const header = (await page.textContent("#connection")) ?? "";
    const seatChoices = await page.$$eval("#seat option", (options) => options.map((option) => option.textContent ?? ""));
    const presetChoices = await page.$$eval("#preset option", (options) => options.map((option) => option.textContent ?? ""));
    const setup = await layoutAt(page, 360);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click("#start");
    // One turn first, so that the pictures show a play on the table and moves in the log.
    let turns = 0;
    if ((await phase(page, "your-turn", "settled")) === "your-turn") {
      turns += await takeTurn(page);
      await phase(page, "your-turn", "settled");
    }

    const layouts = [await layoutAt(page, 360), await layoutAt(page, 390), await layoutAt(page, 1280), await layoutAt(page, 1440)];
    await layoutAt(page, 1280);
    await shot(page, "table-1280.png");
    await layoutAt(page, 390);
    await shot(page, "table-390.png", true);

    turns += await playDeal(page);
    const log = await page.$$eval("#log li", (items) => items.map((item) => item.textContent ?? ""));
    const seatNames = await page.$$eval("#seats .seat-name", (names) => names.map((name) => name.textContent ?? ""));
    const settled = await layoutAt(page, 390);
    await shot(page, "settlement-390.png");

    // The service goes away under a running game.
    await page.keyboard.press("n");
    await phase(page, "your-turn", "settled");
    const handBefore = await page.$$eval("#hand button.card", (cards) => cards.map((card) => card.getAttribute("data-card")));
    await handOver("ready-to-stop", "stopped");
    await page.keyboard.press("h");
    await page.waitForSelector("#retry:not([hidden])", { timeout: WAIT_MS });
    const lost = {
      error: (await page.textContent("#error")) ?? "",
      header: (await page.textContent("#connection")) ?? "",
      handKept:
        JSON.stringify(await page.$$eval("#hand button.card", (cards) => cards.map((card) => card.getAttribute("data-card")))) ===
        JSON.stringify(handBefore),
      retryText: (await page.textContent("#retry")) ?? "",
    };
    await shot(page, "unreachable-390.png");

    // Back: Try again runs the hint that failed, on the same game.
    await handOver("ready-to-start", "started");
    const hinted = page.waitForResponse((response) => response.url().endsWith("/NextHint"));
    await page.click("#retry");
    await hinted;
    await phase(page, "your-turn");
    const back = {
      error: (await page.textContent("#error")) ?? "",
      header: (await page.textContent("#connection")) ?? "",
      retryHidden: await page.locator("#retry").isHidden(),
    };
    const turnsAfter = await playDeal(page);

    check(errors.length === 0, `page errors: ${errors.join("; ")}`);
    check(header.startsWith("Connected to "), `header after the presets: ${header}`);
    check(
      seatChoices.every((choice, seat) => choice === `p${seat + 1}`),
      `seat choices ${seatChoices.join(", ")}`,
    );
    check(!presetChoices.some((choice) => /\b(FULL|BETA|WEB|HK)\b/.test(choice)), `preset choices name sources: ${presetChoices.join(" | ")}`);
    for (const layout of [setup, ...layouts, settled]) {
      check(layout.scrollWidth <= layout.width, `the page scrolls sideways at ${layout.width} px (${layout.scrollWidth} px wide)`);
      check(layout.cardsOutside === 0, `${layout.cardsOutside} cards beyond the edge at ${layout.width} px`);
    }
    check((layouts[1]?.handRows ?? 0) >= 2, `the hand does not wrap at 390 px (${layouts[1]?.handRows} rows)`);
    for (const line of [...log, ...seatNames]) {
      check(!MACHINE_CARD.test(line) && !SEAT_FROM_ZERO.test(line), `not in a person's words: ${line}`);
    }
    check(seatNames.some((name) => /^p\d \(you\)$/.test(name)), `seat names ${seatNames.join(", ")}`);
    check(lost.error.includes("cannot be reached") && lost.error.includes("Try again") && lost.error.includes("kept"), `error: ${lost.error}`);
    check(lost.header.startsWith("Not connected"), `header with the service gone: ${lost.header}`);
    check(lost.handKept, "the hand changed when the service went away");
    check(lost.retryText.trim() === "Try again", `retry button: ${lost.retryText}`);
    check(back.error === "" && back.header.startsWith("Connected to ") && back.retryHidden, `after Try again: ${JSON.stringify(back)}`);
    return { turns, turnsAfter, layouts: [setup, ...layouts, settled], log: log.slice(0, 8), seatNames, lost, back };
  } finally {
    await context.close();
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
