// The share panel's Copy buttons (templates/chat/_share_panel.html): the link goes to the
// clipboard, and the panel says so. Delegated, so panels htmx swaps in work too.
"use strict";

(function () {
  function say(button, text) {
    const panel = button.closest(".share-panel");
    const status = panel && panel.querySelector(".share-copied");
    if (status) status.textContent = text;
  }

  document.addEventListener("click", function (ev) {
    const button = ev.target.closest("button[data-copy]");
    if (!button) return;
    const field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    field.select();
    const done = function () { button.textContent = "Copied"; say(button, "Link copied."); };
    const manual = function () { say(button, "Select the link and copy it (Ctrl+C or ⌘C)."); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(done, manual);
    } else {
      manual();
    }
  });
})();
