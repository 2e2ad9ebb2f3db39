//! Architecture rules of the workspace, checked on the source text of every crate:
//!
//! - no import circle between the files (modules) of one crate;
//! - no source file over 600 lines unless its first line says why (`//! Long because: ...`);
//! - no `unsafe` in a crate's `src/` outside the io_uring path (`crates/engine/src/uring/`) and
//!   the files of [`UNSAFE_EXCEPTIONS`], each with its count and reason (ARCHITECTURE.md, "Rules the code keeps").
//!
//! An import is a path that names another module of the same crate: `crate::a::b`,
//! `super::x`, `self::x`, or a private `use child::...` of a declared child module, in code
//! or in a `use` tree. A re-export (`pub use`, `pub(crate) use`) is a facade, not a
//! dependency: a path that reaches an item through one is followed to the file that
//! defines the item. `mod child;` is a declaration, not an import. Items under
//! `#[cfg(test)]`, comments, string literals and `$crate` paths are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Files allowed over [`MAX_LINES`]; each must still start with a `//! Long because:` line.
const LONG_FILE_EXCEPTIONS: &[&str] = &[];

/// Files over [`MAX_LINES`] that other work in flight splits (issue #17's other half, the
/// catalog and interfere work, the cache policies under #18's optimisation). The test fails
/// when one of them no longer needs its place here, so the list only shrinks.
const PENDING_SPLIT: &[&str] = &[];

/// Circles known and not yet removed: none. Each entry would be the sorted list of files of
/// one circle; the test fails when one is gone, so the list can only shrink.
const PENDING_CIRCLES: &[&[&str]] = &[];

const MAX_LINES: usize = 600;

/// Where `unsafe` belongs: the io_uring submission path (ARCHITECTURE.md, "Rules the code keeps").
const UNSAFE_HOME: &str = "crates/engine/src/uring/";

/// Files outside [`UNSAFE_HOME`] allowed `unsafe`: the path, how many times the keyword appears
/// in its code (comments, strings and `#[cfg(test)]` items not counted), and why no safe
/// wrapper serves. The count must match exactly: one more is a new `unsafe` to justify, one
/// fewer means the entry should shrink (ARCHITECTURE.md lists the same exceptions).
const UNSAFE_EXCEPTIONS: &[(&str, usize, &str)] = &[
    (
        "crates/interfere/src/sys.rs",
        4,
        "ioprio_set/ioprio_get (a raw syscall: neither std nor rustix wraps it), SIG_IGN for the \
         aggressor's terminal signals (no safe API sets a disposition), a pre_exec hook for \
         PR_SET_PDEATHSIG in the user's command (std's pre_exec is unsafe) and \
         getrusage(RUSAGE_CHILDREN) (rustix has none; nothing else counts the children alone)",
    ),
    (
        "crates/testkit/src/fuzz.rs",
        7,
        "the fuzz harness's capped allocator: GlobalAlloc is an unsafe trait (test support \
         only, a dev-dependency, never in the binary)",
    ),
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/disktier has a workspace root two levels up")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The crates' `src` directories.
fn crate_sources() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(workspace_root().join("crates"))
        .unwrap()
        .flatten()
    {
        let src = e.path().join("src");
        if src.is_dir() {
            out.push((e.file_name().to_string_lossy().into_owned(), src));
        }
    }
    out.sort();
    out
}

// ---------------------------------------------------------------- lexing

