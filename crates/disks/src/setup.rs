//! Safe, idempotent, convergent provisioning of local disks: mkfs, mount, bind, persist.
