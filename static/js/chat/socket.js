// The chat's websocket: frames in and out, reconnect with backoff, and no reconnect after the
// server refused the socket (4401 not logged in or logged out, 4403 wrong origin): go to the
// login page. onClose(reason) gets the reason when the refusal is final, null while retrying.

const REFUSED = new Set([4401, 4403]);
// The server will never take this socket (e.g. 4400, not a chat session id): stop, say why.
const PERMANENT = new Set([4400]);

async function loggedOut() {
  // A refused handshake reaches the browser as 1006 without its code: ask an ordinary URL instead.
  try {
    const r = await fetch("/api/skills/slash", { credentials: "same-origin", headers: { "HX-Request": "true" } });
    return r.status === 401;
  } catch (e) {
    return false; // the server is down: keep trying to reconnect
  }
}

function toLogin() {
  location.assign("/login?next=" + encodeURIComponent(location.pathname));
}

// Once the page is being left (a link, a form such as "Log out"), sockets closing on the way
// out must not start a navigation of their own.
let leaving = false;
window.addEventListener("beforeunload", function () { leaving = true; });
window.addEventListener("pageshow", function () { leaving = false; }); // back from the cache

export function openSocket(path, { onFrame, onOpen, onClose }) {
  let ws = null;
  let delay = 500;

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(proto + "//" + location.host + path);
    let opened = false;
    ws.addEventListener("open", function () {
      opened = true;
      delay = 500;
      onOpen();
    });
    ws.addEventListener("message", function (ev) {
      let frame;
      try { frame = JSON.parse(ev.data); } catch (e) { return; }
      onFrame(frame);
    });
    ws.addEventListener("close", async function (ev) {
      if (leaving) return;
      if (PERMANENT.has(ev.code)) {
        onClose(ev.reason || "The server refused this connection.");
        return;
      }
      onClose(null);
      if (REFUSED.has(ev.code) || (!opened && (await loggedOut()))) {
        toLogin();
        return;
      }
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    });
  }

  setInterval(function () { send({ type: "ping" }); }, 30000);

  function send(frame) {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(frame));
    return true;
  }

  connect();
  return { send, isOpen: function () { return !!ws && ws.readyState === WebSocket.OPEN; } };
}
