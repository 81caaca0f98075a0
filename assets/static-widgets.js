/* Draws the page's widgets on the static site: sliders that flip pre-rendered frames, in a few kB.
 *
 * A chapter's explorers (mha.explorers.frames) are ipywidgets: sliders and toggle buttons linked
 * (jslink) to stacks of frames, saved in the page as widget state. No kernel runs behind the page, so
 * all a reader's browser needs is to draw those controls and follow the links. ipywidgets' own
 * renderer, html-manager, does that in a 1.8 MB bundle (0.45 MB gzip: 2.5 s on a phone's Slow 4G,
 * then 1-3 s of a phone's CPU before the first slider). This file draws the models the book uses
 * with the DOM and classes ipywidgets 8 gives them (so the site's styles, scripts and tests apply
 * unchanged) and follows their links. A page holding any other model is drawn by html-manager
 * instead, fetched when needed: the one door to the full renderer.
 *
 * Widgets are drawn when the first one comes near the screen (1.5 screens ahead), before printing,
 * and when `window.mhaWidgets.load()` is called (the PDF build and the browser tests draw every
 * widget of a page at once that way). The page's <html> then carries data-mha-widgets="loaded"
 * (or "failed"), and data-mha-renderer="site" or "manager".
 *
 * Behaviour kept from ipywidgets: a slider moves with the pointer and the keyboard (arrows, Page
 * Up/Down by five steps, Home, End) and, its models being `continuous_update=False`, changes its
 * frame when released; a stack shows only its selected child, drawn the first time it is shown.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  var MANAGER = new URL("vendored/html-manager/embed.js", script.src).href;
  var STATE = 'script[type="application/vnd.jupyter.widget-state+json"]';
  var VIEWS = 'script[type="application/vnd.jupyter.widget-view+json"]';
  var AHEAD = "150% 0px 150% 0px";  // start drawing 1.5 screens before a widget is in view
  var PAGE_STEPS = 5;  // Page Up / Page Down move five steps, as ipywidgets' slider does
  var REF = "IPY_MODEL_";

  /* 1. Models: state, change listeners, links ---------------------------------------------- */
  function Model(name, state) {
    this.name = name;
    this.state = state;
    this.listeners = {};
  }
  // What a saved state may leave out: ipywidgets' embedding drops values equal to their defaults.
  var DEFAULTS = {
    IntSliderModel: { value: 0, min: 0, max: 100, step: 1, readout_format: "d" },
    FloatSliderModel: { value: 0, min: 0, max: 100, step: 0.1, readout_format: ".2f" },
    FloatLogSliderModel: { value: 1, min: 0, max: 4, step: 0.1, base: 10, readout_format: ".3g" },
    SelectionSliderModel: { index: 0 },  // a selection slider always has a value; a menu may not
  };
  var COMMON = {
    description: "", description_allow_html: false, disabled: false, tooltip: null, placeholder: "",
    value: "", index: null, selected_index: null, children: [], outputs: [], tooltips: [],
    _dom_classes: [], _options_labels: [], readout: true, continuous_update: true,
    orientation: "horizontal",
  };
  Model.prototype.get = function (key) {
    if (key in this.state) return this.state[key];
    var own = DEFAULTS[this.name];
    return own && key in own ? own[key] : COMMON[key];
  };
  Model.prototype.set = function (key, value) {
    if (this.state[key] === value) return;  // also ends the echo of a two-way link
    this.state[key] = value;
    (this.listeners[key] || []).forEach(function (listener) { listener(value); });
  };
  Model.prototype.on = function (key, listener) {
    (this.listeners[key] = this.listeners[key] || []).push(listener);
  };
  // A view shows `key` now and whenever it changes.
  Model.prototype.watch = function (key, listener) {
    listener(this.get(key));
    this.on(key, listener);
  };

  function readModels() {
    var models = {};
    document.querySelectorAll(STATE).forEach(function (tag) {
      var saved = JSON.parse(tag.textContent).state;
      Object.keys(saved).forEach(function (id) {
        models[id] = new Model(saved[id].model_name, saved[id].state);
      });
    });
    return models;
  }

  function referenced(models, value) {
    return typeof value === "string" && value.indexOf(REF) === 0 ? models[value.slice(REF.length)] : null;
  }

  function follow(models, link, twoWay) {
    var source = referenced(models, link.get("source")[0]), sourceKey = link.get("source")[1];
    var target = referenced(models, link.get("target")[0]), targetKey = link.get("target")[1];
    if (!source || !target) return;
    target.set(targetKey, source.get(sourceKey));
    source.on(sourceKey, function (value) { target.set(targetKey, value); });
    if (twoWay) target.on(targetKey, function (value) { source.set(sourceKey, value); });
  }

  /* 2. What is drawn here: a view per model name; layouts, styles and links are not views --- */
  var DATA = /^(LayoutModel|\w*StyleModel)$/;
  var LINKS = { LinkModel: true, DirectionalLinkModel: false };  // value: both ways?
  var SLIDERS = {
    IntSliderModel: true, FloatSliderModel: true, FloatLogSliderModel: true, SelectionSliderModel: true,
  };

  function drawable(model) {
    if (DATA.test(model.name) || model.name in LINKS) return true;
    if (model.name in SLIDERS) return model.get("orientation") !== "vertical";
    return model.name in DRAW;
  }

  /* 3. Views ---------------------------------------------------------------------------------- */
  var uid = 0;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text != null) node.textContent = text;
    return node;
  }

  // A view's root: ipywidgets' classes, the model's own (_dom_classes), its layout as inline style.
  function root(models, model, className) {
    var node = element("div", "jupyter-widgets " + className);
    model.get("_dom_classes").forEach(function (name) { node.classList.add(name); });
    var layout = referenced(models, model.get("layout"));
    if (layout) {
      Object.keys(layout.state).forEach(function (key) {
        var value = layout.state[key];
        if (key.charAt(0) !== "_" && value !== null && value !== "") {
          node.style.setProperty(key.replace(/_/g, "-"), value);  // max_width -> max-width
        }
      });
    }
    if (model.get("tooltip")) node.title = model.get("tooltip");
    return node;
  }

  function styleOf(models, model) {
    var style = referenced(models, model.get("style"));
    return style ? style.state : {};
  }

  // The description before a control; hidden when empty, as ipywidgets does.
  function label(models, model, control) {
    var node = element("label", "widget-label");
    var text = model.get("description") || "";
    if (model.get("description_allow_html")) node.innerHTML = text;
    else node.textContent = text;
    if (!text) node.style.display = "none";
    var width = styleOf(models, model).description_width;
    if (width) node.style.width = width;
    if (control) {
      control.id = control.id || "mha-widget-" + (++uid);
      node.htmlFor = control.id;
    }
    return node;
  }

  function drawBox(models, model, horizontal) {
    var node = root(models, model, "widget-container widget-box " + (horizontal ? "widget-hbox" : "widget-vbox"));
    model.get("children").forEach(function (child) {
      node.appendChild(draw(models, referenced(models, child)));
    });
    return node;
  }

  // A stack shows its selected child only, drawn the first time it is selected.
  function drawStack(models, model) {
    var node = root(models, model, "widget-container widget-box");
    var drawn = {};
    function show(index) {
      var children = model.get("children");
      while (node.firstChild) node.removeChild(node.firstChild);
      if (index === null || index === undefined || !children[index]) return;
      if (!drawn[index]) drawn[index] = draw(models, referenced(models, children[index]));
      node.appendChild(drawn[index]);
    }
    model.watch("selected_index", show);
    return node;
  }

  function drawHTML(models, model) {
    var node = root(models, model, "widget-inline-hbox widget-html");
    var content = element("div", "widget-html-content");
    var style = styleOf(models, model);
    if (style.background) node.style.background = style.background;
    if (style.font_size) content.style.fontSize = style.font_size;
    if (style.text_color) content.style.color = style.text_color;
    model.watch("value", function (value) { content.innerHTML = value; });
    node.appendChild(label(models, model));
    node.appendChild(content);
    return node;
  }

  // Readouts written as ipywidgets' format strings do: "d", ".2f", ".3g" (the ones the book uses).
  function format(value, spec) {
    var match = /^\.?(\d*)([dfge%]?)$/.exec(spec || "");
    if (!match) return String(value);
    var digits = match[1] === "" ? 6 : Number(match[1]);
    switch (match[2]) {
      case "d": return String(Math.round(value));
      case "f": return value.toFixed(digits);
      case "e": return value.toExponential(digits);
      case "g": return value.toPrecision(Math.max(1, digits));
      case "%": return (value * 100).toFixed(digits) + "%";
      default: return String(value);
    }
  }

  // A slider's position runs over [low, high] by `step`; `value` maps a position to the model.
  function sliderScale(model) {
    var name = model.name;
    if (name === "SelectionSliderModel") {
      var labels = model.get("_options_labels");
      return {
        key: "index", low: 0, high: Math.max(0, labels.length - 1), step: 1,
        position: function (index) { return index; },
        value: function (position) { return position; },
        text: function (index) { return labels[index] == null ? "" : String(labels[index]); },
      };
    }
    var log = name === "FloatLogSliderModel";
    var base = model.get("base");
    var integer = name === "IntSliderModel";
    return {
      key: "value", low: model.get("min"), high: model.get("max"), step: model.get("step"),
      position: function (value) { return log ? Math.log(value) / Math.log(base) : value; },
      value: function (position) {
        if (log) return Math.pow(base, position);
        return integer ? Math.round(position) : position;
      },
      text: function (value) { return format(value, model.get("readout_format")); },
    };
  }

  function snap(scale, position) {
    var steps = Math.round((position - scale.low) / scale.step);
    var snapped = scale.low + steps * scale.step;
    snapped = Math.min(scale.high, Math.max(scale.low, snapped));
    return Number(snapped.toPrecision(12));  // 0.1 * 3 is 0.30000000000000004
  }

  function drawSlider(models, model) {
    var scale = sliderScale(model);
    var node = root(models, model, "widget-inline-hbox widget-slider widget-hslider");
    var container = element("div", "slider-container");
    var track = element("div", "slider noUi-target noUi-ltr noUi-horizontal noUi-txt-dir-ltr");
    var base = element("div", "noUi-base");
    var origin = element("div", "noUi-origin");
    var handle = element("div", "noUi-handle noUi-handle-lower");
    var readout = element("div", "widget-readout");
    var disabled = !!model.get("disabled");
    handle.dataset.handle = "0";
    handle.tabIndex = disabled ? -1 : 0;
    handle.setAttribute("role", "slider");
    handle.setAttribute("aria-orientation", "horizontal");
    handle.setAttribute("aria-valuemin", scale.low.toFixed(1));
    handle.setAttribute("aria-valuemax", scale.high.toFixed(1));
    if (model.get("description")) handle.setAttribute("aria-label", model.get("description"));
    if (disabled) {
      track.setAttribute("disabled", "");
      handle.setAttribute("aria-disabled", "true");
    }
    var handleColor = styleOf(models, model).handle_color;
    if (handleColor) handle.style.backgroundColor = handleColor;
    readout.contentEditable = "false";
    readout.tabIndex = -1;  // the handle is the control; its value is announced from the readout
    if (model.get("readout") === false) readout.style.display = "none";
    handle.appendChild(element("div", "noUi-touch-area"));
    origin.appendChild(handle);
    base.appendChild(element("div", "noUi-connects"));
    base.appendChild(origin);
    track.appendChild(base);
    container.appendChild(track);
    node.appendChild(label(models, model));
    node.appendChild(container);
    node.appendChild(readout);

    var shown;  // the handle's position (during a drag, ahead of the model)
    function show(position) {
      shown = position;
      var fraction = scale.high > scale.low ? (position - scale.low) / (scale.high - scale.low) : 0;
      handle.style.left = (100 * fraction) + "%";
      var text = scale.text(scale.value(position));
      readout.textContent = text;
      handle.setAttribute("aria-valuenow", position.toFixed(1));
      handle.setAttribute("aria-valuetext", text);
    }
    function commit(position) {
      show(position);
      model.set(scale.key, scale.value(position));
    }
    model.watch(scale.key, function (value) { show(scale.position(value)); });
    if (disabled) return node;

    handle.addEventListener("keydown", function (event) {
      var moves = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1,
                    PageUp: PAGE_STEPS, PageDown: -PAGE_STEPS };
      var next;
      if (event.key in moves) next = snap(scale, shown + moves[event.key] * scale.step);
      else if (event.key === "Home") next = scale.low;
      else if (event.key === "End") next = scale.high;
      else return;
      event.preventDefault();
      commit(next);
    });

    // Pointer: press anywhere on the track (a tap) or on the handle, drag, release to choose.
    function positionAt(clientX) {
      var box = base.getBoundingClientRect();
      var fraction = box.width > 0 ? (clientX - box.left) / box.width : 0;
      return snap(scale, scale.low + Math.min(1, Math.max(0, fraction)) * (scale.high - scale.low));
    }
    track.addEventListener("pointerdown", function (event) {
      if (event.button !== 0) return;
      event.preventDefault();
      handle.focus({ preventScroll: true });
      track.setPointerCapture(event.pointerId);
      var continuous = model.get("continuous_update") !== false;
      var move = function (moved) {
        var position = positionAt(moved.clientX);
        if (continuous) commit(position);
        else show(position);
      };
      var release = function (released) {
        track.removeEventListener("pointermove", move);
        track.removeEventListener("pointerup", release);
        track.removeEventListener("pointercancel", release);
        commit(released.type === "pointercancel" ? shown : positionAt(released.clientX));
      };
      move(event);
      track.addEventListener("pointermove", move);
      track.addEventListener("pointerup", release);
      track.addEventListener("pointercancel", release);
    });
    return node;
  }

  function drawToggleButtons(models, model) {
    var node = root(models, model, "widget-toggle-buttons");
    var labels = model.get("_options_labels");
    var tooltips = model.get("tooltips");
    var style = styleOf(models, model);
    var row = element("div");
    node.setAttribute("role", "group");
    if (model.get("description")) node.setAttribute("aria-label", model.get("description"));
    var buttons = labels.map(function (text, index) {
      var button = element("button", "widget-toggle-button jupyter-button", text);
      button.type = "button";
      button.value = String(index);
      button.dataset.value = text;
      if (tooltips[index]) button.title = tooltips[index];
      if (style.button_width) button.style.width = style.button_width;
      if (style.font_weight) button.style.fontWeight = style.font_weight;
      button.disabled = !!model.get("disabled");
      button.addEventListener("click", function () { model.set("index", index); });
      row.appendChild(button);
      return button;
    });
    function show(chosen) {
      buttons.forEach(function (button, index) {
        button.classList.toggle("mod-active", index === chosen);
        button.setAttribute("aria-pressed", String(index === chosen));
      });
    }
    model.watch("index", show);
    node.appendChild(label(models, model));
    node.appendChild(row);
    return node;
  }

  function drawDropdown(models, model) {
    var node = root(models, model, "widget-inline-hbox widget-dropdown");
    var select = element("select");
    model.get("_options_labels").forEach(function (text, index) {
      var option = element("option", null, text);
      option.value = String(index);
      select.appendChild(option);
    });
    select.disabled = !!model.get("disabled");
    model.watch("index", function (index) { select.selectedIndex = index === null ? -1 : index; });
    select.addEventListener("change", function () { model.set("index", select.selectedIndex); });
    node.appendChild(label(models, model, select));
    node.appendChild(select);
    return node;
  }

  function drawText(models, model) {
    var node = root(models, model, "widget-inline-hbox widget-text");
    var input = element("input", "widget-input");
    input.type = "text";
    input.placeholder = model.get("placeholder") || "";
    input.disabled = !!model.get("disabled");
    input.addEventListener("change", function () { model.set("value", input.value); });
    model.watch("value", function (value) { if (input.value !== value) input.value = value; });
    node.appendChild(label(models, model, input));
    node.appendChild(input);
    return node;
  }

  // What a kernel printed into an Output widget when the page was built (nothing runs here).
  function drawOutput(models, model) {
    var node = root(models, model, "widget-output");
    model.get("outputs").forEach(function (output) {
      var data = output.data || {};
      if (output.output_type === "stream") {
        node.appendChild(element("pre", null, output.text));
      } else if (data["text/html"]) {
        var html = element("div");
        html.innerHTML = [].concat(data["text/html"]).join("");
        node.appendChild(html);
      } else if (data["image/png"]) {
        var image = element("img", "widget-image");
        image.src = "data:image/png;base64," + data["image/png"];
        image.alt = [].concat(data["text/plain"] || "Figure").join("");
        node.appendChild(image);
      } else if (data["text/plain"]) {
        node.appendChild(element("pre", null, [].concat(data["text/plain"]).join("")));
      }
    });
    return node;
  }

  var DRAW = {
    VBoxModel: function (models, model) { return drawBox(models, model, false); },
    BoxModel: function (models, model) { return drawBox(models, model, false); },
    HBoxModel: function (models, model) { return drawBox(models, model, true); },
    StackModel: drawStack,
    HTMLModel: drawHTML,
    ToggleButtonsModel: drawToggleButtons,
    DropdownModel: drawDropdown,
    TextModel: drawText,
    OutputModel: drawOutput,
  };
  Object.keys(SLIDERS).forEach(function (name) { DRAW[name] = drawSlider; });

  function draw(models, model) {
    if (!model) return element("div");  // a child the saved state does not hold: nothing to show
    return DRAW[model.name](models, model);
  }

  /* 4. The page: draw here, or hand it to html-manager -------------------------------------- */
  function whenParsed(callback) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", callback);
    else callback();
  }

  function drawPage() {
    var models = readModels();
    var ids = Object.keys(models);
    if (!ids.every(function (id) { return drawable(models[id]); })) return false;
    var drawn = [];
    try {
      ids.forEach(function (id) {
        var model = models[id];
        if (model.name in LINKS) follow(models, model, LINKS[model.name]);
      });
      document.querySelectorAll(VIEWS).forEach(function (tag) {
        var view = JSON.parse(tag.textContent);
        var area = element("div", "widget-subarea");
        area.appendChild(draw(models, models[view.model_id]));
        tag.parentElement.insertBefore(area, tag);
        drawn.push(area);
      });
    } catch (error) {
      drawn.forEach(function (area) { area.remove(); });
      if (window.console) console.warn("widgets: drawn by html-manager instead", error);
      return false;
    }
    return true;
  }

  // html-manager renders every widget on the window's `load` event, and only then: it adds that
  // listener when it runs, and loaded later it would wait for an event long past. While it runs,
  // its `load` listener is kept aside and called once the page's widget state has been parsed.
  function loadManager() {
    return new Promise(function (resolve, reject) {
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
          resolve();
        });
      };
      tag.onerror = function () {
        window.addEventListener = addEventListener;
        reject(new Error("the widget manager could not be loaded"));
      };
      document.head.appendChild(tag);
    });
  }

  var started = null;

  function load() {
    if (started) return started;
    var html = document.documentElement;
    started = new Promise(function (resolve) { whenParsed(resolve); }).then(function () {
      if (drawPage()) {
        html.dataset.mhaRenderer = "site";
        return;
      }
      html.dataset.mhaRenderer = "manager";
      return loadManager();
    }).then(function () {
      html.dataset.mhaWidgets = "loaded";
    }, function (error) {
      html.dataset.mhaWidgets = "failed";
      throw error;
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
