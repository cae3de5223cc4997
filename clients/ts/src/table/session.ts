// One person's seat against the service's bots, held only through the seat token
// (docs/SECURITY.md): Deal binds the bot seats and their levels into the token and returns no host
// state token, the service plays the bots (PlayBots, with the randomness it drew at the deal: the
// page chooses nothing about a bot's move once dealt), and every later call sends the seat token,
// whose answers show only this seat's hand. The page never holds a token that answers for another seat.
import { create } from "@bufbuild/protobuf";
import type { ScoreDealResponse, SettleMatchResponse, SplitHandResponse } from "../gen/bigtwo/v1/service_pb.js";
import {
  DealContextSchema,
  DealResultSchema,
  type DealContext,
  type DealResult,
  type Event,
  type Play,
  type Ruleset,
  type SeatView,
  type TableState,
} from "../gen/bigtwo/v1/types_pb.js";
import { send, type BigTwoClient, type CallSettings } from "../host/calls.js";
import { ProtocolError } from "../host/errors.js";
import { refusalOf, type Refusal } from "../host/moves.js";

/** A seat the service plays, with its level (DealRequest.botLevels: fixed when the deal is made). */
export interface BotSpec {
  readonly seat: number;
  readonly level: string;
}

/** A move some seat made: who, its index, "pass" or the cards, and the service's name for it. */
export interface MadeMove {
  readonly index: number;
  readonly seat: number;
  readonly text: string;
  readonly name: string;
}

/** What changed after a call: the moves made and the events they produced. */
export interface Progress {
  readonly moves: readonly MadeMove[];
  readonly events: readonly Event[];
}

/** The answer to the person's move: a refusal changes nothing. */
export interface PersonMove extends Progress {
  readonly refusal?: Refusal;
}

export interface Readout {
  readonly name: string;
  readonly playable: boolean;
  readonly refusal?: Refusal;
  readonly endingNow: string;
}

export interface Settlement {
  readonly card: ScoreDealResponse;
  readonly standing: SettleMatchResponse;
  readonly result: DealResult;
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) {
    throw new ProtocolError(`the service's answer has no ${what}`);
  }
  return value;
}

function seatGame(token: Uint8Array) {
  return { game: { case: "stateToken" as const, value: token } };
}

/** One deal of a match, seen and played from the person's seat. */
export class SeatDeal {
  private token: Uint8Array;
  table: TableState;
  view: SeatView;
  /** The person's hand as dealt (the deal's start), to tell what is theirs in every answer. */
  readonly dealtHand: string;
  readonly events: Event[] = [];

  constructor(
    private readonly client: BigTwoClient,
    private readonly settings: CallSettings,
    readonly ruleset: Ruleset,
    readonly personSeat: number,
    readonly bots: readonly BotSpec[],
    answer: { seatToken: Uint8Array; table?: TableState; view?: SeatView; events: readonly Event[] },
  ) {
    if (answer.seatToken.length === 0) {
      throw new ProtocolError("the deal's answer has no seat token");
    }
    this.token = answer.seatToken;
    this.table = required(answer.table, "table");
    this.view = required(answer.view, "seat view");
    this.dealtHand = this.view.hand?.text ?? "";
    this.events.push(...answer.events);
  }

  get over(): boolean {
    return this.table.over;
  }

  get personsTurn(): boolean {
    return !this.table.over && this.table.toAct === this.personSeat;
  }

  get hand(): string {
    return this.view.hand?.text ?? "";
  }

  /** The latest seat token: answers for this seat only (the replay link carries the final one). */
  get seatToken(): Uint8Array {
    return this.token;
  }

  private adopt(answer: { seatToken: Uint8Array; table?: TableState; view?: SeatView; events: readonly Event[] }): void {
    if (answer.seatToken.length > 0) {
      this.token = answer.seatToken;
    }
    this.table = required(answer.table, "table");
    if (answer.view !== undefined) {
      this.view = answer.view;
    }
    this.events.push(...answer.events);
  }

  /** The service plays the bot seats until the person is to act or the deal ends. */
  async playBots(): Promise<Progress> {
    if (this.table.over || this.table.toAct === this.personSeat) {
      return { moves: [], events: [] };
    }
    const token = this.token;
    const answer = await send(this.settings, (call) =>
      this.client.playBots({ game: seatGame(token) }, call),
    );
    const moves = answer.moves.map((played) => {
      const move = required(played.move, "bot move");
      return { index: move.index ?? 0, seat: move.seat, text: move.text, name: played.name };
    });
    this.adopt(answer);
    return { moves, events: answer.events };
  }

