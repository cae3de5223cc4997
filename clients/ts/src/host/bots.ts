// Bot seats: a level for the service's BotMove, and a seed per turn.

/** A seat the service's bots play: random, beginner, good, great or pro. */
export interface BotSeat {
  readonly level: string;
  /** The seat's seed: the same deal, seed and level give the same moves. */
  readonly seed?: number;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = (1n << 64n) - 1n;

/**
 * The seed of one turn: a function of the seat's seed and where the turn is (seat, deal number,
 * moves made), not of the turns before it, so a game resumed from a token makes the same choices
 * as one that never stopped (as clients/client/table.py's turn_rng does). FNV-1a over the turn's
 * name, kept within 63 bits like the Python client's seeds.
 */
export function turnSeed(seatSeed: number, seat: number, dealNumber: number, movesMade: number): bigint {
  let hash = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(`bigtwo-bot/${seatSeed}/${seat}/${dealNumber}/${movesMade}`)) {
    hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  }
  return hash >> 1n;
}

export function botSeat(spec: string | BotSeat, index: number): BotSeat {
  return typeof spec === "string" ? { level: spec, seed: index } : spec;
}
