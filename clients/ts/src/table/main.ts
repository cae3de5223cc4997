// The browser table: one person against the service's bots, on the port that served the page.
// The page holds its game only through the seat token (session.ts); every sentence it shows about
// the game (moves, refusals, readouts, errors) is the service's.
import { create } from "@bufbuild/protobuf";
import type { BotLevelInfo } from "../gen/bigtwo/v1/service_pb.js";
import { RulesetSchema, type Event, type Preset, type Ruleset } from "../gen/bigtwo/v1/types_pb.js";
import { Code } from "@connectrpc/connect";
import { send, type BigTwoClient, type CallSettings } from "../host/calls.js";
import { toBigTwoError, type BigTwoError } from "../host/errors.js";
import { DEFAULT_SUIT_ORDER, cardsInWords, parseCards } from "./cards.js";
import { byId, el } from "./dom.js";
import { groupsFor, HandView, type SortMode } from "./hand.js";
import { replayHref } from "./replay.js";
import { SeatMatch, splitHand, type BotSpec, type SeatDeal } from "./session.js";
import { connect } from "./transport.js";
import { matchSentence, renderSeats, renderSettlement, renderTrick, seatRef, turnSentence } from "./view.js";

const SETTINGS: CallSettings = { timeoutMs: 30_000 };

/**
 * Whether a failed call never reached the service: it stopped, or the network is down. The Connect
 * library reports a fetch that failed as Unknown ("Failed to fetch"), not Unavailable.
 */
function unreachable(error: BigTwoError): boolean {
  if (error.code === Code.Unavailable || error.code === Code.Canceled) {
    return true;
  }
  return error.code === Code.Unknown && /fetch|network|load failed|connection/i.test(error.sentence);
}

/** "name=value, name=value" as ruleset options. */
function parseOverrides(text: string): Record<string, string> {
  const options: Record<string, string> = {};
  for (const part of text.split(/[,\n]/)) {
    const [name, ...rest] = part.split("=");
    if (name !== undefined && name.trim() !== "" && rest.length > 0) {
      options[name.trim()] = rest.join("=").trim();
    }
  }
  return options;
}

class TablePage {
  private readonly client: BigTwoClient;
  private presets: Preset[] = [];
  private botLevels: BotLevelInfo[] = [];
  private defaultBotLevel = "";
  private match: SeatMatch | undefined;
  private deal: SeatDeal | undefined;
  private suitOrder = DEFAULT_SUIT_ORDER;
  private sortMode: SortMode = "rank";
  private plays: { name: string; cards: string }[] | undefined;
  private busy = false;
  private readoutSequence = 0;
  /** What the Try again button does after a failed call that left the table waiting. */
  private retry: (() => Promise<void>) | undefined;
  private readonly hand: HandView;
  private readonly host: string;
  private readonly protocol: string;

  private readonly ui = {
    connection: byId("connection", HTMLElement),
    setupForm: byId("setup-form", HTMLFormElement),
    preset: byId("preset", HTMLSelectElement),
    presetDescription: byId("preset-description", HTMLElement),
    options: byId("options", HTMLInputElement),
    seat: byId("seat", HTMLSelectElement),
    bots: byId("bots", HTMLElement),
    start: byId("start", HTMLButtonElement),
    game: byId("game", HTMLElement),
    rules: byId("rules", HTMLElement),
    seats: byId("seats", HTMLElement),
    trick: byId("trick", HTMLElement),
    turn: byId("turn", HTMLElement),
    hand: byId("hand", HTMLElement),
    readout: byId("readout", HTMLElement),
    play: byId("play", HTMLButtonElement),
    pass: byId("pass", HTMLButtonElement),
    hint: byId("hint", HTMLButtonElement),
    clear: byId("clear", HTMLButtonElement),
    refusal: byId("refusal", HTMLElement),
    error: byId("error", HTMLElement),
    retry: byId("retry", HTMLButtonElement),
    setup: byId("setup", HTMLElement),
    log: byId("log", HTMLOListElement),
    settlement: byId("settlement", HTMLElement),
    scores: byId("scores", HTMLTableSectionElement),
    matchState: byId("match-state", HTMLElement),
    replay: byId("replay", HTMLAnchorElement),
    nextDeal: byId("next-deal", HTMLButtonElement),
    newMatch: byId("new-match", HTMLButtonElement),
    announce: byId("announce", HTMLElement),
  };

