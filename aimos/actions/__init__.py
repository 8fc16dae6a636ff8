"""The one way in: every front end (the CLI, the TUI, the MCP server, the housekeeper's runs)
opens a brain session and runs each signed action through this package.

An action takes typed inputs, signs the request as the named agent, hands it to the domain
writer that owns the thing (memory, epistemic, recall, learning), and returns that writer's
typed result for the front end to render. The domain packages never call back up here.
"""
