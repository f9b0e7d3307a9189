//! What one block does. The merge sort's block code is generic over a [`Block`], the small
//! sort's over a [`small::Team`]; both build for the host too, where the CPU tests run every
//! thread's work on one CPU thread.
pub mod merge;
pub mod small;
#[cfg(target_arch = "nvptx64")]
pub mod tile;

/// The threads that work on one tile.
///
/// Block code runs in *phases* separated by [`Block::sync`]: in a phase, each unit `u` (one per
/// GPU thread) reads only what earlier phases wrote and writes slots no other unit touches, so
/// one CPU thread running the units one after another computes what the GPU's threads do.
pub trait Block {
    /// The first unit this thread runs.
    fn thread(&self) -> u32;
    /// Threads in the block: a thread runs units `thread(), thread() + threads(), …`.
    fn threads(&self) -> u32;
    /// Barrier: every unit's earlier shared-memory writes are visible to every unit after it.
    fn sync(&self);
}

/// The block of the CPU tests: one thread that runs every unit; barriers are no-ops.
#[cfg(not(target_arch = "nvptx64"))]
pub struct OneThread;

#[cfg(not(target_arch = "nvptx64"))]
impl Block for OneThread {
    fn thread(&self) -> u32 {
        0
    }
    fn threads(&self) -> u32 {
        1
    }
    fn sync(&self) {}
}
