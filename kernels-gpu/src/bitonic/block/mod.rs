//! What one block of the bitonic sorts does: the tiny sort's one block ([`tiny`]), the small
//! sort's blocks between grid barriers ([`small`]), and the window passes' tiles and windows
//! ([`window`]). Each is written against a [`Team`](crate::block::Team), so that it also runs on
//! the CPU in tests.

pub mod small;
pub mod tiny;
pub mod window;
