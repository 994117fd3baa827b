// Narrow windows: the main navigation collapses behind a "Menu" button, the chat list
// becomes a drawer opened by the "Chats" button, and the chat's own controls (model, export,
// rename, delete, review counters) fold behind "⋯". Each closes with Escape or a click elsewhere;
// the chat menu also closes when one of its [data-menu-close] buttons was used.
"use strict";

(function () {
  function setOpen(button, panel, open, bodyClass) {
    button.setAttribute("aria-expanded", open ? "true" : "false");
    document.body.classList.toggle(bodyClass, open);
    if (open) {
      const first = panel.querySelector("a[href], button:not([disabled]), input:not([type=hidden]), select, textarea");
      if (first) first.focus();
    }
  }

  function wire(buttonId, panelId, bodyClass) {
    const button = document.getElementById(buttonId);
    const panel = document.getElementById(panelId);
    if (!button || !panel) return null;
    const isOpen = function () { return button.getAttribute("aria-expanded") === "true"; };
    button.addEventListener("click", function () { setOpen(button, panel, !isOpen(), bodyClass); });
    document.addEventListener("click", function (ev) {
      if (isOpen() && !panel.contains(ev.target) && !button.contains(ev.target)) {
        setOpen(button, panel, false, bodyClass);
      }
    });
    document.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape" && isOpen()) {
        setOpen(button, panel, false, bodyClass);
        button.focus();
      }
    });
    panel.addEventListener("click", function (ev) {
      if (isOpen() && ev.target.closest("[data-menu-close]")) setOpen(button, panel, false, bodyClass);
    });
    return {
      toggle: function () { setOpen(button, panel, !isOpen(), bodyClass); },
      visible: function () { return button.offsetParent !== null; },
    };
  }

  document.addEventListener("DOMContentLoaded", function () {
    wire("nav-toggle", "main-nav", "nav-open");
    const drawer = wire("drawer-toggle", "chat-sidebar", "drawer-open");
    wire("chat-menu-toggle", "chat-menu", "chat-menu-open");
    window.Hermes = window.Hermes || {};
    window.Hermes.toggleDrawer = function () {
      if (drawer && drawer.visible()) drawer.toggle();
    };
  });
})();
