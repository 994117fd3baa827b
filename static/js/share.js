// The shared chat's page (templates/chat/share.html): the Print button (the print stylesheet leaves
// only the conversation), and code blocks wider than the window made reachable from the keyboard,
// so they can be scrolled sideways without a mouse.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  const button = document.getElementById("share-print");
  if (button) button.addEventListener("click", function () { window.print(); });
  document.querySelectorAll(".share-messages pre").forEach(function (pre) {
    if (pre.scrollWidth > pre.clientWidth) {
      pre.tabIndex = 0;
    }
  });
});
