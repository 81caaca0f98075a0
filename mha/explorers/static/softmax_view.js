/* The course's temperature view: softmax(scores / T) of one score matrix, recomputed in the browser.
 *
 * mha.explorers.softmax_view writes one <div class="mha-sv"> holding a <script type="application/json">
 * with the scores (seq_q x seq_k, row-major), the tokens, the first temperature and whether a causal-mask
 * switch is offered, then inlines view_base.js (el, viridis) and this file and calls
 * window.mhaSoftmaxView.mount(root).
 *
 * The maths is the package's (mha.softmax of the masked, scaled scores): subtract each row's maximum,
 * exponentiate, divide by the row's sum; a masked score is -Infinity and gets weight exactly 0. The tests
 * read the drawn weights (each cell's data-weight) and compare them with mha.softmax at the same settings.
 */
(function () {
  "use strict";
  if (window.mhaSoftmaxView && window.mhaSoftmaxView.version >= 1) {
    return;
  }
  var base = window.mhaViewBase, el = base.el, viridis = base.viridis;  // view_base.js, inlined before
  var CELL = 34;
  var MIN_TEXT_PX = 11;  // mha.plotting.style.MIN_TEXT_PX: the smallest text, at any width

  /* mha.causal_mask: aligned to the end, query i sits at position seq_k - seq_q + i. */
  function blocked(i, j, seqQ, seqK) {
    return j > i + seqK - seqQ;
  }

  /* softmax over each row of scores / temperature, with the causal mask when asked. */
  function weights(scores, temperature, causal) {
    return scores.map(function (row, i) {
      var shifted = row.map(function (s, j) {
        return causal && blocked(i, j, scores.length, row.length) ? -Infinity : s / temperature;
      });
      var top = Math.max.apply(null, shifted);
      if (top === -Infinity) {
        return shifted.map(function () { return 0; });
      }
      var e = shifted.map(function (s) { return Math.exp(s - top); });
      var total = e.reduce(function (a, b) { return a + b; }, 0);
      return e.map(function (x) { return x / total; });
    });
  }

  function mount(root) {
    if (!root || root.dataset.mounted) {
      return;
    }
    root.dataset.mounted = "1";
    var data = JSON.parse(root.querySelector("script.mha-sv-data").textContent);
    var seqQ = data.scores.length, seqK = data.scores[0].length;
    var id = root.id;
    if (data.title) {
      el("div", {"class": "mha-sv-title"}, root, data.title);
    }
    var controls = el("div", {"class": "mha-sv-controls"}, root);
    var label = el("label", {"for": id + "-t"}, controls, "temperature T ");
    var slider = el("input", {type: "range", id: id + "-t", min: String(Math.log10(data.t_min)),
      max: String(Math.log10(data.t_max)), step: "any", value: String(Math.log10(data.temperature)),
      "aria-label": "temperature (log scale)"}, label);
    var readout = el("output", {"for": id + "-t", "class": "mha-sv-readout"}, controls);
    var toggle = null;
    if (data.mask_toggle) {
      var maskLabel = el("label", {"class": "mha-sv-mask"}, controls);
      toggle = el("input", {type: "checkbox"}, maskLabel);
      toggle.checked = !!data.causal;
      maskLabel.appendChild(document.createTextNode(" causal mask"));
    }
    el("div", {"class": "mha-sv-caption"}, root,
      "Rows: queries. Columns: keys. Colour: weight, from 0 (dark) to 1 (yellow).");
    // The picture scales down to the column (viewBox), never up past its natural size. On a narrow
    // column its words are set larger in the picture's own units, so that once scaled they still
    // read at MIN_TEXT_PX (the course's smallest text on a phone, mha.plotting.style).
    var longestQ = Math.max.apply(null, data.tokens_q.map(function (t) { return t.length; }));
    var longestK = Math.max.apply(null, data.tokens_k.map(function (t) { return t.length; }));
    var available = root.clientWidth || 640, font = 12, left, top, width, height;
    for (var pass = 0; pass < 3; pass++) {  // the words' room depends on their size: settle it
      left = 12 + 0.6 * font * longestQ;
      top = 12 + 0.6 * font * longestK;
      width = left + seqK * CELL + 11 * font;
      font = Math.max(12, Math.ceil(MIN_TEXT_PX * width / available));
    }
    height = top + seqQ * CELL + 8;
    var svg = el("svg", {viewBox: "0 0 " + width + " " + height, width: "100%",
      style: "max-width:" + width + "px;height:auto", role: "img", "class": "mha-sv-svg"}, root);
    svg.style.setProperty("--mha-sv-font", font + "px");
    var caption = el("title", {}, svg);
    data.tokens_k.forEach(function (t, j) {
      var x = left + (j + 0.5) * CELL;
      el("text", {x: x, y: top - 6, transform: "rotate(-60 " + x + " " + (top - 6) + ")",
        "class": "mha-sv-token"}, svg, t);
    });
    var cells = [], notes = [];
    data.tokens_q.forEach(function (t, i) {
      var y = top + i * CELL;
      el("text", {x: left - 6, y: y + CELL / 2 + 4, "text-anchor": "end", "class": "mha-sv-token"}, svg, t);
      cells.push(data.tokens_k.map(function (_, j) {
        var cell = el("rect", {x: left + j * CELL, y: y, width: CELL - 1, height: CELL - 1,
          "class": "mha-sv-cell", "data-query": i, "data-key": j}, svg);
        el("title", {}, cell);
        return cell;
      }));
      notes.push(el("text", {x: left + seqK * CELL + 8, y: y + CELL / 2 + 4, "class": "mha-sv-note"}, svg));
    });

    function draw() {
      var temperature = Math.pow(10, parseFloat(slider.value));
      var causal = toggle ? toggle.checked : !!data.causal;
      var w = weights(data.scores, temperature, causal);
      readout.textContent = temperature.toFixed(temperature < 1 ? 2 : 1);
      root.dataset.temperature = String(temperature);
      root.dataset.causal = causal ? "1" : "0";
      w.forEach(function (row, i) {
        var best = 0;
        row.forEach(function (x, j) {
          var cell = cells[i][j];
          cell.setAttribute("data-weight", x.toPrecision(9));
          cell.setAttribute("fill", causal && blocked(i, j, seqQ, seqK) ? "#ffffff" : viridis(x));
          cell.firstChild.textContent = data.tokens_q[i] + " \u2192 " + data.tokens_k[j] + ": " + x.toFixed(3);
          if (x > row[best]) {
            best = j;
          }
        });
        notes[i].textContent = "top: " + data.tokens_k[best] + " " + row[best].toFixed(2);
      });
      caption.textContent = "softmax(scores / " + temperature.toFixed(2) + ")" + (causal ? ", causal" : "");
    }

    slider.addEventListener("input", draw);
    if (toggle) {
      toggle.addEventListener("change", draw);
    }
    draw();
  }

  window.mhaSoftmaxView = {version: 1, mount: mount, weights: weights};
})();
