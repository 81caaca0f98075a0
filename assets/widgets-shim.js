/* Glue between the vendored ipywidgets html-manager (embed.js) and this site's MathJax 3.
 *
 * Loaded (deferred) on pages with widgets, before html-manager's embed.js (the order of
 * `nb_ipywidgets_js` in _config.yml). html-manager typesets widget labels with MathJax 2's
 * `MathJax.Hub.Queue`, which MathJax 3 does not have (a TypeError per slider): a tiny Hub forwards
 * to `typesetPromise`. (embed.js finds its fonts next to itself; it needs no AMD loader.)
 */
(function () {
  "use strict";

  function typeset(element) {
    var mathjax = window.MathJax;
    var ready = (mathjax.startup && mathjax.startup.promise) || Promise.resolve();
    ready
      .then(function () { return mathjax.typesetPromise(element ? [element] : undefined); })
      .catch(function (error) { console.warn("MathJax could not typeset a widget:", error); });
  }

  function installHub() {
    var mathjax = window.MathJax;
    // Before MathJax 3 loads, window.MathJax is only its configuration: wait for the real one.
    if (!mathjax || !mathjax.version || mathjax.Hub) return;
    mathjax.Hub = {
      Queue: function () {
        Array.prototype.forEach.call(arguments, function (job) {
          if (Array.isArray(job) && job[0] === "Typeset") typeset(job[2]);
        });
      },
    };
  }

  installHub();
  document.addEventListener("DOMContentLoaded", installHub);
  window.addEventListener("load", installHub);  // html-manager renders on load: we run first
})();
