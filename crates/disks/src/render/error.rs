//! Why a render was refused: one variant per kind of bad input, each message naming the object
//! and the fix.

/// A render refused its input.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RenderError {
    #[error(transparent)]
    Invalid(#[from] crate::valid::Invalid),

    #[error("{flag} {path} is a kernel device name, which can change between boots: pass its /dev/disk/by-id/ path (ls -l /dev/disk/by-id/){alt}")]
    KernelName {
        flag: &'static str,
        path: String,
        /// Another way to select the disk, when the command has one (e.g. `--model`).
        alt: &'static str,
    },

    #[error("{path} is not a stable disk path: pass a /dev/disk/by-id/ or /dev/disk/by-path/ path (ls -l /dev/disk/by-id/)")]
    NotStablePath { path: String },

    #[error("{flag} {pattern:?} matches every disk, so the rendered script would format any blank disk attached to the node (a new EBS volume too): {fix}")]
    MatchesEverything {
        flag: &'static str,
        pattern: String,
        fix: &'static str,
    },

    #[error("{flag} {pattern:?} also matches {name}, a network volume, so the rendered script would format any blank one attached to the node (a new EBS volume too): {fix}")]
    MatchesNetworkVolume {
        flag: &'static str,
        pattern: String,
        name: String,
        fix: &'static str,
    },

    #[error("{flag} {path} names a partition (a -partN link), but disktier takes whole disks and the rendered script never uses a partition: pass the whole disk's link, without -partN")]
    Partition { flag: &'static str, path: String },

    #[error("{what} {path} must be an absolute path such as /var/lib/containers")]
    NotAbsolute { what: &'static str, path: String },

    #[error("{what} {path} is not usable: {why}")]
    BadPath {
        what: &'static str,
        path: String,
        why: String,
    },

    #[error("label {label:?} is not usable for {fs}: {why}")]
    BadLabel {
        label: String,
        fs: &'static str,
        why: String,
    },

    #[error("mount option {option:?} is not valid: {why}")]
    BadOption { option: String, why: String },

    #[error("--{flag} {value:?} is not valid: {why}")]
    BadValue {
        flag: &'static str,
        value: String,
        why: String,
    },

    #[error("--bind {bind} is {relation} --mount {mount}: bind directories must lie outside the mount point")]
    BindOverlap {
        bind: String,
        mount: String,
        relation: &'static str,
    },

    #[error("{machine_type} is an E2 machine type, which has no local SSD: use an n1, n2, n2d or c2 machine type (for example n1-standard-8)")]
    NoLocalSsd { machine_type: String },

    #[error("{machine_type} allows at most {max} local SSDs, not {count}: lower --local-ssds or choose a larger machine type")]
    TooManyLocalSsds {
        machine_type: String,
        count: u32,
        max: u32,
    },

    #[error("{machine_type} takes {allowed} local SSDs, not {count}: pick one of those counts")]
    LocalSsdCountNotAllowed {
        machine_type: String,
        count: u32,
        allowed: String,
    },

    #[error("--local-ssd-count attaches raw local SSDs and cannot be combined with --ephemeral-storage-local-ssd: drop --local-ssd-count")]
    LocalSsdCountConflict,

    #[error("the ephemeral-storage request {request} exceeds what a node with {count} local SSD(s) of 375 GiB ({capacity} bytes) can give pods: the kubelet keeps 10% of it free (its nodefs.available<10% eviction threshold), so at most {allocatable} bytes are allocatable, and GKE reserves more for the system (kubectl get node NODE -o jsonpath='{{.status.allocatable.ephemeral-storage}}' shows a node's); the pod would stay Pending: lower --request or raise --local-ssds")]
    RequestTooLarge {
        request: String,
        count: u32,
        capacity: u64,
        /// The most pods can be given: `capacity` less the kubelet's eviction threshold.
        allocatable: u64,
    },

    #[error("{instance_type} has no instance store (local NVMe disks) in disktier's catalog, so the MachineSet's nodes would have no disk for the MachineConfig: use a type with instance store, e.g. {similar}")]
    NoInstanceStore {
        instance_type: String,
        similar: String,
    },

    #[error("--fast and --slow are the same device ({path}): a cache needs two different disks")]
    SameDevice { path: String },

    #[error("{what} cannot be combined with {other}: {why}")]
    Conflict {
        what: &'static str,
        other: &'static str,
        why: &'static str,
    },

    #[error("{what} is required: {why}")]
    Missing {
        what: &'static str,
        why: &'static str,
    },

    /// A value `disktier setup` refuses on the node, refused here in setup's words: the rendered
    /// units would fail at every boot where setup fails once.
    #[error("{why}")]
    SetupRefuses { why: String },

    #[error("could not serialise the {object}: {message}")]
    Serialise { object: String, message: String },
}

impl RenderError {
    /// [`RenderError::BadValue`] naming `--flag`, the value and `why`.
    pub(crate) fn bad_value(flag: &'static str, value: String, why: &str) -> RenderError {
        RenderError::BadValue {
            flag,
            value,
            why: why.to_string(),
        }
    }

    /// `Ok` when a value passed its check; otherwise [`RenderError::bad_value`].
    pub(crate) fn unless(
        ok: bool,
        flag: &'static str,
        value: String,
        why: &str,
    ) -> Result<(), RenderError> {
        if ok {
            Ok(())
        } else {
            Err(RenderError::bad_value(flag, value, why))
        }
    }
}
