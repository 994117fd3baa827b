// Curation pages (memory, skills, changes, reviews, pending): small helpers, no inline scripts.
"use strict";

(function () {
  // A "select all" checkbox ticks every checkbox named by its data-select-all attribute.
  document.addEventListener("change", function (ev) {
    const box = ev.target.closest("[data-select-all]");
    if (!box) return;
    const name = box.getAttribute("data-select-all");
    document.querySelectorAll('input[type="checkbox"][name="' + name + '"]').forEach(function (el) {
      el.checked = box.checked;
    });
  });

  // After htmx swaps in an edit form, put the cursor in its textarea (keyboard users land on it).
  document.addEventListener("htmx:afterSwap", function (ev) {
    const field = ev.detail.target && ev.detail.target.querySelector
      ? (ev.detail.target.matches("[data-autofocus]") ? ev.detail.target : ev.detail.target.querySelector("[data-autofocus]"))
      : null;
    const target = field || document.querySelector("[data-autofocus]");
    if (target) {
      target.focus();
      target.setSelectionRange(target.value.length, target.value.length);
    }
  });
})();
