// Where a link to a message lands (`/c/<chat>/#m<id>`, from search, the change history, memory's
// quotes, a skill's last failure). The message may not be on the page as it stands: it is in
// another version of its turn, or it has no element of its own (a tool call or result, an answer
// that only called tools). The first time, the page is asked again with `?m=<id>`, which opens the
// chat on that message's version (agent/chat/views.py); after that the nearest message at or
// before it is the target. `#m-<id>`, the form older links used, is read the same way.

const MESSAGE_HASH = /^#m-?(\d+)$/;

function nearestAtOrBefore(id) {
  let best = null;
  let bestId = -1;
  document.querySelectorAll("#messages [data-message-id][id]").forEach(function (el) {
    const at = Number(el.getAttribute("data-message-id"));
    if (at <= id && at > bestId) {
      best = el;
      bestId = at;
    }
  });
  return best;
}

// The element a link's fragment names, or null; null too when the page is being reloaded to show it.
function linkedMessage() {
  const hash = location.hash;
  if (!hash) return null;
  const exact = document.getElementById(decodeURIComponent(hash.slice(1)));
  if (exact && exact.hasAttribute("data-message-id")) return exact;
  const match = MESSAGE_HASH.exec(hash);
  if (!match) return null;
  const id = match[1];
  const own = document.getElementById("m" + id);
  if (own) return own;
  if (new URLSearchParams(location.search).get("m") !== id) {
    location.replace(location.pathname + "?m=" + id + "#m" + id);
    return null;
  }
  return nearestAtOrBefore(Number(id));
}

function land(scroller) {
  const target = linkedMessage();
  if (!target) return false;
  document.querySelectorAll("#messages .highlight[data-message-id]").forEach(function (el) {
    el.classList.remove("highlight");
  });
  target.classList.add("highlight");
  scroller.unpin();
  target.scrollIntoView({ block: "center" });
  return true;
}

// Outline and scroll to the message the address names, now and whenever the fragment changes
// (a link to another message of the same chat); false when the address names none.
export function landOnLinkedMessage(scroller) {
  window.addEventListener("hashchange", function () { land(scroller); });
  return land(scroller);
}
