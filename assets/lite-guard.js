/* Inside the JupyterLite app (every index.html under lite/, to which book/lite_site.py adds this script): a clear message
 * when the live notebook cannot start.
 *
 * JupyterLite runs Python in the browser (Pyodide), downloaded from a CDN when the notebook starts.
 * Offline, or behind a network that blocks that CDN, the kernel stayed at "Connecting" with no word
 * of why, however the reader arrived: a click on the launch button, a new tab, a bookmark. This
 * script checks that the CDN answers; if it does not within PROBE_TIMEOUT_MS, it says what failed
 * and where to go instead (the page on running the course locally, and the notebook's download).
 */
(function () {
  "use strict";

  // Where jupyterlite-pyodide-kernel fetches Pyodide from (its default pyodideUrl's host).
  var PYODIDE_PROBE = "https://cdn.jsdelivr.net/pyodide/";
  var PROBE_TIMEOUT_MS = 8000;
  var script = document.currentScript;
  var SITE = new URL("../", script.src).href;  // this file is <site>/_static/lite-guard.js

  function probe() {
    return new Promise(function (resolve, reject) {
      var timer = window.setTimeout(function () { reject(new Error("timed out")); }, PROBE_TIMEOUT_MS);
      fetch(PYODIDE_PROBE, { mode: "no-cors", cache: "no-store" }).then(function () {
        window.clearTimeout(timer);
        resolve();
      }, function (error) {
        window.clearTimeout(timer);
        reject(error);
      });
    });
  }

  // JupyterLab's stylesheet takes links' colour and underline away: these say they are links.
  var LINK = ' style="color:#0b5cad;text-decoration:underline"';

  function explain() {
    var path = new URLSearchParams(window.location.search).get("path") || "";
    var dialog = document.createElement("dialog");
    dialog.className = "mha-lite-failed";
    dialog.setAttribute("role", "alertdialog");
    dialog.setAttribute("aria-labelledby", "mha-lite-failed-title");
    dialog.style.cssText = "max-width:min(36rem,92vw);padding:1rem 1.25rem;border:1px solid #888;" +
      "border-radius:0.5rem;font:16px/1.5 system-ui,sans-serif;color:#111;background:#fff;z-index:10000";
    dialog.innerHTML =
      '<h2 id="mha-lite-failed-title" style="font-size:1.25rem;margin-top:0">' +
      "The live notebook cannot start</h2>" +
      "<p>JupyterLite runs Python in your browser, and first downloads it (Pyodide, about 30 MB) " +
      "from <code>cdn.jsdelivr.net</code>. That download failed: you may be offline, or your " +
      "network blocks that site.</p>" +
      '<p>Run the chapter on your computer instead: <a' + LINK + ' href="' + SITE +
      'chapters/run_locally.html">Run it on your computer</a>' +
      (path ? ', or <a' + LINK + ' download href="' + SITE + "_sources/" + encodeURI(path) +
        '">download this notebook (.ipynb)</a>' : "") +
      '. <a' + LINK + ' href="' + SITE + (path ? path.replace(/\.ipynb$/, ".html") : "intro.html") +
      '">Back to the book</a>.</p>' +
      '<form method="dialog"><button type="submit">Close</button></form>';
    document.body.appendChild(dialog);
    dialog.showModal();
  }

  function start() {
    probe().catch(explain);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
