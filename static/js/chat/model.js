// The chat's model: the names the model server lists (/v1/models) are offered, any name may
// be typed; the choice is saved on the chat and used from its next turn.

import { el, api } from "./dom.js";

export function makeModelChooser(form) {
  if (!form) return;
  const input = form.querySelector("#model-input");
  const options = form.querySelector("#model-options");
  const state = form.querySelector("#model-state");
  let saved = input.value;

  api(form.getAttribute("data-list-url")).then(
    function (data) {
      (data.models || []).forEach(function (name) { options.appendChild(el("option", null, name)).value = name; });
    },
    function (e) { state.textContent = e.message; },
  );

  async function save() {
    const name = input.value.trim();
    if (name === saved) return;
    state.textContent = "Saving…";
    try {
      const data = await api(form.getAttribute("data-url"), { method: "POST", form: { model: name } });
      saved = data.model;
      state.textContent = "Next answers use " + data.model + ".";
    } catch (e) {
      state.textContent = e.message;
    }
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    save();
  });
  input.addEventListener("change", save);
  input.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") {
      input.value = saved;
      state.textContent = "";
    }
  });
}
