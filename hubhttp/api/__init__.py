"""REST API blueprints under /api/v1, one module per resource."""
