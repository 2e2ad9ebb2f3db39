//! A node's block devices: discovery and classification (`disks`), safe idempotent provisioning
//! (`setup`), and the same intent rendered as platform manifests (`render`).
pub mod discover;
pub mod render;
pub mod setup;
pub mod valid;
