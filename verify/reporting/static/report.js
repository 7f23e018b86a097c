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
