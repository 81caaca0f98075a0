/* The course's attention views: head view, model view, query-key view (plain JS + SVG, no library).
 *
 * mha.explorers.attention_view writes one <div class="mha-av"> per view, a <script type="application/json">
 * holding the encoded arrays, and this file inlined once per output, then calls
 * window.mhaAttentionView.mount(root). Everything the reader sees is computed here from those arrays, so
 * the view works the same on the static site, in JupyterLab and in JupyterLite.
 *
 * Data (see attention_view.py for the encoder): per sentence, attention weights as uint8 (w * 255) in
 * (n_layers, n_heads, seq, seq) order, and optionally queries and keys as int16 with one scale per
 * (layer, head), in (n_layers, n_heads, seq, d_head) order.
 */
(function () {
  "use strict";
  if (window.mhaAttentionView && window.mhaAttentionView.version >= 1) {
    return;
  }
  var SVG = "http://www.w3.org/2000/svg";
  var VIRIDIS = ["440154", "472d7b", "3b528b", "2c728e", "21918c", "28ae80", "5ec962", "addc30", "fde725"];
  var DIVERGING = ["053061", "2a71b2", "6bacd1", "c2ddec", "f7f6f6", "fbccb4", "e48066", "ba2832", "67001f"];
  var HEAD_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#7f3c8d",
    "#a5aa99", "#11a579", "#e73f74", "#3969ac", "#80ba5a"];
  var ROW = 20;

  /* Black or white, whichever contrasts more with a #rrggbb colour (WCAG relative luminance): the text
     of a head's button when the button is filled with the head's colour. */
  function inkOn(color) {
    var channels = [1, 3, 5].map(function (i) {
      var c = parseInt(color.slice(i, i + 2), 16) / 255;
      return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    var luminance = 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2];
    return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? "#000" : "#fff";
  }

  function bytes(base64) {
    var text = atob(base64);
    var out = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) {
      out[i] = text.charCodeAt(i);
    }
    return out;
  }

  function ramp(stops, t) {
    t = Math.min(1, Math.max(0, t)) * (stops.length - 1);
    var i = Math.min(stops.length - 2, Math.floor(t));
    var f = t - i;
    var a = stops[i], b = stops[i + 1];
    var rgb = [0, 2, 4].map(function (o) {
      var x = parseInt(a.substr(o, 2), 16), y = parseInt(b.substr(o, 2), 16);
      return Math.round(x + (y - x) * f);
    });
    return rgb;
  }

  function css(rgb) {
    return "rgb(" + rgb.join(",") + ")";
  }

  function el(tag, attrs, parent, ns) {
    var node = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (name === "text") {
        node.textContent = attrs[name];
      } else {
        node.setAttribute(name, attrs[name]);
      }
    });
    if (parent) {
      parent.appendChild(node);
    }
    return node;
  }

  function svg(tag, attrs, parent) {
    return el(tag, attrs, parent, true);
  }

  /* One sentence's arrays, decoded. */
  function Sentence(raw, shape) {
    this.label = raw.label;
    this.tokens = raw.tokens;
    this.seq = raw.tokens.length;
    this.nHeads = shape.n_heads;
    this.dHead = shape.d_head;
    var codes = bytes(raw.attention);
    this.attention = new Float32Array(codes.length);
    for (var i = 0; i < codes.length; i++) {
      this.attention[i] = codes[i] / 255;
    }
    if (raw.queries) {
      this.queries = this.dequantise(raw.queries, raw.query_scales);
      this.keys = this.dequantise(raw.keys, raw.key_scales);
    }
  }
  Sentence.prototype.dequantise = function (base64, scales) {
    var codes = new Int16Array(bytes(base64).buffer);  // little-endian, as every browser's platform
    var out = new Float32Array(codes.length);
    var block = this.seq * this.dHead;  // one (layer, head)
    for (var i = 0; i < codes.length; i++) {
      out[i] = codes[i] * scales[Math.floor(i / block)];
    }
    return out;
  };
  Sentence.prototype.weight = function (layer, head, query, key) {
    return this.attention[((layer * this.nHeads + head) * this.seq + query) * this.seq + key];
  };
  Sentence.prototype.vector = function (array, layer, head, token) {
    var start = ((layer * this.nHeads + head) * this.seq + token) * this.dHead;
    return array.subarray(start, start + this.dHead);
  };
  /* How one query's score with every key is made: products q*k, scores sum/sqrt(d), softmax. */
  Sentence.prototype.queryKey = function (layer, head, query) {
    var q = this.vector(this.queries, layer, head, query);
    var scale = 1 / Math.sqrt(this.dHead);
    var rows = [];
    for (var key = 0; key < this.seq; key++) {
      var k = this.vector(this.keys, layer, head, key);
      var products = new Float32Array(this.dHead);
      var sum = 0;
      for (var d = 0; d < this.dHead; d++) {
        products[d] = q[d] * k[d];
        sum += products[d];
      }
      rows.push({ key: key, k: k, products: products, score: sum * scale });
    }
    var top = Math.max.apply(null, rows.map(function (r) { return r.score; }));
    var total = rows.reduce(function (s, r) { return s + Math.exp(r.score - top); }, 0);
    rows.forEach(function (r) { r.softmax = Math.exp(r.score - top) / total; });
    return { q: q, rows: rows };
  };

  function View(root, data) {
    this.root = root;
    this.data = data;
    this.threshold = data.threshold;
    this.sentences = data.sentences.map(function (s) { return new Sentence(s, data); });
    this.state = {
      sentence: 0, layer: data.layer, heads: data.heads.slice(), active: data.heads[0],
      pinned: data.query === null ? null : { side: "query", index: data.query }, hover: null,
    };
    this.build();
    this.render();
  }

  View.prototype.sentence = function () {
    return this.sentences[this.state.sentence];
  };

  View.prototype.build = function () {
    var self = this, data = this.data, root = el("div", { "class": "mha-av-body" }, this.root);
    if (data.title) {
      el("p", { "class": "mha-av-title", text: data.title }, root);
    }
    var controls = el("div", { "class": "mha-av-controls" }, root);
    if (this.sentences.length > 1) {
      var label = el("label", { text: "Sentence " }, controls);
      this.sentenceSelect = el("select", { "class": "mha-av-sentence" }, label);
      this.sentences.forEach(function (s, i) {
        el("option", { value: i, text: s.label }, self.sentenceSelect);
      });
      this.sentenceSelect.addEventListener("change", function () {
        self.state.sentence = Number(this.value);
        self.state.pinned = null;
        self.render();
      });
    }
    if (data.views.indexOf("head") >= 0 || data.views.indexOf("query_key") >= 0) {
      var layerLabel = el("label", { text: "Layer " }, controls);
      this.layerSelect = el("select", { "class": "mha-av-layer" }, layerLabel);
      for (var l = 0; l < data.n_layers; l++) {
        el("option", { value: l, text: String(l) }, this.layerSelect);
      }
      this.layerSelect.addEventListener("change", function () {
        self.state.layer = Number(this.value);
        self.render();
      });
      var heads = el("div", { "class": "mha-av-heads", role: "group", "aria-label": "Heads shown" }, controls);
      el("span", { text: "Heads " }, heads);
      this.headButtons = [];
      for (var h = 0; h < data.n_heads; h++) {
        var button = el("button", {
          type: "button", "class": "mha-av-head-toggle", "data-head": h, "aria-label": "head " + h,
          title: "show or hide head " + h, text: String(h),
        }, heads);
        button.style.setProperty("--mha-head-color", HEAD_COLORS[h % HEAD_COLORS.length]);
        button.style.setProperty("--mha-head-ink", inkOn(HEAD_COLORS[h % HEAD_COLORS.length]));
        button.addEventListener("click", this.toggleHead.bind(this, h));
        this.headButtons.push(button);
      }
    }
    this.panels = {};
    data.views.forEach(function (name) {
      var panel = el("div", { "class": "mha-av-panel mha-av-" + name.replace("_", "-") }, root);
      self.panels[name] = panel;
    });
  };

  View.prototype.toggleHead = function (head) {
    var heads = this.state.heads, at = heads.indexOf(head);
    if (at >= 0 && heads.length > 1) {
      heads.splice(at, 1);
      if (this.state.active === head) {
        this.state.active = heads[heads.length - 1];
      }
    } else if (at < 0) {
      heads.push(head);
      heads.sort(function (a, b) { return a - b; });
      this.state.active = head;
    }
    this.render();
  };

  View.prototype.openHead = function (layer, head) {
    this.state.layer = layer;
    this.state.heads = [head];
    this.state.active = head;
    this.render();
    var target = this.panels.head || this.panels.query_key;
    if (target && target.scrollIntoView) {
      target.scrollIntoView({ block: "nearest" });
    }
  };

  View.prototype.render = function () {
    var st = this.state;
    if (this.layerSelect) {
      this.layerSelect.value = String(st.layer);
    }
    (this.headButtons || []).forEach(function (b, h) {
      b.setAttribute("aria-pressed", st.heads.indexOf(h) >= 0 ? "true" : "false");
    });
    if (this.panels.model) {
      this.renderModel();
    }
    if (this.panels.head) {
      this.renderHead();
    }
    if (this.panels.query_key) {
      this.renderQueryKey();
    }
  };

  /* ---------------------------------------------------------------- model view: layers x heads */
  View.prototype.renderModel = function () {
    var self = this, s = this.sentence(), panel = this.panels.model, data = this.data;
    if (this.modelSentence === this.state.sentence) {  // same maps: only the open head changes
      panel.querySelectorAll(".mha-av-cell").forEach(function (cell) {
        cell.setAttribute("aria-pressed", st(Number(cell.dataset.layer), Number(cell.dataset.head)));
      });
      return;
    }
    this.modelSentence = this.state.sentence;
    panel.textContent = "";
    el("p", { "class": "mha-av-caption",
      text: "Model view: rows are layers, columns heads; in each map queries run down, keys across. "
        + "Click a map to open that head (or Tab to the maps, move with the arrow keys, Enter opens)." }, panel);
    var grid = el("div", { "class": "mha-av-grid", role: "group", "aria-label": "every layer and head" }, panel);
    // One Tab stop for all the maps, arrow keys between them (a roving tabindex, as the token columns).
    grid.addEventListener("keydown", this.onCellKey.bind(this));
    grid.addEventListener("focusin", function (event) {
      if (event.target.classList.contains("mha-av-cell")) {
        self.roveTo(event.target);
      }
    });
    grid.style.gridTemplateColumns = "auto repeat(" + data.n_heads + ", auto)";
    // Every head in view: each map as large as the column allows, 40 px at most and 16 at least
    // (a finger's tap on a phone lands on a 24-px cell); narrower than that, the grid scrolls.
    var room = (this.root.clientWidth || 640) - 34 - 3 * data.n_heads;
    grid.style.setProperty("--mha-av-map", Math.max(16, Math.min(40, Math.floor(room / data.n_heads) - 6)) + "px");
    el("span", {}, grid);
    for (var h = 0; h < data.n_heads; h++) {
      el("span", { "class": "mha-av-axis", text: "h" + h }, grid);
    }
    for (var layer = 0; layer < data.n_layers; layer++) {
      el("span", { "class": "mha-av-axis", text: "L" + layer }, grid);
      for (var head = 0; head < data.n_heads; head++) {
        var cell = el("button", {
          type: "button", "class": "mha-av-cell", "data-layer": layer, "data-head": head,
          "aria-label": "layer " + layer + ", head " + head + ": open in the head view",
          "aria-pressed": st(layer, head), tabindex: -1,
        }, grid);
        var canvas = el("canvas", { width: s.seq, height: s.seq }, cell);
        paintMap(canvas, s, layer, head);
        cell.addEventListener("click", this.openHead.bind(this, layer, head));
      }
    }
    this.roveTo(grid.querySelector(".mha-av-cell[aria-pressed='true']") || grid.querySelector(".mha-av-cell"));
    function st(layer, head) {
      return layer === self.state.layer && self.state.heads.indexOf(head) >= 0 ? "true" : "false";
    }
  };

  /* The model view's one Tab stop moves to `cell`. */
  View.prototype.roveTo = function (cell) {
    if (!cell || cell.getAttribute("tabindex") === "0") {
      return;
    }
    this.panels.model.querySelectorAll(".mha-av-cell").forEach(function (other) {
      other.setAttribute("tabindex", -1);
    });
    cell.setAttribute("tabindex", 0);
  };

  /* Arrow keys move between maps (left/right: heads, up/down: layers), Home/End to a row's ends
     (with Ctrl: the first and last map); Enter or Space opens one (it is a button). */
  View.prototype.onCellKey = function (event) {
    var cell = event.target.closest && event.target.closest(".mha-av-cell");
    if (!cell) {
      return;
    }
    var layer = Number(cell.dataset.layer), head = Number(cell.dataset.head);
    var lastLayer = this.data.n_layers - 1, lastHead = this.data.n_heads - 1;
    switch (event.key) {
      case "ArrowRight": head = Math.min(lastHead, head + 1); break;
      case "ArrowLeft": head = Math.max(0, head - 1); break;
      case "ArrowDown": layer = Math.min(lastLayer, layer + 1); break;
      case "ArrowUp": layer = Math.max(0, layer - 1); break;
      case "Home": head = 0; layer = event.ctrlKey ? 0 : layer; break;
      case "End": head = lastHead; layer = event.ctrlKey ? lastLayer : layer; break;
      default: return;
    }
    event.preventDefault();
    var next = this.panels.model.querySelector(
      ".mha-av-cell[data-layer='" + layer + "'][data-head='" + head + "']");
    this.roveTo(next);
    next.focus();
  };

  function paintMap(canvas, s, layer, head) {
    var context = canvas.getContext("2d");
    if (!context) {
      return;
    }
    var image = context.createImageData(s.seq, s.seq);
    for (var i = 0; i < s.seq; i++) {
      for (var j = 0; j < s.seq; j++) {
        var rgb = ramp(VIRIDIS, s.weight(layer, head, i, j));
        var o = 4 * (i * s.seq + j);
        image.data[o] = rgb[0];
        image.data[o + 1] = rgb[1];
        image.data[o + 2] = rgb[2];
        image.data[o + 3] = 255;
      }
    }
    context.putImageData(image, 0, 0);
  }

  /* ---------------------------------------------------------------- head view: two token columns */
  View.prototype.renderHead = function () {
    var self = this, s = this.sentence(), panel = this.panels.head, st = this.state;
    panel.textContent = "";
    el("p", { "class": "mha-av-caption",
      text: "Head view, layer " + st.layer + ": left, the token that attends; right, the tokens it reads. "
        + "Hover or focus a token (Tab, then arrow keys) to see only its lines; Enter keeps it, Escape lets go. "
        + "Weights under " + this.threshold + " are not drawn." }, panel);
    // Drawn for the room it has: at most 460 px wide; on a phone's column the token columns keep
    // the room their longest word needs (at 12 px, about 7 px a character) and the lines get the rest.
    var longest = Math.max.apply(null, s.tokens.map(function (t) { return t.length; }));
    var label = Math.min(142, 16 + 7 * longest);
    var width = Math.max(2 * label + 60, Math.min(460, this.root.clientWidth || 460));
    var left = label + 8, right = width - label - 8, height = 12 + s.seq * ROW;
    var picture = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height,
      "class": "mha-av-head-svg",
      role: "group", "aria-label": "head view, layer " + st.layer + ", heads " + st.heads.join(", ") }, panel);
    this.lines = svg("g", { "class": "mha-av-lines" }, picture);
    this.tokenNodes = { query: [], key: [] };
    ["query", "key"].forEach(function (side) {
      var column = svg("g", { "class": "mha-av-column", "data-side": side }, picture);
      s.tokens.forEach(function (token, i) {
        var y = 6 + i * ROW;
        var g = svg("g", {
          "class": "mha-av-token", "data-side": side, "data-index": i, role: "button", tabindex: -1,
          "aria-label": (side === "query" ? "query " : "key ") + token + ", token " + (i + 1) + " of " + s.seq,
        }, column);
        var x = side === "query" ? left - label + 4 : right + 4;
        svg("rect", { x: x, y: y, width: label - 8, height: ROW - 2, rx: 3 }, g);
        svg("text", { x: side === "query" ? left - 8 : right + 8, y: y + ROW / 2 + 4,
          "text-anchor": side === "query" ? "end" : "start", text: token }, g);
        g.addEventListener("mouseenter", function () { self.setHover({ side: side, index: i }); });
        g.addEventListener("mouseleave", function () { self.setHover(null); });
        g.addEventListener("focus", function () { self.setHover({ side: side, index: i }); });
        g.addEventListener("blur", function () { self.setHover(null); });
        g.addEventListener("click", function () { self.pin({ side: side, index: i }); });
        g.addEventListener("keydown", function (event) { self.onTokenKey(event, side, i); });
        self.tokenNodes[side].push(g);
      });
    });
    var pinned = st.pinned;
    var start = pinned ? pinned : { side: "query", index: 0 };
    this.tokenNodes[start.side][start.index].setAttribute("tabindex", 0);
    if (!pinned || pinned.side !== "key") {
      this.tokenNodes.key[0].setAttribute("tabindex", 0);
    } else {
      this.tokenNodes.query[0].setAttribute("tabindex", 0);
    }
    this.geometry = { left: left, right: right };
    this.status = el("p", { "class": "mha-av-status", "aria-live": "polite" }, panel);
    this.drawLines();
  };

  View.prototype.focusToken = function () {
    return this.state.hover || this.state.pinned;
  };

  View.prototype.setHover = function (token) {
    this.state.hover = token;
    this.drawLines();
  };

  View.prototype.pin = function (token) {
    var p = this.state.pinned;
    this.state.pinned = p && p.side === token.side && p.index === token.index ? null : token;
    this.drawLines();
    if (this.panels.query_key && this.state.pinned && this.state.pinned.side === "query") {
      this.renderQueryKey();
    }
  };

  View.prototype.onTokenKey = function (event, side, i) {
    var n = this.sentence().seq, target = null;
    switch (event.key) {
      case "ArrowDown": target = { side: side, index: Math.min(n - 1, i + 1) }; break;
      case "ArrowUp": target = { side: side, index: Math.max(0, i - 1) }; break;
      case "Home": target = { side: side, index: 0 }; break;
      case "End": target = { side: side, index: n - 1 }; break;
      case "ArrowLeft": target = { side: "query", index: i }; break;
      case "ArrowRight": target = { side: "key", index: i }; break;
      case "Enter": case " ": this.pin({ side: side, index: i }); event.preventDefault(); return;
      case "Escape": this.state.pinned = null; this.drawLines(); return;
      default: return;
    }
    event.preventDefault();
    var nodes = this.tokenNodes[target.side];
    nodes.forEach(function (node) { node.setAttribute("tabindex", -1); });
    nodes[target.index].setAttribute("tabindex", 0);
    nodes[target.index].focus();
  };

  /* Redraw the lines: every query's, or only the hovered/focused/pinned token's. */
  View.prototype.drawLines = function () {
    var s = this.sentence(), st = this.state, g = this.geometry, group = this.lines;
    if (!group) {
      return;
    }
    group.textContent = "";
    var focus = this.focusToken();
    var drawn = 0;
    for (var hi = 0; hi < st.heads.length; hi++) {
      var head = st.heads[hi], color = HEAD_COLORS[head % HEAD_COLORS.length];
      for (var i = 0; i < s.seq; i++) {
        if (focus && focus.side === "query" && focus.index !== i) {
          continue;
        }
        for (var j = 0; j < s.seq; j++) {
          if (focus && focus.side === "key" && focus.index !== j) {
            continue;
          }
          var w = s.weight(st.layer, head, i, j);
          if (w < this.threshold) {
            continue;
          }
          svg("line", {
            x1: g.left, y1: 6 + i * ROW + ROW / 2, x2: g.right, y2: 6 + j * ROW + ROW / 2,
            stroke: color, "stroke-opacity": w.toFixed(4), "stroke-width": (1 + 3 * w).toFixed(2),
            "data-head": head, "data-query": i, "data-key": j, "data-weight": w.toFixed(4),
          }, group);
          drawn++;
        }
      }
    }
    ["query", "key"].forEach(function (side) {
      (this.tokenNodes[side] || []).forEach(function (node, i) {
        var on = focus && focus.side === side && focus.index === i;
        node.classList.toggle("mha-av-active", Boolean(on));
        var pinned = st.pinned && st.pinned.side === side && st.pinned.index === i;
        node.setAttribute("aria-pressed", pinned ? "true" : "false");
      });
    }, this);
    if (this.status) {
      var what = focus ? (focus.side === "query" ? "from " : "into ") + "'" + s.tokens[focus.index] + "'"
        : "of every query";
      this.status.textContent = "Layer " + st.layer + ", head" + (st.heads.length > 1 ? "s " : " ")
        + st.heads.join(", ") + ": " + drawn + (drawn === 1 ? " line " : " lines ") + what + ".";
    }
  };

  /* ---------------------------------------------------------------- query-key view */
  View.prototype.renderQueryKey = function () {
    var self = this, s = this.sentence(), panel = this.panels.query_key, st = this.state;
    panel.textContent = "";
    if (!s.queries) {
      el("p", { "class": "mha-av-caption", text: "No queries and keys were embedded for this sentence." }, panel);
      return;
    }
    var query = st.pinned && st.pinned.side === "query" ? st.pinned.index : (this.qkQuery || 0);
    this.qkQuery = query;
    var head = st.active, d = s.dHead;
    el("p", { "class": "mha-av-caption",
      text: "Query-key view, layer " + st.layer + ", head " + head + ": the query's vector q (top), each key's "
        + "vector k, their element-wise product q\u00b7k, its sum divided by \u221a" + d
        + " (the score), and the softmax over keys (the attention weight)." }, panel);
    var label = el("label", { text: "Query " }, panel);
    var select = el("select", { "class": "mha-av-query" }, label);
    s.tokens.forEach(function (token, i) { el("option", { value: i, text: i + ": " + token }, select); });
    select.value = String(query);
    select.addEventListener("change", function () {
      self.qkQuery = Number(this.value);
      if (self.state.pinned) {
        self.state.pinned = { side: "query", index: self.qkQuery };
        self.drawLines();
      }
      self.renderQueryKey();
    });
    var made = s.queryKey(st.layer, head, query);
    var cell = 6, labelWidth = 96, blockWidth = d * cell, gap = 14;
    var x0 = labelWidth, x1 = x0 + blockWidth + gap, x2 = x1 + blockWidth + gap, x3 = x2 + 56;
    var width = x3 + 110, height = 36 + (s.seq + 1) * 16;
    var box = el("div", { "class": "mha-av-scroll" }, panel);
    // Shrinks to the column when it is a little narrower (the dark theme pads outputs: the last digit
    // of the weights was cut), but not below 85 %: on a phone it scrolls sideways instead.
    var picture = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height,
      "class": "mha-av-qk-svg", style: "max-width:100%;height:auto;min-width:" + Math.round(0.85 * width) + "px",
      role: "img", "aria-label": "how the query '" + s.tokens[query] + "' scores every key" }, box);
    // A cell's numbers sit in its tooltip, which a mouse shows on hover; a tap (or click) writes them
    // here, as a phone shows no tooltips.
    var reading = el("p", { "class": "mha-av-status", "aria-live": "polite",
      text: "Tap or hover over a cell for its numbers." }, panel);
    picture.addEventListener("click", function (event) {
      var title = event.target.querySelector && event.target.querySelector("title");
      if (title) reading.textContent = title.textContent;
    });
    var vmax = 1e-6, pmax = 1e-6;
    made.rows.forEach(function (r) {
      for (var i = 0; i < d; i++) {
        vmax = Math.max(vmax, Math.abs(r.k[i]));
        pmax = Math.max(pmax, Math.abs(r.products[i]));
      }
    });
    for (var i = 0; i < d; i++) {
      vmax = Math.max(vmax, Math.abs(made.q[i]));
    }
    [["k", x0], ["q\u00b7k", x1], ["score", x2], ["softmax", x3]].forEach(function (h) {
      svg("text", { x: h[1], y: 12, "class": "mha-av-head-label", text: h[0] }, picture);
    });
    function strip(values, x, y, max, describe) {
      for (var i = 0; i < values.length; i++) {
        var rect = svg("rect", { x: x + i * cell, y: y, width: cell - 1, height: 13,
          fill: css(ramp(DIVERGING, 0.5 + values[i] / (2 * max))) }, picture);
        svg("title", { text: describe(i) }, rect);
      }
    }
    var top = 20;
    svg("text", { x: labelWidth - 6, y: top + 11, "text-anchor": "end", "class": "mha-av-strong",
      text: "q: " + s.tokens[query] }, picture);
    strip(made.q, x0, top, vmax, function (i) { return "q[" + i + "] = " + made.q[i].toFixed(3); });
    made.rows.forEach(function (r, row) {
      var y = top + 16 * (row + 1);
      var g = svg("g", { "class": "mha-av-qk-row", "data-key": r.key, "data-score": r.score.toFixed(4),
        "data-weight": r.softmax.toFixed(4) }, picture);
      svg("text", { x: labelWidth - 6, y: y + 11, "text-anchor": "end", text: s.tokens[r.key] }, g);
      strip(r.k, x0, y, vmax, function (i) { return "k[" + i + "] = " + r.k[i].toFixed(3); });
      strip(r.products, x1, y, pmax, function (i) {
        return "q[" + i + "] \u00d7 k[" + i + "] = " + made.q[i].toFixed(3) + " \u00d7 " + r.k[i].toFixed(3)
          + " = " + r.products[i].toFixed(3);
      });
      svg("text", { x: x2 + 44, y: y + 11, "text-anchor": "end", text: r.score.toFixed(2) }, g);
      svg("rect", { x: x3, y: y + 1, width: Math.max(0.5, 80 * r.softmax), height: 11,
        fill: HEAD_COLORS[head % HEAD_COLORS.length] }, g);
      svg("text", { x: x3 + 84, y: y + 11, text: r.softmax.toFixed(2) }, g);
    });
  };

  function build(root, data) {
    root.setAttribute("data-mounted", "true");
    var view = new View(root, data);
    root.mhaView = view;
    return view;
  }

  /* Calls `callback` once `element` is within two screens of the viewport (at once without an
     IntersectionObserver). */
  function whenNear(element, callback) {
    if (!("IntersectionObserver" in window)) {
      callback();
      return;
    }
    var observer = new IntersectionObserver(function (entries) {
      if (entries.some(function (entry) { return entry.isIntersecting; })) {
        observer.disconnect();
        callback();
      }
    }, { rootMargin: "200% 0px 200% 0px" });
    observer.observe(element);
  }

  /* Draws the views of `root` from its JSON data: inline, or (on the book's site, where the build moves
     large data out of the page: book/view_data.py) fetched from the file its `data-src` names when the
     views come near the screen. */
  function mount(root) {
    if (!root || root.getAttribute("data-mounted")) {
      return null;
    }
    var source = root.querySelector("script[type='application/json']");
    if (source.getAttribute("data-src") && !source.textContent.trim()) {
      root.setAttribute("data-mounted", "pending");
      whenNear(root, function () {
        fetch(source.getAttribute("data-src"))
          .then(function (response) { return response.json(); })
          .then(function (data) { build(root, data); })
          .catch(function (error) {
            root.setAttribute("data-mounted", "failed");
            root.insertAdjacentText("beforeend", "The attention views could not load their data (" + error + ").");
          });
      });
      return null;
    }
    return build(root, JSON.parse(source.textContent));
  }

  window.mhaAttentionView = { version: 1, mount: mount, Sentence: Sentence };
})();
