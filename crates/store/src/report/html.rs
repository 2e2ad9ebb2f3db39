//! HTML building blocks: escaping (every string that came from a user, a path, a hostname or a
//! document goes through [`esc`]), the page shell with its inline stylesheet, and a Content
//! Security Policy that forbids the page from loading anything at all.

/// Escapes text for HTML element content and double-quoted attribute values. A control or bidi
/// formatting character ([`disktier_units::unsafe_on_terminal`]: U+202E in a stored target or
/// job name reorders the rest of its cell, and the row, on the page as on a terminal) is shown
/// as its escape (`\u{202e}`), as text output shows it; a line break and a tab stay, as
/// the white space they are in HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' => o.push(c),
            c if disktier_units::unsafe_on_terminal(c) => o.extend(c.escape_default()),
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// No scripts, no fetches: styles inline, images only as inline SVG.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

pub const STYLE: &str = r#"
:root { --ink:#1d2330; --mute:#5a606e; --line:#e4e7ec; --bg:#f6f7f9; --card:#fff;
        --pass:#0a7d4f; --pass-bg:#e3f5ec; --fail:#b42318; --fail-bg:#fdecea; --info:#2256a8; --info-bg:#e8effb; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
       font:15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header { background:#1d2330; color:#fff; padding:28px 40px 22px; }
header h1 { margin:0 0 4px; font-size:26px; letter-spacing:.2px; }
header p { margin:0; color:#c9ced8; }
nav { background:#262d3d; padding:0 40px; display:flex; flex-wrap:wrap; gap:4px; }
nav a { color:#c9ced8; text-decoration:none; padding:9px 12px; font-size:14px; }
nav a:hover { color:#fff; background:#313a4e; }
main { max-width:1180px; margin:0 auto; padding:24px 40px 60px; }
section { margin:0 0 34px; }
h2 { font-size:20px; margin:0 0 14px; padding-bottom:6px; border-bottom:2px solid var(--line); }
h3 { font-size:16px; margin:18px 0 8px; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(340px,1fr)); gap:16px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 18px;
        box-shadow:0 1px 2px rgba(16,24,40,.04); }
.card .path { font-family:ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:14px;
              font-weight:600; word-break:break-all; }
.card .sub { color:var(--mute); font-size:13px; margin:2px 0 10px; }
.swatch { display:inline-block; width:11px; height:11px; border-radius:3px; margin-right:7px; vertical-align:0; }
.swatch.line { width:18px; height:0; border-radius:0; margin-right:2px; vertical-align:3px; }
.mark { font-size:10px; margin-right:7px; }
.badges { display:flex; flex-wrap:wrap; gap:6px; margin:6px 0 10px; }
.badge { display:inline-block; padding:3px 10px; border-radius:999px; font-size:13px; font-weight:600; }
.badge.pass { color:var(--pass); background:var(--pass-bg); }
.badge.fail { color:var(--fail); background:var(--fail-bg); }
.badge.info { color:var(--info); background:var(--info-bg); }
.profiles { color:var(--mute); font-size:12px; margin-top:10px; }
.kv { display:grid; grid-template-columns:auto 1fr; gap:2px 14px; font-size:14px; margin:0; }
.kv dt { color:var(--mute); }
.kv dd { margin:0; font-variant-numeric:tabular-nums; }
.chart { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:10px; margin:8px 0 14px; }
.chart svg { width:100%; height:auto; display:block; }
.legend { display:flex; flex-wrap:wrap; gap:4px 16px; margin:-6px 0 12px; font-size:13px; color:var(--mute); word-break:break-all; }
.grid2 { display:grid; grid-template-columns:repeat(auto-fit,minmax(480px,1fr)); gap:16px; }
table { border-collapse:collapse; width:100%; background:var(--card); border:1px solid var(--line);
        border-radius:10px; overflow:hidden; font-size:14px; }
th, td { text-align:left; padding:7px 12px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#f0f2f5; font-weight:600; font-size:13px; color:var(--mute); }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.mono, .mono { font-family:ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:13px; word-break:break-all; }
tr:last-child td { border-bottom:0; }
.scroll { overflow-x:auto; margin:0 0 8px; }
.scroll table { width:auto; min-width:100%; }
.kv .from { color:var(--mute); font-size:12px; margin-left:6px; }
.better { color:var(--pass); font-weight:600; }
.worse { color:var(--fail); font-weight:600; }
ul.sentences { margin:10px 0; padding-left:20px; }
ul.sentences li { margin:2px 0; }
.note { color:#8a5a00; background:#fff6e0; border:1px solid #f3dca6; border-radius:8px; padding:8px 12px; margin:8px 0; font-size:14px; }
.muted { color:var(--mute); }
ul.notes { list-style:none; margin:0; padding:0; }
code { font-family:ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:13px; }
footer { color:var(--mute); font-size:13px; text-align:center; padding:20px; }
"#;
