// Live learning notifications on every page: one socket to /ws/notify/.
// A finished background review shows its 💾 line as a toast linking to what changed. Every
// notice is re-dispatched as the DOM event "hermes:" + its type ("hermes:review",
// "hermes:review_started", "hermes:title": the names agent/chat/live.py sends) for the chat page.
// A chat the model just named refreshes the chat list and that chat's header.
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
