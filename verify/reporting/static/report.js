/* Renders the LaTeX with the vendored KaTeX, then records whether the page rendered cleanly:
   <html data-render="ok"> or data-render="error: ..." (read by the headless-browser test), and shows a
   banner to the reader when something (a plot, a font, a formula) failed. No network access is needed. */
(function () {
  "use strict";
  var problems = [];
  window.addEventListener("error", function (e) {
    var t = e.target;
    if (t && t !== window && (t.src || t.href)) {
      problems.push("failed to load " + (t.getAttribute("src") || t.getAttribute("href")));
    } else {
      problems.push("script error: " + (e.message || "unknown"));
    }
  }, true);

  function renderMath() {
    if (!window.katex) {
      problems.push("KaTeX did not load");
      return;
    }
    document.querySelectorAll("[data-tex]").forEach(function (el) {
      try {
        window.katex.render(el.getAttribute("data-tex"), el, {
          displayMode: el.classList.contains("display"), throwOnError: true, strict: "ignore"
        });
      } catch (err) {
        problems.push("formula: " + err.message);
        el.classList.add("tex-error");
      }
    });
  }

  function check() {
    document.querySelectorAll("img").forEach(function (img) {
      if (!img.complete || img.naturalWidth === 0) {
        problems.push("image did not load: " + img.getAttribute("src"));
      }
    });
    if (document.fonts) {
      document.fonts.forEach(function (f) {
        if (f.status === "error") { problems.push("font did not load: " + f.family); }
      });
    }
    var status = problems.length ? "error: " + problems.join("; ") : "ok";
    document.documentElement.setAttribute("data-render", status);
    if (problems.length) {
      var banner = document.getElementById("render-problems");
      banner.textContent = "Parts of this report did not render: " + problems.join("; ");
      banner.hidden = false;
    }
  }

  document.addEventListener("DOMContentLoaded", renderMath);
  window.addEventListener("load", function () {
    if (document.fonts && document.fonts.ready) {
      document.fonts.ready.then(check, check);
    } else {
      check();
    }
  });
})();

/* The filter bar: verdict, paper, variant and "unexpected only" hide the summary rows and result sections that do
   not match; the choice is kept in the address (#filter=verdict:VIOLATED;paper:chen2024) so that a filtered view can
   be shared, and <html data-filter-shown="N"> records how many results are shown (read by the browser test). */
(function () {
  "use strict";
  var KEYS = ["verdict", "paper", "variant", "unexpected"];

  function current(form) {
    var f = {};
    KEYS.forEach(function (k) {
      var el = form.elements[k];
      f[k] = el.type === "checkbox" ? (el.checked ? "yes" : "") : el.value;
    });
    return f;
  }

  function apply(form) {
    var f = current(form), shown = 0, total = 0;
    document.querySelectorAll("section.result.filtered").forEach(function (el) {
      total += 1;
      var ok = (!f.verdict || el.dataset.verdict === f.verdict) && (!f.paper || el.dataset.paper === f.paper) &&
        (!f.variant || el.dataset.variant === f.variant) && (!f.unexpected || el.dataset.expected === "no");
      el.hidden = !ok;
      if (ok) { shown += 1; }
    });
    document.querySelectorAll("tr.filtered").forEach(function (el) {
      el.hidden = !((!f.verdict || el.dataset.verdict === f.verdict) && (!f.paper || el.dataset.paper === f.paper) &&
        (!f.variant || el.dataset.variant === f.variant) && (!f.unexpected || el.dataset.expected === "no"));
    });
    document.getElementById("filter-count").textContent = "showing " + shown + " of " + total + " results";
    document.documentElement.setAttribute("data-filter-shown", String(shown));
    var parts = KEYS.filter(function (k) { return f[k]; }).map(function (k) { return k + ":" + f[k]; });
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", parts.length ? "#filter=" + parts.join(";") : window.location.pathname);
    }
  }

  function fromAddress(form) {
    var m = /^#filter=(.*)$/.exec(decodeURIComponent(window.location.hash || ""));
    if (!m) { return; }
    m[1].split(";").forEach(function (part) {
      var i = part.indexOf(":"), k = part.slice(0, i), v = part.slice(i + 1), el = form.elements[k];
      if (!el) { return; }
      if (el.type === "checkbox") { el.checked = v === "yes"; } else { el.value = v; }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("filters");
    if (!form) { return; }
    fromAddress(form);
    form.addEventListener("change", function () { apply(form); });
    apply(form);
  });
})();
