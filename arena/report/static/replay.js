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

// What is drawn of a game's observation comes from its layout (replay_layouts.json): no game names here.
function at(o, path, s){
  let v = o;
  for(const k of path.replace(/\{s\}/g, String(s)).split(".")){
    if(v===null || v===undefined) return undefined;
    v = (k==="-1" && Array.isArray(v)) ? v[v.length-1] : v[k];
  }
  return v;
}
function fmt(o, text, s, extra){
  return text.replace(/\{([^}]+)\}/g, (_, k)=> extra && k in extra ? String(extra[k]) : String(at(o, k, s)));
}
function shown(o, row, s){ return !row.if || !!at(o, row.if, s); }
function layoutRow(o, row, s){
  if(row.text){
    let t = ""; for(const part of row.text) if(shown(o, part, s)) t += fmt(o, part.fmt, s);
    return el("div", row.cls || "row", t);
  }
  if(row.cards){
    const all = at(o, row.cards, s) || [];
    const ids = row.last ? all.slice(-row.last) : all;
    return cards(fmt(o, row.label, s, {shown: ids.length, total: all.length}), ids);
  }
  const r = el("div","row"); r.append(el("span","label",fmt(o, row.label, s)));
  if(row.plays){
    for(const pl of at(o, row.plays, s) || []){
      if(row.seats){ const w=el("span"); w.append(el("span","label","s"+pl.seat)); w.append(card(pl.card)); r.append(w); }
      else r.append(card(pl.card));
    }
  } else if(row.byseat){
    (at(o, row.byseat, s) || []).forEach((c,q)=>{ if(c!==null&&c!==undefined){ r.append(el("span","label","s"+q)); r.append(card(c)); }});
  } else if(row.slots){
    const known = {}; for(const [i,c] of at(o, row.known, s) || []) known[i] = c;
    for(const i of at(o, row.slots, s) || []){ if(known[i]!==undefined) r.append(card(known[i])); else r.append(...back(1)); }
  }
  return r;
}
function publicPanel(o, f){
  const p = document.getElementById("public"); p.replaceChildren();
  p.append(el("div","row","phase "+(o.phase||"-")+(o.over?" \u00B7 game over":"")));
  for(const row of D.layout.public || []) if(shown(o, row)) p.append(layoutRow(o, row));
}
function handSize(o, s){
  for(const path of D.layout.hand_size || []){ const n = at(o, path, s); if(n!==undefined && n!==null) return n; }
  return 0;
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
    const n = handSize(o, s);
    const r=el("div","row"); r.append(el("span","label","hand ("+n+")")); r.append(...back(n)); box.append(r);
  }
  for(const row of D.layout.seat || []) if(shown(o, row, s)) box.append(layoutRow(o, row, s));
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
    // another seat's choice is not that seat's to see yet (a Divers Weights trick is hidden
    // until all have chosen), nor how many moves it had: the next frame shows what became public
    const mine = viewer===null || viewer===f.seat;
    dec.append(el("div",null,seatName(f.seat)+(mine ? " chose: "+f.text : " to move")));
    dec.append(el("div","label",(mine ? "action "+f.action+" of "+f.legal_count+" legal \u00B7 " : "")+(f.ms===null||f.ms===undefined?"no time":f.ms+" ms")+" \u00B7 "+f.status));
    if(f.fault) dec.append(el("div","fault","fault at this decision: seat "+f.fault.seat+" "+f.fault.kind));
    if(viewer===null || viewer===f.seat){
      const width = String(f.legal.length ? f.legal[f.legal.length-1][0] : 0).length + 1;
      for(const [id,t] of f.legal){ const li=el("li", id===f.action?"chosen":""); li.dataset.action=id;
        const num=el("span","num",id+"."); num.style.minWidth=width+"ch"; li.append(num, el("span","text",t)); legal.append(li); }
      const chosen = legal.querySelector("li.chosen");
      // scroll the list alone (scrollIntoView would scroll the window too, sideways on a phone)
      if(chosen) legal.scrollTop += chosen.getBoundingClientRect().top - legal.getBoundingClientRect().top
        - (legal.clientHeight - chosen.clientHeight) / 2;
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
  if(D.frames.some(f=>f.events)){ LOG = D.frames.map(f=>f.events||[]); document.getElementById("logbox").hidden = false; }
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
