"""Hostile input at each of Berth's boundaries (docs/security.md): what a person types never
reaches a shell, a network, a namespace or a spreadsheet it should not."""
