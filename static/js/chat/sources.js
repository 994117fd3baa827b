// "Sources" under an answer: where it came from (agent/chat/sources.py), loaded by htmx under the
// answer on request and closed by the same button. The panel is the server's HTML; its "Not
// relevant" / "Wrong" forms post through htmx and the answer replaces the panel.

let opened = 0;

export function toggleSources(bubble, sessionId, btn) {
  const next = bubble.nextElementSibling;
  if (next && next.classList.contains("sources-holder")) {
    next.remove();
    btn.setAttribute("aria-expanded", "false");
    return;
  }
  const holder = document.createElement("div");
  holder.className = "sources-holder";
  holder.id = "sources-holder-" + (++opened);
  holder.setAttribute("aria-live", "polite");
  bubble.after(holder);
  btn.setAttribute("aria-expanded", "true");
  btn.setAttribute("aria-controls", holder.id);
  // An answer streamed into this page has no id yet: the server finds the chat's latest answer.
  const id = bubble.getAttribute("data-message-id");
  const url = "/c/" + sessionId + (id ? "/m/" + id : "/latest") + "/sources/";
  if (window.htmx) {
    window.htmx.ajax("GET", url, { target: holder, swap: "innerHTML" });
  } else {
    location.href = url; // the same list as a page of its own
  }
}
