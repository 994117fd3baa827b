// Light or dark: the system's choice (prefers-color-scheme) until the person picks one with the
// toggle; the pick is kept per browser in localStorage. Loaded without `defer` in <head> so the
// stored theme is applied before the first paint (no flash of the other theme).
"use strict";

(function () {
  const KEY = "hermes-theme";
  const root = document.documentElement;
  const systemDark = window.matchMedia("(prefers-color-scheme: dark)");

  function stored() {
    try {
      const value = window.localStorage.getItem(KEY);
      return value === "dark" || value === "light" ? value : null;
    } catch (err) {
      return null; // storage disabled (privacy mode): follow the system
    }
  }

  function current() {
    return stored() || (systemDark.matches ? "dark" : "light");
  }

  function apply() {
    const choice = stored();
    if (choice) root.setAttribute("data-theme", choice);
    else root.removeAttribute("data-theme");
    const button = document.getElementById("theme-toggle");
    if (button) button.setAttribute("aria-pressed", current() === "dark" ? "true" : "false");
  }

  function toggle() {
    const next = current() === "dark" ? "light" : "dark";
    try {
      window.localStorage.setItem(KEY, next);
    } catch (err) {
      root.setAttribute("data-theme", next); // not kept, but still switches this page
    }
    apply();
  }

  // CSS hides the collapsible parts only when scripts run, so a page without JS keeps them open.
  root.classList.add("js");
  apply();
  systemDark.addEventListener("change", apply);
  window.addEventListener("storage", function (ev) { if (ev.key === KEY) apply(); });
  document.addEventListener("DOMContentLoaded", function () {
    apply();
    const button = document.getElementById("theme-toggle");
    if (button) button.addEventListener("click", toggle);
  });
  window.Hermes = window.Hermes || {};
  window.Hermes.toggleTheme = toggle;
})();
