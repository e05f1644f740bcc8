// Berth's own script: small progressive enhancements only; every page works without it.

// Elements with data-poll="<url>" are replaced by what the URL returns, every
// data-poll-interval milliseconds, until the returned element no longer asks to be polled.
function startPolling(element) {
  const interval = Number(element.dataset.pollInterval || 2000);
  window.setTimeout(async () => {
    try {
      const response = await fetch(element.dataset.poll, {
        headers: { "X-Requested-With": "fetch" },
        credentials: "same-origin",
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const holder = document.createElement("div");
      holder.innerHTML = (await response.text()).trim();
      const replacement = holder.firstElementChild;
      element.replaceWith(replacement);
      if (replacement.dataset.poll) startPolling(replacement);
    } catch (error) {
      // A failed poll is retried; the page still shows the last state it knew.
      element.dataset.pollError = String(error);
      startPolling(element);
    }
  }, interval);
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-local-time]").forEach((el) => {
    const when = new Date(el.getAttribute("datetime"));
    if (!Number.isNaN(when.getTime())) el.title = when.toLocaleString();
  });
  document.querySelectorAll("[data-poll]").forEach(startPolling);
});
