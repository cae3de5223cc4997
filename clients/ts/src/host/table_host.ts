// A table host: one person's seat against the service's bots, over any connect transport. The
// service keeps nothing, and neither does this host beyond what its answers return: the game is
// the latest opaque state token (plus the last table and view to show), the match is the list of
// finished deals' results. It mirrors clients/client/table.py: Deal, then ApplyMove (or a
// PlayStream) per move with its index, BotMove for the bots, NextHint for hints, and at a deal's
// end ScoreDeal then SettleMatch.
import { create, fromJson, toJson, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { base64Decode, base64Encode } from "@bufbuild/protobuf/wire";
import type { ScoreDealResponse, SettleMatchResponse } from "../gen/bigtwo/v1/service_pb.js";
import {
  DealContextSchema,
  DealResultSchema,
  RulesetSchema,
  SeatViewSchema,
  TableStateSchema,
  type DealContext,
  type DealResult,
  type Event,
  type Kind,
  type Play,
  type Ruleset,
  type SeatView,
  type TableState,
} from "../gen/bigtwo/v1/types_pb.js";
import { botSeat, turnSeed, type BotSeat } from "./bots.js";
import { send, type BigTwoClient, type CallSettings } from "./calls.js";
import { isRetryable, ProtocolError, toBigTwoError } from "./errors.js";
import { moveResult, sentMove, type MoveResult, type Refusal, type SentMove } from "./moves.js";
import { PlayStreamSession } from "./stream.js";

export type RulesetInit = MessageInitShape<typeof RulesetSchema>;

export interface TableOptions {
  /** A preset name ("classic", "hong-kong"...) or a preset with option overrides. */
  readonly ruleset: string | RulesetInit;
  /** The person's seat (0-based). */
  readonly personSeat: number;
  /** The bots of the other seats, in seat order skipping the person's: a level, or a level and seed. */
  readonly bots: readonly (string | BotSeat)[];
  /** "stream": moves go over one PlayStream per deal (Node's gRPC transport); "unary": ApplyMove. */
  readonly transport?: "unary" | "stream";
  readonly settings?: CallSettings;
}

/** A new deal as the person sees it. */
export interface DealStart {
  readonly table: TableState;
  readonly view: SeatView;
  /** The deal's events so far (the start; a dragon), only the person's hand shown. */
  readonly events: readonly Event[];
}

/** HK's Find: the next play in the hint cycle after the current selection. */
export interface Hint {
  /** Unset when the seat has no play (it must pass). */
  readonly play?: Play;
  readonly cycleLength: number;
}

/** The readout line of a selection: what it forms and whether the person could play it now. */
export interface Readout {
  readonly name: string;
  readonly kind: Kind;
  readonly playable: boolean;
  readonly refusal?: Refusal;
  readonly endingNow: string;
}

/** A finished deal: its settlement card and the match's standing after it. */
export interface DealSettlement {
  readonly result: DealResult;
  readonly card: ScoreDealResponse;
  readonly standing: SettleMatchResponse;
}

/** A table as JSON, to resume it later with a fresh client (TableHost.restore). Host-only: the
 * token answers for every seat. */
export interface SavedTable {
  readonly ruleset: JsonValue;
  readonly personSeat: number;
  readonly bots: readonly BotSeat[];
  readonly stateToken: string;
  readonly table: JsonValue;
  readonly view: JsonValue;
  readonly deals: readonly JsonValue[];
  readonly nextContext: JsonValue;
  /** The deal is over and already in `deals`. */
  readonly settled: boolean;
}

interface Current {
  stateToken: Uint8Array;
  /** The person's seat-bound token (docs/SECURITY.md), to forward to their device; unset once
   * stream moves, which carry none, have made it stale. */
  seatToken: Uint8Array | undefined;
  table: TableState;
  view: SeatView;
  events: Event[];
  lastMove: SentMove | undefined;
  stream: PlayStreamSession | undefined;
  settled: boolean;
}

function rulesetFrom(spec: string | RulesetInit): Ruleset {
  return create(RulesetSchema, typeof spec === "string" ? { preset: spec } : spec);
}

function gameOf(stateToken: Uint8Array) {
  return { game: { case: "stateToken" as const, value: stateToken } };
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) {
    throw new ProtocolError(`the service's answer has no ${what}`);
  }
  return value;
}

