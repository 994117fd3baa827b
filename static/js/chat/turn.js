// Rendering one turn from the server's frames (agent/consumers.py lists them in order).
// Model text is inserted with textContent; the one exception is `final_html`, which the
// server's renderer sanitised (nh3).

import { el, button, pretty } from "./dom.js";

function toolCard(frame) {
  const card = el("details", "tool-card running");
  card.setAttribute("data-call-id", frame.call_id);
  const summary = card.appendChild(el("summary"));
  summary.appendChild(el("span", "tool-icon", "⚙"));
  summary.appendChild(document.createTextNode(" "));
  summary.appendChild(el("span", "tool-name", frame.name));
  summary.appendChild(document.createTextNode(" "));
  summary.appendChild(el("span", "tool-status", "running…"));
  summary.appendChild(document.createTextNode(" "));
  summary.appendChild(el("span", "tool-duration", ""));
  const body = card.appendChild(el("div", "tool-body"));
  body.appendChild(el("div", "tool-label", "Arguments"));
  body.appendChild(el("pre", "tool-args", pretty(frame.arguments)));
  body.appendChild(el("div", "tool-label", "Result"));
  body.appendChild(el("pre", "tool-result", ""));
  return card;
}

// ui: {messages, scroller, input, setBusy, resend(text), decorate(bubble), onSaved(frame)}
export function makeTurns(ui) {
  let turn = null; // {segment, thinking, cards} while a turn's frames arrive
  let pendingUser = null; // the user's bubble until the server confirms the turn started
  let lastText = "";

  function append(node) {
    const empty = document.getElementById("chat-empty");
    if (empty) empty.remove();
    return ui.scroller.keep(function () { return ui.messages.appendChild(node); });
  }

  function addUser(text) {
    const bubble = el("div", "msg msg-user");
    bubble.setAttribute("data-source", text);
    bubble.appendChild(el("div", "md plain", text));
    return append(bubble);
  }

  function textSegment() {
    if (!turn.segment) {
      const bubble = el("div", "msg msg-assistant streaming");
      turn.segment = bubble.appendChild(el("div", "md plain"));
      append(bubble);
    }
    return turn.segment;
  }

  function endSegment() {
    if (!turn || !turn.segment) return;
    const bubble = turn.segment.parentNode;
    bubble.classList.remove("streaming");
    if (!bubble.hasAttribute("data-source")) bubble.setAttribute("data-source", turn.segment.textContent);
    ui.decorate(bubble);
  }

  function note(text, cls) {
    return append(el("div", "turn-note " + (cls || ""), text));
  }

  function showError(frame) {
    const box = el("div", "msg msg-error");
    box.setAttribute("role", "alert");
    box.appendChild(el("span", "error-text", frame.error));
    if (frame.retry) {
      const text = lastText;
      box.appendChild(document.createTextNode(" "));
      box.appendChild(button("Retry", "retry", function () {
        box.remove();
        ui.resend(text);
      }));
    }
    append(box);
  }

  const handlers = {
    turn_started: function (f) {
      turn = { segment: null, thinking: null, cards: {} };
      if (f.mirrored) {
        // Sent from another tab on this chat: show it here too, and wait for the turn to end.
        const bubble = addUser(f.text);
        bubble.id = "m" + f.message_id;
        bubble.setAttribute("data-message-id", f.message_id);
        ui.decorate(bubble);
        ui.setBusy(true);
        return;
      }
      if (pendingUser) {
        pendingUser.id = "m" + f.message_id;
        pendingUser.setAttribute("data-message-id", f.message_id);
        ui.decorate(pendingUser);
      }
      pendingUser = null;
    },
    reasoning: function (f) {
      if (!turn) return;
      if (!turn.thinking) {
        const box = el("details", "thinking");
        box.appendChild(el("summary", null, "Thinking"));
        turn.thinking = box.appendChild(el("div", "thinking-text"));
        append(box);
      }
      turn.thinking.appendChild(document.createTextNode(f.text));
    },
    delta: function (f) {
      if (!turn) return;
      ui.scroller.keep(function () { textSegment().appendChild(document.createTextNode(f.text)); });
    },
    tool_started: function (f) {
      if (!turn) return;
      endSegment();
      turn.segment = null; // text after the tool call starts a new block
      turn.thinking = null;
      turn.cards[f.call_id] = append(toolCard(f));
    },
    tool_finished: function (f) {
      const card = turn && turn.cards[f.call_id];
      if (!card) return;
      card.classList.remove("running");
      card.classList.toggle("tool-failed", !f.ok);
      card.querySelector(".tool-status").textContent = f.ok ? "ok" : "failed";
      card.querySelector(".tool-duration").textContent = Number(f.duration).toFixed(2) + " s";
      card.querySelector(".tool-result").textContent = pretty(f.result);
    },
    done: function (f) {
      if (!turn) return;
      if (f.final_html && !f.interrupted) {
        const seg = textSegment();
        seg.parentNode.setAttribute("data-source", seg.textContent);
        ui.scroller.keep(function () {
          seg.innerHTML = f.final_html; // sanitised by the server's renderer (nh3)
          seg.classList.remove("plain");
        });
      }
      endSegment();
      if (f.interrupted) note("Stopped. What was written so far is kept.", "stopped");
      if (f.hit_limit) note("Stopped at the limit of model calls for one turn.", "stopped");
      lastText = "";
    },
    error: function (f) {
      endSegment();
      if (f.mirrored) {
        showError({ error: f.error }); // the retry belongs to the tab that sent it
        return;
      }
      if (!turn && pendingUser) {
        // Refused before the turn began: nothing was stored, so take the bubble back.
        pendingUser.remove();
        pendingUser = null;
      }
      if (!ui.input.value && lastText) ui.input.value = lastText; // nothing typed is lost
      // A refused frame (no "retry" key) is not followed by "ready": unlock the input here.
      if (!turn && f.retry === undefined) ui.setBusy(false);
      showError(f);
    },
    saved: function (f) { ui.onSaved(f); },
    ready: function () {
      turn = null;
      ui.setBusy(false);
    },
    stopping: function () {},
    pong: function () {},
  };

  return {
    handle: function (frame) {
      const handler = handlers[frame.type];
      if (handler) handler(frame);
    },
    // The user's message is on its way: show it at once, and remember it for a retry.
    sending: function (text) {
      lastText = text;
      pendingUser = addUser(text);
    },
    lost: function () {
      // The server keeps running the turn and stores it; a reload shows the rest.
      endSegment();
      note("Connection lost while the answer was being written; reload to see all of it.", "stopped");
      turn = null;
    },
    showError,
  };
}
