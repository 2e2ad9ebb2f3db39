//! Interfere: one comparison of mitigations ([`disktier_interfere::run`]) saved as a run, or
//! `--repeat N` of them saved in one group ([`series`]), which a signal ends.

use super::save::StoreConfig;
use disktier_interfere::{Config, InterfereDoc};

/// What the caller sees while the runs go on.
pub struct Hooks<'a> {
    /// Before run `i` of `n` (1-based).
    pub starting: &'a mut dyn FnMut(u64, u64),
    /// As soon as a run ends, before it is saved (the progress line is erased).
    pub ran: &'a dyn Fn(),
    /// After each run, saved.
    pub finished: &'a mut dyn FnMut(Finished<'_>) -> anyhow::Result<()>,
    /// Whether a signal came while the changes were being undone (the run is cut short then,
    /// even when its document does not say so).
    pub signalled: &'a dyn Fn() -> bool,
}

/// A run of the series, just saved.
pub struct Finished<'a> {
    /// Run `i` (1-based) of `n`.
    pub i: u64,
    pub n: u64,
    /// Its id (`None`: not saved, with `--no-save` or spooled).
    pub id: Option<&'a str>,
    pub doc: &'a InterfereDoc,
    /// A signal stopped it: it is the last, and not counted.
    pub cut: bool,
}

/// `--repeat N` as it ran: the runs that completed, their ids, and the run a signal cut.
pub struct Series {
    /// The group every run was saved in.
    pub group: String,
    /// The runs that completed, in order (counted in the summary).
    pub docs: Vec<InterfereDoc>,
    /// Their ids (`None`: not saved, with `--no-save` or spooled).
    pub ids: Vec<Option<String>>,
    /// The run (1-based) a signal stopped, its id and document: saved, not counted.
    pub cut: Option<(u64, Option<String>, InterfereDoc)>,
}

/// Runs the comparison up to `n` times, each run saved as `interfere` in one new group. A
/// signal ends the series: the run it stopped is saved (marked interrupted) but not counted.
pub fn series(
    store: &StoreConfig,
    cfg: &Config,
    n: u64,
    hooks: Hooks<'_>,
) -> anyhow::Result<Series> {
    let group = disktier_store::new_id();
    let mut docs = Vec::new();
    let mut ids = Vec::new();
    for i in 1..=n {
        (hooks.starting)(i, n);
        let doc = disktier_interfere::run(cfg)?;
        (hooks.ran)();
        let id = store.save("interfere", Some(&group), &serde_json::to_value(&doc)?)?;
        let cut = doc.interrupted || (hooks.signalled)();
        (hooks.finished)(Finished {
            i,
            n,
            id: id.as_deref(),
            doc: &doc,
            cut,
        })?;
        if cut {
            return Ok(Series {
                group,
                docs,
                ids,
                cut: Some((i, id, doc)),
            });
        }
        docs.push(doc);
        ids.push(id);
    }
    Ok(Series {
        group,
        docs,
        ids,
        cut: None,
    })
}
