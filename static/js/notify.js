// Live learning notifications on every page: one socket to /ws/notify/.
// A finished background review shows its 💾 line as a toast, each part a link: what was saved,
// and what waits for the person (the inbox, filtered to that review), whose count the navigation's
// Pending badge then includes. Every notice is re-dispatched as the DOM event "hermes:" + its
// type ("hermes:review", "hermes:review_started", "hermes:title": the names agent/chat/live.py
// sends) for the chat page.
// A chat the model just named refreshes the chat list and that chat's header.
// The socket reconnects after a restart, and goes to the login page when the server refuses it.

import { openSocket } from "./chat/socket.js";

function dispatch(name, detail) {
  document.dispatchEvent(new CustomEvent(name, { detail: detail }));
}

// The navigation's Pending badge, counting writes that now wait too (the page was drawn before).
function addPending(count) {
  const nav = document.querySelector('#main-nav a[href="/pending/"]');
  if (!nav || !count) return;
  let badge = document.getElementById("pending-badge");
  if (!badge) {
    badge = document.createElement("span");
    badge.className = "nav-badge";
    badge.id = "pending-badge";
    badge.setAttribute("aria-hidden", "true");
    badge.textContent = "0";
    nav.append(" ", badge);
  }
  const total = Number(badge.textContent) + count;
  badge.textContent = String(total);
  nav.title = total + (total === 1 ? " write" : " writes") + " waiting for your approval";
}

const handlers = {
  review: function (f) {
    if (f.line && f.parts && f.parts.length) {
      window.Hermes.toast("💾 ", f.href, null, f.parts);
      addPending(f.held);
    } else if (f.line) {
      window.Hermes.toast(f.line, f.href);
    } else if (f.status === "failed") {
      window.Hermes.toast("Background review failed: " + (f.error || "unknown error"), f.href, "error");
    } else if (f.requested) {
      // A review the person asked for (Review this chat now, /refine) answers even when it found nothing.
      window.Hermes.toast("💾 Review done: nothing new to save", f.href);
    }
  },
  review_started: function () {},
  // The model named a chat after its first answer: the chat list and that chat's header follow.
  title: function () {
    if (window.htmx) window.htmx.trigger(document.body, "sessions-changed");
  },
};

openSocket("/ws/notify/", {
  onFrame: function (frame) {
    const handler = handlers[frame.type];
    if (handler) {
      handler(frame);
      dispatch("hermes:" + frame.type, frame);
    }
  },
  onOpen: function () { document.body.setAttribute("data-notify", "open"); },
  onClose: function () { document.body.setAttribute("data-notify", "closed"); },
});
