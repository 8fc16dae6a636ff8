"""The offline purge ceremony (`aimos purge`), imported by nothing in aimos/.

The ceremony itself is built by its own issue; until then this package only reserves the
import name in the wheel, and `aimos` has no purge command.
"""
