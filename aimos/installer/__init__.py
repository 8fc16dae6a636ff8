"""aimos onboarding: create a brain, its identities and its grants (`aimos install`)."""
