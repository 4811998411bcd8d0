//! kit-linkd: the compiled delay line. `schedule` and `mt` are pure (the rules both lines
//! share, checked by tests/vectors); the rest moves bytes.
pub mod mt;
pub mod schedule;
