"""Agent Hub over HTTP: the ASGI router, the global rules, the REST API, probes and public pages."""
