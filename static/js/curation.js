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

  // A live character count under memory textareas: what the file would hold after saving,
  // so a too-long entry is visible while typing, not only after Save.
  function count(area) {
    const out = document.getElementById(area.getAttribute("aria-describedby") || "");
    if (!out) return;
    const limit = parseInt(area.getAttribute("data-char-limit"), 10);
    const used = parseInt(area.getAttribute("data-char-used"), 10);
    const typed = area.value.replace(/\r\n/g, "\n").trim().length;
    const total = used + typed;
    out.classList.toggle("over", total > limit);
    out.textContent = total > limit
      ? typed + " characters: " + (total - limit) + " over the limit of " + limit + ". Shorten it, or make room by editing other entries."
      : typed + " characters · " + (limit - total) + " of " + limit + " left";
  }
  function countAll(root) {
    (root || document).querySelectorAll("textarea[data-char-limit]").forEach(count);
  }
  document.addEventListener("input", function (ev) {
    if (ev.target.matches && ev.target.matches("textarea[data-char-limit]")) count(ev.target);
  });
  document.addEventListener("htmx:afterSwap", function () { countAll(); });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { countAll(); });
  else countAll();

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
