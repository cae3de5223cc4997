# ruff: noqa: E501
"""A replay as one self-contained HTML page (``bigtwo replay FILE --html OUT.html``, and the browser
port's replay link, :mod:`bigtwo.service.replay_page`) (no network, no external files)
that steps through the game: every seat's hand drawn as inline SVG cards, the table, the current
trick, refusals, and the scores as they change. Navigation: buttons, the arrow keys (←/→ a step,
↑/↓ a trick) and the URL hash ``#step=N``, so a link (or a headless browser) can open any step.

Seats are shown as ``p2 name`` (the file's own numbering), so two seats of the same name are told
apart. The last step shows the match result (``<div id="match-result">``: over, or how far an
unfinished match got); the settlement card has a legend of its columns.

The page writes any script error into ``<pre id="errors">`` and marks ``<body data-ready="1"
data-step="N">`` once a step is drawn, which is what the headless Chromium test reads.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from .. import Card, cards_of, mask_text
from .audit import AuditVerdict
from .format import GameLog
from .names import how_to_win, seat_label

SETTLEMENT_LEGEND = (
    "left: cards left · rate: points per card at that count · ×: multiplier (doubles per 2 held under "
    "twos-double) · penalty: left × rate × multiplier · score: the deal's score"
)

_CSS = """
:root { --felt:#0f5132; --felt2:#14663f; --ink:#f5f5f0; --muted:#b9d3c4; --red:#c62828; --black:#1b1b1b; }
* { box-sizing: border-box; }
body { margin:0; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--felt); color:var(--ink); }
header { padding:10px 16px; background:#0b3d26; display:flex; flex-wrap:wrap; gap:12px; align-items:center; }
header h1 { font-size:18px; margin:0; }
header .meta { color:var(--muted); font-size:13px; }
.verdict { padding:2px 8px; border-radius:4px; font-weight:600; font-size:13px; }
.verdict.ok { background:#2e7d32; } .verdict.bad { background:#b71c1c; }
nav { display:flex; gap:6px; align-items:center; padding:8px 16px; background:#0d4a2e; flex-wrap:wrap; }
nav button { background:#e8f5e9; color:#0b3d26; border:0; border-radius:4px; padding:6px 10px; font-weight:600; cursor:pointer; }
nav input[type=range] { flex:1; min-width:160px; }
#where { min-width:220px; font-variant-numeric: tabular-nums; }
main { display:grid; grid-template-columns: 1fr 300px; gap:12px; padding:12px 16px; }
.seats { display:flex; flex-direction:column; gap:8px; }
.seat { background:var(--felt2); border-radius:8px; padding:8px 10px; border:2px solid transparent; }
.seat.to-act { border-color:#ffd54f; }
.seat.winner { border-color:#81c784; }
.seat .name { font-weight:600; margin-bottom:4px; display:flex; gap:8px; align-items:baseline; }
.seat .name .count { color:var(--muted); font-weight:400; font-size:13px; }
.hand { display:flex; flex-wrap:wrap; gap:3px; min-height:62px; }
.table { background:#0b3d26; border-radius:10px; padding:10px; min-height:120px; }
.table h2, aside h2 { font-size:14px; margin:0 0 6px; color:var(--muted); font-weight:600; text-transform:uppercase; letter-spacing:.05em; }
#table-cards { display:flex; gap:3px; min-height:62px; align-items:center; }
#table-name { margin-top:4px; font-weight:600; }
#trick { margin-top:8px; font-size:14px; }
#trick .move { display:inline-block; margin-right:10px; }
#note { margin-top:8px; min-height:22px; font-size:14px; }
#note.refused { color:#ffcc80; }
aside table { width:100%; border-collapse:collapse; font-size:14px; font-variant-numeric: tabular-nums; }
aside td, aside th { padding:3px 4px; text-align:right; border-bottom:1px solid #1e7a4d; }
aside td:first-child, aside th:first-child { text-align:left; }
#settlement { margin-top:12px; }
svg.card { width:44px; height:62px; flex:none; }
pre#errors { color:#ffab91; margin:0 16px; white-space:pre-wrap; }
#match-result { margin-top:10px; padding:8px 12px; border-radius:8px; background:#ffd54f; color:#0b3d26; font-weight:700; }
#match-result.unfinished { background:#ffcc80; }
.legend { color:var(--muted); font-size:12px; margin-top:6px; }
.red { color:#ef9a9a; }
"""

_JS = r"""
(function () {
  "use strict";
  var errors = document.getElementById("errors");
  window.addEventListener("error", function (e) { errors.textContent += "error: " + e.message + "\n"; });
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var SUIT = { D: "\u2666", C: "\u2663", H: "\u2665", S: "\u2660" };
  var steps = data.steps, current = 0;
  function el(id) { return document.getElementById(id); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function cardSvg(text) {
    var rank = text.slice(0, -1), suit = text.slice(-1), red = suit === "D" || suit === "H";
    var ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 44 62"); svg.setAttribute("class", "card");
    svg.setAttribute("data-card", text);
    var rect = document.createElementNS(ns, "rect");
    rect.setAttribute("x", "1"); rect.setAttribute("y", "1"); rect.setAttribute("width", "42");
    rect.setAttribute("height", "60"); rect.setAttribute("rx", "5"); rect.setAttribute("fill", "#fffdf7");
    rect.setAttribute("stroke", "#444"); svg.appendChild(rect);
    var color = red ? "#c62828" : "#1b1b1b";
    function label(x, y, size, content, anchor) {
      var t = document.createElementNS(ns, "text");
      t.setAttribute("x", x); t.setAttribute("y", y); t.setAttribute("font-size", size);
      t.setAttribute("fill", color); t.setAttribute("font-family", "Georgia, serif");
      t.setAttribute("font-weight", "bold"); t.setAttribute("text-anchor", anchor || "start");
      t.textContent = content; svg.appendChild(t);
    }
    label(5, 16, 14, rank === "T" ? "10" : rank); label(5, 29, 13, SUIT[suit]);
    label(22, 50, 24, SUIT[suit], "middle");
    return svg;
  }
  function cardsInto(node, texts) { clear(node); texts.forEach(function (c) { node.appendChild(cardSvg(c)); }); }
  function seatName(s) { return data.seats[s]; }
  function render(n) {
    n = Math.max(0, Math.min(steps.length - 1, n)); current = n;
    var st = steps[n], players = data.seats.length;
    el("where").textContent = "Step " + n + " / " + (steps.length - 1) + " \u00b7 deal " + st.deal +
      " \u00b7 trick " + st.trick;
    el("slider").value = String(n);
    var seatsNode = el("seats"); clear(seatsNode);
    for (var s = 0; s < players; s++) {
      var box = document.createElement("div"); box.className = "seat";
      box.setAttribute("data-seat", String(s));
      if (!st.over && st.to_act === s) box.className += " to-act";
      if (st.over && st.winner === s) box.className += " winner";
      var name = document.createElement("div"); name.className = "name";
      name.textContent = seatName(s) + (st.empty.indexOf(s) >= 0 ? " (left)" : "");
      var count = document.createElement("span"); count.className = "count";
      count.textContent = st.hands[s].length + (st.hands[s].length === 1 ? " card" : " cards") + " \u00b7 total " + st.totals[s];
      name.appendChild(count); box.appendChild(name);
      var hand = document.createElement("div"); hand.className = "hand"; cardsInto(hand, st.hands[s]);
      box.appendChild(hand); seatsNode.appendChild(box);
    }
    cardsInto(el("table-cards"), st.table);
    el("table-name").textContent = st.table.length ? st.table_name + " \u2014 " + seatName(st.table_seat) : "(table empty)";
    var trick = el("trick"); clear(trick);
    st.trick_moves.forEach(function (m) {
      var span = document.createElement("span"); span.className = "move";
      span.textContent = seatName(m[0]) + ": " + m[1]; trick.appendChild(span);
    });
    var note = el("note");
    note.className = st.refused ? "refused" : "";
    note.textContent = st.refused ? st.text + " \u2014 refused: " + st.message : st.message;
    var body = el("totals-body"); clear(body);
    for (var t = 0; t < players; t++) {
      var row = document.createElement("tr");
      [seatName(t), st.hands[t].length, st.deal_scores.length ? st.deal_scores[t] : "", st.totals[t]].forEach(function (v) {
        var td = document.createElement("td"); td.textContent = String(v); row.appendChild(td);
      });
      body.appendChild(row);
    }
    var settle = el("settlement"); clear(settle);
    var card = data.settlements[String(st.deal)];
    if (st.over && card) {
      var h = document.createElement("h2"); h.textContent = "Settlement \u00b7 deal " + st.deal; settle.appendChild(h);
      var table = document.createElement("table");
      var head = document.createElement("tr");
      ["seat", "left", "rate", "\u00d7", "penalty", "score"].forEach(function (v) {
        var th = document.createElement("th"); th.textContent = v; head.appendChild(th);
      });
      table.appendChild(head);
      card.forEach(function (line) {
        var row = document.createElement("tr");
        line.forEach(function (v) { var td = document.createElement("td"); td.textContent = String(v); row.appendChild(td); });
        table.appendChild(row);
      });
      settle.appendChild(table);
    }
    el("match-result").hidden = n !== steps.length - 1;
    document.body.setAttribute("data-step", String(n));
    document.body.setAttribute("data-ready", "1");
    if (location.hash !== "#step=" + n) { history.replaceState(null, "", "#step=" + n); }
  }
  function trickStart(n, direction) {
    var st = steps[n], i = n;
    if (direction > 0) {
      while (i < steps.length - 1 && steps[i].deal === st.deal && steps[i].trick === st.trick) i++;
      return i;
    }
    i = n - 1;
    if (i < 0) return 0;
    var target = steps[i];
    while (i > 0 && steps[i - 1].deal === target.deal && steps[i - 1].trick === target.trick) i--;
    return i;
  }
  function fromHash() {
    var m = /step=(\d+)/.exec(location.hash);
    return m ? parseInt(m[1], 10) : 0;
  }
  el("first").onclick = function () { render(0); };
  el("prev").onclick = function () { render(current - 1); };
  el("next").onclick = function () { render(current + 1); };
  el("last").onclick = function () { render(steps.length - 1); };
  el("prev-trick").onclick = function () { render(trickStart(current, -1)); };
  el("next-trick").onclick = function () { render(trickStart(current, 1)); };
  el("slider").max = String(steps.length - 1);
  el("slider").oninput = function () { render(parseInt(this.value, 10)); };
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowRight") render(current + 1);
    else if (e.key === "ArrowLeft") render(current - 1);
    else if (e.key === "ArrowDown") render(trickStart(current, 1));
    else if (e.key === "ArrowUp") render(trickStart(current, -1));
  });
  window.addEventListener("hashchange", function () { var n = fromHash(); if (n !== current) render(n); });
  render(fromHash());
})();
"""


_CARD_TEXT = re.compile(r"(?<![\w])([2-9TJQKA][DCHS])(?![\w])")


def _faces(text: str) -> str:
    """A step's text with its cards as their faces show them (``p2 10♦``, not ``p2 TD``): the page
    shows moves in the words of the rest of the page and the service's sentences."""
    return _CARD_TEXT.sub(lambda found: Card.parse(found[1]).pretty, text)


def _page_data(log: GameLog, verdict: AuditVerdict) -> dict[str, Any]:
    steps = []
    for step in verdict.steps:
        steps.append(
            {
                "deal": step.deal_number,
                "trick": step.trick,
                "actor": step.actor,
                "text": _faces(step.text),
                "message": step.message,
                "refused": step.refused,
                "hands": [mask_text(hand).split() for hand in step.hands],
                "table": [str(card) for card in cards_of(step.table)],
                "table_name": step.table_name,
                "table_seat": step.table_seat,
                "to_act": step.to_act,
                "trick_moves": [[seat, _faces(move)] for seat, move in step.trick_moves],
                "over": step.deal_over,
                "winner": step.winner,
                "deal_scores": list(step.deal_scores),
                "totals": list(step.totals),
                "empty": list(step.empty_seats),
            }
        )
    settlements: dict[str, list[list[Any]]] = {}
    for record in log.deals:
        if record.result is None:
            continue
        rows = []
        for line in record.result.seats:
            name = seat_label(line.seat, log.seat_name(line.seat))
            if line.seat == record.result.winner:
                rows.append([name + " \u2605", line.cards_left, "", "", "wins", line.score])
            else:
                mult = f"\u00d7{line.multiplier}" if line.multiplier != 1 else ""
                rows.append([name, line.cards_left, line.rate, mult, line.penalty, line.score])
        settlements[str(record.number)] = rows
    labels = [seat_label(seat, info.name) for seat, info in enumerate(log.seats)]
    return {"seats": labels, "steps": steps, "settlements": settlements}


def _deals(count: int) -> str:
    return f"{count} deal" if count == 1 else f"{count} deals"


def match_result_text(log: GameLog) -> tuple[str, bool]:
    """The banner of the page's last step, and whether the match is over."""
    result = log.result

    def names(seats: tuple[int, ...]) -> str:
        return ", ".join(seat_label(seat, log.seat_name(seat)) for seat in seats)

    unfinished = next((d.number for d in log.deals if d.result is None), None)
    tail = f"; deal {unfinished} unfinished (bigtwo play --resume FILE goes on with it)" if unfinished else ""
    if result is None:
        return "Match not over: no deal finished yet" + tail, False
    totals = ", ".join(f"p{seat + 1} {total}" for seat, total in enumerate(result.totals))
    rule = how_to_win(log.ruleset)
    if result.over:
        return (
            f"Match over after {_deals(result.deals)} \u00b7 winner: {names(result.winners)} \u00b7 totals {totals} "
            f"({rule})",
            True,
        )
    return (
        f"Match not over: {_deals(result.deals)} finished{tail} \u00b7 leading: {names(result.winners)} "
        f"\u00b7 totals {totals} ({rule})",
        False,
    )


def render_html(log: GameLog, verdict: AuditVerdict, *, title: str = "Big Two replay") -> str:
    """The page as text (deterministic: the same log gives the same page)."""
    data = json.dumps(_page_data(log, verdict), ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    data = data.replace("</", "<\\/")  # never close the script element early
    ok = verdict.ok
    banner, over = match_result_text(log)
    meta = (
        f"{log.ruleset.preset} \u00b7 {log.players} players \u00b7 rules {log.ruleset.fingerprint} \u00b7 "
        f"{_deals(len(log.deals))} \u00b7 {verdict.signature.value}"
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{html.escape(title)}</title>
<style>{_CSS}</style>
</head>
<body data-ready="0">
<header>
<h1>{html.escape(title)}</h1>
<span class="meta">{html.escape(meta)}</span>
<span id="verdict" class="verdict {"ok" if ok else "bad"}">{html.escape(verdict.summary())}</span>
</header>
<nav>
<button id="first" title="first step">&#xAB; first</button>
<button id="prev-trick" title="previous trick (&#x2191;)">&#x2039;&#x2039; trick</button>
<button id="prev" title="previous step (&#x2190;)">&#x2039; step</button>
<button id="next" title="next step (&#x2192;)">step &#x203A;</button>
<button id="next-trick" title="next trick (&#x2193;)">trick &#x203A;&#x203A;</button>
<button id="last" title="last step">last &#xBB;</button>
<input id="slider" type="range" min="0" max="0" value="0">
<span id="where"></span>
</nav>
<pre id="errors"></pre>
<main>
<section>
<div class="table"><h2>Table</h2><div id="table-cards"></div><div id="table-name"></div><div id="trick"></div><div id="note"></div></div>
<div id="match-result" class="{"over" if over else "unfinished"}" hidden>{html.escape(banner)}</div>
<div id="seats" class="seats" style="margin-top:12px"></div>
</section>
<aside>
<h2>Scores</h2>
<table><thead><tr><th>seat</th><th>cards</th><th>deal</th><th>total</th></tr></thead><tbody id="totals-body"></tbody></table>
<div id="settlement"></div>
<p class="legend">Settlement card: {html.escape(SETTLEMENT_LEGEND)}</p>
</aside>
</main>
<script id="replay-data" type="application/json">{data}</script>
<script>{_JS}</script>
</body>
</html>
"""
