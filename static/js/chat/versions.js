// Versions in place: ‹ 2/3 › on a message with versions shows the one before or after it and the
// conversation that followed it, in the same chat. The server chooses the version
// (agent/chat/actions.py choose_version) and sends the conversation again, which replaces the
// messages here; after a turn that made a version (edit, regenerate, continue) the same
// conversation is fetched so its ‹ › counts are the stored ones.

import { showAlert } from "./dom.js";
import { clock } from "./turn.js";

function csrfToken() {
  try {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  } catch (e) {
    return "";
  }
}

async function fetchText(url, init) {
  let response;
  try {
    response = await fetch(url, { credentials: "same-origin", ...init });
  } catch (e) {
    throw new Error("The dashboard did not answer (is the server still running?).");
  }
  if (response.status === 401) {
    location.assign("/login?next=" + encodeURIComponent(location.pathname));
    throw new Error("You are logged out; opening the login page.");
  }
  if (!response.ok) {
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    throw new Error((data && data.error) || "The request failed (" + response.status + " " + response.statusText + ").");
  }
  return { html: await response.text(), shown: response.headers.get("X-Shown-Message") };
}

// ui: {messages, isBusy(), decorate(bubble), refreshActions(), scroller, onContinue(messageId, button)}
export function makeVersions(root, ui) {
  const versionUrl = root.getAttribute("data-version-url");
  const messagesUrl = root.getAttribute("data-messages-url");

  function show(html, shown) {
    const messages = ui.messages;
    messages.innerHTML = html; // rendered and sanitised by the server, as a reload shows it
    messages.querySelectorAll(".msg-user, .msg-assistant").forEach(ui.decorate);
    ui.refreshActions();
    messages.querySelectorAll(".msg-meta time[datetime]").forEach(function (time) {
      time.textContent = clock(new Date(time.getAttribute("datetime")));
    });
    const target = shown ? document.getElementById("m" + shown) : null;
    if (target) {
      ui.scroller.unpin();
      target.scrollIntoView({ block: "nearest" });
      const step = target.querySelector(".versions button:not(:disabled)");
      if (step) step.focus({ preventScroll: true });
    } else {
      ui.scroller.toBottom();
    }
    document.dispatchEvent(new CustomEvent("hermes:messages")); // other modules re-mark what they own
  }

  async function choose(form, step) {
    if (ui.isBusy()) {
      showAlert("A reply is still being written… wait for it to finish or press Stop.");
      return;
    }
    const body = new URLSearchParams(new FormData(form));
    body.set("step", step);
    try {
      const got = await fetchText(versionUrl, {
        method: "POST",
        body,
        headers: { "HX-Request": "true", "X-CSRFToken": csrfToken() },
      });
      show(got.html, got.shown);
    } catch (e) {
      showAlert(e.message);
    }
  }

  async function refresh() {
    try {
      const got = await fetchText(messagesUrl, { headers: { "HX-Request": "true" } });
      show(got.html, null);
    } catch (e) {
      showAlert(e.message + " Reload the page to see every version.");
    }
  }

  ui.messages.addEventListener("click", function (ev) {
    const stepButton = ev.target.closest(".versions button[name=step]");
    if (stepButton) {
      ev.preventDefault();
      choose(stepButton.form, stepButton.value);
      return;
    }
    const more = ev.target.closest(".msg-continue");
    if (more && !ui.isBusy()) ui.onContinue(parseInt(more.getAttribute("data-message-id"), 10), more);
  });

  return { refresh };
}