  constructor() {
    const query = new URLSearchParams(location.search);
    const connection = connect(location.origin, query);
    this.client = connection.client;
    this.host = location.host;
    this.protocol = connection.label;
    // The header says what is known: connecting until the first answer, then each call's outcome.
    this.ui.connection.textContent = `Connecting to ${this.host}…`;
    this.ui.connection.dataset["state"] = "connecting";
    // A refusal is about the selection that was sent: a new selection replaces it with its readout.
    this.hand = new HandView(this.ui.hand, () => {
      this.ui.refusal.textContent = "";
      void this.updateReadout();
    });
    this.wire();
  }

  // -- setup ------------------------------------------------------------------------------------

  async loadPresets(): Promise<void> {
    const answer = await this.call(() => send(SETTINGS, (call) => this.client.listPresets({}, call)));
    if (answer === undefined) {
      this.offerRetry(() => this.loadPresets());
      return;
    }
    this.presets = answer.presets;
    // The bot levels are the service's (its one registry), in its order, with its words for each.
    this.botLevels = answer.botLevels;
    this.defaultBotLevel = answer.defaultBotLevel;
    this.ui.preset.replaceChildren(
      ...this.presets.map((preset) => el("option", { value: preset.name }, `${preset.name}: ${preset.summary}`)),
    );
    this.onPresetChange();
    this.ui.start.disabled = false;
  }

  private onPresetChange(): void {
    const preset = this.presets.find((candidate) => candidate.name === this.ui.preset.value);
    this.ui.presetDescription.replaceChildren(...(preset?.description ?? []).map((line) => el("li", {}, line)));
    const players = Number(preset?.ruleset?.options["players"] ?? "4");
    this.renderSeatChoices(players);
  }

  private renderSeatChoices(players: number): void {
    const chosen = Number(this.ui.seat.value || "0");
    this.ui.seat.replaceChildren(
      ...Array.from({ length: players }, (_, seat) => el("option", { value: seat, selected: seat === chosen }, seatRef(seat))),
    );
    this.renderBotChoices(players);
  }

  private renderBotChoices(players: number): void {
    const person = Number(this.ui.seat.value);
    const rows = Array.from({ length: players }, (_, seat) => seat)
      .filter((seat) => seat !== person)
      .map((seat) => {
        const id = `bot-${seat}`;
        const select = el("select", { id, "data-seat": seat });
        select.append(
          ...this.botLevels.map((level) =>
            el("option", { value: level.name, title: level.description, selected: level.name === this.defaultBotLevel }, level.name),
          ),
        );
        return el("p", { class: "bot-choice" }, el("label", { for: id }, `${seatRef(seat)} bot`), select);
      });
    this.ui.bots.replaceChildren(el("legend", {}, "Bots"), ...rows);
  }

  private chosenBots(): BotSpec[] {
    return [...this.ui.bots.querySelectorAll<HTMLSelectElement>("select[data-seat]")].map((select) => {
      const seat = Number(select.dataset["seat"]);
      return { seat, level: select.value };
    });
  }

