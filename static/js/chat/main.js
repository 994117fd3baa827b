// The chat page: wires the socket, turn rendering, message actions, attachments, the model
// chooser, the slash picker and the keyboard. Each concern lives in its own module.

import { plural } from "./dom.js";
import { openSocket } from "./socket.js";
import { makeScroller } from "./scroll.js";
import { makeTurns } from "./turn.js";
import { makeSlashPicker } from "./slash.js";
import { makeActions, RESEND_KEY } from "./actions.js";
import { makeAttachments } from "./attach.js";
import { makeModelChooser } from "./model.js";

const root = document.getElementById("chat");
if (root) start(root);

function start(root) {
  const sessionId = root.getAttribute("data-session");
  const maxChars = parseInt(root.getAttribute("data-max-chars") || "0", 10);
  const messages = document.getElementById("messages");
  const input = document.getElementById("input");
  const sendBtn = document.getElementById("send");
  const stopBtn = document.getElementById("stop");
  const conn = document.getElementById("conn");
  const learning = document.getElementById("learning");
  const reviewState = document.getElementById("review-state");
  let busy = false;

  const scroller = makeScroller(messages, document.getElementById("jump-latest"));
  const actions = makeActions(root, { isBusy: function () { return busy; } });
  const attachments = makeAttachments(
    document.getElementById("attach-input"),
    document.getElementById("attachments"),
    parseInt(root.getAttribute("data-attach-bytes") || "50000", 10),
  );
  const slash = makeSlashPicker(input, document.getElementById("slash-menu"));
  makeModelChooser(document.getElementById("model-form"));

  function setBusy(value) {
    busy = value;
    input.disabled = value;
    sendBtn.disabled = value;
    stopBtn.hidden = !value;
    root.setAttribute("data-busy", value ? "1" : "0");
    actions.refresh();
    if (!value) input.focus();
  }

  // -- learning indicator ----------------------------------------------------------------------
  function showCounters(mem, skill) {
    const blank = function (v) { return v === null || v === undefined || v === ""; };
    document.getElementById("memory-counter").textContent =
      blank(mem) ? "" : "Memory review in " + plural(Number(mem), "turn");
    document.getElementById("skill-counter").textContent =
      blank(skill) ? "" : "Skill review in " + plural(Number(skill), "model call");
  }
  function setReviewRunning(running) {
    reviewState.hidden = !running;
    learning.classList.toggle("reviewing", running);
  }
  showCounters(learning.getAttribute("data-memory"), learning.getAttribute("data-skill"));
  document.addEventListener("hermes:review", function (ev) {
    if (ev.detail && ev.detail.session_id === sessionId) setReviewRunning(false);
  });
  document.addEventListener("hermes:review-started", function (ev) {
    if (ev.detail && ev.detail.session_id === sessionId) setReviewRunning(true);
  });

  function onSaved(f) {
    showCounters(f.turns_until_memory_review, f.iters_until_skill_review);
    if (f.review_running) setReviewRunning(true);
    const title = document.getElementById("chat-title-text");
    if (f.title && title) {
      title.textContent = f.title;
      document.title = f.title + " · Hermes";
    }
    if (window.htmx) window.htmx.trigger(document.body, "sessions-changed"); // the title may be new
  }

  const turns = makeTurns({ messages, scroller, input, setBusy, resend: send, decorate: actions.decorate, onSaved });

  // -- the socket ----------------------------------------------------------------------------
  const socket = openSocket("/ws/chat/" + sessionId + "/", {
    onFrame: turns.handle,
    onOpen: function () {
      conn.textContent = "";
      root.setAttribute("data-connected", "1");
      // A branch made by "edit" or "regenerate" on the previous page: send its text here, once.
      const pending = sessionStorage.getItem(RESEND_KEY + sessionId);
      if (pending !== null) {
        sessionStorage.removeItem(RESEND_KEY + sessionId);
        send(pending);
      }
    },
    onClose: function () {
      root.setAttribute("data-connected", "0");
      conn.textContent = "Reconnecting…";
      if (busy) {
        turns.lost();
        setBusy(false);
      }
    },
  });

  function send(typed) {
    const text = attachments.compose(typed);
    if (!text.trim() || busy) return;
    if (maxChars && text.length > maxChars) {
      turns.showError({ error: "The message is " + text.length + " characters; the limit is " + maxChars + "." });
      return;
    }
    if (!socket.isOpen()) {
      conn.textContent = "Not connected yet — your text is kept; send again in a moment.";
      return;
    }
    turns.sending(text);
    socket.send({ type: "message", text: text });
    input.value = "";
    attachments.clear();
    slash.close();
    setBusy(true);
  }

  function stop() {
    socket.send({ type: "stop" });
  }

  document.getElementById("composer").addEventListener("submit", function (ev) {
    ev.preventDefault();
    send(input.value);
  });
  stopBtn.addEventListener("click", stop);

  input.addEventListener("keydown", function (ev) {
    if (slash.onKey(ev)) return;
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      send(input.value);
    }
  });

  // Escape: cancel an open edit or rename first; otherwise stop a streaming answer.
  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "Escape" || ev.defaultPrevented) return;
    if (actions.cancelOpenEdit()) return;
    const renameCancel = document.querySelector("#chat-title .rename-form button[hx-get]");
    if (renameCancel) {
      renameCancel.click();
      return;
    }
    if (busy) {
      ev.preventDefault();
      stop();
    }
  });

  if (location.hash) {
    const target = document.getElementById(location.hash.slice(1));
    if (target) { target.classList.add("highlight"); target.scrollIntoView(); }
  } else {
    scroller.toBottom();
  }
  input.focus();
}
