/* Row filters for the tables of replicate.book.tables.sortable_table (this project's own code,
 * MIT like the package). A table written with filters is preceded by a form of class
 * "replicate-filters", hidden in the HTML: this script shows it, and each <select
 * data-filter="NAME"> then hides the rows whose data-filter-NAME attribute differs from the
 * chosen value ("" shows all), and the text box <input data-search> hides the rows whose text
 * lacks one of its words (case and accents ignored). Without JavaScript the form stays
 * hidden and every row shows.
 * Rows are looked up at each change, so a table re-sorted by sortable.js (which replaces
 * its tbody) keeps working. */
(function () {
  "use strict";
  function target(form) {
    // the table written right after the form; by id only as a fallback (a page's section
    // may carry the same id as the table)
    for (var el = form.nextElementSibling; el; el = el.nextElementSibling) {
      if (el.tagName === "TABLE") { return el; }
    }
    var byId = document.getElementById(form.getAttribute("data-table"));
    return byId && byId.tagName === "TABLE" ? byId : null;
  }
  function apply(form) {
    var table = target(form);
    if (!table) { return; }
    var chosen = [].slice.call(form.querySelectorAll("select[data-filter]")).map(function (s) {
      return [s.getAttribute("data-filter"), s.value];
    });
    var fold = function (t) {
      return t.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
    };
    var box = form.querySelector("input[data-search]");
    var words = box ? fold(box.value).split(/\s+/).filter(Boolean) : [];
    var shown = 0, total = 0;
    [].slice.call(table.tBodies).forEach(function (tbody) {
      [].slice.call(tbody.rows).forEach(function (row) {
        var keep = chosen.every(function (c) {
          return c[1] === "" || row.getAttribute("data-filter-" + c[0]) === c[1];
        });
        if (keep && words.length) {
          var text = fold(row.textContent);
          keep = words.every(function (w) { return text.indexOf(w) !== -1; });
        }
        row.hidden = !keep;
        total += 1;
        if (keep) { shown += 1; }
      });
    });
    var count = form.querySelector(".replicate-filter-count");
    if (count) { count.textContent = shown + " of " + total + " rows"; }
  }
  function init() {
    [].slice.call(document.querySelectorAll("form.replicate-filters")).forEach(function (form) {
      form.hidden = false;
      form.addEventListener("change", function () { apply(form); });
      form.addEventListener("input", function () { apply(form); });
      form.addEventListener("reset", function () { setTimeout(function () { apply(form); }, 0); });
      form.addEventListener("submit", function (e) { e.preventDefault(); });
      apply(form);
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
