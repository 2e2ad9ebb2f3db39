//! `disktier render PLATFORM`: the intent of `disktier setup` as the platform's own manifests.
//! The options here hold what the user typed; `disktier_disks::render` checks them and renders.
//! Output goes to stdout (YAML documents joined with `---`) or, with `-o DIR`, one file per
//! object; `--format json` lists the files and their content.

use super::setup::FsArg;
use super::{print_json, Ctx, Outcome};
use crate::app::render::{local_disks, write_files};
use crate::app::SCHEMA_VERSION;
use clap::Subcommand;
use disktier_disks::render::{
    Aks, AksConfig, Bcache, BcacheConfig, BcacheMode, CacheMount, CacheMountInput, CloudInit, Eks,
    EksConfig, FileKind, Gke, GkeConfig, Intent, IntentInput, LocalStorageStrategy, Lvmcache,
    LvmcacheConfig, LvmcacheMode, MachineSetConfig, OpenShift, OpenShiftConfig, Rendered, Renderer,
    Systemd,
};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Disks are selected by model or /dev/disk/by-id/ glob, never by kernel name (/dev/nvme1n1 moves between boots).\n\nExit status: 0 rendered, 2 usage or runtime error."
)]
pub struct Args {
    #[command(subcommand)]
    pub platform: PlatformCmd,
    /// Write one file per object into DIR (created if missing) instead of printing them.
    #[arg(short = 'o', long = "out", value_name = "DIR", global = true)]
    pub out: Option<PathBuf>,
    /// With -o: replace files in DIR whose content differs from what is rendered.
    #[arg(long, global = true)]
    pub overwrite: bool,
}

#[derive(Debug, Subcommand)]
pub enum PlatformCmd {
    /// OpenShift MachineConfig (Ignition 3.2.0) and, with --machineset, the OpenShift instance-disk
    /// recipe's MachineSet.
    Openshift(OpenshiftArgs),
    /// GKE node pool with --ephemeral-storage-local-ssd, and pods that use it.
    Gke(GkeArgs),
    /// EKS nodeadm NodeConfig and Karpenter EC2NodeClass/NodePool with instance store RAID0.
    Eks(EksArgs),
    /// AKS node pool of Lsv3/Lasv3 VMs (local NVMe), Azure Container Storage's local NVMe
    /// StorageClass, and a pod with a generic ephemeral volume on it.
    Aks(AksArgs),
    /// systemd units, the boot-time script and install.sh for a plain VM.
    Systemd(IntentArgs),
    /// cloud-init user-data (#cloud-config) installing the same units.
    CloudInit(IntentArgs),
    /// A reviewed bcache setup script: FAST caches SLOW (as in the bcache-on-EBS recipe).
    Bcache(BcacheArgs),
    /// A reviewed lvmcache (dm-cache) setup script: FAST caches SLOW.
    Lvmcache(LvmcacheArgs),
}

/// The setup intent shared by openshift, systemd and cloud-init.
#[derive(Debug, clap::Args)]
pub struct IntentArgs {
    /// Mount point for the local disk(s), e.g. /var/lib/containers.
    #[arg(long, value_name = "DIR")]
    pub mount: String,
    /// Mount options added to defaults,noatime (comma-separated, repeatable), e.g. prjquota; an
    /// atime option (relatime, strictatime, ...) replaces the noatime.
    #[arg(long, value_name = "OPTS")]
    pub options: Vec<String>,
    /// Filesystem to make.
    #[arg(long, value_enum, default_value_t = FsArg::Xfs)]
    pub fs: FsArg,
    /// Filesystem label the mount unit finds it by.
    #[arg(long, default_value = "disktier")]
    pub label: String,
    /// Owner of the mount point: USER or USER:GROUP.
    #[arg(long)]
    pub owner: Option<String>,
    /// Mode of the mount point, octal (e.g. 0755).
    #[arg(long)]
    pub mode: Option<String>,
    /// Directories to bind-mount from the disk (comma-separated, repeatable); what they hold is copied in first.
    #[arg(long, value_name = "DIRS")]
    pub bind: Vec<String>,
    /// Use disks whose model matches (shell pattern, repeatable). Default: the known ephemeral
    /// models (AWS instance store, GCP local SSD nvme_card, Azure NVMe Direct Disk).
    #[arg(long, value_name = "MODEL")]
    pub model: Vec<String>,
    /// Use the disks behind this /dev/disk/by-id/ glob instead of matching models.
    #[arg(long, value_name = "GLOB")]
    pub by_id: Option<String>,
}

