//! The lab file's tables, in one place below both the connections
//! ([`crate::db`]) that create them and the statement classifier
//! ([`crate::watch`]) that prepares statements against a private copy.

/// The schema. `STRICT` makes SQLite refuse a value of the wrong type: without
/// it, `value + delta` past `i64::MAX` would quietly become a REAL.
pub(crate) const SCHEMA: &str = "
    CREATE TABLE resources (
        name       TEXT    NOT NULL PRIMARY KEY,
        generation INTEGER NOT NULL CHECK (generation >= 1),
        value      INTEGER NOT NULL
    ) STRICT;

    CREATE TABLE requests (
        resource   TEXT    NOT NULL REFERENCES resources (name),
        request_id TEXT    NOT NULL CHECK (request_id <> '')
                           CONSTRAINT request_id_length
                           CHECK (length(CAST(request_id AS BLOB)) <= 255),
        delta      INTEGER NOT NULL,
        result     INTEGER NOT NULL,
        generation INTEGER NOT NULL,
        PRIMARY KEY (resource, request_id)
    ) STRICT;

";
