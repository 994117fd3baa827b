// The slash-command picker: typing "/" lists /refine and the skills; arrows, Enter/Tab and Escape work.

import { el, api, showAlert } from "./dom.js";

// The commands the chat page runs itself (refine.js), listed before the skills.
const COMMANDS = [
  { name: "refine", description: "Review this chat now and save what it taught; add a focus: /refine docker" },
];

export function makeSlashPicker(input, menu) {
  let skills = null;
  let options = [];
  let active = 0;

  async function loadSkills() {
    if (skills) return skills;
    try {
      const data = await api("/api/skills/slash");
      skills = COMMANDS.concat(data.skills || []);
    } catch (e) {
      showAlert("The skills list could not be loaded: " + e.message);
      skills = null;
      return [];
    }
    return skills;
  }

  function close() {
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
    input.setAttribute("aria-activedescendant", "slash-" + index);
  }

  function choose(index) {
    const skill = options[index];
    if (!skill) return;
    input.value = "/" + skill.name + " ";
    close();
    input.focus();
  }

  function render(matches) {
    menu.textContent = "";
    options = matches;
    if (!matches.length) {
      close();
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

  input.addEventListener("input", async function () {
    const typed = input.value;
    const m = /^\/([a-z0-9._-]*)$/.exec(typed);
    if (!m) {
      close();
      return;
    }
    if (typed === "/") skills = null; // fetch afresh: the agent may have made a new skill
    const list = await loadSkills();
    // The list may arrive after a skill was chosen or more was typed: only the latest text counts.
    if (input.value !== typed) return;
    render(list.filter(function (s) { return s.name.indexOf(m[1]) === 0; }));
  });

  // Handles the picker's keys; true when the key was used (the composer must not act on it).
  function onKey(ev) {
    if (menu.hidden || !options.length) return false;
    const moves = { ArrowDown: 1, ArrowUp: -1 };
    if (ev.key in moves) {
      highlight((active + moves[ev.key] + options.length) % options.length);
    } else if (ev.key === "Enter" || ev.key === "Tab") {
      choose(active);
    } else if (ev.key === "Escape") {
      close();
    } else {
      return false;
    }
    ev.preventDefault();
    return true;
  }

  return { close, onKey };
}