export class TableHost {
  readonly ruleset: Ruleset;
  readonly personSeat: number;
  readonly bots: readonly BotSeat[];
  readonly transport: "unary" | "stream";
  private readonly settings: CallSettings;
  private current: Current | undefined;
  private results: DealResult[] = [];
  private latestStanding: SettleMatchResponse | undefined;
  private context: DealContext = create(DealContextSchema, { dealNumber: 1 });

  constructor(
    private readonly client: BigTwoClient,
    options: TableOptions,
  ) {
    this.ruleset = rulesetFrom(options.ruleset);
    this.personSeat = options.personSeat;
    this.bots = options.bots.map(botSeat);
    this.transport = options.transport ?? "unary";
    this.settings = options.settings ?? {};
  }

  // -- state ----------------------------------------------------------------------------------

  get inDeal(): boolean {
    return this.current !== undefined && !this.current.table.over;
  }

  /** The public table after the latest answer. */
  get table(): TableState {
    return this.deal().table;
  }

  /** The person's hand, readout and whether it is their turn. */
  get view(): SeatView {
    return this.deal().view;
  }

  /** Every event of the current deal the person has seen (since its start or its resume). */
  get events(): readonly Event[] {
    return this.deal().events;
  }

  get isPersonsTurn(): boolean {
    return this.inDeal && this.table.toAct === this.personSeat;
  }

  /** The host's state token: answers for every seat, so it stays on the host. */
  get stateToken(): Uint8Array {
    return this.deal().stateToken;
  }

  /** The person's seat-bound token, safe to hand to their device (see Current.seatToken). */
  get seatToken(): Uint8Array | undefined {
    return this.deal().seatToken;
  }

  /** The finished deals' results, in order. */
  get deals(): readonly DealResult[] {
    return this.results;
  }

  /** The match's standing after the last settled deal (or a stop). */
  get standing(): SettleMatchResponse | undefined {
    return this.latestStanding;
  }

  get matchOver(): boolean {
    return this.latestStanding?.over ?? false;
  }

  /** The current deal is over and not settled yet. */
  get unsettled(): boolean {
    return this.current !== undefined && this.current.table.over && !this.current.settled;
  }

  private deal(): Current {
    if (this.current === undefined) {
      throw new RangeError("no deal started");
    }
    return this.current;
  }

  private seatOfBot(seat: number): BotSeat {
    const index = seat < this.personSeat ? seat : seat - 1;
    const bot = this.bots[index];
    if (bot === undefined || seat === this.personSeat) {
      throw new RangeError(`seat ${seat} has no bot`);
    }
    return bot;
  }

  // -- a deal ---------------------------------------------------------------------------------

  /** Deal the match's next deal (from a deal code, else fresh cards), seen from the person's seat. */
  async startDeal(options: { dealCode?: string } = {}): Promise<DealStart> {
    if (this.unsettled) {
      await this.settle();
    }
    if (this.inDeal) {
      throw new RangeError("the current deal is not over yet");
    }
    if (this.matchOver) {
      throw new RangeError("the match is over");
    }
    const answer = await send(this.settings, (call) =>
      this.client.deal(
        {
          ruleset: this.ruleset,
          source: options.dealCode ? { case: "dealCode", value: options.dealCode } : { case: undefined },
          context: this.context,
          viewSeat: this.personSeat,
        },
        call,
      ),
    );
    const table = required(answer.table, "table");
    if (table.players !== this.bots.length + 1) {
      throw new RangeError(`the rules seat ${table.players} players; this table has ${this.bots.length} bots and a person`);
    }
    this.current = {
      stateToken: answer.stateToken,
      seatToken: answer.seatToken,
      table,
      view: required(answer.view, "seat view"),
      events: [...answer.events],
      lastMove: undefined,
      stream: undefined,
      settled: false,
    };
    if (this.transport === "stream" && !table.over) {
      await this.openStream();
    }
    return { table, view: this.current.view, events: answer.events };
  }

  /** Open the current deal's stream from the latest token; adopts what it says of the deal. */
  private async openStream(): Promise<void> {
    const current = this.deal();
    const session = await PlayStreamSession.open(
      this.client,
      { stateToken: current.stateToken, viewSeat: this.personSeat, stateTokens: true },
      this.settings,
    );
    current.stream = session;
    current.table = required(session.opened.table, "table");
    current.view = required(session.opened.view, "seat view");
    current.seatToken = session.opened.seatToken;
  }

  private async closeStream(): Promise<void> {
    const current = this.current;
    const stream = current?.stream;
    if (current !== undefined && stream !== undefined) {
      current.stream = undefined;
      await stream.close();
    }
  }

