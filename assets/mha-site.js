/* Reader-facing fixes for the course site, loaded (deferred) on every page via html_js_files.
 *
 * 1. Sidebar buttons. pydata-sphinx-theme 0.17 renders its own navbar toggles and binds its
 *    sidebar dialogs to the *first* `.primary-toggle` / `.secondary-toggle` in the page
 *    (`querySelector`); sphinx-book-theme 1.3 binds its wide-screen collapse to that same first
 *    button. Both are the navbar's, which this theme hides, so the visible article-header buttons
 *    ("Toggle primary sidebar", "Contents") only show a tooltip (pydata-sphinx-theme issue #2451).
 *    Every other toggle of the same kind forwards its click to the bound one.
 * 2. Solution headers. sphinx-togglebutton only toggles when the click lands on the title box or
 *    the chevron; "Solution to Exercise N" is a link to the exercise, so clicking (or tapping) the
 *    words jumped away instead. A click anywhere on a folded block's title now opens it.
 * 3. Display equations (KaTeX, typeset at build time) a little wider than the column are scaled
 *    down to fit, never below 80 %; past that they scroll inside the column (mha-site.css): the
 *    equation's own box scrolls (KaTeX's inner .katex-html, which sphinxcontrib-katex made the
 *    scroller, is aria-hidden and unmeasured: mha-site.css lets it overflow into the box instead).
 * 4. Figures: a tap or click on a notebook figure opens it full size in a scrollable view. Each is
 *    a button to assistive technology, named by its alt text and ", press Enter to enlarge". On a
 *    touch screen, a figure shrunk far below its own size gets a line saying it can be tapped.
 * 5. Views drawn after the page (attention views; the explorers' frames as they are shown): their
 *    figures are enlargeable and their scrolling regions measured like the rest. (The explorers
 *    themselves are plain HTML with native controls: book/static_widgets.py.)
 * 7. The "Contents" drawer on a narrow screen closes when a section in it is chosen: it covered
 *    the very text it had just scrolled to.
 * 6. (JupyterLite's clear message when its Python cannot load lives in the lite app itself,
 *    assets/lite-guard.js, so that it shows however the notebook is opened.)
 * 8. Tables with code in their cells. Identifiers never broke, so on a desktop the framework
 *    comparison was 1204 px wide in a 686-px column, half of it scrolled out of sight. Identifiers
 *    longer than LONG_CODE characters may now break after . _ ( , = (a <wbr>, which copying
 *    ignores) on screens from 768 px, where mha-site.css also lets table code wrap at its spaces.
 *    On a phone no such table could fit, and whole identifiers in a table that scrolls read
 *    better than 60-px columns.
 * 9. Tables of prose on a phone. A table of two to four columns with a long description in a cell
 *    (the teachers' "what a student does | what happens", an idea and what it costs) left that
 *    description 100-140 px wide on a 390-px phone, 8-12 characters a line, behind a sideways
 *    scroll. Such a table is marked; on a narrow screen mha-site.css sets each row as a block: the
 *    first cell as its title, the others under it, each after its column's name when there are
 *    more than two columns. ARIA roles keep it a table to a screen reader.
 * 10. Tables, outputs, views, equations and code blocks that scroll take keyboard focus and are
 *    named, each by its own name ("Code 12: import numpy as np (scrolls sideways)"): a screen
 *    reader's list of them is not 38 identical entries. A shade marks each edge with more to see,
 *    and follows the scrolling. Buttons whose aria-label differs from their visible words are named
 *    by those words.
 * 11. The article is drawn and measured a section per task while the page loads (equations
 *    fitted, scrolling regions marked), never the whole page in one long task.
 * 12. Printed tables keep their columns: a code cell's output of several lines (a table, an array,
 *    lines aligned by their author) no longer wraps on a phone (a table's numbers fell under the
 *    wrong headers); it keeps its lines and scrolls sideways as a block, while a one-line output and
 *    the check messages and errors among the lines of a longer one still wrap.
 */
