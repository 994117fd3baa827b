// Files attached to a message show as cards (templates/chat/_file_card.html), drawn by the server.
// A message just sent is first shown with its whole text (the attached file's text included);
// once the server has stored it, its rendering is fetched as a reload would show it, cards and all.
"use strict";

(function () {
  const MARK = "📎 **";

  function hasFiles(bubble) {
    const source = bubble.getAttribute("data-source") || "";
    return source.startsWith(MARK) || source.indexOf("\n\n" + MARK) !== -1;
  }

  async function redraw(chat, bubbles) {
    const url = chat.getAttribute("data-messages-url");
    if (!url) return;
    let html;
    try {
      const response = await fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" });
      if (!response.ok) return; // the text stays as sent, the cards show on the next load
      html = await response.text();
    } catch (e) {
      return;
    }
    const stored = new DOMParser().parseFromString(html, "text/html");
    bubbles.forEach(function (bubble) {
      const drawn = stored.getElementById(bubble.id);
      const from = drawn && drawn.querySelector(".md");
      const to = bubble.querySelector(".md");
      if (from && to && from.querySelector(".file-card")) to.innerHTML = from.innerHTML;
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    const chat = document.getElementById("chat");
    const messages = document.getElementById("messages");
    if (!chat || !messages) return;
    new MutationObserver(function () {
      // A bubble has its id once the server stored the message (and its .md holds the rendered text).
      const fresh = Array.from(messages.querySelectorAll(".msg-user[data-message-id]:not([data-cards])"))
        .filter(function (bubble) {
          bubble.setAttribute("data-cards", "1");
          return hasFiles(bubble) && !bubble.querySelector(".file-card") && /^m\d+$/.test(bubble.id);
        });
      if (fresh.length) redraw(chat, fresh);
    }).observe(messages, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-message-id"] });
  });
})();
