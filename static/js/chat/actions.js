// Message actions: copy a message or one code block, edit a message and send it again as a new
// branch, and answer the last question again (regenerate). Branching happens on the server
// (the old chat is kept and linked); the new chat's page then sends the text (see main.js).

import { el, button, api, showAlert } from "./dom.js";

export const RESEND_KEY = "hermes:send:";

async function copyText(text, btn) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {
    showAlert("Copying failed: the browser did not allow access to the clipboard.");
    return;
  }
  const label = btn.textContent;
  btn.textContent = "Copied";
  setTimeout(function () { btn.textContent = label; }, 1500);
}

async function branch(url, form) {
  let data;
  try {
    data = await api(url, { method: "POST", form });
  } catch (e) {
    showAlert(e.message);
    return;
  }
  sessionStorage.setItem(RESEND_KEY + data.session, data.text);
  location.assign(data.url);
}

function addCodeCopy(bubble) {
  bubble.querySelectorAll(".md:not(.plain) pre").forEach(function (pre) {
    if (pre.parentNode.classList.contains("code-block")) return;
    const wrap = el("div", "code-block");
    pre.parentNode.insertBefore(wrap, pre);
    wrap.appendChild(pre);
    const copy = button("Copy code", "code-copy link-button");
    copy.addEventListener("click", function () { copyText(pre.textContent, copy); });
    wrap.insertBefore(copy, pre);
  });
}

export function makeActions(root, { isBusy }) {
  const forkUrl = root.getAttribute("data-fork-url");
  const regenerateUrl = root.getAttribute("data-regenerate-url");

  function startEdit(bubble) {
    if (isBusy() || bubble.querySelector(".edit-form")) return;
    const form = el("form", "edit-form");
    const area = form.appendChild(el("textarea", "edit-text"));
    area.value = bubble.getAttribute("data-source") || "";
    area.setAttribute("aria-label", "Edited message");
    area.rows = Math.min(12, Math.max(3, area.value.split("\n").length + 1));
    const row = form.appendChild(el("div", "edit-actions"));
    const send = row.appendChild(el("button", "primary", "Send as a new branch"));
    send.type = "submit";
    const cancelButton = row.appendChild(button("Cancel", "edit-cancel"));
    row.appendChild(el("span", "muted", " The current conversation is kept; Escape cancels."));
    const shown = Array.from(bubble.children);
    shown.forEach(function (child) { child.hidden = true; });
    bubble.appendChild(form);
    function cancel() {
      form.remove();
      shown.forEach(function (child) { child.hidden = false; });
      bubble.querySelector(".msg-actions button").focus();
    }
    cancelButton.addEventListener("click", cancel);
    area.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape") {
        ev.preventDefault();
        cancel();
      }
    });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (!area.value.trim()) {
        showAlert("The edited message is empty. Nothing was sent.");
        return;
      }
      branch(forkUrl, { message_id: bubble.getAttribute("data-message-id"), text: area.value });
    });
    area.focus();
  }

  function decorate(bubble) {
    addCodeCopy(bubble);
    if (bubble.querySelector(".msg-actions")) return;
    const bar = el("div", "msg-actions");
    const copy = bar.appendChild(button("Copy", "msg-copy link-button"));
    copy.addEventListener("click", function () { copyText(bubble.getAttribute("data-source") || "", copy); });
    if (bubble.classList.contains("msg-user") && bubble.hasAttribute("data-message-id")) {
      bar.appendChild(button("Edit", "msg-edit link-button", function () { startEdit(bubble); }));
    }
    bubble.appendChild(bar);
  }

  // Only the last answer can be asked for again, and not while a turn runs.
  function refresh() {
    root.querySelectorAll(".msg-regenerate").forEach(function (b) { b.remove(); });
    const answers = root.querySelectorAll(".msg-assistant");
    const last = answers[answers.length - 1];
    if (!last || isBusy()) return;
    const bar = last.querySelector(".msg-actions");
    if (!bar) return;
    bar.appendChild(button("Regenerate", "msg-regenerate link-button", function () {
      branch(regenerateUrl, {});
    }));
  }

  // Escape closes an open edit (the textarea handles it when focused; this covers the rest).
  function cancelOpenEdit() {
    const open = root.querySelector(".edit-form .edit-cancel");
    if (!open) return false;
    open.click();
    return true;
  }

  root.querySelectorAll(".msg-user, .msg-assistant").forEach(decorate);
  refresh();
  return { decorate, refresh, cancelOpenEdit };
}
