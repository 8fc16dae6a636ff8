"""What the test folders share: each module the helpers of one kind of test (the CLI in a
subprocess, the hub's PostgreSQL, the TUI's seeded brain, ...). `tests/` is on pytest's
`pythonpath` (pyproject.toml), so a test imports them as `support.<name>`."""
