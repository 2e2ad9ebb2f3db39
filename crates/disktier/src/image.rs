//! The container image `scripts/image.sh` builds: its name after `podman load` or
//! `ctr -n k8s.io images import`. `fleet run`, which runs disktier on other nodes, takes
//! [`DEFAULT_IMAGE`] as its default `--image`.

/// `localhost/disktier:<version>`: the name the OCI archive's index gives the image
/// (`org.opencontainers.image.ref.name` and `io.containerd.image.name`, written by
/// scripts/image.sh from the same workspace version).
pub const DEFAULT_IMAGE: &str = concat!("localhost/disktier:", env!("CARGO_PKG_VERSION"));

#[cfg(test)]
mod tests {
    #[test]
    fn default_image_is_the_one_image_sh_names() {
        let script = include_str!("../../../scripts/image.sh");
        assert!(script.contains(r#"name="localhost/disktier:$version""#));
        assert_eq!(
            super::DEFAULT_IMAGE,
            format!("localhost/disktier:{}", env!("CARGO_PKG_VERSION"))
        );
    }
}
