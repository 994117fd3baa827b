// Shared page behaviour (no inline scripts: the CSP forbids them).
"use strict";

window.Hermes = window.Hermes || {};

// A toast in the top-right corner; `href` makes it a link to what changed. `parts`
// ([{text, href, title}]) instead makes `text` a prefix followed by one link per part, joined
// by " · " ("💾 1 saved · 1 waits for you": each part goes where it is about).
window.Hermes.toast = function (text, href, kind, parts) {
  const box = document.getElementById("toasts");
  if (!box) return;
  const linked = parts && parts.length;
  const el = document.createElement(href && !linked ? "a" : "div");
  el.className = "toast" + (kind ? " toast-" + kind : "");
  el.setAttribute("role", "status");
  el.textContent = text;
  if (linked) {
    parts.forEach(function (part, i) {
      if (i) el.appendChild(document.createTextNode(" · "));
      const link = document.createElement("a");
      link.textContent = part.text;
      link.href = part.href;
      if (part.title) link.title = part.title;
      el.appendChild(link);
    });
  } else if (href) {
    el.href = href;
  }
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
