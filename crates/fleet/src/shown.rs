//! Characters that do not show as themselves (control, line-separating, bidirectional and
//! invisible ones), which fleet refuses in what it writes into the manifests a person reviews
//! and applies: `fleet rbac --user`, and every argument of `fleet run`'s node command.

/// What is wrong with `c` in a name or path fleet prints into a manifest, if anything: a
/// character that does not show as itself. For a user name: Kubernetes asks only that a User subject's name be non-empty
/// (kubernetes/kubernetes pkg/apis/rbac/validation/validation.go, ValidateRoleBindingSubject),
/// but the name is printed into YAML a person reviews and applies as root of the cluster's
/// RBAC: a control character (C0, DEL, C1) or a line or paragraph separator (U+2028, U+2029)
/// breaks the line it is on; a bidirectional formatting character (Unicode UAX #9: U+202A..U+202E,
/// U+2066..U+2069, U+200E, U+200F, U+061C) shows the name reordered, the "Trojan Source" trick
/// (CVE-2021-42574); an invisible one (zero-width space, joiners U+200B..U+200D, word joiner
/// U+2060, the invisible operators U+2061..U+2064, byte order mark U+FEFF, soft hyphen U+00AD)
/// makes a name look like another user's. No authenticator's user name needs them, nor a
/// node's disk path or a disktier option.
pub fn unshown(c: char) -> Option<&'static str> {
    if c.is_control() {
        Some("a control character")
    } else if matches!(c, '\u{2028}' | '\u{2029}') {
        Some("a line or paragraph separator")
    } else if matches!(
        c,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
    ) {
        Some("a bidirectional formatting character")
    } else if matches!(
        c,
        '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{00ad}'
    ) {
        Some("an invisible character")
    } else {
        None
    }
}
