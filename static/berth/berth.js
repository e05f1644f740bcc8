// Berth's own script: small progressive enhancements only; every page works without it.
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-local-time]").forEach((el) => {
    const when = new Date(el.getAttribute("datetime"));
    if (!Number.isNaN(when.getTime())) el.title = when.toLocaleString();
  });
});