/// Source text with comments, string and char literals blanked (newlines kept) and
/// `#[cfg(test)]` items removed; also the names of `#[cfg(test)] mod x;` declarations.
fn code_only(src: &str) -> (String, Vec<String>) {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == b'\n' {
                        out.push(b'\n');
                    }
                    i += 1;
                }
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            // raw string r"..." / r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            out.extend_from_slice(b"\"\"");
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                if b[j] == b'\n' {
                    out.push(b'\n');
                }
                j += 1;
            }
            i = j;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                } else if b[i] == b'\n' {
                    out.push(b'\n');
                }
                i += 1;
            }
            i += 1;
            out.extend_from_slice(b"\"\"");
        } else if c == b'\'' {
            // char literal ('x', '\n', '\u{..}') or lifetime ('a)
            if b.get(i + 1) == Some(&b'\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                i = j + 1;
                out.extend_from_slice(b"' '");
            } else if b.get(i + 2) == Some(&b'\'') {
                i += 3;
                out.extend_from_slice(b"' '");
            } else if let Some(len) =
                utf8_char_len(b, i + 1).filter(|l| b.get(i + 1 + l) == Some(&b'\''))
            {
                i += 2 + len;
                out.extend_from_slice(b"' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    strip_cfg_test(&text)
}

fn utf8_char_len(b: &[u8], i: usize) -> Option<usize> {
    let c = *b.get(i)?;
    match c {
        0xC0..=0xDF => Some(2),
        0xE0..=0xEF => Some(3),
        0xF0..=0xF7 => Some(4),
        _ => None,
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Removes every item annotated `#[cfg(test)]` (up to its `;` or its closing brace).
fn strip_cfg_test(text: &str) -> (String, Vec<String>) {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(text.len());
    let mut test_mods = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(ATTR) {
        out.push_str(&rest[..at]);
        let item = &rest[at + ATTR.len()..];
        let b = item.as_bytes();
        let mut depth = 0i32;
        let mut end = b.len();
        for (k, &c) in b.iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        let body = &item[..end];
        let words: Vec<&str> = body
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if body.trim_end().ends_with(';') {
            if let Some(p) = words.iter().position(|w| *w == "mod") {
                if let Some(name) = words.get(p + 1) {
                    test_mods.push((*name).to_string());
                }
            }
        }
        out.extend(body.chars().filter(|c| *c == '\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, test_mods)
}

// ---------------------------------------------------------------- paths

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok<'a> {
    Ident(&'a str),
    Sep,
    Open,
    Close,
    Comma,
    Star,
    Other,
}

fn tokens(text: &str) -> Vec<(Tok<'_>, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if is_ident(c) {
            let s = i;
            while i < b.len() && is_ident(b[i]) {
                i += 1;
            }
            let raw = &text[s..i];
            out.push((Tok::Ident(raw.strip_prefix("r#").unwrap_or(raw)), line));
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            out.push((Tok::Sep, line));
            i += 2;
        } else {
            out.push((
                match c {
                    b'{' => Tok::Open,
                    b'}' => Tok::Close,
                    b',' => Tok::Comma,
                    b'*' => Tok::Star,
                    _ => Tok::Other,
                },
                line,
            ));
            i += 1;
        }
    }
    out
}

/// One path reference found in a file: its segments as written, whether it sits in a
/// re-export, and the line.
#[derive(Debug)]
struct PathRef {
    segs: Vec<String>,
    reexport: bool,
    line: usize,
}

/// Expands a use tree starting at `toks[i]` (after `prefix::`), pushing every leaf path.
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut segs = prefix;
    loop {
        match toks.get(i).map(|t| t.0) {
            Some(Tok::Ident(s)) => {
                if s == "as" {
                    // `x as y`: y is a local name, the path is complete.
                    out.push(segs);
                    return i + 2;
                }
                // `a::{self, b}`: `self` names `a` itself.
                if s != "self" || segs.is_empty() {
                    segs.push(s.to_string());
                }
                i += 1;
                if toks.get(i).map(|t| t.0) == Some(Tok::Sep) {
                    i += 1;
                } else {
                    out.push(segs);
                    return i;
                }
            }
            Some(Tok::Star) => {
                out.push(segs);
                return i + 1;
            }
            Some(Tok::Open) => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| t.0) {
                        Some(Tok::Close) => return i + 1,
                        Some(Tok::Comma) => i += 1,
                        None => return i,
                        _ => i = use_tree(toks, i, segs.clone(), out),
                    }
                }
            }
            _ => {
                out.push(segs);
                return i;
            }
        }
    }
}

/// Every module path reference in `text`. `children` are the file's declared child
/// modules, which a `use` may name without `self::`.
fn path_refs(text: &str, children: &BTreeSet<String>) -> Vec<PathRef> {
    let toks = tokens(text);
    let mut refs = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let (t, line) = toks[i];
        if t == Tok::Ident("use") {
            let before = |k: usize| i.checked_sub(k).map(|k| toks[k].0);
            // `pub use` or `pub(crate) use` (also `pub(super)`, `pub(self)`)
            let reexport = before(1) == Some(Tok::Ident("pub"))
                || (before(4) == Some(Tok::Ident("pub"))
                    && matches!(before(2), Some(Tok::Ident("crate" | "super" | "self")))
                    && before(3) == Some(Tok::Other)
                    && before(1) == Some(Tok::Other));
            let mut paths = Vec::new();
            let mut j = i + 1;
            if toks.get(j).map(|t| t.0) == Some(Tok::Sep) {
                j += 1;
            }
            j = use_tree(&toks, j, Vec::new(), &mut paths);
            for segs in paths {
                let local = matches!(
                    segs.first().map(String::as_str),
                    Some("crate" | "super" | "self")
                ) || segs.first().is_some_and(|s| children.contains(s));
                if local {
                    refs.push(PathRef {
                        segs,
                        reexport,
                        line,
                    });
                }
            }
            i = j.max(i + 1);
            continue;
        }
        if let Tok::Ident(first @ ("crate" | "super" | "self")) = t {
            let dollar = i > 0 && toks[i - 1].0 == Tok::Other && text_is_dollar(text, &toks, i);
            if !dollar && toks.get(i + 1).map(|t| t.0) == Some(Tok::Sep) {
                let mut segs = vec![first.to_string()];
                let mut j = i + 1;
                while toks.get(j).map(|t| t.0) == Some(Tok::Sep) {
                    match toks.get(j + 1).map(|t| t.0) {
                        Some(Tok::Ident(s)) => {
                            segs.push(s.to_string());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                if toks.get(j).map(|t| t.0) == Some(Tok::Sep)
                    && toks.get(j + 1).map(|t| t.0) == Some(Tok::Open)
                {
                    let mut paths = Vec::new();
                    j = use_tree(&toks, j + 1, segs, &mut paths);
                    refs.extend(paths.into_iter().map(|segs| PathRef {
                        segs,
                        reexport: false,
                        line,
                    }));
                } else {
                    refs.push(PathRef {
                        segs,
                        reexport: false,
                        line,
                    });
                }
                i = j;
                continue;
            }
        }
        i += 1;
    }
    refs
}

/// Whether the token before `toks[i]` is a `$` (a `$crate` path inside a macro).
fn text_is_dollar(text: &str, toks: &[(Tok, usize)], i: usize) -> bool {
    // Tokens do not keep offsets; find the previous non-space byte before this ident's
    // occurrence on its line instead.
    let line = toks[i].1;
    text.lines()
        .nth(line - 1)
        .is_some_and(|l| l.contains("$crate") || l.contains("$ crate"))
}

// ---------------------------------------------------------------- modules

struct Module {
    file: PathBuf,
    /// Path from the crate root.
    path: Vec<String>,
    refs: Vec<PathRef>,
    /// Names of items the file defines (fn, struct, enum, ...), for following re-exports.
    items: BTreeSet<String>,
}

fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = segs.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    match stem {
        "mod" => segs,
        "lib" | "main" if segs.is_empty() => segs,
        _ => {
            segs.push(stem.to_string());
            segs
        }
    }
}

fn declared_items(text: &str) -> BTreeSet<String> {
    let toks = tokens(text);
    let mut items = BTreeSet::new();
    for w in toks.windows(2) {
        if let (Tok::Ident(k), Tok::Ident(name)) = (w[0].0, w[1].0) {
            if matches!(
                k,
                "fn" | "struct" | "enum" | "type" | "const" | "static" | "trait" | "union" | "mod"
            ) {
                items.insert(name.to_string());
            }
        }
    }
    for w in toks.windows(3) {
        if let (Tok::Ident("macro_rules"), Tok::Other, Tok::Ident(name)) = (w[0].0, w[1].0, w[2].0)
        {
            items.insert(name.to_string());
        }
    }
    items
}

fn declared_children(text: &str) -> BTreeSet<String> {
    let toks = tokens(text);
    let mut out = BTreeSet::new();
    for w in toks.windows(3) {
        if let (Tok::Ident("mod"), Tok::Ident(name), Tok::Other) = (w[0].0, w[1].0, w[2].0) {
            out.insert(name.to_string());
        }
    }
    out
}

struct Crate {
    name: String,
    modules: Vec<Module>,
}

fn load_crate(name: &str, src: &Path) -> Crate {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    // A binary with a library has two roots; the workspace's binaries have none, so one
    // module tree per crate is enough.
    let mut modules = Vec::new();
    let mut test_only: BTreeSet<Vec<String>> = BTreeSet::new();
    for file in files {
        let raw = std::fs::read_to_string(&file).unwrap();
        let (text, test_mods) = code_only(&raw);
        let path = module_path(src, &file);
        let children = declared_children(&text);
        for m in test_mods {
            let mut p = path.clone();
            p.push(m);
            test_only.insert(p);
        }
        modules.push(Module {
            refs: path_refs(&text, &children),
            items: declared_items(&text),
            file,
            path,
        });
    }
    modules.retain(|m| !test_only.iter().any(|t| m.path.starts_with(t)));
    Crate {
        name: name.to_string(),
        modules,
    }
}

impl Crate {
    fn index(&self, path: &[String]) -> Option<usize> {
        self.modules.iter().position(|m| m.path == path)
    }

    /// The absolute segments a reference in module `from` names.
    fn absolute(&self, from: &Module, segs: &[String]) -> Vec<String> {
        let mut base: Vec<String> = from.path.clone();
        let mut rest = segs;
        match segs.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &segs[1..];
            }
            Some("self") => rest = &segs[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            _ => {}
        }
        base.extend(rest.iter().cloned());
        base
    }

    /// The module (file) that defines what `abs` names, following re-exports.
    fn resolve(&self, abs: &[String], depth: usize) -> Option<usize> {
        let mut k = abs.len();
        let m = loop {
            if let Some(m) = self.index(&abs[..k]) {
                break m;
            }
            if k == 0 {
                return None;
            }
            k -= 1;
        };
        let Some(item) = abs.get(k) else {
            return Some(m);
        };
        let module = &self.modules[m];
        if module.items.contains(item) || depth > 8 {
            return Some(m);
        }
        // Not defined here: follow the module's re-exports (`pub use a::b::Item`, `pub use a::*`).
        for r in module.refs.iter().filter(|r| r.reexport) {
            let target = self.absolute(module, &r.segs);
            if target.last() == Some(item) {
                if let Some(t) = self.resolve(&target, depth + 1) {
                    return Some(t);
                }
            }
        }
        for r in module.refs.iter().filter(|r| r.reexport) {
            let target = self.absolute(module, &r.segs);
            if let Some(t) = self.index(&target) {
                // glob re-export of a module
                if self.modules[t].items.contains(item) {
                    return Some(t);
                }
                let mut deeper = target.clone();
                deeper.push(item.clone());
                if let Some(d) = self.resolve(&deeper, depth + 1) {
                    if d != t || self.modules[t].items.contains(item) {
                        return Some(d);
                    }
                }
            }
        }
        Some(m)
    }

    /// Edges between files: (from, to) -> the first reference that makes it (line, text).
    fn edges(&self) -> BTreeMap<(usize, usize), (usize, String)> {
        let mut edges = BTreeMap::new();
        for (i, m) in self.modules.iter().enumerate() {
            for r in m.refs.iter().filter(|r| !r.reexport) {
                let abs = self.absolute(m, &r.segs);
                if let Some(t) = self.resolve(&abs, 0) {
                    if t != i {
                        edges.entry((i, t)).or_insert((r.line, r.segs.join("::")));
                    }
                }
            }
        }
        edges
    }

    fn rel(&self, i: usize) -> String {
        let f = &self.modules[i].file;
        f.strip_prefix(workspace_root())
            .unwrap_or(f)
            .display()
            .to_string()
    }
}

/// Strongly connected components of more than one file (Tarjan).
fn cycles(n: usize, edges: &BTreeMap<(usize, usize), (usize, String)>) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in edges.keys() {
        adj[a].push(b);
    }
    struct St {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[Vec<usize>], s: &mut St) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for &w in &adj[v] {
            match s.index[w] {
                None => {
                    visit(w, adj, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = St {
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &adj, &mut s);
        }
    }
    s.out
}

/// Describes one circle: the files of the component and a path through them back to the
/// start, naming each import on the way (the last one closes the circle).
fn describe(
    c: &Crate,
    comp: &[usize],
    edges: &BTreeMap<(usize, usize), (usize, String)>,
) -> String {
    let inside: BTreeSet<usize> = comp.iter().copied().collect();
    // shortest cycle through the first file, by BFS
    let start = comp[0];
    let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut closing = None;
    while let Some(v) = queue.pop_front() {
        for (&(a, b), _) in edges.range((v, 0)..(v + 1, 0)) {
            debug_assert_eq!(a, v);
            if !inside.contains(&b) {
                continue;
            }
            if b == start {
                closing = Some(v);
                break;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = prev.entry(b) {
                e.insert(v);
                queue.push_back(b);
            }
        }
        if closing.is_some() {
            break;
        }
    }
    let mut chain = vec![start];
    let mut v = closing.unwrap_or(start);
    while v != start {
        chain.insert(1, v);
        v = prev[&v];
    }
    chain.push(start);
    let mut s = format!(
        "crate {}: {} files import each other: {}\n",
        c.name,
        comp.len(),
        comp.iter()
            .map(|&i| c.rel(i))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for w in chain.windows(2) {
        let (line, what) = &edges[&(w[0], w[1])];
        s += &format!(
            "    {}:{} uses {} ({})\n",
            c.rel(w[0]),
            line,
            what,
            c.rel(w[1])
        );
    }
    s
}

#[test]
fn no_import_circle_between_the_files_of_a_crate() {
    let mut report = String::new();
    let mut pending: BTreeSet<Vec<String>> = PENDING_CIRCLES
        .iter()
        .map(|c| c.iter().map(|f| f.to_string()).collect())
        .collect();
    for (name, src) in crate_sources() {
        let c = load_crate(&name, &src);
        let edges = c.edges();
        for comp in cycles(c.modules.len(), &edges) {
            let files: Vec<String> = comp.iter().map(|&i| c.rel(i)).collect();
            if !pending.remove(&files) {
                report += &describe(&c, &comp, &edges);
            }
        }
    }
    assert!(
        report.is_empty(),
        "import circles (the last import of each closes it):\n{report}"
    );
    assert!(
        pending.is_empty(),
        "circles gone, remove them from PENDING_CIRCLES: {pending:?}"
    );
}

#[test]
fn the_checker_sees_a_circle_and_ignores_declarations_tests_and_comments() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("a")).unwrap();
    let write = |p: &str, s: &str| std::fs::write(src.join(p), s).unwrap();
    write("lib.rs", "mod a;\nmod b;\nmod c;\npub use b::Thing;\n");
    write(
        "a/mod.rs",
        "mod child;\npub use child::*;\n/// see [`crate::c::C`]\npub struct A;\n",
    );
    write("a/child.rs", "use super::A;\npub fn f() -> A { A }\n");
    write("b.rs", "pub struct Thing;\nuse crate::{a::f, c};\n");
    write(
        "c.rs",
        "pub struct C;\npub fn g() { let _ = crate::Thing; let _ = \"crate::a::A\"; }\n#[cfg(test)]\nmod tests { use crate::a::A; }\n",
    );
    let c = load_crate("t", src);
    let edges = c.edges();

    let found = cycles(c.modules.len(), &edges);
    let names = |comp: &Vec<usize>| {
        comp.iter()
            .map(|&i| c.modules[i].path.join("::"))
            .collect::<Vec<_>>()
    };
    // b -> c (use crate::c), c -> b (crate::Thing through lib's re-export); a/child -> a
    // only, a -> child only through a re-export (not an edge).
    assert_eq!(
        found.iter().map(names).collect::<Vec<_>>(),
        vec![vec!["b".to_string(), "c".to_string()]]
    );
    let text = describe(&c, &found[0], &edges);
    assert!(text.contains("uses crate::Thing"), "{text}");
    assert!(!edges
        .keys()
        .any(|&(a, b)| c.modules[a].path == ["c"] && c.modules[b].path == ["a"]));
    assert!(edges
        .keys()
        .any(|&(a, b)| c.modules[a].path == ["b"] && c.modules[b].path == ["a", "child"]));
}

#[test]
fn no_source_file_over_600_lines_without_a_reason_at_its_top() {
    let mut bad = Vec::new();
    let mut allowed_unused: BTreeSet<&str> = LONG_FILE_EXCEPTIONS.iter().copied().collect();
    let mut pending: BTreeSet<&str> = PENDING_SPLIT.iter().copied().collect();
    for (_, src) in crate_sources() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let lines = text.lines().count();
            let rel = f
                .strip_prefix(workspace_root())
                .unwrap()
                .display()
                .to_string();
            if lines <= MAX_LINES {
                continue;
            }
            allowed_unused.remove(rel.as_str());
            if pending.remove(rel.as_str()) {
                continue;
            }
            let reason = text
                .lines()
                .next()
                .is_some_and(|l| l.starts_with("//! Long because:"));
            if !(reason && LONG_FILE_EXCEPTIONS.contains(&rel.as_str())) {
                bad.push(format!("{rel}: {lines} lines"));
            }
        }
    }
    bad.sort();
    assert!(
        bad.is_empty(),
        "files over {MAX_LINES} lines: split them, or start them with `//! Long because: ...` and \
         list them in LONG_FILE_EXCEPTIONS:\n{}",
        bad.join("\n")
    );
    assert!(
        allowed_unused.is_empty(),
        "exceptions no longer needed: {allowed_unused:?}"
    );
}

