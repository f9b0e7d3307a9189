//! Kernel entry points: thin wrappers that set up the block's view and call into `block`.
pub mod bitonic;
pub mod merge;
pub mod multi;
pub mod radix;
