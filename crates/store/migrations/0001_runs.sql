-- disktier result store, schema version 1: one row per run.
-- Written in the SQL both SQLite and PostgreSQL accept, so one migration list serves both.
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    kind TEXT NOT NULL,
    profile TEXT,
    target TEXT,
    hostname TEXT,
    quick BOOLEAN NOT NULL DEFAULT FALSE,
    engine TEXT,
    sync_p99_ns BIGINT,
    read_iops DOUBLE PRECISION,
    write_iops DOUBLE PRECISION,
    read_bw_bytes DOUBLE PRECISION,
    write_bw_bytes DOUBLE PRECISION,
    host_json TEXT NOT NULL,
    device_json TEXT NOT NULL,
    doc TEXT NOT NULL
);
CREATE INDEX runs_created_at ON runs (created_at);
