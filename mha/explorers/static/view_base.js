/* What the course's browser views share (mha.explorers.browser inlines it before a view's own script):
 * making elements, the viridis colour ramp, and text in which `backticks` mark code.
 *
 * window.mhaViewBase = {version, el, viridis, withCode}.
 */
(function () {
  "use strict";
  if (window.mhaViewBase && window.mhaViewBase.version >= 1) {
    return;
  }
  var SVG = "http://www.w3.org/2000/svg";
  var SVG_TAGS = ["svg", "g", "line", "circle", "rect", "text", "path", "polygon", "title", "defs", "marker"];
  var VIRIDIS = ["440154", "472d7b", "3b528b", "2c728e", "21918c", "28ae80", "5ec962", "addc30", "fde725"];

  /* An element (SVG ones in the SVG namespace) with attributes, appended to parent, with optional text. */
  function el(tag, attrs, parent, text) {
    var node = SVG_TAGS.indexOf(tag) >= 0 ? document.createElementNS(SVG, tag) : document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) {
      node.textContent = text;
    }
    if (parent) {
      parent.appendChild(node);
    }
    return node;
  }

  /* matplotlib's viridis at t in [0, 1], as an rgb() colour. */
  function viridis(t) {
    t = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
    var i = Math.min(VIRIDIS.length - 2, Math.floor(t));
    var f = t - i;
    var a = VIRIDIS[i], b = VIRIDIS[i + 1];
    return "rgb(" + [0, 2, 4].map(function (o) {
      var x = parseInt(a.substr(o, 2), 16), y = parseInt(b.substr(o, 2), 16);
      return Math.round(x + (y - x) * f);
    }).join(",") + ")";
  }

  /* Append text to parent: the parts between backticks as <code>, between paired *stars* as <em>
     (never parsed as HTML). */
  function withCode(parent, text) {
    String(text).split("`").forEach(function (part, i) {
      if (i % 2) {
        el("code", {}, parent, part);
        return;
      }
      var pieces = part.split("*");
      pieces.forEach(function (piece, j) {
        if (j % 2 && pieces.length % 2) {
          el("em", {}, parent, piece);
        } else if (piece) {
          parent.appendChild(document.createTextNode((j % 2 ? "*" : "") + piece));
        }
      });
    });
    return parent;
  }

  window.mhaViewBase = {version: 1, el: el, viridis: viridis, withCode: withCode};
})();
