//! The mitigations a user can compare, by name, and the writer policies of the aggressor.

use crate::error::{InterfereError, Result};
use serde::{Deserialize, Serialize};

/// One thing a node owner can set so that a bulk writer hurts etcd less (the OSTree-vs-etcd issue
/// [recipe-mco-ostree-etcd] and the kernel I/O controls in docs/sources.md [kernel-cgroup-v2],
/// [kernel-ioprio]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mitigation {
    /// The aggressor as it is.
    None,
    /// `ionice -c3`: the idle I/O class for the aggressor.
    IoniceIdle,
    /// `ionice -c2 -n7`: the lowest best-effort level for the aggressor.
    IoniceBe7,
    /// The device's scheduler switched to bfq for the scenario.
    SchedulerBfq,
    /// The device's scheduler switched to mq-deadline for the scenario.
    SchedulerMqDeadline,
    /// The aggressor in a cgroup with a low proportional weight.
    CgroupWeight,
    /// The aggressor in a cgroup with a write bandwidth/IOPS limit.
    CgroupThrottle,
    /// The probe in a cgroup v2 with an `io.latency` target, the aggressor its sibling.
    CgroupLatency,
    /// The writer fsyncs each object as it writes it (what OSTree shipped: docs/sources.md
    /// [ostree-fsync]).
    WriterPerObjectFsync,
    /// The writer never fsyncs (ostree pull `--disable-fsync`).
    WriterNoFsync,
}

impl Mitigation {
    pub fn all() -> &'static [Mitigation] {
        &[
            Mitigation::None,
            Mitigation::IoniceIdle,
            Mitigation::IoniceBe7,
            Mitigation::SchedulerBfq,
            Mitigation::SchedulerMqDeadline,
            Mitigation::CgroupWeight,
            Mitigation::CgroupThrottle,
            Mitigation::CgroupLatency,
            Mitigation::WriterPerObjectFsync,
            Mitigation::WriterNoFsync,
        ]
    }

    pub fn name(self) -> &'static str {
        match self {
            Mitigation::None => "none",
            Mitigation::IoniceIdle => "ionice-idle",
            Mitigation::IoniceBe7 => "ionice-be7",
            Mitigation::SchedulerBfq => "scheduler-bfq",
            Mitigation::SchedulerMqDeadline => "scheduler-mq-deadline",
            Mitigation::CgroupWeight => "cgroup-weight",
            Mitigation::CgroupThrottle => "cgroup-throttle",
            Mitigation::CgroupLatency => "cgroup-latency",
            Mitigation::WriterPerObjectFsync => "writer-per-object-fsync",
            Mitigation::WriterNoFsync => "writer-no-fsync",
        }
    }

    pub fn names() -> Vec<&'static str> {
        Self::all().iter().map(|m| m.name()).collect()
    }

    pub fn from_name(s: &str) -> Result<Mitigation> {
        Self::all()
            .iter()
            .copied()
            .find(|m| m.name() == s)
            .ok_or_else(|| InterfereError::UnknownMitigation {
                name: s.to_string(),
                known: Mitigation::names().iter().map(|n| n.to_string()).collect(),
            })
    }

    /// Parses `none,ionice-idle,...`, dropping repeats and keeping the order given.
    pub fn parse_list(s: &str) -> Result<Vec<Mitigation>> {
        parse_comma_list(s, Self::from_name, |a, b| a == b)
    }

    /// What the mitigation does, in words, for the table's legend.
    pub fn describe(self) -> &'static str {
        match self {
            Mitigation::None => "the aggressor as it is",
            Mitigation::IoniceIdle => "aggressor in the idle I/O class (ionice -c3)",
            Mitigation::IoniceBe7 => "aggressor at best-effort level 7 (ionice -c2 -n7)",
            Mitigation::SchedulerBfq => "device scheduler switched to bfq",
            Mitigation::SchedulerMqDeadline => "device scheduler switched to mq-deadline",
            Mitigation::CgroupWeight => "aggressor in a cgroup with a low I/O weight",
            Mitigation::CgroupThrottle => "aggressor in a cgroup with a write limit",
            Mitigation::CgroupLatency => "probe in a cgroup v2 with an io.latency target",
            Mitigation::WriterPerObjectFsync => "the writer fsyncs each object",
            Mitigation::WriterNoFsync => "the writer never fsyncs",
        }
    }

    /// The writer policy this mitigation implies.
    pub fn writer_policy(self) -> WriterPolicy {
        match self {
            Mitigation::WriterPerObjectFsync => WriterPolicy::PerObject,
            Mitigation::WriterNoFsync => WriterPolicy::NoFsync,
            _ => WriterPolicy::SyncfsAtEnd,
        }
    }
}

