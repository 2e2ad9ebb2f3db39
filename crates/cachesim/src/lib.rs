//! Block I/O traces (recorded by the engine or imported from public formats) and cache
//! simulation that predicts a cache's hit ratio before it is bought (seed 001).
