"""The knowledge base: each project's markdown pages with frontmatter, links, lint, trust and
history (spec "Knowledge base page", "Knowledge base routes"; DESIGN sections 2, 3 and 7)."""
