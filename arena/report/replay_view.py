"""A visual replay of one match: one self-contained HTML file, no server, no network.

``replay_html(record)`` re-plays the match record through the engine and keeps, for
every decision, each seat's own observation, the deciding seat's legal actions, the
chosen one, its time and any fault. The page draws the table as cards (rank and suit
symbols), each seat's hand and the trick, pile or threshold, and steps through the
decisions with buttons, arrow keys and a slider. It switches between the omniscient
view (every seat's hand: the union of all seats' observations) and one seat's view,
which draws exactly that seat's observation and nothing else. A fragment ``#d40`` in the
address opens decision 40, and stepping keeps the fragment current, so a decision can be linked.
Palace's public events (plays, draws, reveals, eats, blow-ups) are drawn as a running log.

The frames travel gzip-compressed and base64-encoded inside the page and are opened
by the browser's own DecompressionStream, so a long Palace match stays small.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.inert import visible
from arena.match.human_view import rank_label  # the corner a card shows: A for an Ace, never 1
from games import GameError, get_game

MAX_LEGAL_SHOWN = 80  # Palace's set-up swaps can offer hundreds of actions


def replay_frames(record: dict[str, Any]) -> dict[str, Any]:
    """The page's data: match facts, the card table and one frame per decision (+ the end)."""
    try:
        state = get_game(record["game"]).new_game(record["players"], record["deal_seed"], record["options"])
    except (GameError, KeyError, TypeError) as err:
        raise ArenaError(f"match {record.get('match_id')}: cannot rebuild the deal ({err})") from None
    faults = {f["decision"]: (seat, f) for seat, f in enumerate(record.get("faults") or []) if f}
    frames = []
    logged = record["game"] == "palace"
    for i, d in enumerate(record["decisions"]):
        seat, action = d["seat"], d["action"]
        if state.is_over() or seat not in state.to_move() or not 0 <= action < len(state.legal_actions(seat)):
            raise ArenaError(f"match {record.get('match_id')}: decision {i} does not replay on this engine; "
                             f"check it with arena replay")
        legal = [state.action_text(seat, a) for a in state.legal_actions(seat)]
        fault = faults.get(i)
        frames.append({
            "n": i, "seat": seat, "action": action, "text": d.get("text"), "ms": d.get("ms"),
            "status": d.get("status", "ok"), "legal_count": len(legal),
            "legal": _legal_window(legal, action),
            "fault": None if fault is None else {"seat": fault[0], **fault[1]},
            "obs": [state.observation(s) for s in range(record["players"])],
        })
        state.apply(seat, action)
        if logged:  # right after its own decision, a seat's events are exactly what that decision did
            frames[-1]["events"] = state.observation(seat).get("events", [])
    frames.append({"n": len(record["decisions"]), "end": True,
                   "obs": [state.observation(s) for s in range(record["players"])]})
    return {
        "match_id": record["match_id"], "game": record["game"], "players": record["players"],
        "options": record.get("options"), "bots": [b["name"] for b in record["bots"]],
        "seats": record.get("seats") or [], "cards": [{**c, "label": rank_label(c["rank"])} for c in state.card_table()],
        "frames": frames,
    }


def _legal_window(legal: list[str], chosen: int) -> list[list[Any]]:
    """[[action id, text], ...]: all of them, or a window around the chosen one."""
    ids = range(len(legal))
    if len(legal) > MAX_LEGAL_SHOWN:
        lo = max(0, min(chosen - MAX_LEGAL_SHOWN // 2, len(legal) - MAX_LEGAL_SHOWN))
        ids = range(lo, lo + MAX_LEGAL_SHOWN)
    return [[a, legal[a]] for a in ids]


def replay_html(record: dict[str, Any]) -> str:
    """The whole page as text."""
    data = replay_frames(record)
    blob = base64.b64encode(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), mtime=0)).decode()
    title = html.escape(visible(f"{record['game']} · {record['match_id']}", keep=""))
    return _PAGE.replace("__TITLE__", title).replace("__DATA__", blob)


