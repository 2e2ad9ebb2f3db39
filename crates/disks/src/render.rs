//! Rendering setup intent as platform manifests (openshift, gke, eks, systemd, cloud-init, bcache, lvmcache).
