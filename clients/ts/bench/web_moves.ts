// web_bench's stock-client ways (python -m bigtwo.tools.web_bench): the same ApplyMove loop as its
// Python ways, one call per move with state tokens, through the Connect project's own TypeScript
// runtime (@connectrpc/connect-node), the code browsers and Node front ends run.
// argv: port protocol (grpc-web | connect) httpVersion (1.1 | 2) load seconds [warm-up seconds, 1].
// stdin: {"games": [{"token": base64, "moves": [base64 of a bigtwo.v1.Move]}]} (the bench's prepared deals).
// First plays untimed for the warm-up seconds on every client (connections up, and V8's compilers
// through the hot paths: a cold process spends about twice the CPU a move over its first two
// seconds, which a long-lived browser tab or server does not), then prints {"warm": true} so the
// bench can read the server's CPU from there, then plays for the seconds and prints one JSON line:
// moves, seconds, latencies (s, each move as the client saw it) and cpu_s (this process's CPU, all
// its threads, over the timed run).
import * as http from "node:http";
import { create, fromBinary } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ApplyMoveRequestSchema, BigTwoService } from "../src/gen/bigtwo/v1/service_pb.js";
import { MoveSchema, type Move } from "../src/gen/bigtwo/v1/types_pb.js";

type Game = { token: Uint8Array; moves: Move[] };
type Api = Client<typeof BigTwoService>;

const [port, protocol, httpVersion, loadArg, secondsArg, warmArg] = process.argv.slice(2);
const load = Number(loadArg);
const seconds = Number(secondsArg);
const warmSeconds = Number(warmArg ?? "1");
if (!port || (protocol !== "grpc-web" && protocol !== "connect") || (httpVersion !== "1.1" && httpVersion !== "2")) {
  throw new Error("usage: web_moves port grpc-web|connect 1.1|2 load seconds");
}

function transport(): Transport {
  const common = { baseUrl: `http://127.0.0.1:${port}`, useBinaryFormat: true };
  // Over HTTP/1.1 each client keeps its own connections open between calls, as a browser does.
  const options =
    httpVersion === "2"
      ? { ...common, httpVersion: "2" as const }
      : { ...common, httpVersion: "1.1" as const, nodeOptions: { agent: new http.Agent({ keepAlive: true }) } };
  return protocol === "grpc-web" ? createGrpcWebTransport(options) : createConnectTransport(options);
}

async function play(client: Api, game: Game, latencies: number[]): Promise<void> {
  let token = game.token;
  for (const move of game.moves) {
    const started = performance.now();
    const reply = await client.applyMove(create(ApplyMoveRequestSchema, { game: { game: { case: "stateToken", value: token } }, move }));
    latencies.push((performance.now() - started) / 1000);
    if (!reply.outcome?.accepted) {
      throw new Error(`the bench's move was refused: ${reply.outcome?.refusal?.message ?? "?"}`);
    }
    token = reply.stateToken;
  }
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
  }
  const input = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { games: { token: string; moves: string[] }[] };
  const games: Game[] = input.games.map((game) => ({
    token: Buffer.from(game.token, "base64"),
    moves: game.moves.map((move) => fromBinary(MoveSchema, Buffer.from(move, "base64"))),
  }));
  // As the Python ways: min(load, 8) clients, each its own transport (its own connections).
  const clients: Api[] = Array.from({ length: Math.min(load, 8) }, () => createClient(BigTwoService, transport()));
  async function playUntil(deadline: number, latencies: number[]): Promise<void> {
    async function worker(number: number): Promise<void> {
      const client = clients[number % clients.length]!;
      for (let turn = number; performance.now() < deadline; turn += load) {
        await play(client, games[turn % games.length]!, latencies);
      }
    }
    await Promise.all(Array.from({ length: load }, (_, number) => worker(number)));
  }
  await playUntil(performance.now() + warmSeconds * 1000, []);
  process.stdout.write(`${JSON.stringify({ warm: true })}\n`);
  const cpuStart = process.cpuUsage();
  const latencies: number[] = [];
  const started = performance.now();
  await playUntil(started + seconds * 1000, latencies);
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const out = { moves: latencies.length, seconds: elapsed, cpu_s: (cpu.user + cpu.system) / 1e6, latencies };
  // HTTP/2 sessions and keep-alive sockets would hold the process open: exit once the line is out
  // (a pipe takes it asynchronously, and an exit before then would cut it short).
  process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
