// 👍/👎 on the chat's answers (skills are verified after use). Works on answers the
// server rendered (data-message-id) and on answers streamed in later: a MutationObserver watches
// the message list, and an answer whose id the page does not know yet is sent as "the latest".
const chat = document.getElementById("chat");
const list = document.getElementById("messages");

function csrfToken() {
  try {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  } catch (err) {
    console.warn("feedback: no CSRF token on the page", err);
    return "";
  }
}

function show(bubble, verdict) {
  bubble.dataset.verdict = verdict;
  for (const b of bubble.querySelectorAll(".feedback button")) {
    b.setAttribute("aria-pressed", String(b.dataset.verdict === verdict));
  }
}

async function send(bubble, verdict, status) {
  const body = new URLSearchParams({ verdict });
  if (bubble.dataset.messageId) body.set("message_id", bubble.dataset.messageId);
  else body.set("latest", "1");
  status.removeAttribute("aria-label");
  status.textContent = "";
  const resp = await fetch(`/c/${chat.dataset.session}/feedback/`, {
    method: "POST",
    headers: { "X-CSRFToken": csrfToken() },
    body,
  });
  const data = await resp.json().catch(() => ({ ok: false, error: `HTTP ${resp.status}` }));
  if (!data.ok) {
    status.textContent = data.error || "Could not save the verdict.";
    return;
  }
  bubble.dataset.messageId = String(data.message_id);
  if (!bubble.id) bubble.id = `m${data.message_id}`;
  show(bubble, verdict);
  status.setAttribute("aria-label", verdict === "good" ? "Marked good" : "Marked bad: the skills used get this verdict");
}

function attach(bubble) {
  if (bubble.querySelector(".feedback") || bubble.classList.contains("streaming")) return;
  const bar = document.createElement("div");
  bar.className = "feedback";
  const status = document.createElement("span");
  status.className = "feedback-status muted small";
  status.setAttribute("role", "status");
  // The emoji is drawn by CSS (.feedback-good::before), so the answer's own text stays its text.
  for (const [verdict, title] of [["good", "Good answer"], ["bad", "Bad answer"]]) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `link feedback-${verdict}`;
    b.dataset.verdict = verdict;
    b.title = title;
    b.setAttribute("aria-label", title);
    b.setAttribute("aria-pressed", String(bubble.dataset.verdict === verdict));
    b.addEventListener("click", () => send(bubble, verdict, status));
    bar.append(b);
  }
  bar.append(status);
  bubble.append(bar);
}

function scan() {
  for (const bubble of list.querySelectorAll(".msg-assistant")) attach(bubble);
}

function highlightTarget() {
  const match = /^#m(\d+)$/.exec(location.hash);
  const target = match && document.getElementById(`m${match[1]}`);
  if (!target) return;
  target.classList.add("highlight");
  target.scrollIntoView({ block: "center" });
}

if (chat && list) {
  scan();
  // A streamed answer loses its "streaming" class when done: watch attributes as well as children.
  new MutationObserver(scan).observe(list, { childList: true, subtree: true, attributes: true, attributeFilter: ["class"] });
  highlightTarget();
  window.addEventListener("hashchange", highlightTarget);
  // chat.js scrolls to the newest message on load; go back to the linked one after it has.
  window.addEventListener("load", () => setTimeout(highlightTarget, 50));
}
