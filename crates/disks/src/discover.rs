//! Discovery and classification of block devices from sysfs, lsblk and blkid.
