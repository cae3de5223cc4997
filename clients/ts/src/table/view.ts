// Rendering the public table, the seats and the settlement from the service's answers.
import type { ScoreDealResponse, SettleMatchResponse } from "../gen/bigtwo/v1/service_pb.js";
import type { TableState } from "../gen/bigtwo/v1/types_pb.js";
import { cardFace, cardName, cardsInWords, parseCards } from "./cards.js";
import { el } from "./dom.js";
import type { BotSpec } from "./session.js";

/** "p1" for seat 0: how every screen, page and sentence numbers seats (the API stays 0-based). */
export function seatRef(seat: number): string {
  return `p${seat + 1}`;
}

export function seatLabel(seat: number, personSeat: number, bots: readonly BotSpec[]): string {
  if (seat === personSeat) {
    return `${seatRef(seat)} (you)`;
  }
  const bot = bots.find((candidate) => candidate.seat === seat);
  return bot ? `${seatRef(seat)} (${bot.level} bot)` : seatRef(seat);
}

/** A card face that is not a button: the cards on the table. */
export function faceOf(card: string): HTMLElement {
  const face = cardFace(card);
  return el(
    "span",
    { class: `card small${face.red ? " red" : ""}`, role: "img", "aria-label": cardName(card) },
    el("span", { class: "rank", "aria-hidden": "true" }, face.rank),
    el("span", { class: "suit", "aria-hidden": "true" }, face.suit),
  );
}

/** One line per seat: who, cards left, passed this trick, to act. */
export function renderSeats(root: HTMLElement, table: TableState, personSeat: number, bots: readonly BotSpec[]): void {
  const items = table.cardsLeft.map((left, seat) => {
    const toAct = !table.over && table.toAct === seat;
    const passed = table.passedSeats.includes(seat);
    const status = [
      `${left} ${left === 1 ? "card" : "cards"} left`,
      passed ? "passed" : "",
      toAct ? "to act" : "",
      table.over && table.winner === seat ? "won the deal" : "",
    ].filter(Boolean);
    return el(
      "li",
      { class: `seat${toAct ? " to-act" : ""}${seat === personSeat ? " you" : ""}`, "data-seat": seat },
      el("span", { class: "seat-name" }, seatLabel(seat, personSeat, bots)),
      el("span", { class: "seat-left", "data-left": left }, status.join(" · ")),
    );
  });
  root.replaceChildren(...items);
}

/** The play to beat and who made it. */
export function renderTrick(root: HTMLElement, table: TableState, personSeat: number, bots: readonly BotSpec[]): void {
  const play = table.table;
  const cards = parseCards(play?.cards?.text ?? "");
  if (play === undefined || cards.length === 0 || table.lastPlayer === undefined) {
    root.replaceChildren(el("p", { class: "trick-empty" }, table.over ? "The deal is over." : "No play on the table: the seat to act leads."));
    return;
  }
  root.replaceChildren(
    el(
      "p",
      { class: "trick-who" },
      `${seatLabel(table.lastPlayer, personSeat, bots)} played `,
      el("strong", { id: "trick-name" }, play.name),
    ),
    el("div", { class: "trick-cards", role: "group", "aria-label": cardsInWords(cards) }, ...cards.map(faceOf)),
  );
}

export function turnSentence(table: TableState, personSeat: number, bots: readonly BotSpec[]): string {
  if (table.over) {
    return table.winner === undefined ? "The deal is over." : `The deal is over: ${seatLabel(table.winner, personSeat, bots)} won.`;
  }
  return table.toAct === personSeat ? "Your turn." : `${seatLabel(table.toAct, personSeat, bots)} to act.`;
}

/** The settlement card (ScoreDeal) and the match's totals (SettleMatch). */
export function renderSettlement(
  root: HTMLTableSectionElement,
  card: ScoreDealResponse,
  standing: SettleMatchResponse,
  personSeat: number,
  bots: readonly BotSpec[],
): void {
  const rows = card.seats.map((line) =>
    el(
      "tr",
      { "data-seat": line.seat },
      el("th", { scope: "row" }, seatLabel(line.seat, personSeat, bots)),
      el("td", { class: "cards-left" }, String(line.cardsLeft)),
      el("td", {}, String(line.twosLeft)),
      el("td", {}, String(line.penalty)),
      el("td", { class: "deal-score" }, String(line.score)),
      el("td", { class: "total" }, String(standing.totals[line.seat] ?? 0)),
      el("td", { class: "deals-won" }, String(standing.dealsWon[line.seat] ?? 0)),
    ),
  );
  root.replaceChildren(...rows);
}

export function matchSentence(standing: SettleMatchResponse, personSeat: number, bots: readonly BotSpec[]): string {
  const names = standing.winners.map((seat) => seatLabel(seat, personSeat, bots)).join(" and ");
  return standing.over ? `The match is over: ${names} won.` : `Leading the match: ${names}.`;
}