(function () {
  "use strict";

  function ready(callback) {
    if (document.readyState !== "loading") callback();
    else document.addEventListener("DOMContentLoaded", callback);
  }

  /* 1. Sidebar toggles ------------------------------------------------------------------ */
  function forwardSidebarToggles() {
    [".primary-toggle", ".secondary-toggle"].forEach(function (selector) {
      var toggles = document.querySelectorAll(selector);
      var bound = toggles[0];  // the one both themes attached their listeners to
      Array.prototype.slice.call(toggles, 1).forEach(function (toggle) {
        toggle.addEventListener("click", function (event) {
          event.preventDefault();
          event.stopPropagation();
          toggle.blur();  // hide the tooltip, as the themes do for the bound button
          bound.click();
        });
      });
    });
  }

  /* 7. A section chosen in a sidebar drawer closes the drawer ---------------------------- */
  function closeDrawerOnLink(event) {
    var link = event.target.closest && event.target.closest("dialog[open] a[href]");
    if (!link) return;
    var drawer = link.closest("dialog");
    if (!/sidebar-modal/.test(drawer.id)) return;  // the themes' drawers only
    var href = link.getAttribute("href");
    if (href.charAt(0) === "#") drawer.close();  // a section of this page: show it, uncovered
  }

  /* 2. Folded solutions open from their whole title ------------------------------------- */
  function openFoldsFromTitle(event) {
    var title = event.target.closest && event.target.closest(".toggle > .admonition-title");
    if (!title || event.target.closest(".toggle-button")) return;
    var button = title.querySelector(".toggle-button");
    if (!button) return;
    event.preventDefault();  // the title's link would jump to the exercise
    event.stopPropagation();
    button.click();  // sphinx-togglebutton's own handler toggles from the button
  }

  /* 3. Equations fit the column --------------------------------------------------------- */
  // KaTeX typesets at build time and does not break lines; long formulas are written over aligned
  // lines in the chapters. One still a little wider than the column is scaled down, never below
  // 80 % of KaTeX's own size (on a phone the widest would shrink to 8 px, indices to 6 px); past that
  // it scrolls inside the column, as a focusable, named group with a shade on the edge that has more.
  // The scale applies to KaTeX's size (1.21em of the text), read before it is changed: a percentage
  // of the text's size would have dropped KaTeX's 1.21 and shrunk a formula 21 % more than it needed.
  var MIN_EQUATION_SCALE = 0.8;

  // Reads and writes are batched (every width read, then every size set): one layout for all the
  // equations given, not one per equation.
  function fitEquations(containers) {
    var maths = containers.map(function (container) { return container.firstElementChild; });
    maths.forEach(function (math) { if (math) math.style.fontSize = ""; });
    var widths = containers.map(function (container, i) {
      var size = maths[i] ? parseFloat(getComputedStyle(maths[i]).fontSize) : 0;
      return [container.clientWidth, container.scrollWidth, size];
    });
    maths.forEach(function (math, i) {
      var available = widths[i][0], needed = widths[i][1], size = widths[i][2];
      if (math && available > 0 && size > 0 && needed > available + 1) {
        var scale = Math.max(MIN_EQUATION_SCALE, Math.floor((available / needed) * 100) / 100);
        math.style.fontSize = (size * scale).toFixed(2) + "px";
      }
    });
    var states = containers.map(function (container) {
      return sideways(container, container.scrollWidth > container.clientWidth + 1);
    });
    containers.forEach(function (container, i) {
      if (maths[i]) scrollRegion(container, states[i], scrollerName(container));
    });
  }

  /* 10. Scrolling regions take focus; names match visible labels -------------------------- */
  // A region that scrolls sideways must be reachable by the keyboard (arrow keys scroll it) and
  // say what it is; it is no Tab stop when it fits. A named group, not a landmark: a chapter has
  // dozens of them, and a landmark list is for finding one's way around the page.
  function scrollRegion(element, state, name) {
    var scrolls = state.scrolls;
    element.classList.toggle("mha-scrolls", scrolls);
    if (scrolls) {
      element.tabIndex = 0;
      if (!element.hasAttribute("aria-label")) element.setAttribute("aria-label", name);
      if (element.tagName !== "TABLE" && !element.hasAttribute("role")) element.setAttribute("role", "group");
      if (!element.hasAttribute("data-mha-shaded")) {
        element.setAttribute("data-mha-shaded", "");
        element.addEventListener("scroll", function () {
          shade(element, sideways(element, element.classList.contains("mha-scrolls")));
        }, {passive: true});
      }
    } else if (element.getAttribute("tabindex") === "0") {
      element.removeAttribute("tabindex");
    }
    shade(element, state);
  }

  // Whether an element scrolls sideways, and which of its edges have more to see (read with the
  // other measurements, before anything is written).
  function sideways(element, scrolls) {
    return {
      scrolls: scrolls,
      left: scrolls && element.scrollLeft > 1,
      right: scrolls && element.scrollLeft + element.clientWidth < element.scrollWidth - 1,
    };
  }

  // A shade on each edge that has more to see: the right one at first, the left one once scrolled.
  function shade(element, state) {
    element.classList.toggle("mha-more-left", state.left);
    element.classList.toggle("mha-more-right", state.right);
  }

  function tableName(table) {
    var caption = table.querySelector("caption");
    var first = table.querySelector("th, td");
    var text = (caption || first || table).textContent.trim().replace(/\s+/g, " ").slice(0, 60);
    return "Table" + (text ? ": " + text : "") + " (scrolls sideways)";
  }

  // Scrolling regions: tables (and the theme's wrapper around them), outputs, views, widgets and
  // code blocks. The theme's own pass over them is switched off (book/lean_site.py): it read the
  // whole page at once when it loaded, and again after every change a widget made.
  var SCROLLERS = ".bd-article table, .pst-scrollable-table-container, .mha-av-scroll, .mha-av-panel," +
    " .cell_output .output, .widget-container, .bd-article pre";

  // Each kind is numbered in page order: "Code 12", "Output 3", "Equation 2".
  var KINDS = [
    ["Equation", ".bd-article .katex-display"],
    ["Output", ".cell_output pre"],
    ["Output view", ".cell_output .output"],
    ["Code", ".bd-article pre:not(.cell_output pre)"],
  ];

  function firstLine(el) {
    var line = (el.textContent || "").split("\n").filter(function (text) { return text.trim(); })[0] || "";
    line = line.trim().replace(/\s+/g, " ");
    return line.length > 40 ? line.slice(0, 39) + "\u2026" : line;
  }

  function scrollerName(el) {
    if (el.tagName === "TABLE") return tableName(el);
    var table = el.querySelector(":scope > table");
    if (table) return tableName(table);
    for (var k = 0; k < KINDS.length; k++) {
      if (!el.matches(KINDS[k][1])) continue;
      var number = Array.prototype.indexOf.call(document.querySelectorAll(KINDS[k][1]), el) + 1;
      var words = KINDS[k][0] === "Equation" ? "" : firstLine(el);
      return KINDS[k][0] + " " + number + (words ? ": " + words : "") + " (scrolls sideways)";
    }
    return "Output (scrolls sideways)";
  }

  function markScrollers(list) {
    var states = list.map(function (el) {  // every read first, then every write: one layout
      if (el.getBoundingClientRect().width === 0) return null;
      var style = getComputedStyle(el);
      return sideways(el, (el.scrollWidth > el.clientWidth + 1 && style.overflowX !== "visible") ||
        (el.scrollHeight > el.clientHeight + 1 && /auto|scroll/.test(style.overflowY)));
    });
    list.forEach(function (el, i) {
      if (states[i] !== null) scrollRegion(el, states[i], scrollerName(el));
    });
  }

  /* 11. Drawing and measuring, a section at a time ------------------------------------- */
  // Fitting equations and marking scrolling regions read the layout. Done for the whole page at
  // once, that was one long task while the page loaded (every element of a chapter laid out:
  // 170 ms on a phone's slower CPU, the reader's first taps waiting behind it). Here each of the
  // article's sections takes a task of its own, in order: it is drawn (until then the browser
  // skips the sections the reader is not looking at: content-visibility in mha-site.css), then
  // measured. After the last turn the page is whole, as a reader's tools (find, a screen reader,
  // an accessibility checker) expect; <html> then carries data-mha-measured="done" (until fonts
  // arriving, a widget drawing or the window resizing queues more turns).
  var SECTIONS = ".bd-article > section > section";
  var queued = [];  // sections (or null: the rest of the page) waiting for their turn
  var turn = null;

  function sectionOf(el) {
    return el.closest(SECTIONS);
  }

  function measureSection(section) {
    if (section) section.classList.add("mha-drawn");
    var inside = function (el) { return sectionOf(el) === section; };
    var all = function (selector) {
      var scope = section || document;
      return Array.prototype.filter.call(scope.querySelectorAll(selector), inside);
    };
    fitEquations(all(".bd-article .katex-display"));
    markScrollers(all(SCROLLERS));
  }

  function nextTurn() {
    turn = null;
    if (!queued.length) {
      document.documentElement.dataset.mhaMeasured = "done";
      return;
    }
    measureSection(queued.shift());
    turn = window.setTimeout(nextTurn, 0);
  }

  function measureSoon(sections) {
    sections.forEach(function (section) {
      if (queued.indexOf(section) < 0) queued.push(section);
    });
    document.documentElement.dataset.mhaMeasured = "pending";
    if (turn === null) turn = window.setTimeout(nextTurn, 0);
  }

  function measureAll() {
    var sections = Array.prototype.slice.call(document.querySelectorAll(SECTIONS));
    measureSoon([null].concat(sections));
  }

  // Until its turn, a region that may scroll is a Tab stop: a keyboard reader can reach it at
  // once (its turn takes the stop away again if it fits).
  function reachableUntilMeasured() {
    document.querySelectorAll(SCROLLERS).forEach(function (el) {
      if (!el.hasAttribute("tabindex")) el.tabIndex = 0;
    });
  }

  function measureWhenLaidOut() {
    reachableUntilMeasured();
    var pending = null;
    window.addEventListener("resize", function () {
      window.clearTimeout(pending);
      pending = window.setTimeout(measureAll, 150);
    });
    // Equation widths change when their fonts arrive: measure again then.
    if (document.fonts && document.fonts.addEventListener) {
      document.fonts.addEventListener("loadingdone", measureAll);
    }
    measureAll();
  }

  // Buttons whose aria-label hides their visible words (the theme's "Search Ctrl+K" named "Search",
  // myst-nb's "Show code cell source" named "Toggle hidden content"): a voice-control user says
  // what they see. Their visible text becomes their name.
  function nameByVisibleText() {
    document.querySelectorAll("button[aria-label]").forEach(function (button) {
      var visible = button.textContent.replace(/\s+/g, " ").trim();
      var label = button.getAttribute("aria-label");
      if (visible && label.toLowerCase().indexOf(visible.toLowerCase()) < 0) {
        button.removeAttribute("aria-label");
      }
    });
    document.querySelectorAll("summary[aria-label], .toggle-button[aria-label]").forEach(function (el) {
      if (el.textContent.trim()) el.removeAttribute("aria-label");
    });
  }

  /* 4. Tap a figure to see it full size ------------------------------------------------- */
  var FIGURES = ".cell_output img, img.widget-image";
  var viewer = null;

  function openViewer(image) {
    if (!viewer) {
      viewer = document.createElement("dialog");
      viewer.className = "mha-figure-viewer";
      viewer.setAttribute("aria-label", "Figure, full size");
      viewer.innerHTML = '<button type="button" class="mha-figure-close" aria-label="Close">' +
        "\u00d7</button><div class=\"mha-figure-scroll\"><img alt=\"\"></div>";
      viewer.addEventListener("click", function (event) {
        if (event.target === viewer || event.target.closest(".mha-figure-close")) viewer.close();
      });
      document.body.appendChild(viewer);
    }
    var big = viewer.querySelector("img");
    big.src = image.currentSrc || image.src;
    big.alt = image.alt;
    viewer.showModal();
  }

  function enlargeOnTap(event) {
    var image = event.target.closest && event.target.closest(FIGURES);
    if (image && !image.closest("a")) openViewer(image);
  }

  function enlargeOnKey(event) {
    var image = event.target.matches && event.target.matches(FIGURES) ? event.target : null;
    if (image && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      openViewer(image);
    }
  }

  var ENLARGE_HINT = ", press Enter to enlarge";

  function nameFigure(image) {
    var label = ((image.getAttribute("alt") || "").trim() || "Figure") + ENLARGE_HINT;
    if (image.getAttribute("aria-label") !== label) image.setAttribute("aria-label", label);
  }

  // On a touch screen nothing says a figure can be tapped (no zoom-in cursor). Under a figure shown
  // at less than SMALL_SCALE of its own width, a line says so: the notebook's figures are drawn at
  // 100 dpi, so their 10-pt labels are then under 8 px (on a phone, most figures; the multi-head
  // diagram's at 5 px). Hidden from screen readers: the figure's name already says it.
  var SMALL_SCALE = 0.6;
  var TOUCH = window.matchMedia ? window.matchMedia("(pointer: coarse)") : null;

  // Checked when a figure is laid out, resized or redrawn (a ResizeObserver reports once the
  // layout is done, so reading sizes there costs nothing): every figure's size read first, then
  // every hint written, or each hint inserted would have the next figure's read lay out the page.
  var SIZES = window.ResizeObserver ? new ResizeObserver(function (entries) {
    hintIfSmall(entries.map(function (entry) { return entry.target; }));
  }) : null;

  function isSmall(image) {
    var shown = image.getBoundingClientRect().width;
    return shown > 0 && image.naturalWidth * SMALL_SCALE > shown;
  }

  function hintIfSmall(images) {
    // A widget's frames sit in a row that scrolls: its line goes at the end of the widget instead,
    // shown while any of its frames is small (the hidden ones are 0 px wide).
    var touch = TOUCH && TOUCH.matches;
    var checks = images.map(function (image) {
      var widget = image.closest(".widget-subarea");
      var frames = widget ? widget.querySelectorAll("img.widget-image") : [image];
      return {image: image, widget: widget, small: touch && Array.prototype.some.call(frames, isSmall)};
    });
    checks.forEach(function (check) {
      var widget = check.widget, image = check.image;
      var hint = widget ? widget.querySelector(":scope > .mha-enlarge-hint") : image.nextElementSibling;
      if (hint && hint.classList.contains("mha-enlarge-hint")) {
        hint.hidden = !check.small;
      } else if (check.small) {
        hint = document.createElement("p");
        hint.className = "mha-enlarge-hint";
        hint.setAttribute("aria-hidden", "true");
        hint.textContent = "Tap the figure to see it full size.";
        if (widget) widget.appendChild(hint);
        else image.insertAdjacentElement("afterend", hint);
      }
    });
  }

  function markFigures(root) {
    var unsized = [];
    (root || document).querySelectorAll(FIGURES).forEach(function (image) {
      if (image.closest("a")) return;  // a linked image opens its link, not the viewer
      if (image.tabIndex < 0) image.tabIndex = 0;
      image.classList.add("mha-enlargeable");
      if (image.getAttribute("role") !== "button") image.setAttribute("role", "button");
      nameFigure(image);
      if (!image.hasAttribute("data-mha-sized")) {
        image.setAttribute("data-mha-sized", "");
        if (SIZES) SIZES.observe(image);
        image.addEventListener("load", function () { hintIfSmall([image]); });
        if (!SIZES) unsized.push(image);
      } else {
        unsized.push(image);  // already observed: a redrawn widget may have changed its frames
      }
    });
    if (unsized.length) hintIfSmall(unsized);
  }

  /* 5. Views drawn after the page (attention views, explorer frames): figures and scrolling ---- */
  function watchWidgets() {
    var observer = new MutationObserver(function (mutations) {
      mutations.forEach(function (mutation) {
        var target = mutation.target;
        if (mutation.type === "attributes") {
          if (target.classList.contains("mha-enlargeable")) nameFigure(target);
          return;
        }
        var root = target.nodeType === 1 ? target : target.parentElement;
        if (root) {
          markFigures(root);
          measureSoon([sectionOf(root)]);  // views drawn later may scroll too
        }
      });
    });
    observer.observe(document.body, {subtree: true, childList: true, attributes: true,
                                     attributeFilter: ["alt"]});
  }

  /* 8. Long identifiers in tables may break at punctuation, on a wide screen ------------------ */
  var LONG_CODE = 16;
  var BREAK_AFTER = /[._(,=]/;
  // Chromium breaks at a <wbr> even under white-space: nowrap: the breaks exist only while the
  // screen is wide, and a phone (or a narrowed window) gets its whole identifiers back.
  var WIDE = window.matchMedia ? window.matchMedia("(min-width: 768px)") : null;

  function breakLongCode() {
    var wide = !WIDE || WIDE.matches;
    document.querySelectorAll(".bd-article table code span.pre").forEach(function (span) {
      var text = span.textContent;
      if (text.length <= LONG_CODE) return;
      var broken = span.querySelector("wbr") !== null;
      if (!wide) {
        if (broken) span.textContent = text;
        return;
      }
      if (broken || span.children.length) return;
      span.textContent = "";
      var start = 0;
      for (var i = 0; i < text.length; i++) {
        if (BREAK_AFTER.test(text[i]) && i + 1 < text.length) {
          span.appendChild(document.createTextNode(text.slice(start, i + 1)));
          span.appendChild(document.createElement("wbr"));
          start = i + 1;
        }
      }
      span.appendChild(document.createTextNode(text.slice(start)));
    });
  }

  /* 9. Tables of prose stack on a narrow screen --------------------------------------------- */
  var LONG_PROSE = 80;  // characters: a description, not a number or a name
  var MAX_STACKED_COLUMNS = 4;

  function markProseTables() {
    document.querySelectorAll(".bd-article table").forEach(function (table) {
      var names = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
        return th.textContent.trim();
      });
      var cells = table.querySelectorAll("tbody td");
      var prose = Array.prototype.some.call(cells, function (td) {
        return td.textContent.trim().length > LONG_PROSE;
      });
      if (!prose || names.length < 2 || names.length > MAX_STACKED_COLUMNS) return;
      var labelled = names.length > 2;  // each cell names its column: the header row is hidden
      table.classList.add("mha-stack");
      if (labelled) table.classList.add("mha-labelled");
      table.setAttribute("role", "table");
      table.querySelectorAll("thead, tbody").forEach(function (group) {
        group.setAttribute("role", "rowgroup");
      });
      table.querySelectorAll("tr").forEach(function (row) {
        row.setAttribute("role", "row");
        Array.prototype.forEach.call(row.children, function (cell, column) {
          cell.setAttribute("role", cell.tagName === "TH" ? "columnheader" : "cell");
          if (labelled && cell.tagName === "TD" && column > 0 && names[column]) {
            cell.setAttribute("data-column", names[column]);
          }
        });
      });
    });
  }

  /* 12. Printed tables keep their columns --------------------------------------------------- */
  // An output of several lines keeps them as printed: its author aligned them (a table's columns,
  // an array's rows). Check messages and errors among them wrap wherever they stand: they are
  // sentences. An output of one line wraps.
  var MESSAGE = /^\s*(\u2714|\u2718|\u2717|[A-Za-z]*(Error|Warning|Exception)\b)/;

  function keepColumns() {
    document.querySelectorAll(".cell_output pre").forEach(function (pre) {
      if (pre.querySelector("span:not(:empty)")) return;  // coloured (ANSI) output: left as it is
      var lines = pre.textContent.replace(/\n+$/, "").split("\n");
      if (lines.length < 2) return;  // one line: it wraps
      pre.textContent = "";
      lines.forEach(function (line, i) {
        var span = document.createElement("span");
        span.className = MESSAGE.test(line) ? "mha-wrap" : "mha-row";
        span.textContent = line + (i < lines.length - 1 ? "\n" : "");
        pre.appendChild(span);
      });
      pre.classList.add("mha-columns");
    });
  }

  ready(function () {
    forwardSidebarToggles();
    document.addEventListener("click", openFoldsFromTitle, true);
    document.addEventListener("click", closeDrawerOnLink);
    document.addEventListener("click", enlargeOnTap);
    document.addEventListener("keydown", enlargeOnKey);
    // What only writes the page first; then what measures it (layout happens once, per section).
    markFigures();
    watchWidgets();
    nameByVisibleText();
    breakLongCode();
    if (WIDE && WIDE.addEventListener) WIDE.addEventListener("change", breakLongCode);
    markProseTables();
    keepColumns();
    measureWhenLaidOut();
  });
})();
