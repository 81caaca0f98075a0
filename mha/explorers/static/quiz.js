/* The course's in-page questions: answer, press "Check", read the feedback. No kernel, no network.
 *
 * mha.explorers.quiz writes one <div class="mha-quiz"> holding a <script type="application/json"> with the
 * question, its key and hints sealed by the answers that earn them (mha.explorers.quiz.sealed_payload), inlines
 * view_base.js and this file, then calls window.mhaQuiz.mount(root). Grading is the line-by-line port of
 * Question.grade, so the page and the notebook's check_... function give the same feedback; the browser tests
 * compare both. A "select all" answer that leaves a true option out is told that one is missing, and which
 * one only on the next such try.
 *
 * Accessibility: the question is a <fieldset> named by its prompt; options are native radio buttons or
 * checkboxes, the number a labelled text box (Enter checks it), the order a list whose items move with
 * "up"/"down" buttons (no dragging). Nothing is graded until "Check" is pressed, so browsing options with
 * the arrow keys gives nothing away. The feedback line is a polite live region, and says "Right" or
 * "Not quite" in words, not only in colour.
 */
(function () {
  "use strict";
  if (window.mhaQuiz && window.mhaQuiz.version >= 2) {
    return;
  }
  var LETTERS = "abcdefgh";
  /* As mha.checks.questions.MISSING: what a "select all" answer that leaves true options out hears first. */
  var MISSING = "Everything you chose is true, but {count} true too: read the options you left out again " +
    "(check once more to be told which).";

  /* -------------------------------------------- the sealed key (as mha.explorers.quiz, line by line) */

  function hash32(text, seed) {  // FNV-1a over UTF-8, then murmur3's finaliser
    var bytes = new TextEncoder().encode(text), h = (0x811c9dc5 ^ seed) >>> 0;
    for (var i = 0; i < bytes.length; i++) {
      h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
    }
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    return (h ^ (h >>> 16)) >>> 0;
  }

  function hex8(n) {
    return ("0000000" + n.toString(16)).slice(-8);
  }

  function tag(key) {
    return hex8(hash32(key, 1)) + hex8(hash32(key, 2));
  }

  function unseal(key, sealed) {
    var raw = atob(sealed), bytes = new Uint8Array(raw.length), word = 0;
    for (var i = 0; i < raw.length; i++) {
      if (i % 4 === 0) {
        word = hash32(key + "|" + (i / 4), 3);
      }
      bytes[i] = raw.charCodeAt(i) ^ ((word >>> (8 * (i % 4))) & 255);
    }
    return new TextDecoder().decode(bytes).replace(/ +$/, "");
  }

  /* ------------------------------------------------------------------ grading (as Question.grade) */

  /* toldMissing: this reader was told on an earlier try that a true option is missing; only now is it named. */
  function gradeChoice(q, letters, toldMissing) {
    var verdicts = q.options.map(function (option, i) {
      var chosen = letters.indexOf(LETTERS[i]) >= 0;
      var sealed = chosen ? option.chosen : option.left;
      return sealed ? JSON.parse(unseal(q.salt + "|" + LETTERS[i] + "|" + (chosen ? "chosen" : "left"), sealed)) :
        {v: "fine", m: ""};
    });
    var i, missed = [], explained = [];
    for (i = 0; i < verdicts.length; i++) {  // a wrong choice first: it names a misconception
      if (verdicts[i].v === "wrong") {
        return {correct: false, message: verdicts[i].m, missing: 0};
      }
    }
    for (i = 0; i < verdicts.length; i++) {
      if (verdicts[i].v === "missing") {
        missed.push(verdicts[i].m);
      } else if (verdicts[i].v === "right") {
        explained.push(verdicts[i].m);
      }
    }
    if (missed.length) {  // then the right options left out: that there are some, and on the next try which
      var count = missed.length === 1 ? "one more option is" : missed.length + " more options are";
      return {correct: false, message: toldMissing ? missed[0] : MISSING.replace("{count}", count),
        missing: missed.length};
    }
    return {correct: true, message: explained.join(" "), missing: 0};
  }

  function gradeNumber(q, value) {
    var key = JSON.parse(unseal(q.salt + "|number", q.sealed));
    if (key.answer[0] <= value && value < key.answer[1]) {
      return {correct: true, message: key.explanation, missing: 0};
    }
    for (var i = 0; i < key.wrong.length; i++) {
      if (key.wrong[i][0] <= value && value < key.wrong[i][1]) {
        return {correct: false, message: key.wrong[i][2], missing: 0};
      }
    }
    return {correct: false, message: key.otherwise, missing: 0};
  }

  function gradeOrder(q, letters) {
    if (tag(q.salt + "|order|" + letters) === q.solved) {
      return {correct: true, message: unseal(q.salt + "|explain|" + letters, q.explanation), missing: 0};
    }
    var before = {};  // the tag of every pair the answer puts first-then -> the pair
    for (var a = 0; a < letters.length; a++) {
      for (var b = a + 1; b < letters.length; b++) {
        before[tag(q.salt + "|before|" + letters[a] + letters[b])] = letters[a] + letters[b];
      }
    }
    for (var i = 0; i < q.mistakes.length; i++) {  // the first listed misconception the answer makes
      var pair = before[q.mistakes[i][0]];
      if (pair) {
        return {correct: false, message: unseal(q.salt + "|hint|" + pair, q.mistakes[i][1]), missing: 0};
      }
    }
    return {correct: false, message: q.otherwise, missing: 0};
  }

  function grade(q, answer, toldMissing) {
    if (q.kind === "choice") {
      return gradeChoice(q, answer, Boolean(toldMissing));
    }
    return q.kind === "number" ? gradeNumber(q, answer) : gradeOrder(q, answer);
  }

  /* "4", "-500", "4.19", "4,19" (a decimal comma), "4,194,304" (thousands), "1e3", with a Unicode minus. */
  function parseNumber(text) {
    var s = String(text).trim().replace(/[\s_]/g, "").replace(/\u2212/g, "-");
    if (/^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) {
      s = s.replace(/,/g, "");
    } else if (s.indexOf(".") < 0) {
      s = s.replace(",", ".");
    }
    return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(s) ? Number(s) : NaN;
  }

  /* ------------------------------------------------------------------------------------ drawing */

  function mount(root) {
    if (!root || root.dataset.mounted) {
      return;
    }
    root.dataset.mounted = "1";
    var base = window.mhaViewBase, el = base.el;
    var q = JSON.parse(root.querySelector("script.mha-quiz-data").textContent);
    var id = root.id;
    var form = el("fieldset", {"class": "mha-quiz-box"}, root);
    var legend = el("legend", {"class": "mha-quiz-prompt"}, form);
    el("span", {"class": "mha-quiz-tag"}, legend, "Predict first: ");
    base.withCode(legend, q.prompt);
    var read;  // () -> the answer as the check takes it, or null when there is none yet

    if (q.kind === "choice") {
      var list = el("div", {"class": "mha-quiz-options"}, form);
      var inputs = q.options.map(function (option, i) {
        var label = el("label", {"class": "mha-quiz-option"}, list);
        var input = el("input", {type: q.several ? "checkbox" : "radio", name: id + "-choice",
          value: LETTERS[i]}, label);
        var text = el("span", {}, label);
        el("span", {"class": "mha-quiz-letter"}, text, "(" + LETTERS[i] + ") ");
        base.withCode(text, option.text);
        return input;
      });
      if (q.several) {
        el("p", {"class": "mha-quiz-note"}, form, "Select every option that is true.");
      }
      read = function () {
        var letters = inputs.filter(function (i) { return i.checked; }).map(function (i) { return i.value; });
        return letters.length ? letters.join("") : null;
      };
    } else if (q.kind === "number") {
      var row = el("div", {"class": "mha-quiz-number"}, form);
      el("label", {"for": id + "-number"}, row, "Your answer" + (q.unit ? " (" + q.unit + ")" : "") + ": ");
      var box = el("input", {type: "text", id: id + "-number", inputmode: "decimal", autocomplete: "off",
        spellcheck: "false", size: "10"}, row);
      box.addEventListener("keydown", function (event) {
        if (event.key === "Enter") {
          event.preventDefault();
          check();
        }
      });
      read = function () {
        var value = parseNumber(box.value);
        return isFinite(value) ? value : null;
      };
    } else {
      var ol = el("ol", {"class": "mha-quiz-order"}, form);
      var items = q.items.map(function (text, i) {
        var li = el("li", {"class": "mha-quiz-item", "data-letter": LETTERS[i]}, ol);
        var row = el("div", {"class": "mha-quiz-row"}, li);
        var words = el("span", {"class": "mha-quiz-item-text"}, row);
        el("span", {"class": "mha-quiz-letter"}, words, "(" + LETTERS[i] + ") ");
        base.withCode(words, text);
        var plain = "(" + LETTERS[i] + ")";
        var up = el("button", {type: "button", "class": "mha-quiz-move", "aria-label": "Move " + plain + " up"},
          row, "\u2191");
        var down = el("button", {type: "button", "class": "mha-quiz-move",
          "aria-label": "Move " + plain + " down"}, row, "\u2193");
        up.addEventListener("click", function () { move(li, -1, up); });
        down.addEventListener("click", function () { move(li, 1, down); });
        return li;
      });
      var moved = el("p", {"class": "mha-quiz-sr", "aria-live": "polite"}, form);
      var move = function (li, step, button) {
        var all = Array.prototype.slice.call(ol.children);
        var at = all.indexOf(li), to = at + step;
        if (to < 0 || to >= all.length) {
          return;
        }
        ol.insertBefore(li, step < 0 ? all[to] : all[to].nextSibling);
        button.focus();  // keep the keyboard on the item that moved
        moved.textContent = "(" + li.dataset.letter + ") is now number " + (to + 1) + " of " + all.length + ".";
        forget();
      };
      read = function () {
        return Array.prototype.map.call(ol.children, function (li) { return li.dataset.letter; }).join("");
      };
      root.dataset.items = String(items.length);
      el("p", {"class": "mha-quiz-note"}, form, "First at the top. Move items with the \u2191 and \u2193 buttons.");
    }

    var actions = el("div", {"class": "mha-quiz-actions"}, form);
    var button = el("button", {type: "button", "class": "mha-quiz-check"}, actions, "Check");
    var feedback = el("p", {"class": "mha-quiz-feedback", role: "status", "aria-live": "polite"}, form);
    var code = el("p", {"class": "mha-quiz-code"}, root);
    var toldMissing = false;  // a "select all" answer that left a true option out: named on the next such try
    var example = q.kind === "number" ? "\u2026" : "\"\u2026\"";
    base.withCode(code, "In a notebook: `" + q.name + "(" + example + ")`, with " +
      (q.kind === "number" ? "your number." : q.kind === "order" ? "your letters, first to last." :
        "your letter" + (q.several ? "s." : ".")));

    function forget() {
      root.dataset.state = "";
      feedback.textContent = "";
      feedback.className = "mha-quiz-feedback";
    }

    function check() {
      var answer = read();
      if (answer === null) {
        root.dataset.state = "empty";
        feedback.className = "mha-quiz-feedback";
        feedback.textContent = q.kind === "number" ? "Type a number first, e.g. 12 or 0.5." :
          "Choose an option first.";
        return;
      }
      var result = grade(q, answer, toldMissing);
      toldMissing = toldMissing || result.missing > 0;
      root.dataset.state = result.correct ? "right" : "wrong";
      root.dataset.answer = String(answer);
      feedback.className = "mha-quiz-feedback " + (result.correct ? "mha-quiz-right" : "mha-quiz-wrong");
      feedback.textContent = "";
      el("strong", {}, feedback, result.correct ? "\u2714 Right. " : "\u2718 Not quite. ");
      base.withCode(feedback, result.message);
      if (!result.correct) {
        feedback.appendChild(document.createTextNode(" Try again, or open the solution below."));
      }
    }

    button.addEventListener("click", check);
    // A changed answer clears the old feedback (typing in the box, ticking another option).
    form.addEventListener(q.kind === "number" ? "input" : "change", forget);
  }

  window.mhaQuiz = {version: 2, mount: mount, grade: grade, parseNumber: parseNumber, unseal: unseal};
})();
