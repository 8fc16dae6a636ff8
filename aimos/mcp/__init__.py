"""`aimos mcp`: agents connect over MCP (stdio), each signing with its own enrolled epoch.

`aimos.mcp.server` is the only module that imports the MCP SDK; `aimos.mcp.config` (the client
configuration snippets) is plain Python.
"""
