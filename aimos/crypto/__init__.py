"""The bytes of the MutMem protocol: canonical JSON, encodings, Ed25519, certificates,
signed-message forms, commitments and Merkle roots. Pure functions, no I/O."""
