"""The domain, one module per noun. REST and MCP handlers are thin adapters over these."""