  /** The person plays these cards, e.g. "3D 3S". A refusal is an answer (result.refusal). */
  play(cards: string): Promise<MoveResult> {
    return this.move(this.personSeat, cards);
  }

  /** The person passes. */
  pass(): Promise<MoveResult> {
    return this.move(this.personSeat, "pass");
  }

  /** HK's Find for the person: the play after `after` ("" for the first tap) in the hint cycle. */
  async hint(after = ""): Promise<Hint> {
    const token = this.stateToken;
    const answer = await send(this.settings, (call) => this.client.nextHint({ game: gameOf(token), after }, call));
    return { ...(answer.play && { play: answer.play }), cycleLength: answer.cycleLength };
  }

  /** The readout line of a selection for the person: its name, whether they could play it now. */
  async readout(cards: string): Promise<Readout> {
    const token = this.stateToken;
    const answer = await send(this.settings, (call) =>
      this.client.nameCards({ cards, context: { case: "game", value: gameOf(token) }, seat: this.personSeat }, call),
    );
    const refusal = answer.playable ? undefined : answer.refusal;
    return {
      name: answer.name,
      kind: answer.kind,
      playable: answer.playable,
      ...(refusal && { refusal: { reason: refusal.reason, reasonId: refusal.reasonId, sentence: refusal.message } }),
      endingNow: answer.endingNow,
    };
  }

  /** The bots play, one move at a time, until it is the person's turn or the deal is over. */
  async playBots(onMove?: (result: MoveResult) => void): Promise<MoveResult[]> {
    const results: MoveResult[] = [];
    while (this.inDeal && this.table.toAct !== this.personSeat) {
      const table = this.table;
      const seat = table.toAct;
      const bot = this.seatOfBot(seat);
      const token = this.stateToken;
      const seed = turnSeed(bot.seed ?? 0, seat, table.dealNumber, table.movesMade);
      const answer = await send(this.settings, (call) =>
        this.client.botMove({ game: gameOf(token), level: bot.level, seed }, call),
      );
      const chosen = sentMove(answer.move);
      const result = await this.move(seat, chosen.text);
      if (!result.accepted) {
        throw new ProtocolError(`the service refused its own ${bot.level} bot's move ${chosen.text}: ${result.refusal?.sentence}`);
      }
      results.push(result);
      onMove?.(result);
    }
    return results;
  }

  /** Apply one move of a seat with its index (the table's moves made). */
  private async move(seat: number, text: string): Promise<MoveResult> {
    const current = this.deal();
    if (current.table.over) {
      throw new RangeError("the deal is over");
    }
    const move = { index: current.table.movesMade, seat, text };
    const result = current.stream !== undefined ? await this.streamMove(move) : await this.unaryMove(move, current.stateToken);
    if (result.accepted) {
      current.lastMove = move;
    }
    if (result.accepted && result.table.over) {
      await this.closeStream();
    }
    return result;
  }

  private async unaryMove(move: SentMove, stateToken: Uint8Array): Promise<MoveResult> {
    const current = this.deal();
    const answer = await send(this.settings, (call) =>
      this.client.applyMove({ game: gameOf(stateToken), move, viewSeat: this.personSeat }, call),
    );
    const result = moveResult(move, answer.outcome, answer.events, answer.table, answer.view);
    if (result.accepted) {
      current.stateToken = answer.stateToken;
      current.seatToken = answer.seatToken;
      this.adopt(result);
    }
    return result;
  }

  /** A stream move; a broken stream is opened again from the last token and the move sent again
   * (judged afresh: the token is from before it). */
  private async streamMove(move: SentMove): Promise<MoveResult> {
    const current = this.deal();
    for (let attempt = 1; ; attempt++) {
      const stream = required(current.stream, "stream");
      try {
        const answer = await stream.move(move);
        const result = moveResult(move, answer.outcome, answer.events, answer.table, answer.view);
        if (result.accepted) {
          current.stateToken = answer.stateToken;
          current.seatToken = undefined;
          this.adopt(result);
        }
        return result;
      } catch (thrown) {
        const error = toBigTwoError(thrown);
        if (!isRetryable(error) || attempt >= (this.settings.retry?.attempts ?? 3)) {
          throw error;
        }
        current.stream = undefined;
        await stream.close();
        await this.openStream();
      }
    }
  }

  private adopt(result: MoveResult): void {
    const current = this.deal();
    current.table = result.table;
    if (result.view !== undefined) {
      current.view = result.view;
    }
    current.events.push(...result.events);
  }

