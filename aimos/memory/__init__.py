"""Memories: the signed save, versions, the secret gate and the canary gate."""