impl std::fmt::Display for Mitigation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One scenario's mitigations: a single one, or several joined by `+`
/// (`scheduler-bfq+ionice-idle`) applied together and undone together. At most one of each
/// kind (I/O class, scheduler, cgroup, writer policy), since two of a kind set the same knob;
/// `none` stands alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Combo(Vec<Mitigation>);

/// Which knob a mitigation sets: two of the same kind cannot be combined.
fn knob(m: Mitigation) -> &'static str {
    match m {
        Mitigation::None => "none",
        Mitigation::IoniceIdle | Mitigation::IoniceBe7 => "I/O class",
        Mitigation::SchedulerBfq | Mitigation::SchedulerMqDeadline => "scheduler",
        Mitigation::CgroupWeight | Mitigation::CgroupThrottle | Mitigation::CgroupLatency => {
            "cgroup"
        }
        Mitigation::WriterPerObjectFsync | Mitigation::WriterNoFsync => "writer policy",
    }
}

/// The comma-separated `--mitigations` list `s`, each entry read by `parse`, dropping entries
/// `same` as an earlier one and keeping the order given.
fn parse_comma_list<T>(
    s: &str,
    parse: impl Fn(&str) -> Result<T>,
    same: impl Fn(&T, &T) -> bool,
) -> Result<Vec<T>> {
    let mut out: Vec<T> = Vec::new();
    // An empty entry (`none,,x`) is refused: it was dropped, and a name lost between two
    // commas went unnoticed (QA).
    let items = disktier_units::comma_items("--mitigations", s)
        .map_err(|e| InterfereError::BadInput(e.to_string()))?;
    for w in items {
        let x = parse(w)?;
        if !out.iter().any(|o| same(o, &x)) {
            out.push(x);
        }
    }
    if out.is_empty() {
        return Err(InterfereError::BadInput(
            "--mitigations is empty: name at least one, e.g. none".into(),
        ));
    }
    Ok(out)
}

impl Combo {
    pub fn single(m: Mitigation) -> Combo {
        Combo(vec![m])
    }

    /// Parses `a` or `a+b[+c...]`.
    pub fn parse(s: &str) -> Result<Combo> {
        let mut parts: Vec<Mitigation> = Vec::new();
        let combined = s.contains('+');
        // Before the names: 'none+' was refused as "`none` cannot be combined", not as the
        // empty name it ends in (QA).
        if s.split('+').any(|w| w.trim().is_empty()) {
            return Err(InterfereError::BadInput(format!(
                "{s:?}: an empty name around `+`; join mitigations as scheduler-bfq+ionice-idle"
            )));
        }
        for w in s.split('+').map(str::trim) {
            let m = Mitigation::from_name(w)?;
            // `none` and a repeat first: "none+none" said "none and none both set the none",
            // and "cgroup-weight+cgroup-weight" that they "both set the cgroup" (QA).
            if combined && m == Mitigation::None {
                return Err(InterfereError::BadInput(format!(
                    "{s:?}: `none` cannot be combined with other mitigations: list it on its own"
                )));
            }
            if parts.contains(&m) {
                return Err(InterfereError::BadInput(format!(
                    "{s:?}: {m} is named twice: name each mitigation once (a+b applies two different ones together)"
                )));
            }
            if let Some(o) = parts.iter().find(|o| knob(**o) == knob(m)) {
                return Err(InterfereError::BadInput(format!(
                    "{s:?}: {o} and {m} both set the {}: combine mitigations of different kinds (I/O class, scheduler, cgroup, writer policy)",
                    knob(m)
                )));
            }
            parts.push(m);
        }
        Ok(Combo(parts))
    }

    /// Parses `none,scheduler-bfq+ionice-idle,...`, dropping repeats and keeping the order given.
    pub fn parse_list(s: &str) -> Result<Vec<Combo>> {
        parse_comma_list(s, Self::parse, Combo::same_set)
    }

    fn same_set(&self, o: &Combo) -> bool {
        self.0.len() == o.0.len() && self.0.iter().all(|m| o.0.contains(m))
    }

    pub fn parts(&self) -> &[Mitigation] {
        &self.0
    }

    pub fn has(&self, m: Mitigation) -> bool {
        self.0.contains(&m)
    }

    /// The parts' names joined by `+`, in the order given.
    pub fn name(&self) -> String {
        self.joined(Mitigation::name, "+")
    }

    pub fn describe(&self) -> String {
        self.joined(Mitigation::describe, ", and ")
    }

    /// One word per part, in the order given, joined by `sep`.
    fn joined(&self, part: fn(Mitigation) -> &'static str, sep: &str) -> String {
        self.0
            .iter()
            .map(|m| part(*m))
            .collect::<Vec<_>>()
            .join(sep)
    }

