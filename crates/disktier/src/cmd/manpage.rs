//! The man pages `disktier man` writes: clap_mangen's, except that a command's exit codes (the
//! "Exit status: ..." paragraph of its after-help) get their own EXIT STATUS section, as
//! man-pages(7) names it, instead of sitting in clap_mangen's catch-all EXTRA section. A
//! subcommand that gives no codes of its own has the nearest parent's (disktier's: 0, 1, 2).

use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;
use std::io;
use std::path::Path;

/// The paragraph of an after-help that holds the exit codes starts with this.
const EXIT_STATUS: &str = "Exit status:";

/// The page of `cmd` (the command tree's root, or a subcommand of a built tree, as
/// `clap_mangen::generate_to` passes them), and the file name clap_mangen gives it.
pub fn render(cmd: clap::Command) -> io::Result<(String, Vec<u8>)> {
    render_with(cmd, None).map(|(name, page, _)| (name, page))
}

/// [`render`], with `inherited` as the exit codes of a command whose after-help gives none;
/// also returns the codes the page shows, for its own subcommands.
fn render_with(
    cmd: clap::Command,
    inherited: Option<&ExitStatus>,
) -> io::Result<(String, Vec<u8>, Option<ExitStatus>)> {
    let (rest, own) = match cmd.get_after_help().map(|h| h.to_string()) {
        Some(help) => split_exit_status(&help),
        None => (None, None),
    };
    let has_own = own.is_some();
    let status = own.or_else(|| inherited.cloned());
    let mut cmd = match (has_own, rest) {
        (false, _) => cmd,
        (true, Some(rest)) => cmd.after_help(rest),
        (true, None) => cmd.after_help(None::<&'static str>),
    };
    // Built as `Man::new` builds it, so that the auto-generated --help and --version count.
    cmd.build();
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subcommands = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let has_extra = cmd.get_after_long_help().is_some() || cmd.get_after_help().is_some();
    let has_version = cmd.get_version().or(cmd.get_long_version()).is_some();
    let has_author = cmd.get_author().is_some();
    let man = Man::new(cmd);

    // The sections in `Man::render`'s order, with EXIT STATUS after the options and
    // subcommands (man-pages(7)) and before what is left of EXTRA (examples).
    let mut page = Page::default();
    page.add(|w| man.render_title(w))?;
    page.add(|w| man.render_name_section(w))?;
    page.add(|w| man.render_synopsis_section(w))?;
    page.add(|w| man.render_description_section(w))?;
    if has_args {
        page.add(|w| man.render_options_section(w))?;
    }
    if has_subcommands {
        page.add(|w| man.render_subcommands_section(w))?;
    }
    if let Some(status) = &status {
        page.add(|w| status.roff().to_writer(w))?;
    }
    if has_extra {
        page.add(|w| man.render_extra_section(w))?;
    }
    if has_version {
        page.add(|w| man.render_version_section(w))?;
    }
    if has_author {
        page.add(|w| man.render_authors_section(w))?;
    }
    Ok((man.get_filename(), page.buf, status))
}

/// Writes the page of `cmd` and one per subcommand that is not hidden, at every depth, into
/// `dir`: the files `clap_mangen::generate_to` writes, rendered by `render`.
pub fn write_all(cmd: clap::Command, dir: &Path) -> io::Result<()> {
    fn write(cmd: clap::Command, dir: &Path, inherited: Option<&ExitStatus>) -> io::Result<()> {
        let subs: Vec<clap::Command> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .cloned()
            .collect();
        let (name, page, status) = render_with(cmd, inherited)?;
        std::fs::write(dir.join(name), page)?;
        for sub in subs {
            write(sub, dir, status.as_ref())?;
        }
        Ok(())
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    write(cmd, dir, None)
}

/// Sections rendered one by one: each starts with roff's apostrophe preamble, which the page
/// needs once, at its top.
#[derive(Default)]
struct Page {
    buf: Vec<u8>,
}

impl Page {
    fn add(
        &mut self,
        section: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut out = Vec::new();
        section(&mut out)?;
        let preamble = Roff::new().render();
        match out.strip_prefix(preamble.as_bytes()) {
            Some(body) if !self.buf.is_empty() => self.buf.extend_from_slice(body),
            _ => self.buf.extend_from_slice(&out),
        }
        Ok(())
    }
}

/// A command's exit codes, as its after-help gives them: "Exit status: [intro:] 0 what, 1 what,
/// 2 what."
#[derive(Debug, Clone, PartialEq)]
struct ExitStatus {
    /// What comes before the first code ("the worst node's:"), if anything.
    intro: String,
    /// Each code and what it means, in the order given.
    codes: Vec<(String, String)>,
}

impl ExitStatus {
    fn parse(text: &str) -> Self {
        let text = text.trim().trim_end_matches('.');
        let Some(first) = (0..text.len())
            .find(|&i| (i == 0 || text[..i].ends_with(' ')) && starts_with_code(&text[i..]))
        else {
            return ExitStatus {
                intro: text.to_owned(),
                codes: Vec::new(),
            };
        };
        let mut codes: Vec<(String, String)> = Vec::new();
        for piece in text[first..].split(", ") {
            match (starts_with_code(piece), codes.last_mut()) {
                (false, Some((_, meaning))) => {
                    meaning.push_str(", ");
                    meaning.push_str(piece);
                }
                _ => {
                    let (code, meaning) = piece.split_once(' ').unwrap_or((piece, ""));
                    codes.push((code.to_owned(), meaning.to_owned()));
                }
            }
        }
        ExitStatus {
            intro: text[..first].trim().to_owned(),
            codes,
        }
    }

    /// The section: the intro as a paragraph, then one tagged paragraph per code.
    fn roff(&self) -> Roff {
        let mut roff = Roff::new();
        roff.control("SH", ["EXIT STATUS"]);
        if !self.intro.is_empty() {
            roff.text([roman(capitalized(&self.intro))]);
        }
        for (code, meaning) in &self.codes {
            roff.control("TP", []);
            roff.text([bold(code.as_str())]);
            roff.text([roman(meaning.as_str())]);
        }
        roff
    }
}

/// Digits, then a space: "0 ok".
fn starts_with_code(s: &str) -> bool {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && s[digits..].starts_with(' ')
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Splits the paragraph starting "Exit status:" off `after_help` (paragraphs are separated by
/// a blank line): what is left of the after-help, if anything, and the exit codes, if given.
fn split_exit_status(after_help: &str) -> (Option<String>, Option<ExitStatus>) {
    let mut rest = Vec::new();
    let mut status = None;
    for para in after_help.split("\n\n") {
        match para.trim_start().strip_prefix(EXIT_STATUS) {
            Some(text) if status.is_none() => status = Some(ExitStatus::parse(text)),
            _ => rest.push(para),
        }
    }
    let rest = rest.join("\n\n");
    let rest = (!rest.trim().is_empty()).then_some(rest);
    (rest, status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(c, m)| (c.to_string(), m.to_string()))
            .collect()
    }

    #[test]
    fn splits_the_exit_codes_off_the_after_help() {
        let (rest, status) = split_exit_status(
            "Exit status: 0 ok, 1 a verdict failed (e.g. check etcd above threshold), 2 usage or runtime error.",
        );
        assert_eq!(rest, None);
        let status = status.unwrap();
        assert_eq!(status.intro, "");
        assert_eq!(
            status.codes,
            codes(&[
                ("0", "ok"),
                ("1", "a verdict failed (e.g. check etcd above threshold)"),
                ("2", "usage or runtime error"),
            ])
        );
    }

    #[test]
    fn keeps_the_other_paragraphs_and_commas_inside_a_meaning() {
        let (rest, status) = split_exit_status(
            "Examples:\n  a\n  b\n\nExit status: the worst node's: 0 every node passed, 1 a verdict failed, 2 a node could not be measured (skipped, image, OOM) or the run failed.",
        );
        assert_eq!(rest.as_deref(), Some("Examples:\n  a\n  b"));
        let status = status.unwrap();
        assert_eq!(status.intro, "the worst node's:");
        assert_eq!(
            status.codes,
            codes(&[
                ("0", "every node passed"),
                ("1", "a verdict failed"),
                (
                    "2",
                    "a node could not be measured (skipped, image, OOM) or the run failed"
                ),
            ])
        );
    }

    #[test]
    fn an_after_help_without_exit_codes_is_left_whole() {
        let help = "Examples:\n  disktier setup --dry-run";
        assert_eq!(split_exit_status(help), (Some(help.to_owned()), None));
    }

    #[test]
    fn the_section_is_exit_status_with_one_tagged_paragraph_per_code() {
        let roff = ExitStatus::parse("0 ok, 1 failed").roff().to_roff();
        assert_eq!(
            roff,
            ".SH \"EXIT STATUS\"\n.TP\n\\fB0\\fR\nok\n.TP\n\\fB1\\fR\nfailed\n"
        );
    }
}
