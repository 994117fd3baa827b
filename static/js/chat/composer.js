// The message box. It stays editable while an answer streams; Send (or Enter) then queues the
// message: it stays in the box, where it can still be changed or taken back ("Don't send"), and
// goes when the answer ends (also after Stop). The box grows with its text up to a limit (the
// CSS max-height), then scrolls. An unsent draft is kept per chat in this browser's
// localStorage, so switching chats or reloading keeps it; sending clears it.

const DRAFT_PREFIX = "hermes:draft:";

// Storage may be refused (a private window, a full quota): the draft then lives only in the box,
// as it did before drafts were kept, and typing goes on.
function store(key, value) {
  try {
    if (value) window.localStorage.setItem(key, value);
    else window.localStorage.removeItem(key);
  } catch (e) {
    return false;
  }
  return true;
}

function stored(key) {
  try {
    return window.localStorage.getItem(key) || "";
  } catch (e) {
    return "";
  }
}

// parts: {input (textarea), send (submit button), note (the queued line), noteText, cancel
// (its "Don't send" button), sessionId}
export function makeComposer({ input, send, note, noteText, cancel, sessionId }) {
  const key = DRAFT_PREFIX + sessionId;
  const placeholder = input.getAttribute("placeholder") || "";
  let busy = false;
  let queued = false;

  function resize() {
    // From the smallest height up to what the text needs; max-height caps it and it scrolls.
    input.style.height = "auto";
    const borders = input.offsetHeight - input.clientHeight;
    input.style.height = input.scrollHeight + borders + "px";
  }

  function save() {
    store(key, input.value.trim() ? input.value : "");
  }

  function show() {
    send.textContent = !busy ? "Send" : queued ? "Queued" : "Queue";
    send.disabled = busy && queued;
    send.title = busy ? "The answer is still being written: your message goes when it ends" : "";
    note.classList.toggle("queued", queued);
    cancel.hidden = !queued;
    noteText.textContent = queued ? "Queued: your message goes when the answer ends. You can still change it." : "";
    input.setAttribute(
      "placeholder",
      busy ? "The answer is being written — type your next message; Enter queues it" : placeholder,
    );
  }

  function unqueue() {
    queued = false;
    show();
  }

  input.addEventListener("input", function () {
    resize();
    save();
    // Emptying the box takes the queued message back: there is nothing left to send.
    if (queued && !input.value.trim()) unqueue();
  });
  // Text put in the box by the page (a chosen skill, a refused message) is saved on leaving too.
  window.addEventListener("pagehide", save);
  window.addEventListener("resize", resize);
  cancel.addEventListener("click", function () {
    unqueue();
    input.focus();
  });

  if (!input.value) input.value = stored(key);
  resize();
  show();

  return {
    // The answer streams (true) or ended (false). Returns true when a queued message should go now.
    setBusy: function (value) {
      busy = value;
      const due = !value && queued;
      if (!value) queued = false;
      show();
      return due;
    },
    // Send while an answer streams: keep the message for when it ends. False when there is nothing to queue.
    queue: function () {
      if (!input.value.trim()) return false;
      queued = true;
      show();
      return true;
    },
    unqueue: unqueue,
    isQueued: function () { return queued; },
    // The message went: an empty, small box and no draft.
    sent: function () {
      input.value = "";
      queued = false;
      store(key, "");
      resize();
      show();
    },
    // A message the server refused comes back into the box, before anything typed since, and
    // is not sent on its own again: the person looks at it first.
    restore: function (text) {
      const now = input.value;
      if (!text || now.indexOf(text) !== -1) return;
      input.value = now.trim() ? text + "\n\n" + now : text;
      queued = false;
      save();
      resize();
      show();
    },
  };
}
