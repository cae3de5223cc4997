// The person's hand: one focusable button per card (aria-pressed while selected), moved through
// with the arrow keys (one card in the tab order at a time), toggled by click, Space or Enter.
import { cardFace, cardName, parseCards, sortByRank, sortBySuit } from "./cards.js";
import { el } from "./dom.js";

export type SortMode = "rank" | "suit" | "plays";

/** A run of cards shown together: the whole hand, or one play of the "plays" sort. */
export interface CardGroup {
  readonly label: string;
  readonly cards: readonly string[];
}

export class HandView {
  private cards: string[] = [];
  private readonly selected = new Set<string>();
  private focusIndex = 0;

  constructor(
    private readonly root: HTMLElement,
    private readonly onSelectionChange: () => void,
  ) {
    root.addEventListener("keydown", (event) => this.onKey(event));
  }

  /** The selection in hand order, as the service writes cards ("3D 3S"). */
  get selection(): string {
    return this.cards.filter((card) => this.selected.has(card)).join(" ");
  }

  /** Select exactly these cards (a hint). */
  select(text: string): void {
    this.selected.clear();
    for (const card of parseCards(text)) {
      if (this.cards.includes(card)) {
        this.selected.add(card);
      }
    }
    this.refreshPressed();
    this.onSelectionChange();
  }

  clear(): void {
    this.select("");
  }

  /** Show the hand in groups; selected cards no longer held are dropped. */
  show(groups: readonly CardGroup[]): void {
    const hadFocus = this.root.contains(document.activeElement);
    this.cards = groups.flatMap((group) => group.cards);
    for (const card of [...this.selected]) {
      if (!this.cards.includes(card)) {
        this.selected.delete(card);
      }
    }
    this.focusIndex = Math.min(this.focusIndex, Math.max(0, this.cards.length - 1));
    const rows = groups.map((group) =>
      el(
        "span",
        { class: "card-group", role: "group", "aria-label": group.label },
        ...group.cards.map((card) => this.cardButton(card)),
      ),
    );
    this.root.replaceChildren(...rows);
    this.root.setAttribute("aria-label", `Your hand, ${this.cards.length} cards`);
    if (hadFocus) {
      this.focusCard(this.focusIndex);
    }
  }

  private cardButton(card: string): HTMLButtonElement {
    const face = cardFace(card);
    const index = this.cards.indexOf(card);
    const button = el(
      "button",
      {
        type: "button",
        class: `card${face.red ? " red" : ""}`,
        "data-card": card,
        "aria-label": cardName(card),
        "aria-pressed": this.selected.has(card) ? "true" : "false",
        tabindex: index === this.focusIndex ? 0 : -1,
      },
      el("span", { class: "rank", "aria-hidden": "true" }, face.rank),
      el("span", { class: "suit", "aria-hidden": "true" }, face.suit),
    );
    button.addEventListener("click", () => {
      this.focusIndex = this.cards.indexOf(card);
      this.toggle(card);
    });
    button.addEventListener("focus", () => {
      this.focusIndex = this.cards.indexOf(card);
      this.refreshTabStops();
    });
    return button;
  }

  private toggle(card: string): void {
    if (this.selected.has(card)) {
      this.selected.delete(card);
    } else {
      this.selected.add(card);
    }
    this.refreshPressed();
    this.onSelectionChange();
  }

  private buttons(): HTMLButtonElement[] {
    return [...this.root.querySelectorAll<HTMLButtonElement>("button.card")];
  }

  private refreshPressed(): void {
    for (const button of this.buttons()) {
      button.setAttribute("aria-pressed", this.selected.has(button.dataset["card"] ?? "") ? "true" : "false");
    }
  }

  private refreshTabStops(): void {
    this.buttons().forEach((button, index) => {
      button.tabIndex = index === this.focusIndex ? 0 : -1;
    });
  }

  private focusCard(index: number): void {
    const buttons = this.buttons();
    if (buttons.length === 0) {
      return;
    }
    this.focusIndex = Math.max(0, Math.min(index, buttons.length - 1));
    this.refreshTabStops();
    buttons[this.focusIndex]?.focus();
  }

  private onKey(event: KeyboardEvent): void {
    const moves: Readonly<Record<string, number>> = {
      ArrowLeft: this.focusIndex - 1,
      ArrowUp: this.focusIndex - 1,
      ArrowRight: this.focusIndex + 1,
      ArrowDown: this.focusIndex + 1,
      Home: 0,
      End: this.cards.length - 1,
    };
    const target = moves[event.key];
    if (target !== undefined) {
      event.preventDefault();
      this.focusCard(target);
    }
  }
}

/** The hand's groups for a sort: one group (by rank or by suit), or SplitHand's plays. */
export function groupsFor(
  mode: SortMode,
  hand: string,
  suitOrder: string,
  plays: readonly { name: string; cards: string }[] | undefined,
): CardGroup[] {
  const cards = parseCards(hand);
  if (mode === "plays" && plays !== undefined) {
    return plays.map((play) => ({ label: play.name, cards: parseCards(play.cards) }));
  }
  const sorted = mode === "suit" ? sortBySuit(cards, suitOrder) : sortByRank(cards, suitOrder);
  return [{ label: mode === "suit" ? "Sorted by suit" : "Sorted by rank", cards: sorted }];
}