impl IntentArgs {
    fn intent(self) -> anyhow::Result<Intent> {
        Ok(Intent::new(IntentInput {
            mount: self.mount,
            options: self.options,
            fs: Some(self.fs.into()),
            label: Some(self.label),
            owner: self.owner,
            mode: self.mode,
            binds: self.bind,
            models: self.model,
            by_id: self.by_id,
        })?)
    }
}

#[derive(Debug, clap::Args)]
pub struct OpenshiftArgs {
    #[command(flatten)]
    pub intent: IntentArgs,
    /// MachineConfigPool role; a role other than worker/master also renders its pool.
    #[arg(long, default_value = "worker")]
    pub role: String,
    /// Also render the OpenShift instance-disk recipe's MachineSet (needs --instance-type and
    /// --cluster-id; not with --role master: MachineSets do not manage control-plane machines).
    #[arg(long, requires_all = ["instance_type", "cluster_id"])]
    pub machineset: bool,
    /// EC2 instance type with instance storage, e.g. m6id.xlarge.
    #[arg(long, requires = "machineset")]
    pub instance_type: Option<String>,
    /// Cluster infrastructure name: oc get infrastructure cluster -o jsonpath='{.status.infrastructureName}'.
    #[arg(long, requires = "machineset")]
    pub cluster_id: Option<String>,
    /// AWS region.
    #[arg(long, default_value = "us-east-1", requires = "machineset")]
    pub region: String,
    /// Availability zone (default: the region's "a" zone).
    #[arg(long, requires = "machineset")]
    pub zone: Option<String>,
    /// RHCOS AMI (default: the OpenShift instance-disk recipe's us-east-1 image).
    #[arg(long, requires = "machineset")]
    pub ami: Option<String>,
    /// MachineSet replicas (at most 2147483647: spec.replicas is an int32).
    #[arg(long, default_value_t = 1, requires = "machineset", value_parser = parse_replicas)]
    pub replicas: u32,
    /// Units run `disktier setup` from this path on the node instead of the rendered script.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "/usr/local/bin/disktier")]
    pub use_binary: Option<String>,
    /// With --use-binary: accept a path in a build, temporary or home directory (normally
    /// refused: it may be gone at the next boot).
    #[arg(long, requires = "use_binary")]
    pub allow_build_binary: bool,
}

#[derive(Debug, clap::Args)]
pub struct GkeArgs {
    /// Cluster name.
    #[arg(long)]
    pub cluster: String,
    /// Machine type, e.g. n1-standard-8 (E2 types have no local SSD).
    #[arg(long)]
    pub machine_type: String,
    /// Number of local SSDs (375 GiB each) for ephemeral storage.
    #[arg(long)]
    pub local_ssds: u32,
    /// Node pool name.
    #[arg(long, default_value = "ssd-pool")]
    pub pool: String,
    /// GCP project that holds the cluster (gcloud projects list).
    #[arg(long)]
    pub project: String,
    /// The cluster's zone, e.g. asia-east1-a.
    #[arg(long)]
    pub zone: String,
    /// Refused: raw local SSDs cannot be combined with --ephemeral-storage-local-ssd.
    #[arg(long, value_name = "N")]
    pub local_ssd_count: Option<u32>,
    /// The emptyDir pod's ephemeral-storage request.
    #[arg(long, default_value = "200Gi")]
    pub request: String,
    /// Container image of the example pods.
    #[arg(long, default_value = "nginx")]
    pub image: String,
}

value_enum! {
    pub enum StrategyArg => LocalStorageStrategy { Raid0, Raid10, Mount }
}

