"""Identities: the keystore, the master, identity epochs, grants, revocation, signed requests."""
