// Attached text files (code, logs, Markdown): read in the browser, size-capped, and sent as
// fenced blocks inside the message, so the model reads them and they are stored and searchable
// with the message like anything typed. A PDF goes to the server, which sends back its text
// (agent/chat/attachments.py); that text is attached like a text file. An image goes to the
// server too, which keeps it; the message carries its id and the model gets the image itself.

import { el, button, showAlert, api } from "./dom.js";

// The limits the server enforces (docs/BEHAVIOUR.md, "The chat"), checked here first so a
// file too big is refused before it is sent.
const MB = 1024 * 1024;
const PDF_BYTES = 10 * MB;
const IMAGE_BYTES = 5 * MB;
const IMAGES_PER_MESSAGE = 4;
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];
const IMAGE_EXTS = ["png", "jpg", "jpeg", "webp", "gif"];

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

function extOf(name) {
  return (name.split(".").pop() || "").toLowerCase();
}

export function asMarkdown(file) {
  const note = file.note ? " (" + file.note + ")" : "";
  return "📎 **" + file.name + "**" + note + "\n\n" + fence(file.text, LANGUAGES[extOf(file.name)] || "");
}

function sizeText(bytes) {
  return bytes >= MB ? (bytes / MB).toFixed(1) + " MB" : Math.max(1, Math.ceil(bytes / 1000)) + " KB";
}

function isPdf(file) {
  return file.type === "application/pdf" || extOf(file.name) === "pdf";
}

function isImage(file) {
  return IMAGE_TYPES.indexOf(file.type) !== -1 || IMAGE_EXTS.indexOf(extOf(file.name)) !== -1;
}

// The composer's thumbnail of an attached image, also used in the sent message's bubble.
export function thumbnail(image) {
  const img = el("img", "thumb");
  img.src = image.url;
  img.alt = image.name;
  return img;
}

function chip(label, size, extra, onRemove) {
  const item = el("li", "attachment");
  if (extra) item.appendChild(extra);
  item.appendChild(el("span", "attachment-name", label));
  item.appendChild(el("span", "attachment-size muted", " " + sizeText(size) + " "));
  const remove = button("Remove", "link-button", onRemove);
  remove.setAttribute("aria-label", "Remove " + label.replace(/^📎 /, ""));
  item.appendChild(remove);
  return item;
}

export function makeAttachments(fileInput, list, maxBytes, uploadUrl, sessionId) {
  let files = [];
  let images = [];
  let uploading = 0; // files on their way to the server: a message sent now would go without them

  function render() {
    list.textContent = "";
    images.forEach(function (image, i) {
      const item = chip(image.name, image.size, thumbnail(image), function () { images.splice(i, 1); render(); });
      item.classList.add("image");
      list.appendChild(item);
    });
    files.forEach(function (file, i) {
      const label = "📎 " + file.name + (file.note ? " (" + file.note + ")" : "");
      list.appendChild(chip(label, file.size, null, function () { files.splice(i, 1); render(); }));
    });
  }

  // A PDF or an image: the server reads or keeps it and answers what to attach.
  async function upload(file) {
    const limit = isPdf(file) ? PDF_BYTES : IMAGE_BYTES;
    if (file.size > limit) {
      showAlert(file.name + " is " + sizeText(file.size) + "; " + (isPdf(file) ? "PDFs" : "images") +
        " are limited to " + sizeText(limit) + " each. It was not attached.");
      return;
    }
    if (!isPdf(file) && images.length >= IMAGES_PER_MESSAGE) {
      showAlert("A message can carry " + IMAGES_PER_MESSAGE + " images. " + file.name + " was not attached.");
      return;
    }
    const body = new FormData();
    body.append("session", sessionId);
    body.append("file", file, file.name);
    uploading += 1;
    list.setAttribute("aria-busy", "true");
    try {
      const got = await api(uploadUrl, { method: "POST", body: body });
      if (got.kind === "image") images.push({ id: got.id, name: got.name, size: got.size, url: got.url });
      else files.push({ name: got.name, size: got.size, text: got.text, note: got.note });
      render();
    } catch (e) {
      showAlert(e.message);
    } finally {
      uploading -= 1;
      if (!uploading) list.removeAttribute("aria-busy");
    }
  }

  async function add(file) {
    if (isPdf(file) || isImage(file)) {
      await upload(file);
      return;
    }
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
    any: function () { return files.length > 0 || images.length > 0; },
    uploading: function () { return uploading > 0; },
    images: function () { return images.slice(); },
    clear: function () { files = []; images = []; render(); },
    // Images of a message refused before it was stored go back to the composer.
    restoreImages: function (kept) {
      images = (kept || []).concat(images).slice(0, IMAGES_PER_MESSAGE);
      render();
    },
  };
}