  private async startMatch(): Promise<void> {
    const requested = create(RulesetSchema, { preset: this.ui.preset.value, options: parseOverrides(this.ui.options.value) });
    const described = await this.call(
      () => send(SETTINGS, (call) => this.client.describeRuleset({ ruleset: requested }, call)),
      () => this.startMatch(),
    );
    if (described === undefined) {
      return;
    }
    const ruleset: Ruleset = requested;
    const options = described.ruleset?.options ?? {};
    const players = Number(options["players"] ?? "4");
    if (this.ui.bots.querySelectorAll("select[data-seat]").length !== players - 1) {
      this.renderSeatChoices(players);
    }
    this.suitOrder = options["suit_order"] ?? DEFAULT_SUIT_ORDER;
    this.ui.rules.replaceChildren(...described.description.map((line) => el("li", {}, line)));
    this.match = new SeatMatch(this.client, SETTINGS, ruleset, Number(this.ui.seat.value), this.chosenBots());
    this.ui.log.replaceChildren();
    this.ui.game.hidden = false;
    this.ui.setup.hidden = true;
    await this.startDeal();
    this.ui.hand.querySelector<HTMLButtonElement>("button.card")?.focus();
  }

  // -- a deal -----------------------------------------------------------------------------------

  private async startDeal(): Promise<void> {
    const match = this.match;
    if (match === undefined) {
      return;
    }
    this.ui.settlement.hidden = true;
    this.ui.refusal.textContent = "";
    const deal = await this.call(() => match.deal());
    if (deal === undefined) {
      this.offerRetry(() => this.startDeal());
      return;
    }
    this.deal = deal;
    this.plays = undefined;
    this.hand.clear();
    this.record(deal.events);
    await this.refreshPlays();
    this.render();
    await this.runBots();
  }

  /** The bots move (the service plays them) until the person is to act; then the deal's end. */
  private async runBots(): Promise<void> {
    const deal = this.deal;
    if (deal === undefined) {
      return;
    }
    if (!deal.over && !deal.personsTurn) {
      const progress = await this.call(() => deal.playBots());
      if (progress === undefined) {
        this.offerRetry(() => this.runBots());
        return;
      }
      this.record(progress.events);
    }
    this.render();
    if (deal.over) {
      await this.settle(deal);
    } else if (deal.personsTurn) {
      this.say("Your turn.");
    }
  }

  private async move(text: string): Promise<void> {
    const deal = this.deal;
    if (deal === undefined || !deal.personsTurn || this.busy) {
      return;
    }
    if (text === "") {
      this.showRefusal("Select the cards to play first, or pass.");
      return;
    }
    const answer = await this.call(
      () => deal.move(text),
      () => this.move(text),
    );
    if (answer === undefined) {
      return;
    }
    if (answer.refusal !== undefined) {
      this.showRefusal(answer.refusal.sentence);
      return;
    }
    this.ui.refusal.textContent = "";
    this.hand.clear();
    this.record(answer.events);
    await this.refreshPlays();
    await this.runBots();
  }

  private async hint(): Promise<void> {
    const deal = this.deal;
    if (deal === undefined || !deal.personsTurn || this.busy) {
      return;
    }
    // Wrapped, so that a failed call (undefined) is told apart from "no play" (an unset play).
    const answer = await this.call(
      async () => ({ play: await deal.hint(this.hand.selection) }),
      () => this.hint(),
    );
    if (answer === undefined || this.deal !== deal) {
      return;
    }
    const play = answer.play;
    if (play?.cards === undefined) {
      this.hand.clear();
      this.say("No play beats the table: pass.");
      this.ui.readout.textContent = "No play beats the table: pass.";
      return;
    }
    this.hand.select(play.cards.text);
    this.say(`Hint: ${play.name}, ${cardsInWords(parseCards(play.cards.text))}.`);
  }

  private async settle(deal: SeatDeal): Promise<void> {
    const match = this.match;
    if (match === undefined) {
      return;
    }
    const settled = await this.call(() => match.settle(deal));
    if (settled === undefined) {
      this.offerRetry(() => this.settle(deal));
      return;
    }
    const { card, standing } = settled;
    renderSettlement(this.ui.scores, card, standing, match.personSeat, match.bots);
    const sentence = matchSentence(standing, match.personSeat, match.bots);
    this.ui.matchState.textContent = `Deal ${deal.table.dealNumber} of the match. ${sentence}`;
    this.ui.replay.href = replayHref(deal.seatToken);
    this.ui.replay.textContent = `Replay deal ${deal.table.dealNumber} (deal code ${deal.table.dealCode})`;
    this.ui.nextDeal.hidden = standing.over;
    this.ui.settlement.hidden = false;
    this.showPhase();
    this.say(`${turnSentence(deal.table, match.personSeat, match.bots)} ${sentence}`);
    (standing.over ? this.ui.newMatch : this.ui.nextDeal).focus();
  }

