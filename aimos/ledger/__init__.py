"""The signed event ledger: one chain per signer epoch."""
