//! Writable copies of the fixture nodes (`tests/fixtures/sysfs/NAME`), to put a node in another
//! state.

use disktier_testkit::cli::sysfs_fixture;
use std::path::PathBuf;

/// Copies the fixture node `name` to `to` (`cp -a`) and returns `to`.
pub fn copy_node(name: &str, to: impl Into<PathBuf>) -> PathBuf {
    let to = to.into();
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(sysfs_fixture(name))
        .arg(&to)
        .status()
        .unwrap();
    assert!(st.success(), "cp -a {name}");
    to
}
