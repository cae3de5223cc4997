// The Node client against a live server (tests/test_ts_node_client.py runs it): whole games
// person-vs-bots over unary gRPC calls and over PlayStream, a refusal, a retried move and a game
// resumed from a saved token on a fresh client. argv: port [games]. Prints one JSON line; exits 1
// when a check fails.
import { equals } from "@bufbuild/protobuf";
import { TableStateSchema } from "../src/gen/bigtwo/v1/types_pb.js";
import {
  FailedPreconditionError,
  InvalidArgumentError,
  send,
  TableHost,
  toBigTwoError,
  type BigTwoClient,
  type DealSettlement,
  type SavedTable,
} from "../src/host/index.js";
import { grpcClient } from "../src/node/grpc.js";

const port = Number(process.argv[2]);
const games = Number(process.argv[3] ?? "3");
const BOTS = ["beginner", "good", "random"];
const DEAL_CODE = "0000003NQK8N1";
const failures: string[] = [];

function check(condition: boolean, what: string): void {
  if (!condition) {
    failures.push(what);
  }
}

/** The person's autopilot: the first hint, else a pass (as clients/client/table.py's hint_seat). */
async function personMoves(host: TableHost): Promise<void> {
  const hint = await host.hint();
  const result = hint.play?.cards ? await host.play(hint.play.cards.text) : await host.pass();
  if (!result.accepted) {
    throw new Error(`the service refused its own hint ${hint.play?.cards?.text ?? "pass"}: ${result.refusal?.sentence}`);
  }
}

/** Bots and the person play until the deal is over; `atPersonsTurn` may stop it early (true). */
async function playOut(host: TableHost, atPersonsTurn?: (host: TableHost) => Promise<boolean>): Promise<boolean> {
  while (host.inDeal) {
    await host.playBots();
    if (!host.inDeal) {
      break;
    }
    if (atPersonsTurn && (await atPersonsTurn(host))) {
      return false;
    }
    await personMoves(host);
  }
  return true;
}

/** Every move the deal's events record (automatic passes are the engine's, not moves). */
function movesIn(host: TableHost): number {
  return host.events.filter(
    (event) => event.event.case === "cardsPlayed" || (event.event.case === "passed" && !event.event.value.automatic),
  ).length;
}

function checkSettlement(settled: DealSettlement, host: TableHost, label: string): void {
  check(host.table.over && host.table.winner === settled.card.winner, `${label}: the settlement's winner is the table's`);
  check(settled.card.seats.length === host.table.players, `${label}: one settlement line per seat`);
  check(settled.standing.totals.length === host.table.players, `${label}: one total per seat`);
  check(host.table.dealCode.length > 0, `${label}: the deal code is shown once the deal is over`);
}

async function unaryGames(client: BigTwoClient) {
  let host = new TableHost(client, { ruleset: "classic", personSeat: 0, bots: BOTS });
  const finished: { moves: number; winner: number; scores: number[] }[] = [];
  for (let game = 0; game < games; game++) {
    if (host.matchOver) {
      host = new TableHost(client, { ruleset: "classic", personSeat: 0, bots: BOTS });
    }
    const start = await host.startDeal();
    check(start.view.seat === 0 && (start.view.hand?.text.split(" ").length ?? 0) === 13, `game ${game}: the person sees 13 cards`);
    await playOut(host);
    check(movesIn(host) === host.table.movesMade, `game ${game}: every move is in the events once`);
    const settled = await host.settle();
    checkSettlement(settled, host, `game ${game}`);
    finished.push({ moves: host.table.movesMade, winner: settled.card.winner, scores: settled.card.scores });
  }
  return { played: games, finished: finished.length, deals: finished, totals: host.standing?.totals ?? [] };
}

async function streamGame(client: BigTwoClient) {
  const host = new TableHost(client, { ruleset: "hong-kong", personSeat: 2, bots: BOTS, transport: "stream" });
  await host.startDeal();
  let refusedOnStream = "";
  await playOut(host, async (h) => {
    if (!refusedOnStream) {
      const refused = await h.play("not-a-card");
      refusedOnStream = refused.refusal?.reasonId ?? "accepted";
    }
    return false;
  });
  const settled = await host.settle();
  checkSettlement(settled, host, "stream");
  check(movesIn(host) === host.table.movesMade, "stream: every move is in the events once");
  return { finished: host.table.over, moves: host.table.movesMade, winner: settled.card.winner, refusal: refusedOnStream };
}

function cardNotIn(hand: string): string {
  const held = new Set(hand.split(" "));
  for (const rank of "3456789TJQKA2") {
    for (const suit of "DCHS") {
      if (!held.has(rank + suit)) {
        return rank + suit;
      }
    }
  }
  throw new Error("the person holds every card");
}

