// Renders the \( \) and \[ \] spans that pymdownx.arithmatex (generic mode) leaves, with the KaTeX shipped beside.
(function () {
  function render() {
    document.querySelectorAll(".arithmatex").forEach(function (el) {
      var text = el.textContent.trim();
      var block = text.startsWith("\\[");
      katex.render(text.slice(2, -2), el, { displayMode: block, throwOnError: false });
    });
  }
  var script = document.createElement("script");
  script.src = document.currentScript.src.replace(/katex-render\.js$/, "katex/katex.min.js");
  script.onload = render;
  document.head.appendChild(script);
})();
