"""Agent Hub's MCP endpoint: tools, resources and skills over streamable HTTP and stdio."""