/// The lines of `unsafe` in the code of each file of the crate at `src` that is compiled
/// outside tests: comments, string literals, `#[cfg(test)]` items and the files of
/// `#[cfg(test)] mod x;` declarations are skipped.
fn unsafe_lines(name: &str, src: &Path) -> BTreeMap<PathBuf, Vec<usize>> {
    let mut out = BTreeMap::new();
    for m in load_crate(name, src).modules {
        let (text, _) = code_only(&std::fs::read_to_string(&m.file).unwrap());
        let lines: Vec<usize> = tokens(&text)
            .into_iter()
            .filter(|(t, _)| *t == Tok::Ident("unsafe"))
            .map(|(_, line)| line)
            .collect();
        if !lines.is_empty() {
            out.insert(m.file, lines);
        }
    }
    out
}

#[test]
fn no_unsafe_outside_the_io_uring_path_but_the_listed_exceptions() {
    let root = workspace_root();
    let mut bad = Vec::new();
    let mut unused: BTreeSet<&str> = UNSAFE_EXCEPTIONS.iter().map(|e| e.0).collect();
    for (name, src) in crate_sources() {
        for (file, lines) in unsafe_lines(&name, &src) {
            let rel = file.strip_prefix(&root).unwrap().display().to_string();
            if rel.starts_with(UNSAFE_HOME) {
                continue;
            }
            unused.remove(rel.as_str());
            match UNSAFE_EXCEPTIONS.iter().find(|e| e.0 == rel) {
                Some(&(_, allowed, _)) if allowed == lines.len() => {}
                Some(&(_, allowed, _)) => bad.push(format!(
                    "{rel}: `unsafe` {} times (lines {lines:?}), its entry in \
                     UNSAFE_EXCEPTIONS says {allowed}",
                    lines.len()
                )),
                None => bad.push(format!("{rel}: `unsafe` on lines {lines:?}")),
            }
        }
    }
    assert!(
        bad.is_empty(),
        "`unsafe` outside {UNSAFE_HOME}: use a safe wrapper (rustix, std), or list the file with \
         its count and reason in UNSAFE_EXCEPTIONS and ARCHITECTURE.md:\n{}",
        bad.join("\n")
    );
    assert!(
        unused.is_empty(),
        "no `unsafe` left in {unused:?}: remove them from UNSAFE_EXCEPTIONS and ARCHITECTURE.md"
    );
}

#[test]
fn the_unsafe_checker_counts_code_only() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |p: &str, s: &str| std::fs::write(src.join(p), s).unwrap();
    write(
        "lib.rs",
        "mod a;\n#[cfg(test)]\nmod tests;\n// unsafe in a comment\n\
         pub const CSP: &str = \"style-src 'unsafe-inline'\";\n#![forbid(unsafe_code)]\n",
    );
    write(
        "a.rs",
        "pub fn f() -> i32 {\n    unsafe { g() }\n}\nunsafe fn g() -> i32 { 1 }\n\
         #[cfg(test)]\nmod t { fn h() { unsafe { super::g(); } } }\n",
    );
    write("tests.rs", "fn k() { unsafe { crate::a::g(); } }\n");
    let found = unsafe_lines("t", src);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        vec![(src.join("a.rs"), vec![2, 4])]
    );
}
