// The Node client against a server forced to shed (tests/test_ts_sheds.py runs it with one heavy-call
// worker and no waiting room): three tables of pro bots at once, whose searches are shed
// (RESOURCE_EXHAUSTED with a RetryInfo) and retried by send() within the call's deadline, every move
// in the deal's events once; and a request over a limit, never retried. argv: port. Prints one
// JSON line; exits 1 when a check fails.
import { Code } from "@connectrpc/connect";
import { send, TableHost, toBigTwoError, type BigTwoError, type CallSettings } from "../src/host/index.js";
import { grpcClient } from "../src/node/grpc.js";

const port = Number(process.argv[2]);
const TABLES = 3;
const DEAL_CODE = "0000003NQK8N1";
const ROUNDS = 3;
const failures: string[] = [];
const retries: { code: string; reason: string; retryDelayMs?: number; waitMs: number }[] = [];

function check(condition: boolean, what: string): void {
  if (!condition) {
    failures.push(what);
  }
}

const settings: CallSettings = {
  timeoutMs: 30_000,
  // Patient: three tables share one worker, and a search is shed each time it finds it busy.
  retry: { attempts: 30, initialBackoffMs: 50, maxBackoffMs: 500, multiplier: 2 },
  onRetry: (error: BigTwoError, waitMs: number) => {
    retries.push({ code: error.codeName, reason: error.reason, retryDelayMs: error.retryDelayMs, waitMs });
  },
};

/** One table: the bots (pro, a search each) and the person (the first hint) for a few rounds. */
async function table(number: number): Promise<{ moves: number; inEvents: number }> {
  // Each table its own connection, as separate devices would have.
  const client = grpcClient(port);
  const host = new TableHost(client, { ruleset: "classic", personSeat: 0, bots: ["pro", "pro", "pro"], settings });
  await host.startDeal({ dealCode: DEAL_CODE });
  for (let round = 0; round < ROUNDS && host.inDeal; round++) {
    await host.playBots();
    if (!host.inDeal) {
      break;
    }
    const hint = await host.hint();
    const result = hint.play?.cards ? await host.play(hint.play.cards.text) : await host.pass();
    check(result.accepted, `table ${number}: the person's hint was refused`);
  }
  const inEvents = host.events.filter(
    (event) => event.event.case === "cardsPlayed" || (event.event.case === "passed" && !event.event.value.automatic),
  ).length;
  return { moves: host.table.movesMade, inEvents };
}

/** A log over the limit of 1024 moves: RESOURCE_EXHAUSTED LOG_TOO_LONG, not retried. */
async function overLimit(): Promise<{ code: string; reason: string; shed: boolean; retried: number }> {
  const client = grpcClient(port);
  const before = retries.length;
  const log = { ruleset: { preset: "classic" }, deal: { case: "dealCode" as const, value: DEAL_CODE }, moves: Array(1100).fill("pass") };
  try {
    await send(settings, (call) => client.legalMoves({ source: { case: "game", value: { game: { case: "log", value: log } } } }, call));
    return { code: "OK", reason: "", shed: false, retried: retries.length - before };
  } catch (thrown) {
    const error = toBigTwoError(thrown);
    return { code: error.codeName, reason: error.reason, shed: error.shed, retried: retries.length - before };
  }
}

async function main(): Promise<number> {
  const summary: Record<string, unknown> = {};
  try {
    const tables = await Promise.all(Array.from({ length: TABLES }, (_, number) => table(number)));
    summary.tables = tables;
    for (const [number, played] of tables.entries()) {
      check(played.moves > 0 && played.moves === played.inEvents, `table ${number}: every move in the events once`);
    }
    summary.sheds = retries.filter((retry) => retry.code === Code[Code.ResourceExhausted]);
    summary.limit = await overLimit();
  } catch (thrown) {
    const error = toBigTwoError(thrown);
    failures.push(`${error.name}: ${error.message}${thrown instanceof Error && thrown.stack ? ` ${thrown.stack}` : ""}`);
  }
  summary.failures = failures;
  summary.ok = failures.length === 0;
  console.log(JSON.stringify(summary));
  return failures.length === 0 ? 0 : 1;
}

process.exitCode = await main();
