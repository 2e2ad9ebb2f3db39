//! fio-style job options shared by `bench`, `check`, `trace record` and `assess` (owned by the
//! engine CLI area).
