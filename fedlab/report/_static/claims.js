/* The index's claims table: sorted, filtered (chapter, kind, verdict) and searched in the browser with DataTables
   (bundled in _static/datatables, no CDN). A link to "#claims?chapter=03&kind=experiment&verdict=reproduced" opens
   the table filtered to those claims. */
(function () {
  "use strict";
  const FILTERS = [["chapter", 0, "Chapter"], ["kind", 3, "Kind"], ["verdict", 6, "Verdict"]];
  const text = (html) => { const d = document.createElement("div"); d.innerHTML = html; return d.textContent.trim(); };
  const kindOf = (cell) => cell.replace(/\s*\(.*$/, "");
  const verdictOf = (cell) => cell.split("\n")[0].replace(/\s+(within|same sign|exact|qualitative).*$/, "")
    .replace(/ at smoke scale$/, "");
  const valueOf = { chapter: (c) => c, kind: kindOf, verdict: verdictOf };

  function start() {
    const table = document.querySelector("table.claims");
    const lib = window.fedlabDataTables;
    if (!table || !lib) return;
    const dt = new lib.DataTable(table, {
      order: [], pageLength: 25, lengthMenu: [10, 25, 100, { label: "All", value: -1 }], autoWidth: false,
      language: { search: "Search the claims:", info: "_START_–_END_ of _TOTAL_ claims",
                  infoFiltered: "(filtered from _MAX_)" },
    });
    const bar = document.createElement("div");
    bar.className = "claims-filters";
    const selects = {};
    for (const [key, column, label] of FILTERS) {
      const values = [...new Set(dt.column(column).data().toArray().map((c) => valueOf[key](text(c))))].sort();
      const select = document.createElement("select");
      select.name = key;
      select.setAttribute("aria-label", `${label} filter`);
      select.append(new Option(`${label}: all`, ""));
      values.forEach((v) => select.append(new Option(v, v)));
      select.addEventListener("change", () => apply(selects, dt));
      const wrap = document.createElement("label");
      wrap.append(select);
      bar.append(wrap);
      selects[key] = select;
    }
    table.closest(".dt-container").before(bar);
    const fromHash = () => {
      const match = decodeURIComponent(location.hash).match(/^#claims\?(.*)$/);
      if (!match) return;
      const params = new URLSearchParams(match[1]);
      for (const [key] of FILTERS) {
        const wanted = params.get(key) || "";
        const option = [...selects[key].options].find((o) => o.value === wanted || (wanted && o.value.startsWith(wanted + " ")));
        selects[key].value = option ? option.value : "";
      }
      apply(selects, dt);
      bar.scrollIntoView();
    };
    window.addEventListener("hashchange", fromHash);
    fromHash();
  }

  function apply(selects, dt) {
    for (const [key, column] of FILTERS) {
      const wanted = selects[key].value;
      dt.column(column).search(wanted ? (cell) => valueOf[key](text(cell)) === wanted : "");
    }
    dt.draw();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