#[derive(Debug, clap::Args)]
pub struct EksArgs {
    /// EKS cluster name.
    #[arg(long)]
    pub cluster: String,
    /// API server URL: aws eks describe-cluster --name NAME --query cluster.endpoint.
    #[arg(long)]
    pub api_server_endpoint: String,
    /// Base64 CA bundle: --query cluster.certificateAuthority.data.
    #[arg(long)]
    pub certificate_authority: String,
    /// Service CIDR: --query cluster.kubernetesNetworkConfig.serviceIpv4Cidr.
    #[arg(long)]
    pub cidr: String,
    /// nodeadm localStorage strategy.
    #[arg(long, value_enum, default_value_t = StrategyArg::Raid0)]
    pub strategy: StrategyArg,
    /// nodeadm localStorage.mountPath (nodeadm's default: /mnt/k8s-disks).
    #[arg(long, value_name = "DIR")]
    pub mount: Option<String>,
    /// Karpenter node IAM role (default: KarpenterNodeRole-CLUSTER).
    #[arg(long)]
    pub node_role: Option<String>,
    /// Name of the EC2NodeClass and NodePool.
    #[arg(long, default_value = "local-nvme")]
    pub name: String,
}

#[derive(Debug, clap::Args)]
pub struct AksArgs {
    /// Resource group of the cluster (az group list).
    #[arg(long)]
    pub resource_group: String,
    /// AKS cluster name (az aks list).
    #[arg(long)]
    pub cluster: String,
    /// Node pool to add (1-12 lowercase letters and digits).
    #[arg(long, default_value = "nvmepool")]
    pub pool: String,
    /// VM size with local NVMe: Standard_L8s_v3 ... Standard_L80s_v3, Standard_L8as_v3 ...
    #[arg(long, default_value = "Standard_L8s_v3")]
    pub vm_size: String,
    /// Nodes in the pool.
    #[arg(long, default_value_t = 3)]
    pub node_count: u32,
    /// Name of the StorageClass.
    #[arg(long, default_value = "local-nvme")]
    pub storage_class: String,
    /// Size of the example pod's ephemeral volume.
    #[arg(long, default_value = "500Gi")]
    pub request: String,
    /// Container image of the example pod.
    #[arg(long, default_value = "nginx")]
    pub image: String,
}

value_enum! {
    pub enum BcacheModeArg => BcacheMode { Writethrough, Writeback, Writearound, None }
}

#[derive(Debug, clap::Args)]
pub struct BcacheArgs {
    /// The fast (cache) disk, by /dev/disk/by-id/ path.
    #[arg(long, value_name = "DEV")]
    pub fast: String,
    /// The slow (backing) disk, by /dev/disk/by-id/ path.
    #[arg(long, value_name = "DEV")]
    pub slow: String,
    /// Cache mode.
    #[arg(long, value_enum, default_value_t = BcacheModeArg::Writeback)]
    pub mode: BcacheModeArg,
    /// Sequential I/O above this size bypasses the cache; 0 caches everything (as in the
    /// bcache-on-EBS recipe).
    #[arg(long, default_value = "0", value_parser = disktier_units::clap_parsers::size)]
    pub sequential_cutoff: u64,
    #[command(flatten)]
    pub mount: CacheMountArgs,
}

/// `--mount` of bcache and lvmcache: the filesystem on the cached device and its mount.
#[derive(Debug, clap::Args)]
pub struct CacheMountArgs {
    /// Also make a filesystem on the cached device (only when it holds none) and mount it here,
    /// now and at every boot (a systemd mount unit, nofail).
    #[arg(long, value_name = "DIR")]
    pub mount: Option<String>,
    /// Filesystem to make (with --mount).
    #[arg(long, value_enum)]
    pub fs: Option<FsArg>,
    /// Filesystem label (with --mount; default disktier).
    #[arg(long)]
    pub label: Option<String>,
    /// Mount options added to defaults,noatime (with --mount; comma-separated, repeatable).
    #[arg(long, value_name = "OPTS")]
    pub options: Vec<String>,
}

