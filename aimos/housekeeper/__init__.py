"""The housekeeper: a long-running scheduler (one per brain) that runs the five required jobs,
each on the signed record (`system_job_started` / `system_job_terminal`)."""
