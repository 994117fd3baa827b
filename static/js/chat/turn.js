// Rendering one turn from the server's frames (agent/chat/consumers.py lists them in order).
// Model text is inserted with textContent; the exceptions are a delta's `html` (an answer's
// blocks, rendered once each as they complete) and `final_html`, which the server's renderer
// sanitised (nh3).

import { el, button, pretty, showAlert } from "./dom.js";
import { thumbnail } from "./attach.js";

// When a message was written (in the reader's time) and, for an answer, its tokens.
export function clock(date) {
  return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function metaLine(tokens, estimated) {
  const box = el("div", "msg-meta");
  const now = new Date();
  const time = box.appendChild(el("time", null, clock(now)));
  time.setAttribute("datetime", now.toISOString());
  if (tokens) {
    box.appendChild(document.createTextNode(" · "));
    box.appendChild(el("span", "msg-tokens", (estimated ? "~" : "") + tokens + (tokens === 1 ? " token" : " tokens")));
  }
  return box;
}

// The open end of a streamed answer after its rendered blocks (agent/chat/frames.py): text, or an
// open fence shown as code under its language's label, as it will look once rendered.
function tailBox(fence) {
  if (fence === null || fence === undefined) {
    const box = el("div", "md-tail");
    return { box: box, target: box };
  }
  const box = el("div", fence ? "md-tail code-fence" : "md-tail");
  if (fence) box.appendChild(el("span", "code-lang", fence));
  const code = box.appendChild(el("pre")).appendChild(el("code"));
  return { box: box, target: code };
}

// One answer block's stream: its source as written, the blocks rendered so far, its open tail.
function liveSegment(seg, source) {
  return { seg: seg, source: source || "", html: "", tail: null };
}

function toolCard(frame) {
  const card = el("details", "tool-card running");
  card.setAttribute("data-call-id", frame.call_id);
  const summary = card.appendChild(el("summary"));
  summary.appendChild(el("span", "tool-icon", "⚙"));
  [["tool-name", frame.name], ["tool-status", "running…"], ["tool-duration", ""]].forEach(function (part) {
    summary.appendChild(document.createTextNode(" "));
    summary.appendChild(el("span", part[0], part[1]));
  });
  const body = card.appendChild(el("div", "tool-body"));
  body.appendChild(el("div", "tool-label", "Arguments"));
  body.appendChild(el("pre", "tool-args", pretty(frame.arguments)));
  body.appendChild(el("div", "tool-label", "Result"));
  body.appendChild(el("pre", "tool-result", ""));
  return card;
}

// Frame type -> method of TurnView (a registry, mirroring the server's protocol).
// Frames after which the "Thinking…" indicator gives way to what the model sends.
const WAITING_ENDS = { reasoning: 1, delta: 1, tool_started: 1, done: 1, error: 1, ready: 1 };

const HANDLERS = {
  turn_started: "started", reasoning: "reasoning", notice: "notice", delta: "delta", tool_started: "toolStarted",
  tool_finished: "toolFinished", usage: "usage", done: "done", error: "error", saved: "saved", ready: "ready",
  stopping: "stopping", idle: "idle",
};

// ui: {messages, scroller, input, setBusy, resend(text), decorate(bubble), onSaved(frame),
//      onVersionTurnEnd() after a turn that made a version in place (edit, regenerate, continue):
//      a promise, settled once the stored conversation is shown again}
export class TurnView {
  constructor(ui) {
    this.ui = ui;
    this.turn = null; // {segment, thinking, cards} while a turn's frames arrive
    this.pendingUser = null; // the user's bubble until the server confirms the turn started
    this.lastText = "";
    this.waiting = null; // the "Thinking…" line while no token has arrived
    this.resumed = null; // the stopped answer's bubble a Continue writes on in
    this.versionTurn = false; // this turn made a version in place: the page fetches the versions after it
    // The page shows a turn that may have moved on since: served while an answer was being written
    // (its stored part, "Still being written…"), or its connection dropped during one. The socket
    // joins the turn on opening (socket.js); if it ended meanwhile, the stored conversation is
    // fetched again. Busy until then: Stop shows, Regenerate does not.
    const root = ui.messages.closest("[data-busy]");
    this.stale = !!root && root.getAttribute("data-busy") === "1";
    if (this.stale) ui.setBusy(true);
  }

  handle(frame) {
    const method = HANDLERS[frame.type];
    if (WAITING_ENDS[frame.type]) this.stopWaiting();
    if (method) this[method](frame);
  }

  // Between Send and the model's first token (seconds for slow or reasoning models) the
  // person sees that the answer is on its way, under their message.
  startWaiting() {
    this.stopWaiting();
    const box = el("div", "turn-waiting");
    box.id = "turn-waiting";
    box.setAttribute("role", "status");
    box.appendChild(el("span", "dots", "")).setAttribute("aria-hidden", "true");
    box.appendChild(el("span", "waiting-text", "Thinking…"));
    this.waiting = this.append(box);
  }

  stopWaiting() {
    if (this.waiting) this.waiting.remove();
    this.waiting = null;
  }

  append(node) {
    const empty = document.getElementById("chat-empty");
    if (empty) empty.remove();
    const messages = this.ui.messages;
    return this.ui.scroller.keep(function () { return messages.appendChild(node); });
  }

  addUser(text, images) {
    const bubble = el("div", "msg msg-user");
    bubble.setAttribute("data-source", text);
    if (images && images.length) {
      const list = el("ul", "msg-images");
      list.setAttribute("aria-label", "Attached images");
      images.forEach(function (image) {
        const item = el("li");
        item.appendChild(thumbnail(image));
        list.appendChild(item);
      });
      bubble.appendChild(list);
    }
    bubble.appendChild(el("div", "md plain", text));
    bubble.appendChild(metaLine(0, false));
    return this.append(bubble);
  }

  // The user's message is on its way: show it at once, and remember it for a retry.
  sending(text, images) {
    this.lastText = text;
    this.lastImages = images || [];
    this.pendingUser = this.addUser(text, images);
    this.startWaiting();
  }

  // Regenerate: the answer (and what followed it) is already off the page; a new one comes.
  regenerating() {
    this.lastText = "";
    this.pendingUser = null;
    this.versionTurn = true;
    this.startWaiting();
  }

  // Continue: the stopped answer goes on in its own bubble.
  continuing(bubble) {
    this.lastText = "";
    this.pendingUser = null;
    this.resumed = bubble;
    this.versionTurn = true;
    this.startWaiting();
  }

  // The continued answer as plain text again (its source), so the new text joins it; the
  // rendered whole replaces it when the answer is done.
  resume(bubble) {
    const md = bubble && bubble.querySelector(".md");
    if (!md) return;
    bubble.querySelectorAll(".msg-actions, .versions").forEach(function (node) { node.remove(); });
    const source = bubble.getAttribute("data-source") || md.textContent;
    md.textContent = source;
    md.classList.add("plain");
    bubble.classList.add("streaming");
    bubble.classList.remove("msg-ended");
    bubble.removeAttribute("data-source");
    this.turn.segment = md;
    this.turn.live = liveSegment(md, source);
  }

  textSegment() {
    if (!this.turn.segment) {
      const bubble = el("div", "msg msg-assistant streaming");
      this.turn.segment = bubble.appendChild(el("div", "md plain"));
      this.turn.live = liveSegment(this.turn.segment, "");
      this.append(bubble);
    }
    return this.turn.segment;
  }

  // A delta's text, and the blocks it completed: each block's sanitised HTML goes in once, after
  // the blocks shown, and the open tail after them is replaced by the server's (text only).
  streamInto(f) {
    const seg = this.textSegment();
    const live = this.turn.live;
    live.source += f.text;
    if (f.tail === undefined) {
      if (!f.text) return;
      if (!live.tail && !seg.classList.contains("plain")) {
        live.tail = tailBox(null); // text after the blocks shown, in its own box until its block completes
        seg.appendChild(live.tail.box);
      }
      (live.tail ? live.tail.target : seg).appendChild(document.createTextNode(f.text));
      return;
    }
    if (seg.classList.contains("plain")) {
      seg.textContent = ""; // the text so far is now blocks and a tail
      seg.classList.remove("plain");
    }
    if (live.tail) live.tail.box.remove();
    live.tail = null;
    if (f.html) seg.insertAdjacentHTML("beforeend", f.html); // sanitised by the server's renderer (nh3)
    live.html += f.html || "";
    if (f.tail || (f.fence !== null && f.fence !== undefined)) {
      live.tail = tailBox(f.fence);
      live.tail.target.textContent = f.tail;
      seg.appendChild(live.tail.box);
    }
  }

  endSegment() {
    if (!this.turn || !this.turn.segment) return;
    const bubble = this.turn.segment.parentNode;
    bubble.classList.remove("streaming");
    if (!bubble.hasAttribute("data-source")) bubble.setAttribute("data-source", this.sourceOf(this.turn.segment));
    this.ui.decorate(bubble);
  }

  sourceOf(seg) {
    const live = this.turn && this.turn.live;
    return live && live.seg === seg ? live.source : seg.textContent;
  }

  note(text, cls) {
    return this.append(el("div", "turn-note " + (cls || ""), text));
  }

  showError(frame) {
    const box = el("div", "msg msg-error");
    box.setAttribute("role", "alert");
    box.appendChild(el("span", "error-text", frame.error));
    if (frame.retry) {
      const text = this.lastText;
      const resend = this.ui.resend;
      box.appendChild(document.createTextNode(" "));
      box.appendChild(button("Retry", "retry", function () {
        box.remove();
        resend(text);
      }));
    }
    this.append(box);
  }

  // The server keeps running the turn and stores it; the socket joins it again when it reconnects.
  lost() {
    this.endSegment();
    this.note("Connection lost while the answer was being written; reload to see all of it.", "stopped");
    this.turn = null;
    this.stale = true;
  }

  // A page opened (or reconnected) while this turn runs gets its frames so far, the first marked
  // "joined": what the page showed of the turn (its stored part, "Still being written…") gives way
  // to them, after the question (or, for Continue, the answer it extends). False: that is not here.
  rejoin(f) {
    this.pendingUser = null;
    this.stale = false;
    const anchor = document.getElementById("m" + (f.kind === "continue" ? f.answer_id : f.message_id));
    let next = anchor ? anchor.nextElementSibling : null;
    while (next) {
      const after = next.nextElementSibling;
      next.remove();
      next = after;
    }
    return !!anchor;
  }

  started(f) {
    const shown = f.joined && this.rejoin(f); // the question is on the page already
    this.turn = { segment: null, live: null, thinking: null, cards: {}, tokens: 0, estimated: false };
    this.versionTurn = !!f.kind && f.kind !== "message";
    if (f.kind === "continue") {
      this.resume(f.mirrored ? document.getElementById("m" + f.answer_id) : this.resumed);
      this.resumed = null;
    }
    let bubble = null;
    if (f.mirrored && this.versionTurn && f.kind !== "edit") {
      bubble = null; // the question is on the page already; the versions are fetched at the end
    } else if (f.mirrored && !shown) {
      bubble = this.addUser(f.text); // sent from another tab on this chat
    } else {
      bubble = this.pendingUser;
      this.pendingUser = null;
    }
    if (bubble) {
      bubble.id = "m" + f.message_id;
      bubble.setAttribute("data-message-id", f.message_id);
      const md = bubble.querySelector(".md");
      if (f.html && md) {
        md.innerHTML = f.html; // sanitised by the server's renderer (nh3), as a reload shows it
        md.classList.remove("plain");
      }
      this.ui.decorate(bubble);
    }
    // The chat has its own address from its first message, so a reload or a shared link opens it.
    const own = this.ui.chatUrl;
    if (own && location.pathname !== own) history.replaceState(null, "", own + location.search);
    if (f.mirrored) this.ui.setBusy(true); // and wait here for the turn to end
    if (f.joined) this.startWaiting(); // until the answer so far (if any) follows
  }

  reasoning(f) {
    if (!this.turn) return;
    if (!this.turn.thinking) {
      const box = el("details", "thinking");
      box.appendChild(el("summary", null, "Thinking"));
      this.turn.thinking = box.appendChild(el("div", "thinking-text"));
      this.append(box);
    }
    this.turn.thinking.appendChild(document.createTextNode(f.text));
  }

  // A feature the model server lacks, learned this turn (e.g. no tool calls): one line for the person.
  notice(f) {
    this.note(f.text, "notice");
  }

  delta(f) {
    if (!this.turn) return;
    const self = this;
    this.ui.scroller.keep(function () { self.streamInto(f); });
  }

  toolStarted(f) {
    if (!this.turn) return;
    this.endSegment();
    this.turn.segment = null; // text after the tool call starts a new block
    this.turn.live = null;
    this.turn.thinking = null;
    this.turn.cards[f.call_id] = this.append(toolCard(f));
  }

  toolFinished(f) {
    const card = this.turn && this.turn.cards[f.call_id];
    if (!card) return;
    card.classList.remove("running");
    card.classList.toggle("tool-failed", !f.ok);
    card.querySelector(".tool-status").textContent = f.ok ? "ok" : "failed";
    card.querySelector(".tool-duration").textContent = Number(f.duration).toFixed(2) + " s";
    card.querySelector(".tool-result").textContent = pretty(f.result);
  }

  usage(f) {
    if (!this.turn) return;
    this.turn.tokens += f.tokens || 0;
    this.turn.estimated = this.turn.estimated || f.estimated;
  }

  done(f) {
    if (!this.turn) return;
    if (f.final_html && !f.interrupted) {
      const seg = this.textSegment();
      const live = this.turn.live;
      seg.parentNode.setAttribute("data-source", this.sourceOf(seg));
      // The blocks streamed are the final render, but for a link whose reference is defined in
      // another block, or a Continue (streamed as text): then the final render replaces them once.
      if (!live || live.tail || live.html !== f.final_html) {
        this.ui.scroller.keep(function () {
          seg.innerHTML = f.final_html; // sanitised by the server's renderer (nh3)
          seg.classList.remove("plain");
        });
      }
    }
    this.endSegment();
    const last = this.turn.segment && this.turn.segment.parentNode;
    const turn = this.turn;
    if (last && !last.querySelector(".msg-meta")) {
      this.ui.scroller.keep(function () { last.appendChild(metaLine(turn.tokens, turn.estimated)); });
    }
    if (f.interrupted) {
      this.note("Stopped. What was written so far is kept.", "stopped");
      // The stored answer comes back with its Continue button (and its id) once the turn is over.
      this.versionTurn = true;
    }
    if (f.hit_limit) this.note("Stopped at the limit of model calls for one turn.", "stopped");
    this.lastText = "";
  }

  error(f) {
    this.endSegment();
    if (f.mirrored) {
      this.showError({ error: f.error }); // the retry belongs to the tab that sent it
      return;
    }
    if (!this.turn && this.versionTurn) {
      // A version refused before its turn began: nothing changed, and the page shows the chat
      // as stored again (after "ready", or now when no "ready" follows a refused frame).
      if (this.pendingUser) this.pendingUser.remove();
      this.pendingUser = null;
      if (!this.ui.input.value && this.lastText) this.ui.input.value = this.lastText; // an edit's text is kept
      showAlert(f.error);
      if (f.retry === undefined) this.ready();
      return;
    }
    if (!this.turn && this.pendingUser) {
      // Refused before the turn began: nothing was stored, so take the bubble back (and its images).
      this.pendingUser.remove();
      this.pendingUser = null;
      if (this.lastImages && this.lastImages.length && this.ui.restoreImages) this.ui.restoreImages(this.lastImages);
      this.lastImages = [];
    }
    if (!this.ui.input.value && this.lastText) this.ui.input.value = this.lastText; // nothing typed is lost
    // A refused frame (no "retry" key) is not followed by "ready": unlock the input here.
    if (!this.turn && f.retry === undefined) this.ui.setBusy(false);
    this.showError(f);
  }

  saved(f) {
    this.ui.onSaved(f);
  }

  ready() {
    this.turn = null;
    this.resumed = null;
    // A stale page (see the constructor) never saw this turn's end: the stored conversation shows it.
    const refresh = (this.versionTurn || this.stale) && this.ui.onVersionTurnEnd;
    this.versionTurn = false;
    this.stale = false;
    if (!refresh) {
      this.ui.setBusy(false);
      return;
    }
    // The input unlocks once the stored conversation is back on the page: a message sent before
    // would be wiped out by that (older) conversation arriving after it.
    const ui = this.ui;
    ui.onVersionTurnEnd().finally(function () { ui.setBusy(false); });
  }

  // The server's answer to Stop. running: the turn is being stopped, its "done" and "ready"
  // follow. Not running: no turn runs any more (it just ended, or the server writing it died),
  // so the input is free at once; frames of an answer that just ended may still arrive and show.
  stopping(f) {
    if (f.running) return;
    this.stopWaiting();
    if (this.stale) {
      this.ready();
      return;
    }
    this.ui.setBusy(false);
  }

  // The answer to the socket's join (socket.js) when no turn runs: a stale page shows the chat as stored.
  idle() {
    if (this.stale && !this.turn) this.ready();
  }
}
