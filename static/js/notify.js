// Live learning notifications on every page: one socket to /ws/notify/.
// A finished background review shows its 💾 line as a toast linking to what changed, and is
// re-dispatched as a DOM event ("hermes:review") so the chat page can update its indicator.
// A chat the model just named ("hermes:title") refreshes the chat list and that chat's header.
// The socket reconnects after a restart, and goes to the login page when the server refuses it.

import { openSocket } from "./chat/socket.js";

function dispatch(name, detail) {
  document.dispatchEvent(new CustomEvent(name, { detail: detail }));
}

const handlers = {
  review: function (f) {
    if (f.line) {
      window.Hermes.toast(f.line, f.href);
    } else if (f.status === "failed") {
      window.Hermes.toast("Background review failed: " + (f.error || "unknown error"), f.href, "error");
    }
    dispatch("hermes:review", f);
  },
  review_started: function (f) { dispatch("hermes:review-started", f); },
  // The model named a chat after its first answer: the chat list and that chat's header follow.
  title: function (f) {
    dispatch("hermes:title", f);
    if (window.htmx) window.htmx.trigger(document.body, "sessions-changed");
  },
  pong: function () {},
};

openSocket("/ws/notify/", {
  onFrame: function (frame) {
    const handler = handlers[frame.type];
    if (handler) handler(frame);
  },
  onOpen: function () { document.body.setAttribute("data-notify", "open"); },
  onClose: function () { document.body.setAttribute("data-notify", "closed"); },
});
