//! The words the shells' completions offer for options whose parser takes free text or a
//! disktier type and so names no values to clap_complete: `--rw` and `--ioengine` (the engine's
//! names), `--region` (the embedded catalog's regions), `price`'s volume type and instance
//! (the catalog's), and `interfere --mitigations` (each mitigation; the list is
//! comma-separated, and a shell completes its first word). Before, `bench /d --rw <TAB>`,
//! `plan --region <TAB>` and `interfere DIR --mitigations <TAB>` listed file names.
//! Only the completion tree gets them (`cli::completion_command`): parsing, help and man pages
//! keep their own parsers and messages, and a region or type added by `--catalog` still parses.

use clap::builder::PossibleValuesParser;
use disktier_catalog::Catalog;
use disktier_engine::job::{IoEngineKind, Rw};

/// `c` (the completion tree) with the words above offered where its options take them.
pub fn offer(c: clap::Command) -> clap::Command {
    let cat = Catalog::embedded();
    let words = Words {
        rw: Rw::ALL.iter().map(|r| r.name().to_string()).collect(),
        // libaio runs as io_uring, with a note (`app::job::parse_ioengine`).
        ioengine: [
            IoEngineKind::IoUring,
            IoEngineKind::Psync,
            IoEngineKind::Sync,
        ]
        .iter()
        .map(|k| k.name().to_string())
        .chain(["libaio".to_string()])
        .collect(),
        regions: cat.regions.iter().map(|r| r.name.clone()).collect(),
        aws_regions: cat
            .regions
            .iter()
            .filter(|r| r.cloud == "aws")
            .map(|r| r.name.clone())
            .collect(),
        kinds: cat
            .volume_types
            .iter()
            .map(|t| t.name.clone())
            .chain(["instance".to_string()])
            .collect(),
        instances: cat.instances.iter().map(|i| i.name.clone()).collect(),
        mitigations: disktier_interfere::Mitigation::names()
            .into_iter()
            .map(str::to_string)
            .collect(),
    };
    walk(c, &words, &mut Vec::new())
}

struct Words {
    rw: Vec<String>,
    ioengine: Vec<String>,
    regions: Vec<String>,
    aws_regions: Vec<String>,
    kinds: Vec<String>,
    instances: Vec<String>,
    mitigations: Vec<String>,
}

impl Words {
    /// The words for option `id` of the subcommand at `path`, if it takes some.
    fn for_arg(&self, path: &[String], id: &str) -> Option<&[String]> {
        let top = path.first().map(String::as_str);
        match (top, id) {
            (_, "rw") => Some(&self.rw),
            (_, "ioengine") => Some(&self.ioengine),
            // render openshift's MachineSet is AWS's; price, plan and catalog take any cloud's.
            (Some("render"), "region") => Some(&self.aws_regions),
            (_, "region") => Some(&self.regions),
            (Some("price"), "kind") => Some(&self.kinds),
            (Some("price"), "instance") => Some(&self.instances),
            (Some("interfere"), "mitigations") => Some(&self.mitigations),
            _ => None,
        }
    }
}

fn walk(mut c: clap::Command, words: &Words, path: &mut Vec<String>) -> clap::Command {
    let ids: Vec<String> = c
        .get_arguments()
        .filter(|a| a.get_action().takes_values())
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        if let Some(w) = words.for_arg(path, &id) {
            // clap takes a value's name as `&'static str` (without its "string" feature, which
            // would grow the binary for this alone); `completions` builds this tree once and
            // exits, so the few hundred names are leaked once.
            let w: Vec<&'static str> = w
                .iter()
                .map(|s| &*Box::leak(s.clone().into_boxed_str()))
                .collect();
            c = c.mut_arg(id, |a| a.value_parser(PossibleValuesParser::new(w)));
        }
    }
    let names: Vec<String> = c
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        path.push(name.clone());
        c = c.mut_subcommand(&name, |s| walk(s, words, path));
        path.pop();
    }
    c
}

#[cfg(test)]
#[path = "completion_words_tests.rs"]
mod tests;
