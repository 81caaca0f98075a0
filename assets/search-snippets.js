/* Search results with a snippet of prose around the match, formulas typeset (search.html only).
 *
 * Sphinx's search page shows, under each result, 240 characters of the page's whole text around
 * the first match. Here that text began with the page's table of contents ("Contents The softmax
 * without the whole row …") and showed formulas as their TeX source ("\(\sqrt{d_k}\)"). This
 * replaces Search.makeSearchSummary (sphinx/themes/basic/static/searchtools.js, Sphinx 7.4): the
 * snippet comes from the first paragraph, list item, definition or table cell of the article (or of
 * the result's section) that contains a searched word; code cells, their outputs, navigation and
 * headings' permalinks are left out; formulas are copied as the page typeset them (KaTeX).
 * Loaded deferred, so it runs after searchtools.js and before the search starts.
 */
(function () {
  "use strict";

  var SKIP = [".headerlink", "script", "style", "nav", ".toctree-wrapper", ".bd-toc", ".cell_input",
    ".cell_output", "pre", ".prev-next-area", ".bd-header-article", ".tag_remove-input"].join(", ");
  var PROSE = "p, li, dd, dt, td, th, figcaption, h1, h2, h3, h4";
  var BEFORE = 100;  // characters of context before the match
  var LENGTH = 240;  // characters in a snippet

  function pieces(node, out) {
    // The block's visible text as pieces: strings, and formulas kept whole (their length is that
    // of their visible glyphs, not of their TeX).
    node.childNodes.forEach(function (child) {
      if (child.nodeType === Node.TEXT_NODE) {
        out.push(child.textContent.replace(/\s+/g, " "));
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        if (child.classList.contains("katex")) out.push(child);
        else pieces(child, out);
      }
    });
    return out;
  }

  function textOf(piece) {
    if (typeof piece === "string") return piece;
    var glyphs = piece.querySelector(".katex-html");
    return (glyphs || piece).textContent.replace(/\s+/g, "");
  }

  function firstMatch(blocks, terms) {
    for (var i = 0; i < blocks.length; i++) {
      if (blocks[i].querySelector(PROSE)) continue;  // the innermost block holds the words
      var text = pieces(blocks[i], []).map(textOf).join("").toLowerCase();
      for (var j = 0; j < terms.length; j++) {
        var at = text.indexOf(terms[j]);
        if (at >= 0) return { block: blocks[i], at: at };
      }
    }
    return null;
  }

  function snippet(found) {
    var parts = pieces(found.block, []);
    var start = Math.max(0, found.at - BEFORE), end = start + LENGTH;
    var summary = document.createElement("p");
    summary.className = "context";
    var position = 0, total = parts.map(textOf).join("").length;
    if (start > 0) summary.append("…");
    parts.forEach(function (part) {
      var text = textOf(part), from = position, to = position + text.length;
      position = to;
      if (to <= start || from >= end) return;
      if (typeof part === "string") summary.append(text.slice(Math.max(0, start - from), end - from));
      else summary.append(document.importNode(part, true));
    });
    if (end < total) summary.append("…");
    return summary;
  }

  function terms(keywords) {
    var words = new URLSearchParams(window.location.search).get("q") || "";
    var all = words.toLowerCase().split(/\s+/).concat(Array.from(keywords || []));
    return all.map(function (t) { return String(t).toLowerCase(); })
      .filter(function (t, i, list) { return t.length > 1 && list.indexOf(t) === i; });
  }

  function makeSearchSummary(htmlText, keywords, anchor) {
    var page = new DOMParser().parseFromString(htmlText, "text/html");
    var article = page.querySelector("article.bd-article") || page.querySelector('[role="main"]');
    if (!article) return null;
    article.querySelectorAll(SKIP).forEach(function (el) { el.remove(); });
    var section = anchor ? article.querySelector(anchor) : null;
    var wanted = terms(keywords);
    var found = null;
    if (section && section.tagName === "DT" && section.nextElementSibling) {
      // A glossary term: its definition, from the match or else from its start.
      var definition = section.nextElementSibling;
      found = firstMatch([definition], wanted) || { block: definition, at: 0 };
    }
    found = found || (section && firstMatch(section.querySelectorAll(PROSE), wanted))
      || firstMatch(article.querySelectorAll(PROSE), wanted);
    if (!found) {  // the words are only in code or headings: the page's first paragraph of prose
      var first = Array.prototype.find.call(article.querySelectorAll("p"), function (p) {
        return !p.matches(".admonition-title, .rubric, .caption") && p.textContent.trim().length > 40;
      });
      if (!first) return null;
      found = { block: first, at: 0 };
    }
    return snippet(found);
  }

  // Glossary hits: Sphinx titles every one "Glossary" (its index entries carry the page's title).
  // They are titled by their term here, and a query that is a term ranks its definition first and the
  // chapters the definition names next (book/search_page.py writes window.mhaGlossary).
  var GLOSSARY = window.mhaGlossary || {};
  var BY_ANCHOR = {};
  Object.keys(GLOSSARY).forEach(function (key) {
    BY_ANCHOR[GLOSSARY[key].page + GLOSSARY[key].anchor] = GLOSSARY[key];
  });
  var TERM_FIRST = 1000, TEACHING_NEXT = 500;  // above any score Sphinx gives (at most about 100)

  function escaped(text) {
    var node = document.createElement("span");
    node.textContent = text;
    return node.innerHTML;
  }

  // Scorer.score is searchtools.js's hook, called once on every result [docname, title, anchor,
  // descr, score, filename] before they are sorted and shown: the title is set here too.
  function rank(result) {
    var query = (new URLSearchParams(window.location.search).get("q") || "").trim().toLowerCase();
    var term = GLOSSARY[query.replace(/\s+/g, " ")];
    var entry = BY_ANCHOR[result[0] + result[2]];
    var score = result[4];
    if (entry) result[1] = result[1].split(" > ")[0] + " > " + escaped(entry.name);
    if (term && entry === term) return score + TERM_FIRST;
    if (term && term.chapters.indexOf(result[0]) >= 0) return score + TEACHING_NEXT;
    return score;
  }

  // searchtools.js declares `const Search`: a global binding of the page's scripts, but not a
  // property of `window`; `Scorer` is a `var` of its own.
  if (typeof Search !== "undefined") Search.makeSearchSummary = makeSearchSummary;
  if (typeof Scorer !== "undefined") Scorer.score = rank;
  window.mhaSearchSnippet = makeSearchSummary;  // for the tests
  window.mhaSearchRank = rank;
})();
