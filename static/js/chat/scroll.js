// Follow a streaming answer only while the reader is at the bottom; otherwise leave their
// place alone and offer a "jump to latest" button.

const SLACK_PX = 40; // "at the bottom" allows for a line of rounding and padding

export function makeScroller(messages, jumpButton) {
  function atBottom() {
    return messages.scrollHeight - messages.scrollTop - messages.clientHeight <= SLACK_PX;
  }
  function toBottom() {
    messages.scrollTop = messages.scrollHeight;
    jumpButton.hidden = true;
  }
  // Run `change` (which adds content); keep following only if the reader was at the bottom.
  function keep(change) {
    const follow = atBottom();
    const result = change();
    if (follow) toBottom();
    else jumpButton.hidden = false;
    return result;
  }
  messages.addEventListener("scroll", function () {
    if (atBottom()) jumpButton.hidden = true;
  });
  jumpButton.addEventListener("click", function () {
    toBottom();
    messages.focus();
  });
  return { keep, toBottom, atBottom };
}
