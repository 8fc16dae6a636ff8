"""aimos: a local-first personal memory brain for AI agents (MutMem protocol)."""

__version__ = "0.1.0"
