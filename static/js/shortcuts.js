// Keyboard shortcuts; the list a person sees is templates/_shortcuts.html (opened with "?").
// Single keys act only outside text fields, so typing a "?" or "/" in a message is never taken.
"use strict";

(function () {
  function typing(el) {
    if (!el) return false;
    const tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  function focus(el) {
    if (!el) return false;
    el.focus();
    return true;
  }

  function searchBox() {
    return document.getElementById("chat-search") ||
      document.querySelector("main input[type=search], main input[name=q]");
  }

  const ACTIONS = {
    "?": function () { const d = document.getElementById("shortcuts"); if (d && !d.open) d.showModal(); return !!d; },
    "/": function () { return focus(searchBox()); },
    "i": function () { return focus(document.getElementById("input")); },
    "m": function () { return focus(document.getElementById("messages")); },
    "c": function () { if (window.Hermes && window.Hermes.toggleDrawer) window.Hermes.toggleDrawer(); return true; },
    "t": function () { if (window.Hermes && window.Hermes.toggleTheme) window.Hermes.toggleTheme(); return true; },
  };

  document.addEventListener("keydown", function (ev) {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey || typing(ev.target)) return;
    const dialog = document.getElementById("shortcuts");
    if (dialog && dialog.open) return; // the dialog handles its own Escape
    const action = ACTIONS[ev.key];
    if (action && action()) ev.preventDefault();
  });

  document.addEventListener("DOMContentLoaded", function () {
    const open = document.getElementById("shortcuts-open");
    const dialog = document.getElementById("shortcuts");
    if (!open || !dialog) return;
    open.addEventListener("click", function () { dialog.showModal(); });
    // A click on the backdrop (outside the dialog's box) closes it, as in most apps.
    dialog.addEventListener("click", function (ev) { if (ev.target === dialog) dialog.close(); });
  });
})();

// Code blocks and tool output scroll sideways on their own; a keyboard user reaches them with Tab
// and scrolls with the arrow keys. Streamed answers add blocks later, hence the observer.
(function () {
  let queued = false;
  function reach() {
    queued = false;
    document.querySelectorAll("main pre:not([tabindex])").forEach(function (pre) {
      pre.setAttribute("tabindex", "0");
    });
  }
  function queue() {
    if (queued) return;
    queued = true;
    window.requestAnimationFrame(reach);
  }
  document.addEventListener("DOMContentLoaded", function () {
    reach();
    const main = document.getElementById("main");
    if (main) new MutationObserver(queue).observe(main, { childList: true, subtree: true });
  });
})();
