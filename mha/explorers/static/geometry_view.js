/* Queries and keys as arrows: drag the query, watch the dot products and the softmax weights follow.
 *
 * mha.explorers.self_attention_geometry writes one <div class="mha-gv"> holding a <script type="application/json">
 * with the keys (seq_k x 2), their tokens and the first query (2 numbers), inlines view_base.js and this
 * file, then calls window.mhaGeometryView.mount(root). Everything is computed here, in the browser, as
 * mha.lab.self_attention_one_head.geometry_weights does: score_j = q . k_j / sqrt(2), weights = softmax(scores) (each
 * score minus the largest, exponentiated, divided by the sum). The tests compare the two.
 *
 * Controls: drag (mouse, pen or finger) anywhere in the plane to move the query's tip; or focus the plane
 * and use the arrow keys (Shift: bigger steps, Home: back to the first query). A live region says where
 * the query points and which key gets most weight.
 */
(function () {
  "use strict";
  if (window.mhaGeometryView && window.mhaGeometryView.version >= 1) {
    return;
  }
  var SIZE = 300, BAR = 120;
  var COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#7f3c8d", "#a5aa99", "#000000",
    "#e73f74", "#3969ac", "#80ba5a", "#11a579"];
  var QUERY = "#E69F00";

  function scores(query, keys) {
    return keys.map(function (k) { return (query[0] * k[0] + query[1] * k[1]) / Math.SQRT2; });
  }

  function softmax(s) {
    var top = Math.max.apply(null, s);
    var e = s.map(function (x) { return Math.exp(x - top); });
    var total = e.reduce(function (a, b) { return a + b; }, 0);
    return e.map(function (x) { return x / total; });
  }

  function fixed(x, digits) {
    return x.toFixed(digits).replace("-", "\u2212");
  }

  /* Keys that point nearly the same way put their names on top of each other: move overlapping names apart
     vertically, as little as it takes, keeping each beside its arrow's tip. Needs the plane laid out (in a
     closed section getBBox is empty: the names stay where they are). */
  function spread(texts) {
    var boxes = texts.map(function (t) {
      var b = t.getBBox();
      return {t: t, y0: Number(t.getAttribute("y")), x: b.x, y: b.y, w: b.width, h: b.height, top: b.y};
    });
    if (!boxes.some(function (b) { return b.w > 0; })) {
      return;
    }
    function apart(a, b) {
      return a.x + a.w <= b.x || b.x + b.w <= a.x || a.top + a.h <= b.top || b.top + b.h <= a.top;
    }
    for (var pass = 0; pass < 50; pass++) {
      var moved = false;
      boxes.sort(function (a, b) { return a.top - b.top; });
      for (var i = 0; i < boxes.length; i++) {
        for (var j = i + 1; j < boxes.length; j++) {
          if (!apart(boxes[i], boxes[j])) {
            var push = (boxes[i].top + boxes[i].h - boxes[j].top) / 2 + 0.5;
            boxes[i].top = Math.max(0, boxes[i].top - push);
            boxes[j].top = Math.min(SIZE - boxes[j].h, boxes[j].top + push);
            moved = true;
          }
        }
      }
      if (!moved) {
        break;
      }
    }
    boxes.forEach(function (b) { b.t.setAttribute("y", b.y0 + b.top - b.y); });
  }

  function mount(root) {
    if (!root || root.dataset.mounted) {
      return;
    }
    root.dataset.mounted = "1";
    var base = window.mhaViewBase, el = base.el;
    var data = JSON.parse(root.querySelector("script.mha-gv-data").textContent);
    var keys = data.keys, tokens = data.tokens, first = data.query.slice();
    var query = first.slice();
    var extent = data.extent;  // the plane spans [-extent, extent] on both axes
    var scale = (SIZE / 2 - 14) / extent;
    function px(v) { return [SIZE / 2 + v[0] * scale, SIZE / 2 - v[1] * scale]; }
    function unpx(x, y) { return [(x - SIZE / 2) / scale, (SIZE / 2 - y) / scale]; }

    if (data.title) {
      el("div", {"class": "mha-gv-title"}, root, data.title);
    }
    el("p", {"class": "mha-gv-help"}, root, "Drag in the plane to move the query (orange), or focus it and use " +
      "the arrow keys. Dashed lines: each key's shadow on the query's direction; the longer the shadow, the " +
      "larger q\u00b7k.");
    var row = el("div", {"class": "mha-gv-row"}, root);
    var svg = el("svg", {viewBox: "0 0 " + SIZE + " " + SIZE, "class": "mha-gv-plane", tabindex: "0",
      role: "group", "aria-label": "Query and keys as arrows. Arrow keys move the query's tip; Shift moves " +
      "it further; Home puts it back.", "aria-describedby": root.id + "-status"}, row);
    el("rect", {x: 0, y: 0, width: SIZE, height: SIZE, "class": "mha-gv-bg"}, svg);
    var o = px([0, 0]);
    el("line", {x1: 0, y1: o[1], x2: SIZE, y2: o[1], "class": "mha-gv-axis"}, svg);
    el("line", {x1: o[0], y1: 0, x2: o[0], y2: SIZE, "class": "mha-gv-axis"}, svg);
    el("text", {x: SIZE - 4, y: o[1] - 4, "text-anchor": "end", "class": "mha-gv-axis-label"}, svg, "feature 1");
    el("text", {x: o[0] + 4, y: 12, "class": "mha-gv-axis-label"}, svg, "feature 2");
    var defs = el("defs", {}, svg);
    function marker(id, color) {
      var m = el("marker", {id: id, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "6",
        markerHeight: "6", orient: "auto-start-reverse"}, defs);
      el("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: color}, m);
    }
    var line = el("line", {"class": "mha-gv-query-line"}, svg);  // the query's direction, both ways
    var names = [];
    var shadows = keys.map(function (k, j) {
      var color = COLORS[j % COLORS.length];
      marker(root.id + "-k" + j, color);
      var tip = px(k);
      el("line", {x1: o[0], y1: o[1], x2: tip[0], y2: tip[1], stroke: color, "stroke-width": 2,
        "marker-end": "url(#" + root.id + "-k" + j + ")"}, svg);
      names.push(el("text", {x: tip[0] + (k[0] >= 0 ? 4 : -4), y: tip[1] + (k[1] >= 0 ? -4 : 12),
        "text-anchor": k[0] >= 0 ? "start" : "end", "class": "mha-gv-token"}, svg, tokens[j]));
      return el("line", {"class": "mha-gv-shadow", stroke: color}, svg);
    });
    spread(names);
    marker(root.id + "-q", QUERY);
    var arrow = el("line", {x1: o[0], y1: o[1], stroke: QUERY, "stroke-width": 4,
      "marker-end": "url(#" + root.id + "-q)", "class": "mha-gv-query"}, svg);
    var handle = el("circle", {r: 9, "class": "mha-gv-handle"}, svg);
    var label = el("text", {"class": "mha-gv-query-label"}, svg, "q (" + data.query_token + ")");

    var table = el("div", {"class": "mha-gv-bars"}, row);
    el("div", {"class": "mha-gv-head"}, table, "key");
    el("div", {"class": "mha-gv-head"}, table, "score q\u00b7k/\u221a2");
    el("div", {"class": "mha-gv-head"}, table, "weight");
    var bars = keys.map(function (k, j) {
      var key = el("div", {"class": "mha-gv-key"}, table);
      el("span", {"class": "mha-gv-swatch", style: "background:" + COLORS[j % COLORS.length]}, key);
      key.appendChild(document.createTextNode(tokens[j]));
      var scoreCell = el("div", {"class": "mha-gv-cell"}, table);
      var scoreSvg = el("svg", {viewBox: "0 0 " + BAR + " 18", width: BAR, height: 18}, scoreCell);
      el("line", {x1: BAR / 2, y1: 0, x2: BAR / 2, y2: 18, "class": "mha-gv-axis"}, scoreSvg);
      var scoreBar = el("rect", {y: 3, height: 12, "class": "mha-gv-score"}, scoreSvg);
      var scoreText = el("span", {"class": "mha-gv-number"}, scoreCell);
      var weightCell = el("div", {"class": "mha-gv-cell"}, table);
      var weightSvg = el("svg", {viewBox: "0 0 " + BAR + " 18", width: BAR, height: 18}, weightCell);
      el("rect", {x: 0, y: 3, width: BAR, height: 12, "class": "mha-gv-track"}, weightSvg);
      var weightBar = el("rect", {x: 0, y: 3, height: 12, "class": "mha-gv-weight", "data-key": j}, weightSvg);
      var weightText = el("span", {"class": "mha-gv-number"}, weightCell);
      return {score: scoreBar, scoreText: scoreText, weight: weightBar, weightText: weightText};
    });
    var status = el("p", {"class": "mha-gv-status", id: root.id + "-status", "aria-live": "polite"}, root);
    var limit = Math.max.apply(null, keys.map(function (k) { return Math.hypot(k[0], k[1]); })) * extent / Math.SQRT2;

    function draw() {
      var tip = px(query);
      arrow.setAttribute("x2", tip[0]);
      arrow.setAttribute("y2", tip[1]);
      handle.setAttribute("cx", tip[0]);
      handle.setAttribute("cy", tip[1]);
      label.setAttribute("x", tip[0] + 10);
      label.setAttribute("y", tip[1] + (query[1] >= 0 ? -10 : 18));
      var length = Math.hypot(query[0], query[1]) || 1e-12;
      var unit = [query[0] / length, query[1] / length];
      var far = [unit[0] * extent * 2, unit[1] * extent * 2];
      var a = px(far), b = px([-far[0], -far[1]]);
      line.setAttribute("x1", a[0]);
      line.setAttribute("y1", a[1]);
      line.setAttribute("x2", b[0]);
      line.setAttribute("y2", b[1]);
      var s = scores(query, keys), w = softmax(s);
      var best = 0;
      keys.forEach(function (k, j) {
        var along = k[0] * unit[0] + k[1] * unit[1];  // the key's shadow on the query's direction
        var foot = px([unit[0] * along, unit[1] * along]), kt = px(k);
        shadows[j].setAttribute("x1", kt[0]);
        shadows[j].setAttribute("y1", kt[1]);
        shadows[j].setAttribute("x2", foot[0]);
        shadows[j].setAttribute("y2", foot[1]);
        var half = Math.min(1, Math.abs(s[j]) / limit) * (BAR / 2 - 2);
        bars[j].score.setAttribute("x", s[j] >= 0 ? BAR / 2 : BAR / 2 - half);
        bars[j].score.setAttribute("width", half);
        bars[j].score.setAttribute("fill", s[j] >= 0 ? "#b2182b" : "#2166ac");
        bars[j].scoreText.textContent = fixed(s[j], 2);
        bars[j].weight.setAttribute("width", w[j] * BAR);
        bars[j].weight.setAttribute("fill", base.viridis(w[j]));
        bars[j].weight.setAttribute("data-weight", w[j].toPrecision(9));
        bars[j].weightText.textContent = w[j].toFixed(2);
        if (w[j] > w[best]) {
          best = j;
        }
      });
      root.dataset.query = query[0].toPrecision(9) + "," + query[1].toPrecision(9);
      status.textContent = "Query (" + fixed(query[0], 2) + ", " + fixed(query[1], 2) + "), length " +
        length.toFixed(2) + ": most weight on \u201c" + tokens[best] + "\u201d, " + w[best].toFixed(2) + ".";
    }

    function clamp(v) {
      return Math.max(-extent, Math.min(extent, v));
    }

    function moveTo(event) {
      var box = svg.getBoundingClientRect();
      var x = (event.clientX - box.left) * SIZE / box.width, y = (event.clientY - box.top) * SIZE / box.height;
      var v = unpx(x, y);
      query = [clamp(v[0]), clamp(v[1])];
      draw();
    }

    var dragging = false;
    svg.addEventListener("pointerdown", function (event) {
      dragging = true;
      if (svg.setPointerCapture) {
        svg.setPointerCapture(event.pointerId);
      }
      event.preventDefault();
      moveTo(event);
    });
    svg.addEventListener("pointermove", function (event) {
      if (dragging) {
        moveTo(event);
      }
    });
    ["pointerup", "pointercancel"].forEach(function (name) {
      svg.addEventListener(name, function () { dragging = false; });
    });
    svg.addEventListener("keydown", function (event) {
      var step = (event.shiftKey ? 0.5 : 0.1) * extent / 2;
      var moves = {ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step]};
      if (event.key === "Home") {
        query = first.slice();
      } else if (moves[event.key]) {
        query = [clamp(query[0] + moves[event.key][0]), clamp(query[1] + moves[event.key][1])];
      } else {
        return;
      }
      event.preventDefault();
      draw();
    });
    draw();
  }

  window.mhaGeometryView = {version: 1, mount: mount, scores: scores, softmax: softmax};
})();
