"""`python -m aimos` runs the CLI."""

from aimos.cli.app import main

main()
