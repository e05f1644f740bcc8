"""The domain's pages (server-rendered, htmx for live parts), one module per noun; thin:
parse input, call one service or selector, render. URLs in tenants.urls."""
