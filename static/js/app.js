// Shared page behaviour (no inline scripts: the CSP forbids them).
"use strict";

window.Hermes = window.Hermes || {};

// A toast in the top-right corner; `href` makes it a link to what changed.
window.Hermes.toast = function (text, href, kind) {
  const box = document.getElementById("toasts");
  if (!box) return;
  const el = document.createElement(href ? "a" : "div");
  el.className = "toast" + (kind ? " toast-" + kind : "");
  el.setAttribute("role", "status");
  el.textContent = text;
  if (href) el.href = href;
  box.appendChild(el);
  setTimeout(function () { el.classList.add("toast-fade"); }, 8000);
  setTimeout(function () { el.remove(); }, 9000);
};

// Buttons and forms may ask for confirmation with data-confirm (instead of inline onclick).
document.addEventListener("click", function (ev) {
  const el = ev.target.closest("[data-confirm]");
  if (el && !window.confirm(el.getAttribute("data-confirm"))) {
    ev.preventDefault();
    ev.stopPropagation();
  }
}, true);
