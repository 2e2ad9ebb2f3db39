//! `--image` of the example pods (gke, aks): a container image reference as the OCI distribution
//! grammar defines it (github.com/distribution/reference, reference.go), so that nothing else
//! reaches a Pod manifest (found by QA: `nginx;id`, `nginx$(id)`, `NGINX`, `:latest`, `nginx@`
//! were rendered).
//!
//! ```text
//! reference       := name [ ":" tag ] [ "@" digest ]
//! name            := [domain "/"] path-component ["/" path-component]*   (at most 255 characters)
//! domain          := host [":" port-number]
//! host            := domain-name | IPv4address | "[" IPv6address "]"
//! domain-name     := domain-component ["." domain-component]*
//! domain-component:= /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
//! path-component  := /[a-z0-9]+/ (separator /[a-z0-9]+/)*,  separator := /[_.]|__|[-]+/
//! tag             := /[\w][\w.-]{0,127}/
//! digest          := algorithm ":" hex,  algorithm := /[A-Za-z][A-Za-z0-9]*/ ([+._-] /[A-Za-z][A-Za-z0-9]*/)*
//! ```
//!
//! The first component is the registry host when it holds a `.` or a `:`, is `localhost`, or
//! holds an uppercase letter (as `docker pull` splits it: distribution's `splitDockerDomain`).
//! Digests: `sha256` takes exactly 64 and `sha512` 128 lowercase hex digits (OCI image spec,
//! "Digests", registered algorithms); another algorithm at least 32 hex digits (the grammar's
//! 128-bit minimum).

use super::RenderError;

/// The longest repository name, registry included (distribution's `NameTotalLengthMax`).
const NAME_MAX: usize = 255;

fn domain_component(c: &str) -> bool {
    !c.is_empty()
        && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !c.starts_with('-')
        && !c.ends_with('-')
}

fn host(h: &str) -> bool {
    if let Some(inner) = h.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    h.split('.').all(domain_component)
}

fn domain(d: &str) -> bool {
    // An IPv6 host holds colons: the port follows the closing bracket.
    let (h, port) = match d.rfind(':') {
        Some(i) if !d[i..].contains(']') => (&d[..i], Some(&d[i + 1..])),
        _ => (d, None),
    };
    host(h) && port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `[a-z0-9]+` runs joined by `_`, `__`, `.` or one or more `-`.
fn path_component(c: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let b = c.as_bytes();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !alnum(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        let ok = sep == "_" || sep == "__" || sep == "." || sep.bytes().all(|x| x == b'-');
        if !ok {
            return false;
        }
    }
    true
}

fn tag(t: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let b = t.as_bytes();
    (1..=128).contains(&b.len())
        && word(b[0])
        && b.iter().all(|&x| word(x) || x == b'.' || x == b'-')
}

fn digest(d: &str) -> bool {
    let Some((algo, hex)) = d.split_once(':') else {
        return false;
    };
    let algo_ok = !algo.is_empty()
        && algo.split(['+', '.', '_', '-']).all(|c| {
            c.starts_with(|ch: char| ch.is_ascii_alphabetic())
                && c.bytes().all(|b| b.is_ascii_alphanumeric())
        });
    let lower_hex = |n: usize| {
        hex.len() == n
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    algo_ok
        && match algo {
            "sha256" => lower_hex(64),
            "sha512" => lower_hex(128),
            _ => hex.len() >= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        }
}

/// Why `image` is not an image reference, if it is not one.
pub(crate) fn image_problem(image: &str) -> Option<&'static str> {
    if image.is_empty() {
        return Some("it is empty");
    }
    let (rest, dig) = match image.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (image, None),
    };
    if dig.is_some_and(|d| !digest(d)) {
        return Some(
            "its digest is not ALGORITHM:HEX (sha256 takes 64 lowercase hex digits, sha512 128)",
        );
    }
    // A tag follows the last ':' after the last '/' (a ':' before it is the registry's port).
    let (name, tg) = match rest.rfind(':') {
        Some(i) if !rest[i..].contains('/') => (&rest[..i], Some(&rest[i + 1..])),
        _ => (rest, None),
    };
    if tg.is_some_and(|t| !tag(t)) {
        return Some("its tag is not 1 to 128 letters, digits, _ . - (not starting with . or -)");
    }
    if name.is_empty() {
        return Some("it has no repository name");
    }
    if name.len() > NAME_MAX {
        return Some("its name is longer than 255 characters");
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    let first = parts[0];
    let is_domain = parts.len() > 1
        && (first.contains(['.', ':'])
            || first == "localhost"
            || first.bytes().any(|b| b.is_ascii_uppercase()));
    if is_domain {
        if !domain(first) {
            return Some("its registry is not HOST or HOST:PORT");
        }
        parts.remove(0);
    }
    if !parts.iter().all(|c| path_component(c)) {
        return Some(
            "its repository path is not lowercase letters and digits separated by / . _ __ or -",
        );
    }
    None
}

/// `--image`: refused unless it is an image reference. An error shows the first `shown`
/// characters of it.
pub(crate) fn check_image(image: &str, shown: usize) -> Result<(), RenderError> {
    let why = image_problem(image).map(|p| {
        format!("{p}: give an image reference such as nginx or registry.example.com/app:1.2")
    });
    match why {
        None => Ok(()),
        Some(why) => Err(RenderError::bad_value(
            "image",
            image.chars().take(shown).collect(),
            &why,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    #[test]
    fn references_docker_accepts() {
        let with_digest = format!("a/b:1@{SHA}");
        let gcr = format!("gcr.io/google-containers/pause@{SHA}");
        for ok in [
            "nginx",
            "nginx:1.25-alpine",
            "library/nginx:latest",
            "registry.example.com/app:1.2",
            "localhost:5000/a/b:tag",
            "localhost/app",
            "127.0.0.1:5000/x",
            "[::1]:5000/x:y",
            "Registry.Example.com/app",
            "a__b/c.d/e--f:V_1.0",
            with_digest.as_str(),
            gcr.as_str(),
        ] {
            assert_eq!(image_problem(ok), None, "{ok}");
        }
    }

    #[test]
    fn what_qa_found_is_refused() {
        let more = [
            "nginx\nkind: Secret",
            "nginx:",
            "nginx:.x",
            "-nginx",
            "a//b",
            "a/b/",
            "nginx @sha256:x",
            "",
        ];
        for bad in disktier_testkit::cli_cases::BAD_IMAGE_REFERENCES
            .iter()
            .chain(&more)
        {
            assert!(image_problem(bad).is_some(), "{bad:?}");
        }
        let e = check_image("nginx;id", 200).unwrap_err().to_string();
        assert!(
            e.starts_with("--image \"nginx;id\" is not valid: its repository path"),
            "{e}"
        );
        assert!(image_problem(&format!("{}:1", "a".repeat(256))).is_some());
        assert!(image_problem(&format!("x:{}", "t".repeat(129))).is_some());
    }
}
