/* The chapters' explorers (book/static_widgets.py writes them as HTML): a control chooses which frame
 * each stack following it shows. A range input moves by the keyboard and the pointer on its own and
 * says its option (aria-valuetext); an off/on control is a group of buttons, one pressed. Hidden
 * frames' images are lazy: the browser fetches a frame when it is first shown.
 */
(function () {
  "use strict";

  function choose(control, index) {
    if (control.type === "range") {
      var text = JSON.parse(control.dataset.labels)[index];
      control.setAttribute("aria-valuetext", text);
      var output = control.parentElement.querySelector("output");
      if (output) output.textContent = text;
    } else {
      control.querySelectorAll("button").forEach(function (button, i) {
        button.setAttribute("aria-pressed", String(i === index));
      });
    }
    document.querySelectorAll('.mha-stack[data-control="' + control.id + '"]').forEach(function (stack) {
      Array.prototype.forEach.call(stack.children, function (frame, i) { frame.hidden = i !== index; });
    });
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches(".mha-control input[type=range]")) choose(event.target, Number(event.target.value));
  });
  document.addEventListener("click", function (event) {
    var button = event.target.closest(".mha-toggles button");
    if (!button) return;
    choose(button.parentElement, Array.prototype.indexOf.call(button.parentElement.children, button));
  });
  document.documentElement.dataset.mhaFrames = "ready";  // the explorers answer now (benchmarks read it)
})();