impl CacheMountArgs {
    fn checked(self) -> anyhow::Result<Option<CacheMount>> {
        let Some(mount) = self.mount else {
            // A one-line error (not clap's `requires`), as every other refusal of render.
            if self.fs.is_some() || self.label.is_some() || !self.options.is_empty() {
                anyhow::bail!("--fs, --label and --options are for the filesystem --mount makes on the cached device: add --mount DIR, or drop them");
            }
            return Ok(None);
        };
        Ok(Some(CacheMount::new(CacheMountInput {
            mount,
            fs: self.fs.map(Into::into),
            label: self.label,
            options: self.options,
        })?))
    }
}

value_enum! {
    pub enum LvmModeArg => LvmcacheMode { Writeback, Writethrough, Passthrough }
}

#[derive(Debug, clap::Args)]
pub struct LvmcacheArgs {
    /// The fast (cache) disk, by /dev/disk/by-id/ path.
    #[arg(long, value_name = "DEV")]
    pub fast: String,
    /// The slow (origin) disk, by /dev/disk/by-id/ path.
    #[arg(long, value_name = "DEV")]
    pub slow: String,
    /// Cache mode.
    #[arg(long, value_enum, default_value_t = LvmModeArg::Writeback)]
    pub mode: LvmModeArg,
    /// Volume group to create.
    #[arg(long, default_value = "disktier")]
    pub vg: String,
    /// Logical volume to create on the slow disk.
    #[arg(long, default_value = "main")]
    pub lv: String,
    /// Refused: dm-cache has no sequential bypass (a bcache setting).
    #[arg(long, hide = true)]
    pub sequential_cutoff: Option<String>,
    #[command(flatten)]
    pub mount: CacheMountArgs,
}

/// Builds the checked renderer for what the user typed; the MachineSet's instance type is
/// looked up in the catalog `--catalog` extends.
fn renderer(ctx: &Ctx, cmd: PlatformCmd) -> anyhow::Result<Box<dyn Renderer>> {
    Ok(match cmd {
        PlatformCmd::Openshift(a) => {
            let machineset = if a.machineset {
                let instance_type = a.instance_type.unwrap_or_default();
                Some(MachineSetConfig {
                    local_disks: local_disks(&super::catalog::load(ctx)?, &instance_type),
                    instance_type,
                    cluster_id: a.cluster_id.unwrap_or_default(),
                    region: a.region,
                    zone: a.zone,
                    ami: a.ami,
                    replicas: a.replicas,
                })
            } else {
                None
            };
            Box::new(OpenShift::new(OpenShiftConfig {
                intent: a.intent.intent()?,
                role: a.role,
                machineset,
                use_binary: a.use_binary,
                allow_build_binary: a.allow_build_binary,
            })?)
        }
        PlatformCmd::Gke(a) => Box::new(Gke::new(GkeConfig {
            cluster: a.cluster,
            machine_type: a.machine_type,
            local_ssds: a.local_ssds,
            pool: a.pool,
            project: a.project,
            zone: a.zone,
            local_ssd_count: a.local_ssd_count,
            request: a.request,
            image: a.image,
        })?),
        PlatformCmd::Eks(a) => Box::new(Eks::new(EksConfig {
            cluster: a.cluster,
            api_server_endpoint: a.api_server_endpoint,
            certificate_authority: a.certificate_authority,
            cidr: a.cidr,
            strategy: a.strategy.into(),
            mount_path: a.mount,
            node_role: a.node_role,
            name: a.name,
        })?),
        PlatformCmd::Aks(a) => Box::new(Aks::new(AksConfig {
            resource_group: a.resource_group,
            cluster: a.cluster,
            pool: a.pool,
            vm_size: a.vm_size,
            node_count: a.node_count,
            storage_class: a.storage_class,
            request: a.request,
            image: a.image,
        })?),
        PlatformCmd::Systemd(a) => Box::new(Systemd::new(a.intent()?)),
        PlatformCmd::CloudInit(a) => Box::new(CloudInit::new(a.intent()?)),
        PlatformCmd::Bcache(a) => {
            let b = Bcache::new(BcacheConfig {
                fast: a.fast,
                slow: a.slow,
                mode: a.mode.into(),
                sequential_cutoff: a.sequential_cutoff,
            })?;
            match a.mount.checked()? {
                Some(m) => Box::new(b.with_mount(m)),
                None => Box::new(b),
            }
        }
        PlatformCmd::Lvmcache(a) => {
            if a.sequential_cutoff.is_some() {
                anyhow::bail!("--sequential-cutoff is a bcache setting: dm-cache has no sequential bypass; drop it or use disktier render bcache");
            }
            let l = Lvmcache::new(LvmcacheConfig {
                fast: a.fast,
                slow: a.slow,
                mode: a.mode.into(),
                vg: a.vg,
                lv: a.lv,
            })?;
            match a.mount.checked()? {
                Some(m) => Box::new(l.with_mount(m)),
                None => Box::new(l),
            }
        }
    })
}

