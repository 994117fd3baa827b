// Small DOM and HTTP helpers shared by the chat modules. Text is only ever set with textContent.

export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

export function button(label, cls, onClick) {
  const b = el("button", cls, label);
  b.type = "button";
  if (onClick) b.addEventListener("click", onClick);
  return b;
}

export function plural(n, word) {
  return n + " " + word + (n === 1 ? "" : "s");
}

export function pretty(args) {
  try { return JSON.stringify(JSON.parse(args), null, 2); } catch (e) { return args; }
}

function csrfToken() {
  try {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  } catch (e) {
    return "";
  }
}

// fetch that resolves to the JSON body or rejects with an Error whose message a person can read
// (the server's own "error" text when it sent one).
// `body`: sent as it is (a FormData holding a file goes as multipart).
export async function api(url, { method = "GET", form = null, body = null } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json", "HX-Request": "true" } };
  if (method !== "GET") init.headers["X-CSRFToken"] = csrfToken();
  if (form) init.body = new URLSearchParams(form);
  if (body) init.body = body;
  let response;
  try {
    response = await fetch(url, init);
  } catch (e) {
    throw new Error("The dashboard did not answer (is the server still running?).");
  }
  if (response.status === 401) {
    location.assign("/login?next=" + encodeURIComponent(location.pathname));
    throw new Error("You are logged out; opening the login page.");
  }
  let raw = "";
  try { raw = await response.text(); } catch (e) { raw = ""; }
  let data = null;
  try { data = JSON.parse(raw); } catch (e) { data = null; }
  if (!response.ok) {
    // A refusal before any view ran (the request size limit) is one plain sentence.
    const plain = !data && raw && raw.length < 300 && raw.trim()[0] !== "<" ? raw.trim() : "";
    throw new Error((data && data.error) || plain || "The request failed (" + response.status + " " + response.statusText + ").");
  }
  return data || {};
}

// One place where the chat page tells the person that something they asked for failed.
export function showAlert(text) {
  const box = document.getElementById("chat-alert");
  if (!box) return;
  box.textContent = "";
  box.appendChild(el("span", "chat-alert-text", text));
  box.appendChild(document.createTextNode(" "));
  box.appendChild(button("Dismiss", "link-button", function () { box.hidden = true; }));
  box.hidden = false;
}
