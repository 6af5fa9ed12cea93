"""The HTML report's per-case audit view: for a chosen case and agent × guard, which atom reached
which tool and field (authorized or not — the records' ``disclosures``) and what the guard did
with each call (the records' ``attempts``).

Only ids, types, tool names, argument paths, methods and actions are embedded — never
``arguments``, ``result`` or the final answer. Argument paths are names chosen by the agent, so a
path segment that contains one of the case's atom values (when the cases are known) is replaced by
``<value>``. The data is a JSON block (``<``, ``>``, ``&`` escaped) rendered with ``textContent``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..cases.schema import Case
from ..runner._errors import record_error
from ._load import RunData

__all__ = ["audit_data", "audit_html"]

_IDENT = re.compile(r"^[A-Za-z_][\w.]{0,80}$")


class _Strings:
    def __init__(self) -> None:
        self.items: list[str] = []
        self._idx: dict[str, int] = {}

    def __call__(self, s: Any) -> int:
        key = "" if s is None else str(s)
        i = self._idx.get(key)
        if i is None:
            i = self._idx[key] = len(self.items)
            self.items.append(key)
        return i


def _secrets(case: Case | None) -> re.Pattern[str] | None:
    """One pattern matching any of the case's atom values and aliases (lower-cased, ≥ 3
    characters) as a substring: one scan per path instead of one per value."""
    if case is None:
        return None
    vals = []
    for a in case.atoms:
        vals += [str(a.value), *map(str, a.aliases)]
    keep = sorted({v.lower() for v in vals if len(v.strip()) >= 3}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, keep))) if keep else None


def _clean_path(path: str, secrets: re.Pattern[str] | None) -> str:
    if secrets is None:
        return path
    return "<value>" if secrets.search(path.lower()) else path


def _error(rec: dict[str, Any]) -> str | None:
    """The case-run's error class (``record_error``), or the agent's scored outcome (a step
    limit), by type name only."""
    err = record_error(rec)
    name = err.get("type") if err else (rec.get("result") or {}).get("error")
    if not name:
        return None
    return str(name) if _IDENT.match(str(name)) else "error"


def audit_data(data: RunData, cases: dict[tuple[str, str], Case]) -> dict[str, Any]:
    """The compact, value-free data behind the view (strings interned into one table)."""
    s = _Strings()
    configs: list[list[int]] = []
    cfg_idx: dict[tuple[str, str, str], int] = {}
    records = []
    patterns: dict[tuple[str, str], re.Pattern[str] | None] = {}  # a case recurs per agent × guard
    for rec in data.records:
        cfg = (str(rec.get("agent", "")), str(rec.get("guard", "")), str(rec.get("suite", "")))
        if cfg not in cfg_idx:
            cfg_idx[cfg] = len(configs)
            configs.append([s(x) for x in cfg])
        key = (cfg[2], str(rec.get("case_id", "")))
        if key not in patterns:
            patterns[key] = _secrets(cases.get(key))
        secrets = patterns[key]
        score = rec.get("score") or {}
        metrics = score.get("metrics") or {}
        disclosures = sorted(
            ([int(d.get("step", 0)), s(d.get("tool")), s(d.get("sink")), s(d.get("atom_id")),
              s(d.get("atom_type")), s(_clean_path(str(d.get("path", "")), secrets)),
              s(d.get("method")), int(bool(d.get("free_text"))),
              None if d.get("authorized") is None else int(bool(d.get("authorized")))]
             for d in rec.get("disclosures", ())), key=lambda x: (x[0], x[3]))
        attempts = [
            [int(a.get("step", 0)), s(a.get("tool")), s(a.get("action")),
             [s(x) for x in a.get("types", ())],
             [s(_clean_path(str(x), secrets)) for x in a.get("fields", ())]]
            for a in rec.get("attempts", ())
        ]
        forr = metrics.get("FOR")
        records.append({
            "c": cfg_idx[cfg], "k": s(rec.get("case_id")), "d": s(rec.get("domain")),
            "m": [100.0 * float(score.get("task_success", 0.0)),
                  float(score.get("mt_poi", 0.0)), None if forr is None else 100.0 * forr],
            "n": len((rec.get("trajectory") or {}).get("calls", ())),
            "b": int((rec.get("trajectory") or {}).get("blocked", 0) or 0),
            "e": s(_error(rec)) if _error(rec) else None,
            "x": disclosures, "a": attempts,
        })
    return {"strings": s.items, "configs": configs, "records": records}


def _json_block(obj: Any) -> str:
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=True)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


_VIEW = """
<div id="audit">
  <div class="controls">
    <label>Find case <input id="au-q" type="search" placeholder="case id or domain"></label>
    <label><input id="au-leaky" type="checkbox"> only cases with unauthorized disclosures</label>
    <label>Case <select id="au-case"></select></label>
    <label>Agent × guard <select id="au-cfg"></select></label>
  </div>
  <p id="au-sum"></p>
  <h4>Atoms that reached a tool (from the backends' audit log)</h4>
  <table class="data" id="au-x"><thead><tr><th>step</th><th>tool</th><th>sink</th><th>atom</th>
  <th>atom type</th><th>argument path</th><th>method</th><th>free text</th><th>authorized</th>
  </tr></thead><tbody></tbody></table>
  <h4>What the guard did with each attempted call</h4>
  <table class="data" id="au-a"><thead><tr><th>step</th><th>tool</th><th>action</th>
  <th>atom types</th><th>fields</th></tr></thead><tbody></tbody></table>
</div>
<script type="application/json" id="audit-data">__DATA__</script>
<script>
(function () {
  var D = JSON.parse(document.getElementById("audit-data").textContent);
  var S = D.strings, byCase = {}, order = [];
  D.records.forEach(function (r) {
    var k = S[r.k];
    if (!(k in byCase)) { byCase[k] = []; order.push(k); }
    byCase[k].push(r);
  });
  order.sort();
  var q = document.getElementById("au-q"), leaky = document.getElementById("au-leaky");
  var selCase = document.getElementById("au-case"), selCfg = document.getElementById("au-cfg");
  function cfgName(i) { var c = D.configs[i]; return S[c[0]] + " / " + S[c[1]] + " (" + S[c[2]] + ")"; }
  function hasLeak(r) { return r.x.some(function (d) { return d[8] === 0; }); }
  function opt(sel, value, text) { var o = document.createElement("option"); o.value = value; o.textContent = text; sel.appendChild(o); }
  function fillCases() {
    var term = q.value.toLowerCase(); selCase.textContent = "";
    order.forEach(function (k) {
      var rs = byCase[k], dom = S[rs[0].d].toLowerCase();
      if (term && k.toLowerCase().indexOf(term) < 0 && dom.indexOf(term) < 0) return;
      if (leaky.checked && !rs.some(hasLeak)) return;
      opt(selCase, k, k + " — " + S[rs[0].d]);
    });
    fillCfgs();
  }
  function fillCfgs() {
    var prev = selCfg.value; selCfg.textContent = "";
    (byCase[selCase.value] || []).forEach(function (r, i) { opt(selCfg, String(i), cfgName(r.c)); });
    if (prev && selCfg.querySelector('option[value="' + prev + '"]')) selCfg.value = prev;
    show();
  }
  function row(tbody, cells, bad) {
    var tr = document.createElement("tr"); if (bad) tr.className = "bad";
    cells.forEach(function (c) { var td = document.createElement("td"); td.textContent = c; tr.appendChild(td); });
    tbody.appendChild(tr);
  }
  function f2(v) { return v === null || v === undefined ? "—" : v.toFixed(2); }
  function show() {
    var xb = document.querySelector("#au-x tbody"), ab = document.querySelector("#au-a tbody");
    xb.textContent = ""; ab.textContent = "";
    var rs = byCase[selCase.value], r = rs && rs[Number(selCfg.value)];
    var sum = document.getElementById("au-sum");
    if (!r) { sum.textContent = "No case selected."; return; }
    sum.textContent = S[r.k] + " · " + cfgName(r.c) + " · calls received " + r.n + " · blocked " + r.b +
      " · TaskSuccess " + f2(r.m[0]) + " · MT-POI " + f2(r.m[1]) + " · FOR " + f2(r.m[2]) +
      (r.e !== null ? " · agent error " + S[r.e] : "");
    r.x.forEach(function (d) {
      row(xb, [d[0], S[d[1]], S[d[2]], S[d[3]], S[d[4]], S[d[5]], S[d[6]], d[7] ? "yes" : "no",
               d[8] === null ? "?" : (d[8] ? "authorized" : "FORBIDDEN")], d[8] === 0);
    });
    r.a.forEach(function (a) {
      row(ab, [a[0], S[a[1]], S[a[2]], a[3].map(function (i) { return S[i]; }).join(", "),
               a[4].map(function (i) { return S[i]; }).join(", ")], S[a[2]] === "block");
    });
  }
  q.addEventListener("input", fillCases); leaky.addEventListener("change", fillCases);
  selCase.addEventListener("change", fillCfgs); selCfg.addEventListener("change", show);
  fillCases();
})();
</script>
"""


def audit_html(data: RunData, cases: dict[tuple[str, str], Case]) -> str:
    return _VIEW.replace("__DATA__", _json_block(audit_data(data, cases)))
