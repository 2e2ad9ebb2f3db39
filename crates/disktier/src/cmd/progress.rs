//! The live progress line on a terminal (owned by the engine CLI area).
