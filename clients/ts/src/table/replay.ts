// The link to a finished deal's HTML replay on the same port (/replay): everything the page knows
// once the deal is over and nothing it did not: the deal code the final table shows, the rules,
// the deal's place in its match, and the moves' text in order.
import type { DealContext, Ruleset } from "../gen/bigtwo/v1/types_pb.js";

export interface ReplayDeal {
  readonly ruleset: Ruleset;
  readonly dealCode: string;
  readonly context: DealContext | undefined;
  readonly moves: readonly string[];
}

export function replayHref(deal: ReplayDeal): string {
  const query = new URLSearchParams();
  query.set("deal_code", deal.dealCode);
  query.set("preset", deal.ruleset.preset);
  for (const [name, value] of Object.entries(deal.ruleset.options).sort(([a], [b]) => a.localeCompare(b))) {
    query.append("option", `${name}=${value}`);
  }
  if (deal.context !== undefined) {
    query.set("deal_number", String(deal.context.dealNumber));
    if (deal.context.previousWinner !== undefined) {
      query.set("previous_winner", String(deal.context.previousWinner));
    }
    for (const seat of deal.context.emptySeats) {
      query.append("empty_seat", String(seat));
    }
  }
  for (const move of deal.moves) {
    query.append("move", move);
  }
  return `/replay?${query.toString()}`;
}
