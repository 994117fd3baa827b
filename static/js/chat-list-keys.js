// The chat list costs one Tab stop per chat: each row's link is the stop; its tag chips and its
// "⋯" menu are left out of the Tab order (templates/chat/_session_row.html) and reached from the
// link instead. ↑/↓ (and Home/End) move between the chats, → or Shift+F10 opens the row's menu
// and moves into it, Escape in an open menu closes it and goes back to the chat's link.
"use strict";

(function () {
  function links(list) {
    return Array.prototype.slice.call(list.querySelectorAll(".session-link"));
  }

  document.addEventListener("keydown", function (ev) {
    const list = document.getElementById("session-list");
    if (!list || !list.contains(ev.target) || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const row = ev.target.closest(".session-row");
    if (ev.target.classList.contains("session-link")) {
      const all = links(list);
      const at = all.indexOf(ev.target);
      const moves = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 };
      if (ev.key in moves && !ev.shiftKey) {
        const next = all[Math.max(0, Math.min(all.length - 1, moves[ev.key]))];
        if (next) next.focus();
        ev.preventDefault();
        return;
      }
      const menu = row && row.querySelector(".session-menu");
      if (menu && (ev.key === "ArrowRight" || (ev.key === "F10" && ev.shiftKey) || ev.key === "ContextMenu")) {
        menu.open = true;
        const first = menu.querySelector(".menu-item");
        if (first) first.focus();
        ev.preventDefault();
      }
      return;
    }
    const open = ev.target.closest(".session-menu[open]");
    if (open && ev.key === "Escape") {
      open.open = false;
      const link = row && row.querySelector(".session-link");
      if (link) link.focus();
      ev.preventDefault();
      ev.stopPropagation();
    }
  }, true); // before the page's own Escape (a running answer, the drawer): this Escape is the menu's
})();
