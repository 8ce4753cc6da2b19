// Live leaderboard: poll /api/leaderboard and redraw the tables (no reload, no CDN).
(function () {
  var boards = document.getElementById("boards");
  if (!boards) return;
  var every = parseInt(document.body.dataset.refreshMs || "3000", 10);
  function cell(row, text) { var td = document.createElement("td"); td.textContent = text; row.appendChild(td); return td; }
  var shown = "";
  function draw(doc) {
    var text = JSON.stringify(doc);
    if (text === shown) return;  // nothing changed: leave the tables (and the focus) alone
    shown = text;
    // a keyboard user's focus on a bot link is put back on the same link once redrawn
    var active = document.activeElement, keep = null;
    if (active && active !== document.body && boards.contains(active)) {
      var at = active.closest("section");
      keep = at ? {scope: at.dataset.scope, href: active.getAttribute("href")} : null;
    }
    document.getElementById("match-count").textContent = doc.matches;
    var luck = document.getElementById("luck-count");
    if (luck) luck.textContent = doc.luck_matches;
    doc.scopes.forEach(function (scope) {
      var section = boards.querySelector('section[data-scope="' + scope.scope + '"]');
      if (!section) return;
      var body = section.querySelector("tbody");
      body.textContent = "";
      scope.standings.forEach(function (r) {
        var tr = document.createElement("tr");
        tr.dataset.bot = r.bot;
        cell(tr, r.rank);
        var name = cell(tr, ""), a = document.createElement("a");
        a.href = "/bots/" + r.bot_id; a.textContent = r.bot; name.appendChild(a);
        var v = document.createElement("small"); v.textContent = " v" + r.version; name.appendChild(v);
        cell(tr, r.owner); cell(tr, r.mu.toFixed(2)); cell(tr, r.sigma.toFixed(2));
        cell(tr, r.conservative.toFixed(2));
        cell(tr, r.mean_place === null ? "–" : r.mean_place.toFixed(2));
        cell(tr, r.adjusted_place === null || r.adjusted_place === undefined ? "–" : r.adjusted_place.toFixed(2)).className = "adjusted";
        cell(tr, r.matches).className = "matches"; cell(tr, r.faults);
        body.appendChild(tr);
      });
    });
    if (keep && keep.href) {
      var again = Array.prototype.find.call(
        boards.querySelectorAll('section[data-scope="' + keep.scope + '"] a'),
        function (a) { return a.getAttribute("href") === keep.href; });
      if (again) again.focus({preventScroll: true});
    }
  }
  function poll() {
    fetch("/api/leaderboard", {credentials: "same-origin"}).then(function (r) { return r.ok ? r.json() : null; })
      .then(function (doc) { if (doc) draw(doc); }).catch(function () {})
      .then(function () { setTimeout(poll, every); });
  }
  setTimeout(poll, every);
})();