async function refusal(client: BigTwoClient) {
  const host = new TableHost(client, { ruleset: "classic", personSeat: 1, bots: BOTS });
  await host.startDeal({ dealCode: DEAL_CODE });
  await host.playBots();
  const before = host.table;
  const card = cardNotIn(host.view.hand?.text ?? "");
  const readout = await host.readout(card);
  const hint = await host.hint();
  const hinted = hint.play?.cards ? await host.readout(hint.play.cards.text) : undefined;
  check(!readout.playable && readout.refusal?.reasonId === "not-in-hand", "refusal: the readout refuses a card not held");
  check(hinted === undefined || (hinted.playable && hinted.name === hint.play?.name), "refusal: the hint's readout is playable");
  const result = await host.play(card);
  check(!result.accepted, "refusal: a card not held is refused");
  check(equals(TableStateSchema, host.table, before), "refusal: the table is unchanged");
  await host.close();
  return {
    card,
    accepted: result.accepted,
    reasonId: result.refusal?.reasonId ?? "",
    sentence: result.refusal?.sentence ?? "",
    movesMadeUnchanged: host.table.movesMade === before.movesMade,
    readout: { playable: readout.playable, reasonId: readout.refusal?.reasonId ?? "", hinted: hinted?.name ?? "" },
  };
}

async function retry(client: BigTwoClient) {
  const host = new TableHost(client, { ruleset: "classic", personSeat: 0, bots: BOTS });
  await host.startDeal({ dealCode: DEAL_CODE });
  await host.playBots();
  const tokenBefore = host.stateToken;
  await personMoves(host);
  const after = { token: host.stateToken, table: host.table };
  const again = await host.resendLastMove();
  const sameAnswer =
    again.accepted && equals(TableStateSchema, again.table, after.table) && equalBytes(again.stateToken, after.token);
  // The same request against the token from before the move (its answer lost before the new
  // token arrived) is judged again and gives the same bytes.
  const last = again.move;
  const fromOld = await send({}, (call) =>
    client.applyMove({ game: { game: { case: "stateToken", value: tokenBefore } }, move: last, viewSeat: 0 }, call),
  );
  const sameFromOld = equalBytes(fromOld.stateToken, after.token);
  // A different move under the last move's index is not a retry.
  let differentMove = "";
  try {
    await send({}, (call) =>
      client.applyMove(
        { game: { game: { case: "stateToken", value: after.token } }, move: { ...last, text: last.text === "pass" ? "2S" : "pass" } },
        call,
      ),
    );
    differentMove = "accepted";
  } catch (thrown) {
    const error = toBigTwoError(thrown);
    differentMove = error instanceof FailedPreconditionError ? error.reason : `${error.name} ${error.message}`;
  }
  await playOut(host);
  check(movesIn(host) === host.table.movesMade, "retry: every move is in the events once");
  await host.settle();
  return {
    move: last,
    sameAnswer,
    sameFromOldToken: sameFromOld,
    movesMadeBefore: after.table.movesMade,
    movesMadeAfterRetry: again.table.movesMade,
    differentMove,
    dealFinished: host.table.over,
  };
}

/** A tampered token: a typed error carrying the ErrorInfo reason and the BadRequest field. */
async function tamperedToken(client: BigTwoClient) {
  const host = new TableHost(client, { ruleset: "classic", personSeat: 0, bots: BOTS });
  await host.startDeal({ dealCode: DEAL_CODE });
  const token = Uint8Array.from(host.stateToken);
  token[token.length - 1] = (token[token.length - 1] ?? 0) ^ 1;
  try {
    await send({}, (call) => client.legalMoves({ source: { case: "game", value: { game: { case: "stateToken", value: token } } } }, call));
    return { error: "none" };
  } catch (thrown) {
    const error = toBigTwoError(thrown);
    return {
      error: error.name,
      typed: error instanceof InvalidArgumentError,
      code: error.codeName,
      reason: error.reason,
      fields: error.violations.map((violation) => violation.field),
    };
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

async function resume(client: BigTwoClient) {
  const original = new TableHost(client, { ruleset: "classic", personSeat: 3, bots: BOTS });
  await original.startDeal({ dealCode: DEAL_CODE });
  await playOut(original, async (h) => h.table.movesMade >= 8);
  const saved = JSON.stringify(original.save());
  const savedAt = original.table.movesMade;
  await playOut(original);
  const expected = (await original.settle()).card.scores;

  const outcomes: Record<string, { resumedAt: number; scores: number[]; equal: boolean }> = {};
  for (const transport of ["unary", "stream"] as const) {
    // A fresh client: its own transport and HTTP/2 connection, nothing shared with the first.
    const fresh = grpcClient(port);
    const resumed = await TableHost.restore(fresh, JSON.parse(saved) as SavedTable, { transport });
    const resumedAt = resumed.table.movesMade;
    await playOut(resumed);
    const scores = (await resumed.settle()).card.scores;
    outcomes[transport] = { resumedAt, scores, equal: scores.join() === expected.join() };
  }
  return { savedAt, expected, ...outcomes, ok: Object.values(outcomes).every((o) => o.equal && o.resumedAt === savedAt) };
}

async function main(): Promise<number> {
  const client = grpcClient(port);
  const summary: Record<string, unknown> = {};
  try {
    summary.games = await unaryGames(client);
    summary.stream = await streamGame(client);
    summary.refusal = await refusal(client);
    summary.retry = await retry(client);
    summary.resume = await resume(client);
    summary.tampered = await tamperedToken(client);
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
