"""Recall: candidates, scoring, diversity, disclosure verification and receipts."""
