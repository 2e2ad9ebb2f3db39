//! `value_enum!`: a flag's values as a clap enum that mirrors a library enum variant for
//! variant, with the `From` that maps each value to its namesake. The libraries stay free of
//! clap, and no hand-written match can send a value to the wrong variant.

/// Declares `pub enum $name` (a `clap::ValueEnum`) and `From<$name> for $target`, where
/// `$target` has a variant of each name.
macro_rules! value_enum {
    (
        $(#[$attr:meta])*
        pub enum $name:ident => $target:ident {
            $($(#[$vattr:meta])* $variant:ident),+ $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub enum $name {
            $($(#[$vattr])* $variant),+
        }

        impl From<$name> for $target {
            fn from(v: $name) -> $target {
                match v {
                    $($name::$variant => $target::$variant),+
                }
            }
        }
    };
}

/// The parser of a text option whose values are a known few: it offers them to the shells'
/// completions (clap_complete reads a parser's possible values) and leaves the checking to
/// `check`, so the command keeps its own message naming the choices (QA: `history --kind <TAB>`
/// and `interfere --aggressor <TAB>` offered file names). With `hide_possible_values` on the
/// option, its help stays as written.
#[derive(Debug, Clone, Copy)]
pub struct Offered {
    pub values: &'static [&'static str],
    pub check: fn(&str) -> Result<String, String>,
}

impl clap::builder::TypedValueParser for Offered {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let check = self.check;
        clap::builder::StringValueParser::new()
            .try_map(move |s| check(&s))
            .parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.values
                .iter()
                .map(|v| clap::builder::PossibleValue::new(*v)),
        ))
    }
}

/// [`Offered::check`] for an option checked later, where it is used.
pub fn any_text(s: &str) -> Result<String, String> {
    Ok(s.to_string())
}

/// The built-in profiles' names, for completions ([`Offered`]; the engine's `Profile::all`, which
/// is not a constant: the test below keeps the two the same).
pub const PROFILES: &[&str] = &[
    "etcd",
    "etcd-openshift",
    "write-iops",
    "read-iops",
    "write-throughput",
    "read-throughput",
    "latency",
    "small-files",
];

#[cfg(test)]
mod tests {
    #[test]
    fn the_offered_profiles_are_the_engines() {
        let names: Vec<&str> = disktier_engine::profile::Profile::all()
            .iter()
            .map(|p| p.name())
            .collect();
        assert_eq!(names, super::PROFILES);
    }
}
