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
