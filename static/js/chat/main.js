// The chat page: wires the socket, turn rendering, message actions, attachments, the model
// chooser, the slash picker, the message box and the keyboard. Each concern lives in its own module.

import { openSocket } from "./socket.js";
import { makeScroller } from "./scroll.js";
import { TurnView, clock } from "./turn.js";
import { LearningIndicator } from "./learning.js";
import { makeSlashPicker } from "./slash.js";
import { makeActions } from "./actions.js";
import { makeVersions } from "./versions.js";
import { makeAttachments } from "./attach.js";
import { makeModelChooser } from "./model.js";
import { makeComposer } from "./composer.js";
import { makeRefine, refineFocus } from "./refine.js";
import { showAlert } from "./dom.js";
import { landOnLinkedMessage } from "./anchor.js";

class ChatPage {
  constructor(root) {
    this.root = root;
    this.sessionId = root.getAttribute("data-session");
    this.maxChars = parseInt(root.getAttribute("data-max-chars") || "0", 10);
    this.input = document.getElementById("input");
    this.conn = document.getElementById("conn");
    this.busy = false;
    this.refusal = false; // the frame being handled refuses a message before its turn began
    const self = this;
    this.composer = makeComposer({
      input: this.input,
      send: document.getElementById("send"),
      note: document.getElementById("queue-note"),
      noteText: document.getElementById("queue-note-text"),
      cancel: document.getElementById("queue-cancel"),
      sessionId: this.sessionId,
    });
    // What the turn view reads and writes as "the input" when it hands a message's text back
    // after an error. A refused message was not stored anywhere, so it always comes back (before
    // whatever was typed since); after a failed answer the text stays in its bubble (with Retry)
    // and only fills an empty box, as it always did.
    const field = {
      get value() { return self.refusal ? "" : self.input.value; },
      set value(text) { self.composer.restore(text); },
    };
    this.scroller = makeScroller(document.getElementById("messages"), document.getElementById("jump-latest"));
    this.actions = makeActions(root, {
      isBusy: function () { return self.busy; },
      edit: function (bubble, text) { self.sendVersion("edit", bubble, text); },
      regenerate: function (bubble) { self.sendVersion("regenerate", bubble); },
    });
    this.attachments = makeAttachments(
      document.getElementById("attach-input"),
      document.getElementById("attachments"),
      parseInt(root.getAttribute("data-attach-bytes") || "50000", 10),
      root.getAttribute("data-attach-url"),
      this.sessionId,
    );
    this.slash = makeSlashPicker(this.input, document.getElementById("slash-menu"));
    this.learning = new LearningIndicator(this.sessionId);
    this.refine = makeRefine(document.getElementById("review-now-form"), {
      onStarted: function (data) {
        self.learning.reviewing(true);
        window.Hermes.toast(data.message);
      },
    });
    document.addEventListener("hermes:title", function (ev) {
      if (ev.detail.session_id === self.sessionId) self.showTitle(ev.detail.title);
    });
    makeModelChooser(document.getElementById("model-form"));
    this.turns = new TurnView({
      messages: document.getElementById("messages"),
      scroller: this.scroller,
      input: field,
      setBusy: function (value) { self.setBusy(value); },
      resend: function (text) { self.send(text); },
      restoreImages: function (images) { self.attachments.restoreImages(images); },
      decorate: this.actions.decorate,
      chatUrl: "/c/" + this.sessionId + "/",
      onSaved: function (frame) { self.saved(frame); },
      onVersionTurnEnd: function () { return self.versions.refresh(); },
    });
    this.versions = makeVersions(root, {
      messages: document.getElementById("messages"),
      scroller: this.scroller,
      isBusy: function () { return self.busy; },
      decorate: this.actions.decorate,
      refreshActions: this.actions.refresh,
      onContinue: function (id, button) { self.sendVersion("continue", button.closest(".turn-note"), "", id); },
    });
    this.socket = openSocket("/ws/chat/" + this.sessionId + "/", {
      onFrame: function (frame) {
        self.refusal = frame.type === "error" && !frame.mirrored && !self.turns.turn;
        self.turns.handle(frame);
        self.refusal = false;
      },
      onOpen: function () { self.opened(); },
      onClose: function (finalReason) { self.closed(finalReason); },
    });
  }

  // The message box stays editable either way; while busy, Send queues (composer.js).
  setBusy(value) {
    this.busy = value;
    document.getElementById("stop").hidden = !value;
    this.root.setAttribute("data-busy", value ? "1" : "0");
    this.actions.refresh();
    const due = this.composer.setBusy(value);
    if (value) return;
    this.input.focus();
    if (due) this.send(this.input.value, true); // the queued message goes now that the answer ended
  }

  // Send or Enter in the message box: sent now, or queued while an answer is being written.
  submit() {
    const focus = refineFocus(this.input.value);
    if (focus !== null) { // "/refine [focus]": a review of this chat now, not a message (also while an answer is written)
      const self = this;
      this.slash.close();
      this.refine.run(focus).then(function (started) { if (started) self.composer.sent(); });
      return;
    }
    if (this.busy) {
      this.composer.queue();
      return;
    }
    this.send(this.input.value, true);
  }

  saved(f) {
    this.learning.show(f.turns_until_memory_review, f.iters_until_skill_review);
    if (f.review_running) this.learning.reviewing(true);
    this.showTitle(f.title);
    if (window.htmx) window.htmx.trigger(document.body, "sessions-changed"); // the title may be new
  }

