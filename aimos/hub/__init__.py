"""One brain on several devices: the rows each device wrote, exchanged through a PostgreSQL hub
that cannot read them, and verified on arrival as if written locally (issue 39)."""
