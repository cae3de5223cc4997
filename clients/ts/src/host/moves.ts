// What a move's answer says, in the host's own small types (the tables, views and events stay the
// generated messages: a renderer reads them as they are).
import type { Event, Move, MoveOutcome, Play, Reason, SeatView, TableState } from "../gen/bigtwo/v1/types_pb.js";
import { ProtocolError } from "./errors.js";

/** A rule refusal: a normal answer, not an error. */
export interface Refusal {
  readonly reason: Reason;
  /** The stable RULES.md id, e.g. "does-not-beat". */
  readonly reasonId: string;
  /** The sentence a player sees, e.g. "Pair 9 does not beat Pair K". */
  readonly sentence: string;
}

/** A move as sent: its index (moves made before it), the seat, "pass" or the cards. */
export interface SentMove {
  readonly index: number;
  readonly seat: number;
  readonly text: string;
}

/** The answer to a move. A refused move changes nothing: `table` is the table before it. */
export interface MoveResult {
  readonly move: SentMove;
  readonly accepted: boolean;
  readonly refusal?: Refusal;
  /** What the move played (accepted, not a pass). */
  readonly play?: Play;
  readonly isPass: boolean;
  /** The events it produced (automatic passes, trick end, last card, deal end included). */
  readonly events: readonly Event[];
  readonly table: TableState;
  /** The person's view after the move. */
  readonly view?: SeatView;
}

export function refusalOf(outcome: MoveOutcome | undefined): Refusal | undefined {
  const refusal = outcome?.refusal;
  if (outcome === undefined || outcome.accepted || refusal === undefined) {
    return undefined;
  }
  return { reason: refusal.reason, reasonId: refusal.reasonId, sentence: refusal.message };
}

export function moveResult(
  move: SentMove,
  outcome: MoveOutcome | undefined,
  events: readonly Event[],
  table: TableState | undefined,
  view: SeatView | undefined,
): MoveResult {
  if (outcome === undefined || table === undefined) {
    throw new ProtocolError(`the answer to move ${move.index} has no outcome or no table`);
  }
  const refusal = refusalOf(outcome);
  return {
    move,
    accepted: outcome.accepted,
    ...(refusal && { refusal }),
    ...(outcome.play && { play: outcome.play }),
    isPass: outcome.isPass,
    events,
    table,
    ...(view && { view }),
  };
}

export function sentMove(move: Move | undefined): SentMove {
  if (move === undefined || move.index === undefined) {
    throw new ProtocolError("the service sent a move without its index");
  }
  return { index: move.index, seat: move.seat, text: move.text };
}
