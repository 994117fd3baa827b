// Review this chat now (agent/chat/review_now.py): the chat menu's "Review this chat now", with an
// optional focus, and "/refine [focus]" typed in the message box start the background review at
// once instead of sending a message. The 💾 toast follows as for any review (notify.js).

import { api, showAlert } from "./dom.js";

const REFINE = /^\/refine(?:\s+([\s\S]*))?$/;

// The focus of a "/refine [focus]" line ("" for none), or null when the text is not one.
export function refineFocus(text) {
  const m = REFINE.exec(text.trim());
  return m ? (m[1] || "").split(/\s+/).filter(Boolean).join(" ") : null;
}

// form: the chat menu's form (its data-url is the endpoint); onStarted(data) when a review began.
export function makeRefine(form, { onStarted }) {
  const url = form.getAttribute("data-url");

  // Resolves to true when the review started; a refusal (a private chat, nothing to review yet) is shown.
  async function run(focus) {
    try {
      const data = await api(url, { method: "POST", form: { focus: focus } });
      onStarted(data);
      return true;
    } catch (e) {
      showAlert(e.message);
      return false;
    }
  }

  form.addEventListener("submit", async function (ev) {
    ev.preventDefault();
    const field = form.querySelector("input[name=focus]");
    if (await run(field.value)) field.value = "";
  });

  return { run };
}