def write_replay_html(record: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    try:
        path.write_text(replay_html(record), encoding="utf-8")
    except OSError as err:
        raise ArenaError(f"{path}: cannot write the replay ({err.strerror}); choose a writable path") from None
    return path


_PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f4f1ea;color:#222}
header{padding:10px 16px;background:#2f3b2f;color:#fff}
header h1{font-size:17px;margin:0}
#controls{display:flex;gap:8px;align-items:center;padding:8px 16px;background:#e7e2d6;flex-wrap:wrap}
#controls input[type=range]{flex:1;min-width:200px}
main{display:grid;grid-template-columns:1fr 340px;gap:12px;padding:12px 16px}
.seat{background:#fff;border:1px solid #ccc;border-radius:6px;padding:6px 8px;margin-bottom:8px}
.seat.tomove{border:2px solid #2a7}
.seat.faulted{border:2px solid #c33;background:#fff3f3}
.seat h3{margin:0 0 4px;font-size:14px}
.row{display:flex;flex-wrap:wrap;gap:3px;align-items:center;margin:2px 0}
.label{color:#666;font-size:12px;margin-right:4px}
.card .name{font-size:9px;max-width:44px;overflow:hidden;white-space:nowrap}
.card{display:inline-flex;flex-direction:column;align-items:center;justify-content:center;width:46px;height:62px;
 border:1px solid #888;border-radius:5px;background:#fffdf7;font-size:11px;box-shadow:1px 1px 0 #bbb}
.card .rank{font-weight:bold;font-size:15px}
.card .suits{font-size:13px;letter-spacing:1px}
.card.back{background:repeating-linear-gradient(45deg,#456 0 4px,#567 4px 8px);color:transparent}
.card.chosen{outline:3px solid #2a7}
.s-Moons{color:#556}.s-Suns{color:#c80}.s-Waves{color:#17a}.s-Leaves{color:#292}.s-Wyrms{color:#a22}.s-Knots{color:#840}
#panel{background:#fff;border:1px solid #ccc;border-radius:6px;padding:8px}
#legal{max-height:360px;overflow:auto;margin:0;padding:0;list-style:none}
#legal li{display:flex;gap:6px}
#legal .num{flex:none;text-align:right;color:#666;font-variant-numeric:tabular-nums}
#legal li.chosen{font-weight:bold;color:#174;background:#e6f4ea}
#log{max-height:220px;overflow:auto;margin:6px 0 0;padding:0;list-style:none;font-size:12px}
#log li.new{font-weight:bold}
.fault{color:#b00;font-weight:bold}
#public{background:#fff;border:1px solid #ccc;border-radius:6px;padding:6px 8px;margin-bottom:8px}
details pre{white-space:pre-wrap;font-size:11px;max-height:300px;overflow:auto}
</style></head>
<body>
<header><h1>__TITLE__</h1><div id="facts"></div></header>
<div id="controls">
 <button id="first" title="first (Home)">|&#x25C0;</button><button id="prev" title="previous (Left arrow)">&#x25C0;</button>
 <button id="next" title="next (Right arrow)">&#x25B6;</button><button id="last" title="last (End)">&#x25B6;|</button>
 <input id="slider" type="range" min="0" value="0"><span id="pos"></span>
 <label>view <select id="view"></select></label>
</div>
<main><section><div id="public"></div><div id="seats"></div></section>
<aside id="panel"><div id="decision"></div><ol id="legal"></ol>
<div id="logbox" hidden><h4>events</h4><ol id="log"></ol></div>
<details><summary>this view's observation (JSON)</summary><pre id="obsjson"></pre></details></aside></main>
<script id="data" type="application/octet-stream">__DATA__</script>
<script>
"use strict";
const SUIT = {Moons:"\u263E",Suns:"\u2600",Waves:"\u2248",Leaves:"\u2766",Wyrms:"\u2621",Knots:"\u2318"};
let D = null, cur = 0, view = "all", CARDS = new Map(), LOG = null;
function el(tag, cls, text){const e=document.createElement(tag); if(cls) e.className=cls; if(text!==undefined) e.textContent=text; return e;}
function card(id, extra){
  const c = CARDS.get(id) || {name:"card "+id, value:"?", suits:[]}; const e = el("div", "card"+(extra?" "+extra:""));
  e.dataset.card = id; e.title = c.name;
  e.append(el("span","rank", c.label || String(c.value)));
  const s = el("span","suits"); for(const n of c.suits){const x=el("span","s-"+n,SUIT[n]||n[0]); s.append(x);} e.append(s);
  e.append(el("span","name", c.name.replace(/^The /,"").slice(0,9)));
  return e;
}
function back(n){const r=[]; for(let i=0;i<n;i++){const b=el("div","card back","?"); b.dataset.back="1"; r.push(b);} return r;}
function cards(label, ids, chosen){const r=el("div","row"); r.append(el("span","label",label)); for(const id of ids||[]) r.append(card(id, chosen===id?"chosen":"")); if(!ids||!ids.length) r.append(el("span","label","\u2013")); return r;}
function seatName(s){return "seat "+s+" \u00B7 "+D.bots[s];}

function publicPanel(o, f){
  const p = document.getElementById("public"); p.replaceChildren();
  const g = D.game;
  const line = (t)=>p.append(el("div","row",t));
  line("phase "+(o.phase||"-")+(o.over?" \u00B7 game over":""));
  if(g==="tightwad"){
    line("round "+o.round+" \u00B7 trick "+o.trick_number+" of "+o.tricks_in_round);
    const r=el("div","row"); r.append(el("span","label","trick"));
    for(const pl of (o.trick&&o.trick.plays)||[]){ const w=el("span"); w.append(el("span","label","s"+pl.seat)); w.append(card(pl.card)); r.append(w);} p.append(r);
    if(o.tricks&&o.tricks.length){ const last=o.tricks[o.tricks.length-1]; const r2=el("div","row"); r2.append(el("span","label","last trick (won by seat "+last.winner+")")); for(const pl of last.plays) r2.append(card(pl.card)); p.append(r2);}
  } else if(g==="divers-weights"){
    line("hand "+o.hand_number+" of "+o.hands+" \u00B7 trick "+o.trick_number+" \u00B7 threshold total "+o.threshold_total);
    p.append(cards("threshold", o.threshold||[]));
    const r=el("div","row"); r.append(el("span","label","played"));
    (o.played||[]).forEach((c,s)=>{ if(c!==null&&c!==undefined){ r.append(el("span","label","s"+s)); r.append(card(c)); }}); p.append(r);
  } else if(g==="palace"){
    line("pile mode "+o.pile_mode+" \u00B7 draw pile "+o.draw_pile+(o.trump_suit?" \u00B7 trump "+o.trump_suit:""));
    const pile=o.pile||[]; p.append(cards("pile (top "+Math.min(8,pile.length)+" of "+pile.length+")", pile.slice(-8)));
  }
}
function seatBox(s, o, f, own){
  const box = el("div","seat"); box.dataset.seat = s;
  if(f && !f.end && f.seat===s) box.classList.add("tomove");
  const st = D.seats[s]||{};
  if(st.fault && (f.end || (st.fault.decision!==undefined && f.n>=st.fault.decision))) box.classList.add("faulted");
  const h = el("h3",null,seatName(s)); if(f.end && st.place!==undefined) h.textContent += " \u00B7 place "+(st.place+1)+" \u00B7 score "+st.score; box.append(h);
  const chosenCard = (f && !f.end && f.seat===s && own) ? chosenCardOf(f) : undefined;
  if(own){ box.append(cards("hand", own.hand, chosenCard)); }
  else {
    const n = o.hand_sizes ? o.hand_sizes[s] : (o.tableaux ? o.tableaux[s].hand_size : 0);
    const r=el("div","row"); r.append(el("span","label","hand ("+n+")")); r.append(...back(n)); box.append(r);
  }
  if(D.game==="palace" && o.tableaux){ const t=o.tableaux[s]; box.append(cards("face up", t.face_up));
    const r=el("div","row"); r.append(el("span","label","face down")); const known={}; for(const [i,c] of t.known_face_down) known[i]=c;
    for(const i of t.face_down_positions){ if(known[i]!==undefined) r.append(card(known[i])); else r.append(...back(1)); } box.append(r);
    if(t.out) box.append(el("div","label","out")); }
  if(D.game==="divers-weights" && o.prizes) box.append(cards("prizes", o.prizes[s]));
  if(D.game==="tightwad" && o.penalties) box.append(el("div","label","penalties "+JSON.stringify(o.penalties[s])));
  if(f.fault && f.fault.seat===s) box.append(el("div","fault","fault: "+f.fault.kind+(f.fault.detail?" \u2013 "+f.fault.detail:"")));
  return box;
}
function chosenCardOf(f){const o=f.obs[f.seat]; const la=(o.legal_actions||[]).find(a=>a.id===f.action); return la&&la.card!==undefined?la.card:undefined;}

function draw(){
  const f = D.frames[cur];
  document.getElementById("slider").value = cur;
  document.getElementById("pos").textContent = f.end ? "end ("+cur+" decisions)" : "decision "+cur+" / "+(D.frames.length-1);
  const seats = document.getElementById("seats"); seats.replaceChildren();
  const viewer = view==="all" ? null : Number(view);
  const base = f.obs[viewer===null ? (f.end ? 0 : f.seat) : viewer];
  publicPanel(base, f);
  for(let s=0;s<D.players;s++) seats.append(seatBox(s, base, f, (viewer===null||viewer===s) ? f.obs[s] : null));
  const dec = document.getElementById("decision"); dec.replaceChildren();
  const legal = document.getElementById("legal"); legal.replaceChildren();
  if(f.end){ dec.append(el("div",null,"game over")); }
  else {
    dec.append(el("div",null,seatName(f.seat)+" chose: "+f.text));
    dec.append(el("div","label","action "+f.action+" of "+f.legal_count+" legal \u00B7 "+(f.ms===null||f.ms===undefined?"no time":f.ms+" ms")+" \u00B7 "+f.status));
    if(f.fault) dec.append(el("div","fault","fault at this decision: seat "+f.fault.seat+" "+f.fault.kind));
    if(viewer===null || viewer===f.seat){
      const width = String(f.legal.length ? f.legal[f.legal.length-1][0] : 0).length + 1;
      for(const [id,t] of f.legal){ const li=el("li", id===f.action?"chosen":""); li.dataset.action=id;
        const num=el("span","num",id+"."); num.style.minWidth=width+"ch"; li.append(num, el("span","text",t)); legal.append(li); }
      const chosen = legal.querySelector("li.chosen");
      if(chosen) chosen.scrollIntoView({block:"center"});
    }
  }
  drawLog(f);
  document.getElementById("obsjson").textContent = JSON.stringify(viewer===null ? f.obs : f.obs[viewer], null, 1);
  document.body.dataset.frame = cur; document.body.dataset.view = view;
}
function drawLog(f){
  if(!LOG) return;
  const log = document.getElementById("log"); log.replaceChildren();
  // everything public that happened before this decision; the previous decision's events in bold
  for(let i=0;i<LOG.length && i<cur;i++) for(const e of LOG[i]){ log.append(el("li", i===cur-1?"new":"", eventText(e))); }
  if(!log.children.length) log.append(el("li","label","nothing yet"));
  log.scrollTop = log.scrollHeight;
}
function cn(id){const c=CARDS.get(id); return c?c.name:"card "+id;}
function cns(ids){return (ids||[]).map(cn).join(", ");}
function eventText(e){
  const s = "seat "+e.seat;
  switch(e.type){
    case "play": return s+" played "+cns(e.cards)+(e.from_face_up&&e.from_face_up.length?" (from face up: "+cns(e.from_face_up)+")":"");
    case "draw": return s+" drew "+e.count;
    case "reveal": return s+" revealed "+cn(e.card)+" (face-down "+(e.position+1)+")"+(e.legal?"":": not legal");
    case "blow_up": return "pile blown up by "+s+(e.cause==="ace"?" (Ace)":" (four of a kind)")+": "+e.removed.length+" cards removed"+(e.trump_ace!==null&&e.trump_ace!==undefined?"; trump "+cn(e.trump_ace):"");
    case "eat": return s+" ate the pile ("+e.cards.length+" cards)";
    case "out": return s+" is out (place "+(e.place+1)+")";
    case "loser": return s+" is the loser";
    case "swaps": return "swaps: "+(e.swaps.length?e.swaps.map(w=>"seat "+w[0]+" "+cn(w[1])+" \u2194 "+cn(w[2])).join("; "):"none");
  }
  return JSON.stringify(e);
}
function fromHash(){const m=/^#d(\d+)$/.exec(location.hash); return m?Number(m[1]):null;}
function go(i){cur=Math.max(0,Math.min(D.frames.length-1,i)); draw();
  const h="#d"+cur; if(location.hash!==h) history.replaceState(null,"",h);}
async function load(){
  const b64 = document.getElementById("data").textContent.trim();
  const bytes = Uint8Array.from(atob(b64), c=>c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  D = await new Response(stream).json();
  for(const c of D.cards) CARDS.set(c.id, c);
  if(D.game==="palace"){ LOG = D.frames.map(f=>f.events||[]); document.getElementById("logbox").hidden = false; }
  const facts = document.getElementById("facts");
  facts.textContent = D.game+" \u00B7 "+D.players+" players \u00B7 "+D.bots.map((b,s)=>"s"+s+" "+b).join(", ");
  const sel = document.getElementById("view"); sel.append(new Option("omniscient","all"));
  for(let s=0;s<D.players;s++) sel.append(new Option("seat "+s+" ("+D.bots[s]+")", String(s)));
  sel.onchange = ()=>{view=sel.value; draw();};
  const sl = document.getElementById("slider"); sl.max = D.frames.length-1; sl.oninput = ()=>go(Number(sl.value));
  document.getElementById("first").onclick=()=>go(0); document.getElementById("last").onclick=()=>go(D.frames.length-1);
  document.getElementById("prev").onclick=()=>go(cur-1); document.getElementById("next").onclick=()=>go(cur+1);
  document.addEventListener("keydown", e=>{ if(e.target.tagName==="SELECT") return;
    if(e.key==="ArrowRight") go(cur+1); else if(e.key==="ArrowLeft") go(cur-1);
    else if(e.key==="Home") go(0); else if(e.key==="End") go(D.frames.length-1); });
  window.addEventListener("hashchange", ()=>{const n=fromHash(); if(n!==null && n!==cur) go(n);});
  go(fromHash() ?? 0); document.body.dataset.ready = "1";
}
load().catch(err=>{document.body.dataset.error=String(err); document.getElementById("public").textContent="cannot open the replay: "+err;});
</script></body></html>
"""