  private async refreshPlays(): Promise<void> {
    const deal = this.deal;
    if (deal === undefined || this.sortMode !== "plays" || deal.hand === "") {
      this.plays = undefined;
      return;
    }
    const answer = await this.call(() => splitHand(this.client, SETTINGS, deal.ruleset, deal.hand));
    this.plays = answer?.plays.map((play) => ({ name: play.name, cards: play.cards?.text ?? "" }));
  }

  private async updateReadout(): Promise<void> {
    const deal = this.deal;
    const selection = this.hand.selection;
    const sequence = ++this.readoutSequence;
    if (deal === undefined || selection === "") {
      this.ui.readout.textContent = "";
      return;
    }
    try {
      const readout = await deal.readout(selection);
      if (sequence !== this.readoutSequence) {
        return;
      }
      const parts = [readout.name || "Not a play", readout.playable ? "playable" : (readout.refusal?.sentence ?? ""), readout.endingNow];
      this.ui.readout.textContent = parts.filter(Boolean).join(" · ");
    } catch (thrown) {
      this.ui.readout.textContent = toBigTwoError(thrown).sentence;
    }
  }

  // -- showing ----------------------------------------------------------------------------------

  private render(): void {
    const deal = this.deal;
    const match = this.match;
    if (deal === undefined || match === undefined) {
      return;
    }
    renderSeats(this.ui.seats, deal.table, match.personSeat, match.bots);
    renderTrick(this.ui.trick, deal.table, match.personSeat, match.bots);
    this.ui.turn.textContent = turnSentence(deal.table, match.personSeat, match.bots);
    this.hand.show(groupsFor(this.sortMode, deal.hand, this.suitOrder, this.plays));
    const canAct = deal.personsTurn && !this.busy;
    for (const button of [this.ui.play, this.ui.pass, this.ui.hint]) {
      button.disabled = !canAct;
    }
    this.showPhase();
  }

  /** body[data-phase]: "your-turn", "waiting" or "settled", for styles and for scripts driving the page. */
  private showPhase(): void {
    const deal = this.deal;
    const phase = deal === undefined || this.busy ? "waiting" : !this.ui.settlement.hidden ? "settled" : deal.personsTurn ? "your-turn" : "waiting";
    document.body.dataset["phase"] = phase;
  }

  private record(events: readonly Event[]): void {
    const lines = events.map((event) => event.description).filter(Boolean);
    this.ui.log.append(...lines.map((line) => el("li", {}, line)));
    // Scrolls the list alone: scrollIntoView would move the whole page away from the hand.
    this.ui.log.scrollTop = this.ui.log.scrollHeight;
    if (lines.length > 0) {
      this.say(lines.join(". "));
    }
  }

  private offerRetry(again: () => Promise<void>): void {
    this.retry = again;
    this.ui.retry.hidden = false;
  }

  private showRefusal(sentence: string): void {
    this.ui.refusal.textContent = sentence;
    this.say(`Refused: ${sentence}`);
  }

  /** The live region: moves, refusals, turns, settlements. */
  private say(text: string): void {
    this.ui.announce.textContent = text;
  }

  /** The header: connected (and how), or that the service cannot be reached. */
  private showConnected(connected: boolean): void {
    this.ui.connection.dataset["state"] = connected ? "connected" : "unreachable";
    this.ui.connection.textContent = connected
      ? `Connected to ${this.host} (${this.protocol}).`
      : `Not connected: the service at ${this.host} does not answer.`;
  }

