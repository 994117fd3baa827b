// Live learning notifications on every page: one socket to /ws/notify/.
// A finished background review shows its 💾 line as a toast linking to what changed, and is
// re-dispatched as a DOM event ("hermes:review") so the chat page can update its indicator.
"use strict";

(function () {
  let delay = 1000;

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
    pong: function () {},
  };

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(proto + "//" + location.host + "/ws/notify/");
    ws.addEventListener("open", function () {
      delay = 1000;
      document.body.setAttribute("data-notify", "open");
    });
    ws.addEventListener("message", function (ev) {
      let frame;
      try { frame = JSON.parse(ev.data); } catch (e) { return; }
      const handler = handlers[frame.type];
      if (handler) handler(frame);
    });
    ws.addEventListener("close", function () {
      document.body.setAttribute("data-notify", "closed");
      // The server restarted or the network blinked: come back without a page reload.
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 15000);
    });
  }

  connect();
})();
