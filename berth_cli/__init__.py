"""`berth`: Berth from a terminal or a pipeline, over its REST API only.

It imports nothing of Berth's server code: what it may call is the table in
`berth_cli.calls`, which a test holds to the API's OpenAPI schema.
"""
