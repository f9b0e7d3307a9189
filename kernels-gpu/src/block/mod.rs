//! What one block does: tiles of keys in shared memory.
pub mod tile;
