"""API views, one module per resource: parse input, call one service or selector, serialize.

Every queryset comes from a tenants.selectors function scoped to the caller, so anything
outside their tenants is 404, exactly as in the browser; every change goes through
tenants.services, so validation, approval policy and audit are the web's own.
"""
