"""The portable verifier: bytes in, verdict out; imports only aimos.crypto and aimos.errors."""
