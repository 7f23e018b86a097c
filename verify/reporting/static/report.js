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
   not match. The address holds the filter (#filter=verdict:VIOLATED;paper:chen2024): it is read on load and on every
   hashchange (back, forward, an edited address), and the bar writes its choice there, so a filtered view can be shared.
   Each paper is a <details>, folded at first: a filter opens the papers with matches and hides the others, and the
   verdict badges (contents and paper titles) count what the filter shows. An address (or a click) naming an element
   opens the papers around it, clearing a filter that hides it. <html data-filter-shown="N"> records how many results
   are shown (read by the browser test). */
(function () {
  "use strict";
  var KEYS = ["verdict", "paper", "variant", "unexpected"];
  var filtering = false;

  function current(form) {
    var f = {};
    KEYS.forEach(function (k) {
      var el = form.elements[k];
      f[k] = el.type === "checkbox" ? (el.checked ? "yes" : "") : el.value;
    });
    return f;
  }

  function matches(f, el) {
    return (!f.verdict || el.dataset.verdict === f.verdict) && (!f.paper || el.dataset.paper === f.paper) &&
      (!f.variant || el.dataset.variant === f.variant) && (!f.unexpected || el.dataset.expected === "no");
  }

  function badge(cls, text) {
    var b = document.createElement("span");
    b.className = cls;
    b.textContent = text;
    return b;
  }

  function renderCounts(key, sections) {
    var counts = {}, unexpected = 0;
    sections.forEach(function (el) {
      counts[el.dataset.verdict] = (counts[el.dataset.verdict] || 0) + 1;
      if (el.dataset.expected === "no") { unexpected += 1; }
    });
    document.querySelectorAll(".counts").forEach(function (box) {
      if (box.dataset.paper !== key) { return; }
      box.textContent = "";
      Object.keys(counts).sort().forEach(function (v) {
        var cls = v.indexOf("(vacuous)") >= 0 ? "vacuous" : v.toLowerCase();
        box.appendChild(badge("badge " + cls, counts[v] + " " + v));
        box.appendChild(document.createTextNode(" "));
      });
      if (unexpected) { box.appendChild(badge("expect no", unexpected + " unexpected")); }
    });
  }

  function apply(form, write) {
    var f = current(form), shown = 0, total = 0, active = KEYS.some(function (k) { return f[k]; });
    var byPaper = {};
    document.querySelectorAll("section.result.filtered").forEach(function (el) {
      total += 1;
      var ok = matches(f, el);
      el.hidden = !ok;
      if (ok) {
        shown += 1;
        (byPaper[el.dataset.paper] = byPaper[el.dataset.paper] || []).push(el);
      }
    });
    document.querySelectorAll("tr.filtered").forEach(function (el) { el.hidden = !matches(f, el); });
    document.querySelectorAll("details.paper").forEach(function (paper) {
      var key = paper.dataset.paper, some = !!byPaper[key];
      paper.hidden = active && !some;
      if (active && some) { paper.open = true; } else if (filtering && !active) { paper.open = false; }
      renderCounts(key, byPaper[key] || []);
    });
    document.querySelectorAll(".toc-paper").forEach(function (el) { el.hidden = active && !byPaper[el.dataset.paper]; });
    filtering = active;
    document.getElementById("filter-count").textContent = "showing " + shown + " of " + total + " results";
    document.documentElement.setAttribute("data-filter-shown", String(shown));
    if (write && window.history && window.history.replaceState) {
      var parts = KEYS.filter(function (k) { return f[k]; }).map(function (k) { return k + ":" + f[k]; });
      window.history.replaceState(null, "", parts.length ? "#filter=" + parts.join(";") :
        window.location.pathname + window.location.search);
    }
  }

  function setForm(form, text) {
    KEYS.forEach(function (k) {
      var el = form.elements[k];
      if (el.type === "checkbox") { el.checked = false; } else { el.value = ""; }
    });
    (text ? text.split(";") : []).forEach(function (part) {
      var i = part.indexOf(":"), k = part.slice(0, i), v = part.slice(i + 1), el = form.elements[k];
      if (i < 0 || KEYS.indexOf(k) < 0 || !el) { return; }
      if (el.type === "checkbox") { el.checked = v === "yes"; } else { el.value = v; }
    });
  }

  function target(hash) {
    var id;
    try { id = decodeURIComponent(hash.replace(/^#/, "")); } catch (e) { id = hash.replace(/^#/, ""); }
    return id ? document.getElementById(id) : null;
  }

  /* Opens the papers around `el` (clearing a filter that hides it); returns whether anything was closed or hidden. */
  function reveal(form, el) {
    var changed = false;
    if (el.closest("[hidden]")) {
      setForm(form, "");
      apply(form, false);
      changed = true;
    }
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS" && !p.open) { p.open = true; changed = true; }
    }
    return changed;
  }

  function fromAddress(form) {
    var hash = window.location.hash || "", m;
    try { m = /^#filter=(.*)$/.exec(decodeURIComponent(hash)); } catch (e) { m = null; }
    if (m) {
      setForm(form, m[1]);
      apply(form, false);
      return;
    }
    var el = target(hash);
    if (el) {
      reveal(form, el);
      el.scrollIntoView();
    } else if (!hash || hash === "#") {
      setForm(form, "");
      apply(form, false);
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("filters");
    if (!form) { return; }
    setForm(form, "");
    apply(form, false);
    fromAddress(form);
    form.addEventListener("change", function () { apply(form, true); });
    window.addEventListener("hashchange", function () { fromAddress(form); });
    window.addEventListener("load", function () {  // the figures above it have loaded: scroll to it once more
      var el = target(window.location.hash || "");
      if (el) { el.scrollIntoView(); }
    });
    document.addEventListener("click", function (e) {  // before the browser scrolls to a link's target, open it
      var a = e.target.closest && e.target.closest('a[href^="#"]');
      var el = a && target(a.getAttribute("href"));
      if (el && reveal(form, el) && a.getAttribute("href") === window.location.hash) {
        e.preventDefault();
        el.scrollIntoView();
      }
    });
    document.querySelectorAll("[data-fold]").forEach(function (button) {
      button.addEventListener("click", function () {
        var open = button.dataset.fold === "open";
        document.querySelectorAll("details.paper").forEach(function (d) { if (!d.hidden) { d.open = open; } });
      });
    });
  });
})();
