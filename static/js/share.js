// The read-only chat page's Print button (the print stylesheet leaves only the conversation).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  const button = document.getElementById("share-print");
  if (button) button.addEventListener("click", function () { window.print(); });
});