  /**
   * Send the last accepted move again with its index, against the latest token: what a host does
   * when a move's answer was lost. The service recognises the retry (index = moves made - 1, the
   * same move) and answers as the first time, applying nothing (docs/SERVICE.md "Move index").
   */
  async resendLastMove(): Promise<MoveResult & { readonly stateToken: Uint8Array }> {
    const current = this.deal();
    const last = current.lastMove;
    if (last === undefined) {
      throw new RangeError("no move to send again");
    }
    const answer = await send(this.settings, (call) =>
      this.client.applyMove({ game: gameOf(current.stateToken), move: last, viewSeat: this.personSeat }, call),
    );
    return { ...moveResult(last, answer.outcome, answer.events, answer.table, answer.view), stateToken: answer.stateToken };
  }

  // -- the match ------------------------------------------------------------------------------

  /** Settle the finished deal: its settlement card (ScoreDeal) and the match after it (SettleMatch). */
  async settle(): Promise<DealSettlement> {
    const current = this.deal();
    if (!current.table.over || current.settled) {
      throw new RangeError("no deal waits for its settlement");
    }
    await this.closeStream();
    const token = current.stateToken;
    const card = await send(this.settings, (call) =>
      this.client.scoreDeal({ source: { case: "game", value: gameOf(token) } }, call),
    );
    const ended = current.events.find((event) => event.event.case === "dealEnded");
    const result = create(DealResultSchema, {
      dealNumber: current.table.dealNumber,
      winner: card.winner,
      scores: card.scores,
      cardsLeft: card.seats.map((line) => line.cardsLeft),
      dealCode: current.table.dealCode,
      byDragon: ended?.event.case === "dealEnded" && ended.event.value.byDragon,
    });
    const standing = await this.settleMatch([...this.results, result], false);
    this.results.push(result);
    current.settled = true;
    return { result, card, standing };
  }

  /** The table stops the match (an open match ends only so): the final standing. */
  async stop(): Promise<SettleMatchResponse | undefined> {
    await this.closeStream();
    if (this.unsettled) {
      await this.settle();
    }
    return this.results.length > 0 ? this.settleMatch(this.results, true) : undefined;
  }

  private async settleMatch(deals: DealResult[], stopped: boolean): Promise<SettleMatchResponse> {
    const standing = await send(this.settings, (call) =>
      this.client.settleMatch({ ruleset: this.ruleset, deals, stopped }, call),
    );
    this.latestStanding = standing;
    this.context = standing.nextContext ?? create(DealContextSchema, { dealNumber: deals.length + 1 });
    return standing;
  }

  /** Ends the deal's stream, if any. */
  close(): Promise<void> {
    return this.closeStream();
  }

  // -- save and resume ------------------------------------------------------------------------

  /** The table as JSON: the host token, the last table and view, the match so far. */
  save(): SavedTable {
    const current = this.deal();
    return {
      ruleset: toJson(RulesetSchema, this.ruleset),
      personSeat: this.personSeat,
      bots: this.bots,
      stateToken: base64Encode(current.stateToken),
      table: toJson(TableStateSchema, current.table),
      view: toJson(SeatViewSchema, current.view),
      deals: this.results.map((result) => toJson(DealResultSchema, result)),
      nextContext: toJson(DealContextSchema, this.context),
      settled: current.settled,
    };
  }

  /** A table resumed from save()'s JSON on any client: it goes on from the saved token. With the
   * stream transport the deal's stream is opened from the token, and its answer gives the table,
   * view and events so far afresh. */
  static async restore(
    client: BigTwoClient,
    saved: SavedTable,
    options: { transport?: "unary" | "stream"; settings?: CallSettings } = {},
  ): Promise<TableHost> {
    const host = new TableHost(client, {
      ruleset: fromJson(RulesetSchema, saved.ruleset),
      personSeat: saved.personSeat,
      bots: saved.bots,
      ...options,
    });
    host.results = saved.deals.map((json) => fromJson(DealResultSchema, json));
    host.context = fromJson(DealContextSchema, saved.nextContext);
    const table = fromJson(TableStateSchema, saved.table);
    host.current = {
      stateToken: base64Decode(saved.stateToken),
      seatToken: undefined,
      table,
      view: fromJson(SeatViewSchema, saved.view),
      events: [],
      lastMove: undefined,
      stream: undefined,
      settled: saved.settled,
    };
    if (host.transport === "stream" && !table.over) {
      await host.openStream();
      host.current.events = [...(host.current.stream?.opened.events ?? [])];
    }
    return host;
  }
}
