"""The brain's SQLite store: connections, migrations, the writer and its SQL functions."""
