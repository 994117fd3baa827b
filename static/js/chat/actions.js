// Message actions: copy a message or one code block, edit a message and send it again, and
// answer the last question again (regenerate). Both make a new version in place: the earlier one
// stays in the same chat, one ‹ away (versions.js); the page sends them on the socket (main.js).

import { el, button, showAlert } from "./dom.js";
import { toggleSources } from "./sources.js";

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

// edit(bubble, text): send `text` as a new version of the question in `bubble`;
// regenerate(bubble): write the answer in `bubble` again.
export function makeActions(root, { isBusy, edit, regenerate }) {
  function startEdit(bubble) {
    if (isBusy() || bubble.querySelector(".edit-form")) return;
    const form = el("form", "edit-form");
    const area = form.appendChild(el("textarea", "edit-text"));
    area.value = bubble.getAttribute("data-source") || "";
    area.setAttribute("aria-label", "Edited message");
    area.rows = Math.min(12, Math.max(3, area.value.split("\n").length + 1));
    const row = form.appendChild(el("div", "edit-actions"));
    const send = row.appendChild(el("button", "primary", "Send"));
    send.type = "submit";
    const cancelButton = row.appendChild(button("Cancel", "edit-cancel"));
    const images = bubble.querySelectorAll(".msg-images img").length;
    const keeps = images ? " Its " + (images === 1 ? "image goes" : images + " images go") + " with it." : "";
    row.appendChild(el("span", "muted", " The earlier version stays, one ‹ away; Escape cancels." + keeps));
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
      edit(bubble, area.value);
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
    if (bubble.classList.contains("msg-assistant") && root.getAttribute("data-session")) {
      const sources = bar.appendChild(button("Sources", "msg-sources link-button"));
      sources.setAttribute("aria-expanded", "false");
      sources.addEventListener("click", function () {
        toggleSources(bubble, root.getAttribute("data-session"), sources);
      });
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
      if (!isBusy()) regenerate(last);
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
