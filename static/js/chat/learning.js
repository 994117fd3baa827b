// The learning indicator in the chat's header: turns until the next memory review, model calls
// until the next skill review, and whether a background review is running for this chat.

import { plural } from "./dom.js";

function blank(value) {
  return value === null || value === undefined || value === "";
}

export class LearningIndicator {
  constructor(sessionId) {
    this.box = document.getElementById("learning");
    this.state = document.getElementById("review-state");
    this.show(this.box.getAttribute("data-memory"), this.box.getAttribute("data-skill"));
    const self = this;
    document.addEventListener("hermes:review", function (ev) {
      if (ev.detail && ev.detail.session_id === sessionId) self.reviewing(false);
    });
    document.addEventListener("hermes:review_started", function (ev) {
      if (ev.detail && ev.detail.session_id === sessionId) self.reviewing(true);
    });
  }

  show(mem, skill) {
    document.getElementById("memory-counter").textContent =
      blank(mem) ? "" : "Memory review in " + plural(Number(mem), "turn");
    document.getElementById("skill-counter").textContent =
      blank(skill) ? "" : "Skill review in " + plural(Number(skill), "model call");
  }

  reviewing(running) {
    this.state.hidden = !running;
    this.box.classList.toggle("reviewing", running);
  }
}
