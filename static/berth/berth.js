// Berth's own script: small progressive enhancements only; every page works without it.

// Elements with data-poll="<url>" are replaced by what the URL returns, every
// data-poll-interval milliseconds, until the returned element no longer asks to be polled.
// Elements after the first in the answer replace the page's elements of the same id.
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
      const [replacement, ...others] = holder.children;
      element.replaceWith(replacement);
      // Other parts of the page the answer brings (data-swap, by id): the history, say.
      // A part whose data-swap-key is unchanged is left alone, with what was typed into it.
      for (const part of others) {
        const current = part.id && document.getElementById(part.id);
        if (!current || !part.hasAttribute("data-swap")) continue;
        if ("swapKey" in part.dataset && current.dataset.swapKey === part.dataset.swapKey) continue;
        current.replaceWith(part);
      }
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

// Forms with data-preview-url show, while the user types, what the server says the
// result will be (the final namespace name), in the element named by data-preview-target.
function livePreview(form) {
  const target = document.querySelector(form.dataset.previewTarget);
  let timer = null;
  let latest = 0;
  const refresh = async () => {
    const ticket = ++latest;
    const params = new URLSearchParams();
    for (const [key, value] of new FormData(form)) {
      if (key !== "csrfmiddlewaretoken") params.append(key, value);
    }
    try {
      const response = await fetch(`${form.dataset.previewUrl}?${params}`, {
        credentials: "same-origin",
      });
      // Answers can arrive out of order; only the newest one is shown.
      if (response.ok && ticket === latest) target.innerHTML = await response.text();
    } catch (error) {
      target.dataset.previewError = String(error);
    }
  };
  const schedule = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(refresh, 150);
  };
  form.addEventListener("input", schedule);
  form.addEventListener("change", schedule);
  refresh();
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("form[data-preview-url]").forEach(livePreview);
});
