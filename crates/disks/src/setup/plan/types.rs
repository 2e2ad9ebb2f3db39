//! What a plan is made of and reports: the layout, each device's state, the steps.

use crate::discover::{DiskClass, Ineligible};
use crate::setup::step::Step;

/// How the chosen disks are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    Direct,
    Raid0,
    Separate,
}

/// What a chosen disk holds now, as far as setup is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevState {
    /// Eligible: nothing on it.
    Blank,
    /// A filesystem disktier made (its label), possibly mounted.
    OurFs {
        fstype: String,
        uuid: Option<String>,
        label: String,
        /// For `--layout separate`: N of `LABEL-N`.
        index: Option<usize>,
    },
    /// A member of disktier's md array; `holder` is the running array (`md127`), if any.
    OurMember {
        holder: Option<String>,
    },
    Refused(Vec<Ineligible>),
}

impl DevState {
    pub fn word(&self) -> &'static str {
        match self {
            DevState::Blank => "blank",
            DevState::OurFs { .. } => "ours",
            DevState::OurMember { .. } => "raid-member",
            DevState::Refused(_) => "refused",
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DeviceReport {
    pub path: String,
    pub name: String,
    pub class: DiskClass,
    pub state: &'static str,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    pub path: String,
    pub class: DiskClass,
    pub reasons: Vec<Ineligible>,
    pub why: String,
}

/// The plan for one round.
#[derive(Debug, Clone, Default)]
pub struct SetupPlan {
    pub layout: Option<Layout>,
    pub devices: Vec<DeviceReport>,
    pub skipped: Vec<Skipped>,
    pub steps: Vec<Step>,
    pub notes: Vec<String>,
}