  /** The person's move: "pass" or the cards. */
  async move(text: string): Promise<PersonMove> {
    const token = this.token;
    const index = this.table.movesMade;
    const move = { index, seat: this.personSeat, text };
    const answer = await send(this.settings, (call) =>
      this.client.applyMove({ game: seatGame(token), move, viewSeat: this.personSeat }, call),
    );
    const outcome = required(answer.outcome, "outcome");
    const refusal = refusalOf(outcome);
    if (!outcome.accepted) {
      return { moves: [], events: [], ...(refusal && { refusal }) };
    }
    const made = { index, seat: this.personSeat, text: outcome.isPass ? "pass" : (outcome.play?.cards?.text ?? text), name: outcome.play?.name ?? "" };
    this.adopt(answer);
    return { moves: [made], events: answer.events };
  }

  /** HK's Find: the next play after the current selection (unset: the person has no play). */
  async hint(after: string): Promise<Play | undefined> {
    const token = this.token;
    const answer = await send(this.settings, (call) => this.client.nextHint({ game: seatGame(token), after }, call));
    return answer.play;
  }

  /** The readout line of a selection for the person's seat. */
  async readout(cards: string): Promise<Readout> {
    const token = this.token;
    const answer = await send(this.settings, (call) =>
      this.client.nameCards({ cards, context: { case: "game", value: seatGame(token) }, seat: this.personSeat }, call),
    );
    const refusal = answer.playable || answer.refusal === undefined ? undefined : {
      reason: answer.refusal.reason,
      reasonId: answer.refusal.reasonId,
      sentence: answer.refusal.message,
    };
    return { name: answer.name, playable: answer.playable, ...(refusal && { refusal }), endingNow: answer.endingNow };
  }

  /** Every legal play of the person now (LegalMoves with the seat token). */
  async legalPlays(): Promise<{ plays: readonly Play[]; canPass: boolean }> {
    const token = this.token;
    const answer = await send(this.settings, (call) =>
      this.client.legalMoves({ source: { case: "game", value: seatGame(token) } }, call),
    );
    return { plays: answer.plays, canPass: answer.canPass };
  }

  /** The finished deal's settlement card (ScoreDeal with the seat token). */
  async score(): Promise<ScoreDealResponse> {
    const token = this.token;
    return send(this.settings, (call) => this.client.scoreDeal({ source: { case: "game", value: seatGame(token) } }, call));
  }

  /** This deal's result for SettleMatch, from its settlement card. */
  result(card: ScoreDealResponse): DealResult {
    const ended = this.events.find((event) => event.event.case === "dealEnded");
    return create(DealResultSchema, {
      dealNumber: this.table.dealNumber,
      winner: card.winner,
      scores: card.scores,
      cardsLeft: card.seats.map((line) => line.cardsLeft),
      dealCode: this.table.dealCode,
      byDragon: ended?.event.case === "dealEnded" && ended.event.value.byDragon,
    });
  }
}

/** A match: its deals one after another, each dealt with the next context SettleMatch gives. */
export class SeatMatch {
  private readonly results: DealResult[] = [];
  private context: DealContext = create(DealContextSchema, { dealNumber: 1 });
  standing: SettleMatchResponse | undefined;

  constructor(
    private readonly client: BigTwoClient,
    private readonly settings: CallSettings,
    readonly ruleset: Ruleset,
    readonly personSeat: number,
    readonly bots: readonly BotSpec[],
  ) {}

  get over(): boolean {
    return this.standing?.over ?? false;
  }

  get deals(): readonly DealResult[] {
    return this.results;
  }

  /** The match's next deal, fresh cards; its answer carries the seat token and no host token. */
  async deal(): Promise<SeatDeal> {
    const context = this.context;
    const answer = await send(this.settings, (call) =>
      this.client.deal(
        {
          ruleset: this.ruleset,
          context,
          viewSeat: this.personSeat,
          botSeats: this.bots.map((bot) => bot.seat),
          botLevels: this.bots.map((bot) => ({ seat: bot.seat, level: bot.level })),
        },
        call,
      ),
    );
    return new SeatDeal(this.client, this.settings, this.ruleset, this.personSeat, this.bots, answer);
  }

  /** Score a finished deal and settle the match after it. */
  async settle(deal: SeatDeal): Promise<Settlement> {
    const card = await deal.score();
    const result = deal.result(card);
    const deals = [...this.results, result];
    const standing = await send(this.settings, (call) =>
      this.client.settleMatch({ ruleset: this.ruleset, deals, stopped: false }, call),
    );
    this.results.push(result);
    this.standing = standing;
    this.context = standing.nextContext ?? create(DealContextSchema, { dealNumber: deals.length + 1 });
    return { card, standing, result };
  }
}

/** HK's "plays" sort: the hand cut into the fewest plays, five-card hands first (SplitHand). */
export async function splitHand(
  client: BigTwoClient,
  settings: CallSettings,
  ruleset: Ruleset,
  hand: string,
): Promise<SplitHandResponse> {
  return send(settings, (call) => client.splitHand({ ruleset, hand }, call));
}