  /**
   * A call with the page marked busy; a failed call shows the service's sentence and gives
   * undefined. A call that never reached the service says so in words, keeps the game as it was
   * and offers Try again, which runs `again` (the whole action: moves carry their index, so one
   * sent again is never applied twice).
   */
  private async call<T>(work: () => Promise<T>, again?: () => Promise<void>): Promise<T | undefined> {
    this.busy = true;
    document.body.setAttribute("aria-busy", "true");
    this.showPhase();
    this.ui.error.textContent = "";
    this.ui.retry.hidden = true;
    try {
      const answer = await work();
      this.showConnected(true);
      return answer;
    } catch (thrown) {
      const error = toBigTwoError(thrown);
      if (unreachable(error)) {
        this.showConnected(false);
        const kept = this.deal === undefined ? "" : " Your game is kept where it was.";
        this.ui.error.textContent =
          `The Big Two service at ${this.host} cannot be reached: it may have stopped, or the network is down.${kept} ` +
          "Start it again (make run), then press Try again.";
        if (again !== undefined) {
          this.offerRetry(again);
        }
      } else {
        this.showConnected(true); // it answered, with an error
        this.ui.error.textContent = error.sentence;
      }
      return undefined;
    } finally {
      this.busy = false;
      document.body.removeAttribute("aria-busy");
      this.render();
    }
  }

  // -- input ------------------------------------------------------------------------------------

  private setSort(mode: SortMode): void {
    this.sortMode = mode;
    const radio = document.querySelector<HTMLInputElement>(`input[name="sort"][value="${mode}"]`);
    if (radio !== null) {
      radio.checked = true;
    }
    void this.refreshPlays().then(() => this.render());
  }

  private wire(): void {
    this.ui.preset.addEventListener("change", () => this.onPresetChange());
    this.ui.seat.addEventListener("change", () => this.renderBotChoices(this.ui.seat.options.length));
    this.ui.setupForm.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.startMatch();
    });
    this.ui.play.addEventListener("click", () => void this.move(this.hand.selection));
    this.ui.pass.addEventListener("click", () => void this.move("pass"));
    this.ui.hint.addEventListener("click", () => void this.hint());
    this.ui.clear.addEventListener("click", () => this.hand.clear());
    this.ui.nextDeal.addEventListener("click", () => void this.startDeal());
    this.ui.newMatch.addEventListener("click", () => {
      this.ui.game.hidden = true;
      this.ui.setup.hidden = false;
      this.ui.preset.focus();
    });
    this.ui.retry.addEventListener("click", () => {
      const again = this.retry;
      this.retry = undefined;
      this.ui.retry.hidden = true;
      void again?.();
    });
    for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="sort"]')) {
      radio.addEventListener("change", () => this.setSort(radio.value as SortMode));
    }
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  private onKey(event: KeyboardEvent): void {
    const target = event.target;
    // Letters belong to text fields and drop-downs; on a radio button or a card they are shortcuts.
    const typing =
      (target instanceof HTMLInputElement && target.type !== "radio") ||
      target instanceof HTMLSelectElement ||
      target instanceof HTMLTextAreaElement;
    if (typing || event.ctrlKey || event.metaKey || event.altKey || this.ui.game.hidden) {
      return;
    }
    const actions: Readonly<Record<string, () => void>> = {
      p: () => void this.move(this.hand.selection),
      s: () => void this.move("pass"),
      h: () => void this.hint(),
      c: () => this.hand.clear(),
      Escape: () => this.hand.clear(),
      r: () => this.setSort("rank"),
      u: () => this.setSort("suit"),
      l: () => this.setSort("plays"),
      n: () => {
        if (!this.ui.settlement.hidden && !this.ui.nextDeal.hidden) {
          void this.startDeal();
        }
      },
    };
    const action = actions[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (action !== undefined) {
      event.preventDefault();
      action();
    }
  }
}

const page = new TablePage();
void page.loadPresets();
