// Follow the conversation while the reader is at the bottom; otherwise leave their place alone
// and offer a "jump to latest" button. "At the bottom" is remembered from the reader's own
// scrolling, not measured after each change: content that grows under a pinned reader (a
// streamed token, the 👍/👎 row, the learned line, a rendered code block, a late font) would
// otherwise push the bottom out of reach and end the following.

const SLACK_PX = 40; // "at the bottom" allows for a line of rounding and padding

export function makeScroller(messages, jumpButton) {
  let pinned = true;
  let ownTop = 0; // where this code last put the view: a reader above it scrolled up since
  function movedUp() {
    // The scroll event comes a frame late; content streamed in before it must not pull back a
    // reader who has just scrolled up.
    if (pinned && messages.scrollTop < ownTop - SLACK_PX) pinned = false;
    return !pinned;
  }
  function atBottom() {
    return messages.scrollHeight - messages.scrollTop - messages.clientHeight <= SLACK_PX;
  }
  function toBottom() {
    pinned = true;
    messages.scrollTop = messages.scrollHeight;
    ownTop = messages.scrollTop;
    jumpButton.hidden = true;
  }
  // Run `change` (which adds content); keep following only if the reader was at the bottom.
  function keep(change) {
    const follow = !movedUp() || atBottom();
    const result = change();
    if (follow) toBottom();
    else jumpButton.hidden = false;
    return result;
  }
  function unpin() {
    pinned = false;
  }
  messages.addEventListener("scroll", function () {
    // The event of this code's own move comes a frame late: content grown meanwhile (a thumbnail
    // loaded) is not the reader leaving the bottom; only a scroll above that place is.
    pinned = atBottom() || (pinned && messages.scrollTop >= ownTop - SLACK_PX);
    if (pinned) jumpButton.hidden = true;
  });
  jumpButton.addEventListener("click", function () {
    toBottom();
    messages.focus();
  });
  // Whatever changes size below a pinned reader keeps them at the bottom.
  const grown = function () {
    if (movedUp()) return;
    messages.scrollTop = messages.scrollHeight;
    ownTop = messages.scrollTop;
  };
  const sizes = window.ResizeObserver ? new ResizeObserver(grown) : null;
  function watch(node) {
    if (sizes && node.nodeType === 1) sizes.observe(node);
  }
  Array.prototype.forEach.call(messages.children, watch);
  new MutationObserver(function (changes) {
    changes.forEach(function (change) { Array.prototype.forEach.call(change.addedNodes, watch); });
    grown();
  }).observe(messages, { childList: true, subtree: true, characterData: true });
  return { keep, toBottom, atBottom, unpin };
}