/// One file in the JSON document.
#[derive(Debug, Serialize)]
struct JsonFile<'a> {
    name: &'a str,
    kind: FileKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// With -o: "written", "unchanged".
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    content: &'a str,
}

#[derive(Debug, Serialize)]
struct JsonDoc<'a> {
    schema_version: u32,
    command: &'static str,
    platform: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    out_dir: Option<String>,
    files: Vec<JsonFile<'a>>,
    notes: &'a [String],
}

/// The files as one stream: YAML documents joined with `---` (so `oc apply -f -` takes them),
/// each file introduced by a `# ==> NAME <==` comment line.
fn stdout_text(rendered: &Rendered) -> String {
    let mut out = String::new();
    let all_yaml = rendered.files.iter().all(|f| f.kind == FileKind::Yaml);
    for (i, f) in rendered.files.iter().enumerate() {
        if i > 0 {
            out.push_str(if all_yaml { "---\n" } else { "\n" });
        }
        // A script's or cloud-config's first line must stay first: only YAML objects and
        // units get the header inline.
        match f.kind {
            FileKind::Yaml | FileKind::Unit => {
                out.push_str(&format!("# ==> {} <==\n", f.name));
            }
            FileKind::Shell | FileKind::CloudConfig => {
                if rendered.files.len() > 1 {
                    out.push_str(&format!("# ==> {} <==\n", f.name));
                }
            }
        }
        out.push_str(&f.content);
    }
    out
}

/// `--replicas` as a u32; a whole number past u32 gets the int32 limit the render checks
/// (QA: 99999999999 was refused as 'not in 0..=4294967295', 2147483648 as 'an int32: at most
/// 2147483647': two limits for one field).
fn parse_replicas(s: &str) -> Result<u32, String> {
    let t = s.trim();
    match t.parse::<u32>() {
        Ok(n) => Ok(n),
        Err(_) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
            Err("a MachineSet's spec.replicas is an int32: at most 2147483647".into())
        }
        Err(e) => Err(e.to_string()),
    }
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let renderer = renderer(ctx, args.platform)?;
    let rendered = renderer.render()?;
    let platform = rendered.platform.name();
    let status = match &args.out {
        Some(dir) => Some(write_files(
            dir,
            &rendered,
            args.overwrite,
            &crate::cmd::progress::stop_flag(),
        )?),
        None => None,
    };
    if ctx.json() {
        let files = rendered
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| JsonFile {
                name: &f.name,
                kind: f.kind,
                path: args
                    .out
                    .as_ref()
                    .map(|d| d.join(&f.name).display().to_string()),
                status: status.as_ref().map(|s| s[i]),
                content: &f.content,
            })
            .collect();
        print_json(&JsonDoc {
            schema_version: SCHEMA_VERSION,
            command: "render",
            platform,
            out_dir: args.out.as_ref().map(|d| d.display().to_string()),
            files,
            notes: &rendered.notes,
        })?;
    } else if let (Some(dir), Some(status)) = (&args.out, &status) {
        for (f, st) in rendered.files.iter().zip(status) {
            outln!("{}\t{}", dir.join(&f.name).display(), st)?;
        }
    } else {
        crate::out::print_raw(&stdout_text(&rendered))?;
    }
    if !ctx.json() {
        for n in &rendered.notes {
            ctx.note(format!("note: {n}"));
        }
    }
    Ok(Outcome::Pass)
}
