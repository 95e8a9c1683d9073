"""H0 — a local-first personal AI employee that lives in an Obsidian vault."""

__version__ = "0.1.0"