  showTitle(text) {
    const title = document.getElementById("chat-title-text"); // absent while the rename form is open
    if (text && title) {
      title.textContent = text;
      document.title = text + " · Hermes";
    }
  }

  opened() {
    this.conn.textContent = "";
    this.root.setAttribute("data-connected", "1");
    this.socket.send({ type: "join" }); // an answer being written (from any tab or device) shows here, with Stop
  }

  closed(finalReason) {
    this.root.setAttribute("data-connected", "0");
    this.conn.textContent = finalReason ? "Not connected: " + finalReason : "Reconnecting…";
    if (this.busy) {
      this.turns.lost();
      this.setBusy(false);
    }
  }

  // fromBox: the text is the message box's, which empties once it went (a Retry leaves the box as it is).
  send(typed, fromBox) {
    if (this.attachments.uploading()) {
      showAlert("An attachment is still uploading; send once it shows below the message box.");
      return;
    }
    const text = this.attachments.compose(typed);
    const images = this.attachments.images();
    if ((!text.trim() && !images.length) || this.busy) return;
    if (this.maxChars && text.length > this.maxChars) {
      this.turns.showError({ error: "The message is " + text.length + " characters; the limit is " + this.maxChars + "." });
      return;
    }
    if (!this.socket.isOpen()) {
      this.conn.textContent = "Not connected yet — your text is kept; send again in a moment.";
      return;
    }
    this.turns.sending(text, images);
    this.scroller.toBottom(); // the person's new message is in view, wherever they had scrolled
    const frame = { type: "message", text: text };
    if (images.length) frame.images = images.map(function (image) { return image.id; });
    this.socket.send(frame);
    if (fromBox) this.composer.sent();
    this.attachments.clear();
    this.slash.close();
    this.setBusy(true);
  }

  // A version made in place (agent/chat/versions.py): what it replaces leaves the page (the
  // edited question or the answer and all after it; for Continue, the "Stopped." note), and the
  // turn streams where it belongs. `at`: that element; `id`: the message (default: at's).
  sendVersion(kind, at, text, id) {
    if (this.busy || !at) return;
    if (!this.socket.isOpen()) {
      this.conn.textContent = "Not connected yet — try again in a moment.";
      return;
    }
    // A regenerate names the question: an answer streamed into this page has no id yet.
    const named = kind === "regenerate" ? previousQuestion(at) : at;
    const messageId = id || parseInt(named ? named.getAttribute("data-message-id") : "", 10);
    if (!messageId) return;
    const frame = { type: "message", text: text || "" };
    frame[kind] = messageId;
    // An edit keeps the question's images (the server gives the new version the same ones).
    const kept = kind === "edit" ? Array.from(at.querySelectorAll(".msg-images img")).map(function (img) {
      return { url: img.getAttribute("src"), name: img.alt };
    }) : [];
    const bubble = kind === "continue" ? document.getElementById("m" + messageId) : null;
    let node = kind === "regenerate" ? previousQuestion(at) : at;
    let next = kind === "regenerate" && node ? node.nextElementSibling : node;
    if (!node && kind === "regenerate") next = this.turns.ui.messages.firstElementChild;
    while (next) {
      const after = next.nextElementSibling;
      next.remove();
      next = after;
    }
    if (kind === "edit") {
      this.turns.sending(text, kept);
      this.turns.versionTurn = true;
    } else if (kind === "regenerate") {
      this.turns.regenerating();
    } else {
      this.turns.continuing(bubble);
    }
    this.scroller.toBottom();
    this.socket.send(frame);
    this.setBusy(true);
  }

  stop() {
    this.socket.send({ type: "stop" });
  }

  // Escape: cancel an open edit or rename first; otherwise stop a streaming answer.
  escape(ev) {
    if (this.actions.cancelOpenEdit()) return;
    const renameCancel = document.querySelector("#chat-title .rename-form button[hx-get]");
    if (renameCancel) {
      // Asked of htmx directly: a click on a button htmx has not wired yet (a form just swapped
      // in) would do nothing.
      if (window.htmx) {
        window.htmx.ajax("GET", renameCancel.getAttribute("hx-get"), { target: "#chat-title", swap: "innerHTML" });
      } else {
        renameCancel.click();
      }
    } else if (this.busy) {
      ev.preventDefault();
      this.stop();
    }
  }

  listen() {
    const self = this;
    document.getElementById("composer").addEventListener("submit", function (ev) {
      ev.preventDefault();
      self.submit();
    });
    document.getElementById("stop").addEventListener("click", function () { self.stop(); });
    this.input.addEventListener("keydown", function (ev) {
      if (self.slash.onKey(ev)) return;
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        self.submit();
      }
    });
    document.addEventListener("keydown", function (ev) {
      // An open dialog (the shortcuts list) takes its own Escape.
      if (ev.key === "Escape" && !ev.defaultPrevented && !document.querySelector("dialog[open]")) self.escape(ev);
    });
  }

  show() {
    document.querySelectorAll(".msg-meta time[datetime]").forEach(function (time) {
      time.textContent = clock(new Date(time.getAttribute("datetime"))); // the reader's own time zone
    });
    if (!landOnLinkedMessage(this.scroller)) this.scroller.toBottom();
    this.input.focus();
  }
}

// The person's message an answer (`node`, an element of the conversation) follows.
function previousQuestion(node) {
  let at = node.previousElementSibling;
  while (at && !at.classList.contains("msg-user")) at = at.previousElementSibling;
  return at;
}

const root = document.getElementById("chat");
if (root) {
  const page = new ChatPage(root);
  page.listen();
  page.show();
}
