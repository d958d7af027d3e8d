"""Agent Hub core: the domain, the stores and their writer actors.

This package imports no web framework, MCP SDK, CLI toolkit or HTTP client; those live in the
adapters (`hubhttp`, `hubmcp`, `hubcli`).
"""

__version__ = "1.0.0"
