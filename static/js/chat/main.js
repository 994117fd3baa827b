// The chat page: wires the socket, turn rendering, message actions, attachments, the model
// chooser, the slash picker and the keyboard. Each concern lives in its own module.

import { openSocket } from "./socket.js";
import { makeScroller } from "./scroll.js";
import { TurnView, clock } from "./turn.js";
import { LearningIndicator } from "./learning.js";
import { makeSlashPicker } from "./slash.js";
import { makeActions, RESEND_KEY } from "./actions.js";
import { makeAttachments } from "./attach.js";
import { makeModelChooser } from "./model.js";

class ChatPage {
  constructor(root) {
    this.root = root;
    this.sessionId = root.getAttribute("data-session");
    this.maxChars = parseInt(root.getAttribute("data-max-chars") || "0", 10);
    this.input = document.getElementById("input");
    this.conn = document.getElementById("conn");
    this.busy = false;
    const self = this;
    this.scroller = makeScroller(document.getElementById("messages"), document.getElementById("jump-latest"));
    this.actions = makeActions(root, { isBusy: function () { return self.busy; } });
    this.attachments = makeAttachments(
      document.getElementById("attach-input"),
      document.getElementById("attachments"),
      parseInt(root.getAttribute("data-attach-bytes") || "50000", 10),
    );
    this.slash = makeSlashPicker(this.input, document.getElementById("slash-menu"));
    this.learning = new LearningIndicator(this.sessionId);
    document.addEventListener("hermes:title", function (ev) {
      if (ev.detail.session_id === self.sessionId) self.showTitle(ev.detail.title);
    });
    makeModelChooser(document.getElementById("model-form"));
    this.turns = new TurnView({
      messages: document.getElementById("messages"),
      scroller: this.scroller,
      input: this.input,
      setBusy: function (value) { self.setBusy(value); },
      resend: function (text) { self.send(text); },
      decorate: this.actions.decorate,
      chatUrl: "/c/" + this.sessionId + "/",
      onSaved: function (frame) { self.saved(frame); },
    });
    this.socket = openSocket("/ws/chat/" + this.sessionId + "/", {
      onFrame: function (frame) { self.turns.handle(frame); },
      onOpen: function () { self.opened(); },
      onClose: function (finalReason) { self.closed(finalReason); },
    });
  }

  setBusy(value) {
    this.busy = value;
    this.input.disabled = value;
    document.getElementById("send").disabled = value;
    document.getElementById("stop").hidden = !value;
    this.root.setAttribute("data-busy", value ? "1" : "0");
    this.actions.refresh();
    if (!value) this.input.focus();
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
    // A branch made by "edit" or "regenerate" on the previous page: send its text here, once.
    const pending = sessionStorage.getItem(RESEND_KEY + this.sessionId);
    if (pending !== null) {
      sessionStorage.removeItem(RESEND_KEY + this.sessionId);
      this.send(pending);
    }
  }

  closed(finalReason) {
    this.root.setAttribute("data-connected", "0");
    this.conn.textContent = finalReason ? "Not connected: " + finalReason : "Reconnecting…";
    if (this.busy) {
      this.turns.lost();
      this.setBusy(false);
    }
  }

  send(typed) {
    const text = this.attachments.compose(typed);
    if (!text.trim() || this.busy) return;
    if (this.maxChars && text.length > this.maxChars) {
      this.turns.showError({ error: "The message is " + text.length + " characters; the limit is " + this.maxChars + "." });
      return;
    }
    if (!this.socket.isOpen()) {
      this.conn.textContent = "Not connected yet — your text is kept; send again in a moment.";
      return;
    }
    this.turns.sending(text);
    this.scroller.toBottom(); // the person's new message is in view, wherever they had scrolled
    this.socket.send({ type: "message", text: text });
    this.input.value = "";
    this.attachments.clear();
    this.slash.close();
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
      self.send(self.input.value);
    });
    document.getElementById("stop").addEventListener("click", function () { self.stop(); });
    this.input.addEventListener("keydown", function (ev) {
      if (self.slash.onKey(ev)) return;
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        self.send(self.input.value);
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
    const target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target) {
      target.classList.add("highlight");
      this.scroller.unpin();
      target.scrollIntoView();
    } else {
      this.scroller.toBottom();
    }
    this.input.focus();
  }
}

const root = document.getElementById("chat");
if (root) {
  const page = new ChatPage(root);
  page.listen();
  page.show();
}
