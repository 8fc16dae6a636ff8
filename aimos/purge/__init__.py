"""The offline purge ceremony (`aimos purge`): the only way to destroy a brain.

Reached only through a lazy import in `aimos.cli.purge_cmds`; nothing else in aimos/ imports it
(tests/architecture proves it). It needs neither the housekeeper nor the scheduler nor the TUI.
"""
