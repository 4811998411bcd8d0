//! The passive frame tap: the kit's decoder (a process of its own) reads what the line hands
//! it through a shared ring; a decoder that falls behind loses tap data, never line time.
pub mod channel;
pub mod ring;
pub mod scanner;
