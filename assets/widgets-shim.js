/* Glue between the vendored ipywidgets html-manager and this site.
 *
 * Loaded on pages with widgets, after require.js and before html-manager's embed-amd.js (the order
 * of `nb_ipywidgets_js` in _config.yml). It fixes two things:
 *
 * 1. Asset path. html-manager finds its fonts relative to the URL requirejs gives each of its AMD
 *    modules, which by default is resolved against the *page* (404s on every chapter). Mapping the
 *    module names to the vendored folder makes those URLs point at the right place.
 * 2. MathJax 3. html-manager typesets widget labels with MathJax 2's `MathJax.Hub.Queue`, which
 *    MathJax 3 does not have (a TypeError per slider). A tiny Hub forwards to `typesetPromise`.
 */
(function () {
  "use strict";
  var here = document.currentScript.src.replace(/[^/]*$/, "");  // <site>/_static/
  var manager = here + "vendored/html-manager/";

  var modules = ["base", "base7", "controls", "controls7", "html-manager"];
  var paths = { "@jupyter-widgets/html-manager/dist/libembed-amd": manager + "libembed-amd" };
  modules.forEach(function (name) { paths["@jupyter-widgets/" + name] = manager + name; });
  window.require.config({ paths: paths });

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
