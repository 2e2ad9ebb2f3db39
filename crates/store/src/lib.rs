//! Remembering and showing: every run in a versioned store (embedded SQLite, or PostgreSQL for a
//! team), comparisons between runs, and the self-contained HTML report.