    /// The writer policy the combination implies (its writer part's, else syncfs at the end).
    pub fn writer_policy(&self) -> WriterPolicy {
        self.0
            .iter()
            .map(|m| m.writer_policy())
            .find(|p| *p != WriterPolicy::SyncfsAtEnd)
            .unwrap_or(WriterPolicy::SyncfsAtEnd)
    }
}

impl std::fmt::Display for Combo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// How the aggressor makes its writes durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriterPolicy {
    /// One `syncfs` when everything is written (ostree's default before PR 2147).
    SyncfsAtEnd,
    /// `fsync` each object as soon as it is written.
    PerObject,
    /// No fsync at all; the kernel writes back when it likes.
    NoFsync,
}

impl WriterPolicy {
    pub fn name(self) -> &'static str {
        match self {
            WriterPolicy::SyncfsAtEnd => "syncfs-at-end",
            WriterPolicy::PerObject => "per-object-fsync",
            WriterPolicy::NoFsync => "no-fsync",
        }
    }

    pub fn from_name(s: &str) -> Option<WriterPolicy> {
        [
            WriterPolicy::SyncfsAtEnd,
            WriterPolicy::PerObject,
            WriterPolicy::NoFsync,
        ]
        .into_iter()
        .find(|p| p.name() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_lists_parse() {
        for m in Mitigation::all() {
            assert_eq!(Mitigation::from_name(m.name()).unwrap(), *m);
        }
        let l = Mitigation::parse_list("none, ionice-idle,none,writer-no-fsync").unwrap();
        assert_eq!(
            l,
            [
                Mitigation::None,
                Mitigation::IoniceIdle,
                Mitigation::WriterNoFsync
            ]
        );
        let e = Mitigation::parse_list("none,bogus")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus") && e.contains("scheduler-bfq"), "{e}");
        assert!(Mitigation::parse_list(",").is_err());
        assert!(Mitigation::parse_list("").is_err());
        // QA: an empty entry was dropped, so `none,,x` ran none and x and said nothing.
        for (list, n) in [("none,,ionice-idle", 2), ("none,", 2), (",none", 1)] {
            for e in [
                Mitigation::parse_list(list).unwrap_err().to_string(),
                Combo::parse_list(list).unwrap_err().to_string(),
            ] {
                assert!(
                    e.starts_with(&format!("--mitigations {list:?}: item {n} is empty")),
                    "{e}"
                );
            }
        }
    }

    #[test]
    fn combos_parse_and_refuse_two_of_a_kind() {
        let l = Combo::parse_list("none,scheduler-bfq+ionice-idle,ionice-idle+scheduler-bfq,cgroup-weight+writer-per-object-fsync").unwrap();
        assert_eq!(l.len(), 3, "the same set twice is one scenario");
        assert_eq!(l[1].name(), "scheduler-bfq+ionice-idle");
        assert_eq!(
            l[1].parts(),
            [Mitigation::SchedulerBfq, Mitigation::IoniceIdle]
        );
        assert_eq!(l[2].writer_policy(), WriterPolicy::PerObject);
        assert_eq!(l[1].writer_policy(), WriterPolicy::SyncfsAtEnd);
        for bad in [
            "ionice-idle+ionice-be7",
            "scheduler-bfq+scheduler-mq-deadline",
            "none+ionice-idle",
            "ionice-idle+none",
            "cgroup-weight+cgroup-throttle",
            "ionice-idle+",
            "+ionice-idle",
        ] {
            assert!(Combo::parse(bad).is_err(), "{bad}");
        }
        let e = Combo::parse("ionice-idle+ionice-be7")
            .unwrap_err()
            .to_string();
        assert!(e.contains("I/O class"), "{e}");
        assert!(Combo::parse("ionice-idle+bogus").is_err());
        // QA: "none+none" said "none and none both set the none", a repeat that both "set the
        // cgroup"; `none` alone still parses.
        let e = Combo::parse("none+none").unwrap_err().to_string();
        assert!(e.contains("`none` cannot be combined"), "{e}");
        let e = Combo::parse("cgroup-weight+cgroup-weight")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cgroup-weight is named twice"), "{e}");
        assert!(!e.contains("both set"), "{e}");
        assert_eq!(Combo::parse("none").unwrap().parts(), [Mitigation::None]);
        // QA: "none+" was refused as "`none` cannot be combined", not for its empty name.
        for bad in ["none+", "none++ionice-idle", "+none"] {
            let e = Combo::parse(bad).unwrap_err().to_string();
            assert!(e.contains("an empty name around `+`"), "{bad}: {e}");
        }
    }
}
