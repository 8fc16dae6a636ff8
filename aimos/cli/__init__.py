"""The aimos command line (Typer): one module per command group."""
