//! Interference: what a bulk writer (an OS update, a sequential writer, random direct writes)
//! does to a latency-sensitive fsync probe, and which mitigation helps (seed 004).
