// Attached text files (code, logs, Markdown): read in the browser, size-capped, and sent as
// fenced blocks inside the message, so the model reads them and they are stored and searchable
// with the message like anything typed.

import { el, button, showAlert } from "./dom.js";

const LANGUAGES = {
  py: "python", js: "javascript", ts: "typescript", tsx: "tsx", jsx: "jsx", json: "json", yaml: "yaml",
  yml: "yaml", toml: "toml", md: "markdown", sh: "bash", rs: "rust", go: "go", java: "java", c: "c",
  h: "c", cpp: "cpp", rb: "ruby", php: "php", sql: "sql", html: "html", css: "css", xml: "xml",
};

function fence(text, info) {
  const runs = text.match(/`+/g) || [];
  const longest = runs.reduce(function (n, r) { return Math.max(n, r.length); }, 0);
  const ticks = "`".repeat(Math.max(3, longest + 1));
  return ticks + info + "\n" + text.replace(/\n$/, "") + "\n" + ticks;
}

export function asMarkdown(file) {
  const ext = (file.name.split(".").pop() || "").toLowerCase();
  return "📎 **" + file.name + "**\n\n" + fence(file.text, LANGUAGES[ext] || "");
}

export function makeAttachments(fileInput, list, maxBytes) {
  let files = [];

  function render() {
    list.textContent = "";
    files.forEach(function (file, i) {
      const chip = el("li", "attachment");
      chip.appendChild(el("span", "attachment-name", "📎 " + file.name));
      chip.appendChild(el("span", "attachment-size muted", " " + Math.ceil(file.size / 1000) + " KB "));
      chip.appendChild(button("Remove", "link-button", function () {
        files.splice(i, 1);
        render();
      }));
      list.appendChild(chip);
    });
  }

  async function add(file) {
    if (file.size > maxBytes) {
      showAlert(file.name + " is " + Math.ceil(file.size / 1000) + " KB; attachments are limited to " +
        Math.floor(maxBytes / 1000) + " KB each. It was not attached.");
      return;
    }
    let text;
    try {
      text = await file.text();
    } catch (e) {
      showAlert(file.name + " could not be read: " + e.message);
      return;
    }
    if (text.indexOf("\u0000") !== -1) {
      showAlert(file.name + " is not a text file (it holds binary data). Attach code, logs or Markdown.");
      return;
    }
    files.push({ name: file.name, size: file.size, text: text });
    render();
  }

  fileInput.addEventListener("change", async function () {
    for (const file of Array.from(fileInput.files || [])) await add(file);
    fileInput.value = ""; // the same file can be attached again after removing it
  });

  return {
    // The message text with every attachment appended (or just the text).
    compose: function (text) {
      const parts = files.map(asMarkdown);
      return [text.trim() ? text : ""].concat(parts).filter(Boolean).join("\n\n");
    },
    any: function () { return files.length > 0; },
    clear: function () { files = []; render(); },
  };
}
