// The chat page: one websocket per open chat, streamed answers, tool cards, stop, retry,
// the learning indicator and the slash-command picker. Model text is inserted with
// textContent only; the one exception is `final_html`, which the server sanitised.
"use strict";

(function () {
  const root = document.getElementById("chat");
  if (!root) return;

  const sessionId = root.getAttribute("data-session");
  const maxChars = parseInt(root.getAttribute("data-max-chars") || "0", 10);
  const messages = document.getElementById("messages");
  const form = document.getElementById("composer");
  const input = document.getElementById("input");
  const sendBtn = document.getElementById("send");
  const stopBtn = document.getElementById("stop");
  const conn = document.getElementById("conn");
  const learning = document.getElementById("learning");
  const reviewState = document.getElementById("review-state");
  const menu = document.getElementById("slash-menu");

  let ws = null;
  let delay = 500;
  let busy = false;
  let turn = null; // {segment, cards, user} while a turn's frames arrive
  let pendingUser = null; // the user's bubble until the server confirms the turn started
  let lastText = "";

  // -- small DOM helpers ---------------------------------------------------------------------
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function scrollDown() {
    messages.scrollTop = messages.scrollHeight;
  }

  function append(node) {
    const empty = document.getElementById("chat-empty");
    if (empty) empty.remove();
    messages.appendChild(node);
    scrollDown();
    return node;
  }

  function setBusy(value) {
    busy = value;
    input.disabled = value;
    sendBtn.disabled = value;
    stopBtn.hidden = !value;
    root.setAttribute("data-busy", value ? "1" : "0");
    if (!value) input.focus();
  }

  function pretty(args) {
    try { return JSON.stringify(JSON.parse(args), null, 2); } catch (e) { return args; }
  }

  // -- learning indicator ----------------------------------------------------------------------
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  function showCounters(mem, skill) {
    document.getElementById("memory-counter").textContent =
      mem === null || mem === undefined || mem === "" ? "" : "Memory review in " + plural(Number(mem), "turn");
    document.getElementById("skill-counter").textContent =
      skill === null || skill === undefined || skill === "" ? "" : "Skill review in " + plural(Number(skill), "model call");
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

  // -- rendering a turn ------------------------------------------------------------------------
  function addUser(text) {
    const bubble = el("div", "msg msg-user");
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

  function note(text, cls) {
    return append(el("div", "turn-note " + (cls || ""), text));
  }

  function showError(frame) {
    const box = el("div", "msg msg-error");
    box.setAttribute("role", "alert");
    box.appendChild(el("span", "error-text", frame.error));
    if (frame.retry) {
      const text = lastText;
      const button = el("button", "retry", "Retry");
      button.type = "button";
      button.addEventListener("click", function () {
        box.remove();
        send(text);
      });
      box.appendChild(document.createTextNode(" "));
      box.appendChild(button);
    }
    append(box);
  }

  // Frame type -> handler, mirroring the server's protocol (agent/consumers.py).
  const handlers = {
    turn_started: function (f) {
      turn = { segment: null, cards: {} };
      if (f.mirrored) {
        // Sent from another tab on this chat: show it here too, and wait for the turn to end.
        addUser(f.text).id = "m" + f.message_id;
        setBusy(true);
        return;
      }
      if (pendingUser) pendingUser.id = "m" + f.message_id;
      pendingUser = null;
    },
    delta: function (f) {
      if (!turn) return;
      textSegment().appendChild(document.createTextNode(f.text));
      scrollDown();
    },
    tool_started: function (f) {
      if (!turn) return;
      turn.segment = null; // text after the tool call starts a new block
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
        seg.innerHTML = f.final_html; // sanitised by the server's renderer (nh3)
        seg.classList.remove("plain");
      }
      if (turn.segment) turn.segment.parentNode.classList.remove("streaming");
      if (f.interrupted) note("Stopped. What was written so far is kept.", "stopped");
      if (f.hit_limit) note("Stopped at the limit of model calls for one turn.", "stopped");
      lastText = "";
    },
    error: function (f) {
      if (turn && turn.segment) turn.segment.parentNode.classList.remove("streaming");
      if (f.mirrored) {
        showError({ error: f.error }); // the retry belongs to the tab that sent it
        return;
      }
      if (!turn && pendingUser) {
        // Refused before the turn began: nothing was stored, so take the bubble back.
        pendingUser.remove();
        pendingUser = null;
      }
      if (!input.value && lastText) input.value = lastText; // nothing typed is lost
      // A refused frame (no "retry" key) is not followed by "ready": unlock the input here.
      if (!turn && f.retry === undefined) setBusy(false);
      showError(f);
    },
    saved: function (f) {
      showCounters(f.turns_until_memory_review, f.iters_until_skill_review);
      if (f.review_running) setReviewRunning(true);
      const title = document.getElementById("chat-title-text");
      if (f.title && title) {
        title.textContent = f.title;
        document.title = f.title + " · Hermes";
      }
      if (window.htmx) window.htmx.trigger(document.body, "sessions-changed"); // the title may be new
    },
    ready: function () {
      turn = null;
      setBusy(false);
    },
    stopping: function () {},
    pong: function () {},
  };

  // -- the socket ----------------------------------------------------------------------------
  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(proto + "//" + location.host + "/ws/chat/" + sessionId + "/");
    ws.addEventListener("open", function () {
      delay = 500;
      conn.textContent = "";
      root.setAttribute("data-connected", "1");
    });
    ws.addEventListener("message", function (ev) {
      let frame;
      try { frame = JSON.parse(ev.data); } catch (e) { return; }
      const handler = handlers[frame.type];
      if (handler) handler(frame);
    });
    ws.addEventListener("close", function () {
      root.setAttribute("data-connected", "0");
      conn.textContent = "Reconnecting…";
      if (busy) {
        // The server keeps running the turn and stores it; a reload shows the rest.
        note("Connection lost while the answer was being written; reload to see all of it.", "stopped");
        turn = null;
        setBusy(false);
      }
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    });
  }

  function send(text) {
    if (!text.trim() || busy) return;
    if (maxChars && text.length > maxChars) {
      showError({ error: "The message is " + text.length + " characters; the limit is " + maxChars + "." });
      return;
    }
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      conn.textContent = "Not connected yet — your text is kept; send again in a moment.";
      return;
    }
    lastText = text;
    pendingUser = addUser(text);
    ws.send(JSON.stringify({ type: "message", text: text }));
    input.value = "";
    closeMenu();
    setBusy(true);
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    send(input.value);
  });
  stopBtn.addEventListener("click", function () {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "stop" }));
  });
  setInterval(function () {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "ping" }));
  }, 30000);

  // -- slash commands ------------------------------------------------------------------------
  let skills = null;
  let options = [];
  let active = 0;

  function loadSkills() {
    if (skills) return Promise.resolve(skills);
    return fetch("/api/skills/slash", { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : { skills: [] }; })
      .then(function (data) { skills = data.skills || []; return skills; });
  }

  function closeMenu() {
    menu.hidden = true;
    options = [];
    input.removeAttribute("aria-activedescendant");
  }

  function highlight(index) {
    active = index;
    Array.prototype.forEach.call(menu.children, function (li, i) {
      li.setAttribute("aria-selected", i === index ? "true" : "false");
      li.classList.toggle("active", i === index);
    });
  }

  function choose(index) {
    const skill = options[index];
    if (!skill) return;
    input.value = "/" + skill.name + " ";
    closeMenu();
    input.focus();
  }

  function renderMenu(matches) {
    menu.textContent = "";
    options = matches;
    if (!matches.length) {
      closeMenu();
      return;
    }
    matches.forEach(function (skill, i) {
      const li = el("li", "slash-option");
      li.setAttribute("role", "option");
      li.id = "slash-" + i;
      li.appendChild(el("span", "slash-name", "/" + skill.name));
      li.appendChild(el("span", "slash-desc", skill.description));
      li.addEventListener("mousedown", function (ev) {
        ev.preventDefault(); // keep focus in the textarea
        choose(i);
      });
      menu.appendChild(li);
    });
    menu.hidden = false;
    highlight(0);
  }

  input.addEventListener("input", function () {
    const m = /^\/([a-z0-9._-]*)$/.exec(input.value);
    if (!m) {
      closeMenu();
      return;
    }
    if (input.value === "/") skills = null; // fetch afresh: the agent may have made a new skill
    loadSkills().then(function (list) {
      const prefix = m[1];
      renderMenu(list.filter(function (s) { return s.name.indexOf(prefix) === 0; }));
    });
  });

  input.addEventListener("keydown", function (ev) {
    if (!menu.hidden && options.length) {
      const moves = { ArrowDown: 1, ArrowUp: -1 };
      if (ev.key in moves) {
        ev.preventDefault();
        highlight((active + moves[ev.key] + options.length) % options.length);
        return;
      }
      if (ev.key === "Enter" || ev.key === "Tab") {
        ev.preventDefault();
        choose(active);
        return;
      }
      if (ev.key === "Escape") {
        closeMenu();
        return;
      }
    }
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      send(input.value);
    }
  });

  connect();
  if (location.hash) {
    const target = document.getElementById(location.hash.slice(1));
    if (target) { target.classList.add("highlight"); target.scrollIntoView(); }
  } else {
    scrollDown();
  }
  input.focus();
})();
