"""The database: the data model, opening and migrating it, the PostgreSQL engine, outlasting
an outage, keyset paging and a consistent snapshot for long reads."""
