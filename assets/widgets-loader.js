/* Loads the ipywidgets manager only when a widget comes near the screen.
 *
 * Loaded (deferred) on pages with widgets, in place of html-manager's standalone bundle
 * (vendored/html-manager/embed.js, 1.8 MB; 0.45 MB gzip). A reader who never scrolls to a widget
 * never downloads it; one who does gets it a screen and a half before the widget is in view.
 *
 * embed.js renders every widget of the page on the window's `load` event, and only then: it adds
 * that listener when it runs. Loaded later, it would wait for an event that has already happened.
 * So while it runs, this file keeps its `load` listener aside and calls it as soon as the page's
 * widget state (at the end of <body>) has been parsed. Nothing else on the page is affected.
 *
 * Widgets are also drawn before printing, and when `window.mhaWidgets.load()` is called (the
 * PDF build and the browser tests use it to draw every widget of a page at once).
 */
(function () {
  "use strict";

  var script = document.currentScript;
  var MANAGER = new URL("vendored/html-manager/embed.js", script.src).href;
  // How far ahead of the screen a widget starts the download: 1.5 screens below (or above).
  var AHEAD = "150% 0px 150% 0px";
  var VIEWS = 'script[type="application/vnd.jupyter.widget-view+json"]';
  var started = null;

  function whenParsed(callback) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", callback);
    else callback();
  }

  function load() {
    if (started) return started;
    started = new Promise(function (resolve, reject) {
      var held = [];
      var addEventListener = window.addEventListener;
      window.addEventListener = function (type, listener, options) {
        if (type === "load") held.push(listener);
        else addEventListener.call(window, type, listener, options);
      };
      var tag = document.createElement("script");
      tag.src = MANAGER;
      tag.onload = function () {
        window.addEventListener = addEventListener;
        whenParsed(function () {
          held.forEach(function (listener) { listener.call(window, new Event("load")); });
          document.documentElement.dataset.mhaWidgets = "loaded";
          resolve();
        });
      };
      tag.onerror = function () {
        window.addEventListener = addEventListener;
        document.documentElement.dataset.mhaWidgets = "failed";
        reject(new Error("the widget manager could not be loaded"));
      };
      document.head.appendChild(tag);
    });
    return started;
  }

  function watch() {
    var outputs = Array.prototype.map.call(document.querySelectorAll(VIEWS), function (view) {
      return view.parentElement;
    });
    if (!outputs.length) return;
    if (!("IntersectionObserver" in window)) {
      load();
      return;
    }
    var observer = new IntersectionObserver(function (entries) {
      if (entries.some(function (entry) { return entry.isIntersecting; })) {
        observer.disconnect();
        load();
      }
    }, { rootMargin: AHEAD });
    outputs.forEach(function (output) { observer.observe(output); });
  }

  window.mhaWidgets = { load: load };
  window.addEventListener("beforeprint", load);
  whenParsed(watch);
})();
