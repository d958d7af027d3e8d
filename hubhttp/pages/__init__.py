"""The public artifact pages (DESIGN section 5): shell, sandboxed frame, preview card, their files."""
