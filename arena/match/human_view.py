"""What a person at the terminal sees in their seat: the table drawn with rich.

Everything drawn comes from the seat's own observations (the ones the referee hands the
seat, exactly what a bot in that seat gets), so nothing hidden can show: the seat's hand
with ranks and suits, the trick, threshold or pile, every seat's public zones and scores
as the rules make them public, and the news since the seat's previous decision (what the
others played, how each trick ended and who took it). ``TableView`` keeps no state but the
card table; the agent passes the previous observation in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

# The corner of a card: "A" for an Ace (high in Palace, 1 in the other games, never "1"),
# 2-9, "C" Crown, "P" Pawn, "Ct" Court, a star for the Excuse (shared with the replay page).
RANK_LABELS = {"Ace": "A", "Crown": "C", "Pawn": "P", "Court": "Ct", "Excuse": "\u2605"}
SUIT_SYMBOLS = {
    "Moons": "\u263e",
    "Suns": "\u2600",
    "Waves": "\u2248",
    "Leaves": "\u2766",
    "Wyrms": "\u2621",
    "Knots": "\u2318",
}
SUIT_STYLES = {
    "Moons": "bright_black",
    "Suns": "yellow",
    "Waves": "blue",
    "Leaves": "green",
    "Wyrms": "red",
    "Knots": "dark_orange3",
}


def rank_label(rank: str) -> str:
    return RANK_LABELS.get(rank, rank)


class TableView:
    def __init__(self, seat: int, game: str, bots: Sequence[str], cards: Sequence[dict[str, Any]]) -> None:
        self.seat = seat
        self.game = game
        self.bots = list(bots)
        self.cards = {c["id"]: c for c in cards}

    # ---- pieces ------------------------------------------------------------------------

    def who(self, s: int) -> str:
        return "you" if s == self.seat else f"seat {s} ({self.bots[s]})"

    def card(self, cid: int | None) -> Text:
        c = self.cards.get(cid) if cid is not None else None
        if c is None:
            return Text("?")
        out = Text(rank_label(c["rank"]), style="bold")
        for suit in c["suits"]:
            out.append(SUIT_SYMBOLS.get(suit, suit[:1]), style=SUIT_STYLES.get(suit, ""))
        out.append(" " + c["name"])
        return out

    def card_list(self, ids: Sequence[int] | None, empty: str = "-") -> Text:
        if not ids:
            return Text(empty, style="dim")
        return Text(", ").join(self.card(c) for c in ids)

    def action(self, a: dict[str, Any]) -> Text:
        """``[id] text`` with every card the action names drawn with its rank and suits."""
        ids = list(a.get("cards") or ([a["card"]] if a.get("card") is not None else []))
        ids += [c for pair in a.get("swaps") or [] for c in pair]
        text = Text(f"[{a['id']}] ", style="bold cyan")
        rest = str(a["text"])
        names = sorted(((self.cards[c]["name"], c) for c in set(ids) if c in self.cards), key=lambda nc: -len(nc[0]))
        while rest:
            hits = [(rest.find(n), n, c) for n, c in names if rest.find(n) >= 0]
            if not hits:
                text.append(rest)
                break
            at, name, cid = min(hits, key=lambda h: (h[0], -len(h[1])))
            text.append(rest[:at])
            text.append_text(self.card(cid))
            rest = rest[at + len(name) :]
        return text

    def legal(self, legal: Sequence[dict[str, Any]]) -> RenderableType:
        return Columns([self.action(a) for a in legal], padding=(0, 3), equal=False)

    # ---- the news since the previous decision ------------------------------------------

    def news(self, prev: dict[str, Any] | None, obs: dict[str, Any]) -> list[Text]:
        return getattr(self, "_news_" + self.game.replace("-", "_"), lambda p, o: [])(prev, obs)

    def _trick_line(self, title: str, trick: dict[str, Any]) -> Text:
        line = Text(f"{title}: ")
        for i, play in enumerate(trick["plays"]):
            if i:
                line.append(" · ")
            line.append(f"{self.who(play['seat'])} ")
            line.append_text(self.card(play["card"]))
            if i == trick.get("control"):
                line.append("*", style="bold")
        if trick.get("winner") is not None:
            line.append(f"  \u2192 won by {self.who(trick['winner'])}", style="bold")
        return line

    def _news_tightwad(self, prev: dict[str, Any] | None, obs: dict[str, Any]) -> list[Text]:
        out: list[Text] = []
        if prev is None:
            return out
        end = obs.get("last_round_end")
        ended = (
            end
            if end and end.get("round") == prev["round"] and (obs["round"] != prev["round"] or obs["over"])
            else None
        )
        if prev["round"] == obs["round"]:
            first = len(prev["tricks"])
        else:
            if ended:
                out.append(self._trick_line(f"round {prev['round']}, last trick", ended["last_trick"]))
            first = 0
        for k, trick in enumerate(obs["tricks"][first:], first + 1):
            out.append(self._trick_line(f"trick {k}", trick))
        if ended and ended.get("penalty"):
            pen = ended["penalty"]
            line = Text(f"round {prev['round']} over: {self.who(pen['seat'])} took ", style="bold")
            line.append_text(self.card(pen["card"]))
            line.append(f" as a penalty ({pen['points']} points)", style="bold")
            out.append(line)
        return out

    def _dw_trick_line(self, k: int, t: dict[str, Any]) -> Text:
        line = Text(f"trick {k}: threshold ")
        line.append_text(self.card_list(t["threshold"]))
        line.append(f" = {t['threshold_total']}; played ")
        for s, c in enumerate(t["played"]):
            if s:
                line.append(" · ")
            line.append(f"{self.who(s)} ")
            line.append_text(self.card(c))
        rule = {"highest": "highest wins", "lowest": "lowest wins"}.get(str(t.get("rule")), "no one wins")
        line.append(f"; total {t['total']}, {rule}")
        prizes = t.get("prizes") or []
        if prizes:
            for p in prizes:
                line.append(f" \u2192 {self.who(p['seat'])} took ", style="bold")
                line.append_text(self.card(p["card"]))
        elif t.get("winners"):
            line.append(" \u2192 won by " + ", ".join(self.who(w) for w in t["winners"]), style="bold")
        else:
            line.append(" \u2192 all discarded", style="bold")
        return line

    def _news_divers_weights(self, prev: dict[str, Any] | None, obs: dict[str, Any]) -> list[Text]:
        out: list[Text] = []
        if prev is None:
            return out
        if prev["hand_number"] == obs["hand_number"]:
            first = len(prev["tricks"])
        else:
            ended = obs.get("previous_hand") or {}
            for k, t in enumerate((ended.get("tricks") or [])[len(prev["tricks"]) :], len(prev["tricks"]) + 1):
                out.append(self._dw_trick_line(k, t))
            if obs.get("hand_scores"):
                last = obs["hand_scores"][-1]
                out.append(
                    Text(
                        f"hand {prev['hand_number']} over: points "
                        + ", ".join(f"{self.who(s)} {p}" for s, p in enumerate(last)),
                        style="bold",
                    )
                )
            first = 0
        for k, t in enumerate(obs["tricks"][first:], first + 1):
            out.append(self._dw_trick_line(k, t))
        if prev["hand_number"] == obs["hand_number"]:
            for s, (a, b) in enumerate(zip(prev.get("bids") or [], obs.get("bids") or [])):
                if a is None and b is not None and s != self.seat:
                    out.append(Text(f"{self.who(s)} bid {b}"))
        return out

    def _news_palace(self, prev: dict[str, Any] | None, obs: dict[str, Any]) -> list[Text]:
        out = []
        for e in obs.get("events") or []:
            who = self.who(e["seat"]) if "seat" in e else ""
            t = e["type"]
            line = Text()
            if t == "play":
                line.append(f"{who} played ")
                line.append_text(self.card_list(e["cards"]))
                if e.get("from_face_up"):
                    line.append(" (from face up: ")
                    line.append_text(self.card_list(e["from_face_up"]))
                    line.append(")")
            elif t == "draw":
                line.append(f"{who} drew {e['count']}", style="dim")
            elif t == "reveal":
                line.append(f"{who} turned face-down {e['position']}: ")
                line.append_text(self.card(e["card"]))
                line.append("" if e.get("legal") else " (not legal: it goes back, face up to all)")
            elif t == "blow_up":
                why = "Aces" if e.get("cause") == "ace" else "four of a kind"
                line.append(
                    f"the pile blows up ({why}, by {who}): {len(e['removed'])} cards out of the game", style="bold"
                )
                if e.get("trump_ace") is not None:
                    line.append("; trump: ")
                    line.append_text(self.card(e["trump_ace"]))
            elif t == "eat":
                line.append(f"{who} picked up the pile ({len(e['cards'])} cards)", style="bold")
            elif t == "out":
                line.append(
                    f"{who} {'are' if e['seat'] == self.seat else 'is'} out, place {e['place'] + 1}", style="bold"
                )
            elif t == "loser":
                line.append(
                    f"{who} {'are' if e['seat'] == self.seat else 'is'} the last with cards: the loser", style="bold"
                )
            elif t == "swaps":
                if not e["swaps"]:
                    line.append("set-up: nobody swapped")
                for i, (s, hand, up) in enumerate(e["swaps"]):
                    line.append("; " if i else "set-up swaps: ")
                    line.append(f"{self.who(s)} put ")
                    line.append_text(self.card(hand))
                    line.append(" face up for ")
                    line.append_text(self.card(up))
            out.append(line)
        return out

    # ---- the table now ----------------------------------------------------------------

    def table(self, obs: dict[str, Any]) -> RenderableType:
        return getattr(self, "_table_" + self.game.replace("-", "_"), lambda o: Text(""))(obs)

    def _seat_table(self, *columns: str) -> Table:
        t = Table(box=None, padding=(0, 2), show_edge=False, header_style="bold")
        t.add_column("seat")
        for c in columns:
            t.add_column(c)
        return t

    def _table_tightwad(self, obs: dict[str, Any]) -> RenderableType:
        head = Text(
            f"round {obs['round']} \u00b7 trick {obs['trick_number']} of {obs['tricks_in_round']} "
            f"\u00b7 dealer {self.who(obs['dealer'])} \u00b7 set aside this round: {obs['set_aside']}"
        )
        trick = obs["trick"]
        now = Text("trick: ")
        if not trick["plays"]:
            now.append("(you lead)" if obs["to_move"] == [self.seat] else "(empty)", style="dim")
        for i, play in enumerate(trick["plays"]):
            if i:
                now.append(" · ")
            now.append(f"{self.who(play['seat'])} ")
            now.append_text(self.card(play["card"]))
            if i == trick.get("control"):
                now.append("* controls", style="bold")
        parts: list[RenderableType] = [head, now]
        if obs["trick_number"] == obs["tricks_in_round"] and not obs["over"]:
            parts.append(
                Text(
                    "last trick of the round: its winner takes the controlling card as a penalty "
                    "(worth its rank: Ace 1 ... Crown 10)",
                    style="italic",
                )
            )
        seats = self._seat_table("hand", "penalty points", "penalty cards")
        for s in range(len(self.bots)):
            seats.add_row(
                self.who(s),
                str(obs["hand_sizes"][s]),
                str(obs["penalty_points"][s]),
                self.card_list(obs["penalty_cards"][s]),
            )
        parts.append(seats)
        return Group(*parts)

    def _table_divers_weights(self, obs: dict[str, Any]) -> RenderableType:
        trick = f"trick {obs['trick_number']} of 5" if obs["trick_number"] else "before the first trick"
        head = Text(
            f"hand {obs['hand_number']} of {obs['hands']} \u00b7 {trick} "
            f"\u00b7 dealer {self.who(obs['dealer'])} \u00b7 deck {obs['deck_count']}"
            + (f" \u00b7 target {obs['target']}" if obs.get("target") else "")
        )
        if obs["threshold"]:
            thr = Text("threshold: ")
            thr.append_text(self.card_list(obs["threshold"]))
            thr.append(f" = {obs['threshold_total']}", style="bold")
            thr.append("  (under it the highest card wins, over it the lowest, equal: no one)", style="dim")
        else:
            thr = Text("bidding: each seat bids the tricks it will win (0-5), in turn from the dealer's left")
        parts: list[RenderableType] = [head, thr]
        if obs.get("reveal"):
            played = Text("played: ")
            for s, c in enumerate(obs["played"]):
                if s:
                    played.append(" · ")
                played.append(f"{self.who(s)} ")
                played.append_text(self.card(c))
            r = obs["reveal"]
            played.append(f"; total {r['total']}, {r['rule']} wins: " + ", ".join(self.who(w) for w in r["winners"]))
            parts.append(played)
        cols = ["hand", "prizes", "this hand", "total"]
        if obs.get("bidding"):
            cols[2:2] = ["bid", "tricks"]
        seats = self._seat_table(*cols)
        for s in range(len(self.bots)):
            row: list[Any] = [self.who(s), str(obs["hand_sizes"][s]), self.card_list(obs["prizes"][s])]
            if obs.get("bidding"):
                bid = obs["bids"][s]
                row += ["-" if bid is None else str(bid), str(obs["tricks_won"][s])]
            row += [str(obs["hand_points"][s]), str(obs["scores"][s])]
            seats.add_row(*row)
        parts.append(seats)
        return Group(*parts)

    def _table_palace(self, obs: dict[str, Any]) -> RenderableType:
        pile = obs["pile"]
        head = Text(
            f"phase {obs['phase']} \u00b7 draw pile {obs['draw_pile']} \u00b7 out of the game {len(obs['removed'])}"
        )
        if obs.get("trump_ace") is not None:
            head.append(" \u00b7 trump ")
            head.append_text(self.card(obs["trump_ace"]))
        top = Text(f"pile ({len(pile)}, {obs['pile_mode']}): ")
        if len(pile) > 6:
            top.append("\u2026 ", style="dim")
        top.append_text(self.card_list(pile[-6:], empty="(empty: anything goes)"))
        if obs.get("reference") is not None:
            top.append("  to answer: ", style="bold")
            top.append_text(self.card(obs["reference"]))
        seats = self._seat_table("hand", "face up", "face down")
        for s, t in enumerate(obs["tableaux"]):
            down = Text(str(t["face_down"]))
            if t["known_face_down"]:
                down.append(" (known: ")
                down.append_text(self.card_list([c for _i, c in t["known_face_down"]]))
                down.append(")")
            name = self.who(s) + ("  [out]" if t["out"] else "")
            seats.add_row(name, str(t["hand_size"]), self.card_list(t["face_up"]), down)
        return Group(head, top, seats)

    def hand(self, obs: dict[str, Any]) -> Text:
        line = Text("your hand: ", style="bold")
        line.append_text(self.card_list(obs.get("hand"), empty="(empty)"))
        return line
