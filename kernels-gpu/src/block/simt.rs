//! What block code written thread by thread asks of the GPU, as CUDA names it: the thread's
//! indices, the block and warp barriers, the warp-synchronous primitives (match, shuffles,
//! lane masks), every access to shared memory ([`load`], [`store`]) and every atomic, so that
//! the same code runs on the GPU and on the CPU.
//!
//! On the GPU each function calls its namesake of `crate::gpu` (a load of shared memory is a
//! plain load), `#[inline(always)]`: block code calls them as it would call `crate::gpu`, and
//! compiles to the same code. Block code computes a stored value before its address
//! (`let v = …; store(at, v)`), the order in which `*at = v` evaluates them.
//!
//! On the CPU, [`launch`] emulates a launch: every GPU thread on an OS thread of its own
//! ([`CpuThread`], which the functions find through a thread-local), a barrier per block, a
//! rendezvous per warp for the warp-synchronous primitives (every lane publishes its value, all
//! meet, each reads what it asked for), real atomics in device memory, and a shared memory that
//! records who touched each byte in the current phase and panics on a race: a byte written by
//! one thread and read or written by another with no barrier between them. A block barrier
//! starts a new phase for the block, a warp barrier for the warp's lanes. Atomics race only with
//! plain accesses, and [`store_agreed`] lets the lanes of a group store one value to one place
//! together. A load of a byte that no thread of the block has stored panics too: where the load
//! of a race comes before the store, that is how the race shows, before what it read is used.
//!
//! Device memory is read and written through raw pointers by the block code itself, so the OS
//! threads of a CPU launch must touch distinct places of it or use the atomics, as the GPU's
//! threads do.
//!
//! Every thread of a block reaches each [`sync_threads`], every lane of a warp each
//! warp-synchronous primitive (no divergence); blocks are whole warps.

#[cfg(not(target_arch = "nvptx64"))]
pub use cpu::{CpuThread, Grid, launch};

/// `$gpu` on the GPU; on the CPU, `$cpu` with `$th` the emulated thread that calls it.
macro_rules! on {
    (gpu: $gpu:expr, cpu: |$th:ident| $cpu:expr $(,)?) => {{
        #[cfg(target_arch = "nvptx64")]
        {
            $gpu
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            cpu::with(|$th| $cpu)
        }
    }};
}

/// `threadIdx.x`
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    on!(gpu: crate::gpu::thread_idx_x(), cpu: |th| th.thread_idx())
}

/// `blockIdx.x`
#[inline(always)]
pub fn block_idx_x() -> u32 {
    on!(gpu: crate::gpu::block_idx_x(), cpu: |th| th.block_idx())
}

/// `gridDim.x`
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    on!(gpu: crate::gpu::grid_dim_x(), cpu: |th| th.grid_dim())
}

/// `__syncthreads()`: the block's threads meet; every shared-memory access before it happens
/// before every one after it.
#[inline(always)]
pub fn sync_threads() {
    on!(gpu: crate::gpu::sync_threads(), cpu: |th| th.sync_threads())
}

/// `__syncwarp()`: the warp's lanes meet; as [`sync_threads`] for the warp.
#[inline(always)]
pub fn sync_warp() {
    on!(gpu: crate::gpu::sync_warp(), cpu: |th| th.sync_warp())
}

/// The lanes of the warp whose `value` agrees with this lane's in its low `BITS` bits.
#[inline(always)]
pub fn match_bits<const BITS: u32>(value: u32) -> u32 {
    on!(gpu: crate::gpu::match_bits::<BITS>(value), cpu: |th| th.match_bits::<BITS>(value))
}

/// The lanes of the warp below this one, as a mask.
#[inline(always)]
pub fn lanemask_lt() -> u32 {
    on!(gpu: crate::gpu::lanemask_lt(), cpu: |th| th.lanemask_lt())
}

/// `value` as lane `lane` holds it.
#[inline(always)]
pub fn shfl_idx(value: u32, lane: u32) -> u32 {
    on!(gpu: crate::gpu::shfl_idx(value, lane), cpu: |th| th.shfl_idx(value, lane))
}

/// `value` as lane `lane - delta` holds it (this lane's own below `delta`).
#[inline(always)]
pub fn shfl_up(value: u64, delta: u32) -> u64 {
    on!(gpu: crate::gpu::shfl_up(value, delta), cpu: |th| th.shfl_up(value, delta))
}

/// The value at `at` in shared memory.
///
/// # Safety
/// `at` is a valid, aligned `T` of the block's shared memory.
#[inline(always)]
pub unsafe fn load<T: Copy>(at: *const T) -> T {
    // SAFETY: the caller's contract.
    on!(gpu: unsafe { *at }, cpu: |th| th.load(at))
}

/// Stores `value` at `at` in shared memory.
///
/// # Safety
/// As [`load`].
#[inline(always)]
pub unsafe fn store<T: Copy>(at: *mut T, value: T) {
    // SAFETY: the caller's contract.
    on!(gpu: unsafe { *at = value }, cpu: |th| th.store(at, value))
}

/// [`store`] where other threads may store the same value at `at` in the same phase (every
/// lane of a group writing back the counter they share): the stores agree, so their order does
/// not matter. `T` has no padding bytes.
///
/// # Safety
/// As [`load`].
#[inline(always)]
pub unsafe fn store_agreed<T: Copy>(at: *mut T, value: T) {
    // SAFETY: the caller's contract.
    on!(gpu: unsafe { *at = value }, cpu: |th| th.store_agreed(at, value))
}

/// `atomicAdd` on a word of shared memory; returns its old value.
///
/// # Safety
/// As [`load`].
#[inline(always)]
pub unsafe fn shared_atomic_add(at: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller's contract.
    on!(
        gpu: unsafe { crate::gpu::shared_atomic_add(at, value) },
        cpu: |th| th.shared_atomic_add(at, value),
    )
}

/// `atomicAdd` on a word of shared memory, its old value not needed.
///
/// # Safety
/// As [`load`].
#[inline(always)]
pub unsafe fn shared_reduce_add(at: *mut u32, value: u32) {
    // SAFETY: the caller's contract.
    on!(
        gpu: unsafe { crate::gpu::shared_reduce_add(at, value) },
        cpu: |th| {
            th.shared_atomic_add(at, value);
        },
    )
}

/// The address of `at` in the block's shared-memory window, for [`shared_window_reduce_add`]:
/// 32 bits, which keeps address arithmetic in 32-bit registers on the GPU.
///
/// # Safety
/// `at` points into the block's shared memory.
#[inline(always)]
pub unsafe fn shared_window<T>(at: *mut T) -> u32 {
    // SAFETY: the caller's contract.
    on!(gpu: unsafe { crate::gpu::shared_window(at) }, cpu: |th| th.shared_window(at))
}

/// [`shared_reduce_add`] on the word at `window` of the shared-memory window.
///
/// # Safety
/// `window` is an aligned word of the block's shared memory.
#[inline(always)]
pub unsafe fn shared_window_reduce_add(window: u32, value: u32) {
    // SAFETY: the caller's contract.
    on!(
        gpu: unsafe { crate::gpu::shared_window_reduce_add(window, value) },
        cpu: |th| {
            th.shared_atomic_add(th.shared().wrapping_add(window as usize) as *mut u32, value);
        },
    )
}

/// `atomicAdd` on a word of device memory; returns its old value.
///
/// # Safety
/// `at` is a valid, aligned word of device memory, which every thread of the launch touches
/// only through atomics.
#[inline(always)]
pub unsafe fn atomic_add(at: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller's contract.
    on!(gpu: unsafe { crate::gpu::atomic_add(at, value) }, cpu: |th| unsafe { th.atomic_add(at, value) })
}

/// Adds `value` to a 64-bit word of device memory atomically.
///
/// # Safety
/// As [`atomic_add`].
#[inline(always)]
pub unsafe fn reduce_add(at: *mut u64, value: u64) {
    // SAFETY: the caller's contract.
    on!(gpu: unsafe { crate::gpu::reduce_add(at, value) }, cpu: |th| unsafe { th.reduce_add(at, value) })
}

/// Loads a 64-bit word of device memory that other blocks store concurrently.
///
/// # Safety
/// As [`atomic_add`].
#[inline(always)]
pub unsafe fn load_relaxed(at: *const u64) -> u64 {
    // SAFETY: the caller's contract.
    on!(gpu: unsafe { crate::gpu::load_relaxed(at) }, cpu: |th| unsafe { th.load_relaxed(at) })
}

/// Stores a 64-bit word of device memory that other blocks load concurrently.
///
/// # Safety
/// As [`atomic_add`].
#[inline(always)]
pub unsafe fn store_relaxed(at: *mut u64, value: u64) {
    // SAFETY: the caller's contract.
    on!(
        gpu: unsafe { crate::gpu::store_relaxed(at, value) },
        cpu: |th| unsafe { th.store_relaxed(at, value) },
    )
}

#[cfg(not(target_arch = "nvptx64"))]
mod cpu {
    use std::cell::Cell;
    use std::panic::AssertUnwindSafe;
    use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
    use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError, mpsc};

    /// The shape of an emulated launch.
    #[derive(Clone, Copy, Debug)]
    pub struct Grid {
        /// Blocks in the grid.
        pub blocks: u32,
        /// Threads per block, a multiple of 32.
        pub threads: u32,
        /// Bytes of shared memory per block (16-byte aligned).
        pub shared_bytes: u32,
        /// Blocks that run at once: 1 runs them one after another in block order; `blocks`
        /// runs them all together. Either is a schedule the GPU may choose, for code that waits
        /// only on blocks that started before it.
        pub together: u32,
    }

    /// Runs `body` as every thread of every block of `grid`, each on an OS thread of its own,
    /// blocks `grid.together` at a time, and returns once all have finished. A panic in any
    /// thread (a shared-memory race among them) ends the launch: the other threads give up at
    /// their next barrier, primitive or shared access, and the first panic is raised again
    /// here.
    ///
    /// # Safety
    /// `body` runs on many threads at once: whatever it reaches through raw pointers, the
    /// threads read and write as the GPU's threads may (distinct places, or atomics).
    pub unsafe fn launch(grid: Grid, body: impl Fn(&CpuThread<'_>)) {
        assert!(
            grid.threads > 0 && grid.threads % 32 == 0,
            "blocks of whole warps"
        );
        let body = AssertSync(body);
        let launch = Launch {
            abandoned: AtomicBool::new(false),
            reported: AtomicBool::new(false),
            grid,
            blocks: Mutex::new(Vec::new()),
        };
        let mut first = 0;
        while first < grid.blocks {
            let last = grid.blocks.min(first + grid.together.max(1));
            let blocks: Vec<std::sync::Arc<Block>> = (first..last)
                .map(|_| std::sync::Arc::new(Block::new(grid.threads, grid.shared_bytes)))
                .collect();
            *lock(&launch.blocks) = blocks.clone();
            let (done, finished) = mpsc::channel();
            let mut jobs = 0;
            for (b, block) in blocks.iter().enumerate() {
                for t in 0..grid.threads {
                    let (launch, body, done) = (&launch, &body, done.clone());
                    let thread = CpuThread {
                        block,
                        launch,
                        thread: t,
                        block_idx: first + b as u32,
                        block_phase: Cell::new(1),
                        warp_phase: Cell::new(1),
                        polled: Cell::new((0, 0)),
                        barriers: Cell::new((0, 0)),
                        dropped: Cell::new((u32::MAX, u32::MAX)),
                    };
                    let job: Box<dyn FnOnce() + Send + '_> = Box::new(move || {
                        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            let _guard = AbandonOnPanic(launch);
                            block.threads[t as usize].get_or_init(std::thread::current);
                            let _running = Running::new(&thread);
                            (body.0)(&thread)
                        }));
                        // The last use of what the job borrows.
                        let _ = done.send(ran);
                    });
                    // SAFETY: the launch waits below for every job to send its result before
                    // anything a job borrows goes away, and a job touches none of it after.
                    let job: Job = unsafe { std::mem::transmute(job) };
                    run_pooled(job);
                    jobs += 1;
                }
            }
            // The first panic that is not a thread giving up because of another.
            let mut panic = None;
            for _ in 0..jobs {
                if let Err(payload) = finished.recv().expect("every job reports")
                    && !payload.is::<Abandoned>()
                {
                    panic.get_or_insert(payload);
                }
            }
            if let Some(payload) = panic {
                std::panic::resume_unwind(payload);
            }
            first = last;
        }
    }

    /// The work of one GPU thread, for an OS thread of the pool.
    type Job = Box<dyn FnOnce() + Send + 'static>;

    /// The pool's OS threads waiting for a job, kept from launch to launch: waking one costs
    /// far less than starting one, and a launch runs hundreds.
    static IDLE: Mutex<Vec<mpsc::Sender<Job>>> = Mutex::new(Vec::new());

    /// Runs `job` on an idle OS thread of the pool, or a new one.
    fn run_pooled(job: Job) {
        let idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let job = match idle {
            Some(worker) => match worker.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (worker, jobs) = mpsc::channel::<Job>();
        worker.send(job).expect("a new channel takes a job");
        let started = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                while let Ok(job) = jobs.recv() {
                    job();
                    IDLE.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(worker.clone());
                }
            });
        if started.is_err() {
            // The jobs handed out borrow the launch's data: no unwinding past them.
            eprintln!("no OS thread for a GPU thread of a CPU launch");
            std::process::abort();
        }
    }

    /// `body`, shared by the threads of a launch; [`launch`]'s caller vouches for it.
    struct AssertSync<F>(F);
    // SAFETY: `launch`'s contract.
    unsafe impl<F> Sync for AssertSync<F> {}

    /// What a launch's threads share.
    struct Launch {
        /// Set when a thread panics: the others give up.
        abandoned: AtomicBool,
        /// Set when a thread has reported a fault of the shared memory: the others that find
        /// one give up without a report of their own.
        reported: AtomicBool,
        grid: Grid,
        /// The blocks running now.
        blocks: Mutex<Vec<std::sync::Arc<Block>>>,
    }

    /// The payload of a thread that gave up because another panicked.
    struct Abandoned;

    /// Marks the launch abandoned if its thread unwinds, and wakes every waiting thread.
    struct AbandonOnPanic<'a>(&'a Launch);

    impl Drop for AbandonOnPanic<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                self.0.abandoned.store(true, Ordering::SeqCst);
                let blocks = self.0.blocks.lock().unwrap_or_else(|e| e.into_inner());
                for block in blocks.iter() {
                    for thread in block.threads.iter().filter_map(OnceLock::get) {
                        thread.unpark();
                    }
                }
            }
        }
    }

    /// Locks `m`, or gives up if a thread panicked holding it.
    fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|_| abandon())
    }

    /// Ends this thread because another panicked (without running the panic hook again).
    fn abandon() -> ! {
        std::panic::resume_unwind(Box::new(Abandoned))
    }

    /// One block: its threads, its barrier, its warps' rendezvous, its shared memory.
    struct Block {
        /// Each GPU thread's OS thread, once it runs.
        threads: Vec<OnceLock<std::thread::Thread>>,
        barrier: Meeting,
        warps: Vec<Meeting>,
        shared: Mutex<SharedMemory>,
        /// The addresses the block code computes with: a buffer never read or written here, so
        /// that block code which touches shared memory other than through [`super`] reads bytes that are
        /// not its data and loses its stores, and fails its tests.
        addresses: Vec<u128>,
    }

    impl Block {
        fn new(threads: u32, shared_bytes: u32) -> Block {
            let bytes = shared_bytes as usize;
            Block {
                threads: (0..threads).map(|_| OnceLock::new()).collect(),
                barrier: Meeting::new(0, threads),
                warps: (0..threads / 32)
                    .map(|w| Meeting::new(32 * w, 32))
                    .collect(),
                shared: Mutex::new(SharedMemory {
                    bytes: vec![0; bytes],
                    written: vec![false; bytes],
                    access: vec![Access::default(); bytes],
                }),
                addresses: vec![0xdead_beef_dead_beef_dead_beef_dead_beef; bytes.div_ceil(16)],
            }
        }
    }

    /// A rendezvous of the block's threads `first .. first + parties`, each of which
    /// publishes a word. The last to arrive wakes the others; each then reads the words it
    /// needs.
    struct Meeting {
        first: u32,
        parties: u32,
        arrived: AtomicU32,
        /// Meetings completed so far.
        generation: AtomicU64,
        /// Each party's word and what it met for, by the generation's parity: a party reads
        /// meeting `g`'s words once it completes, and none publishes for `g + 2` before every
        /// party has arrived at `g + 1`, after its reading.
        words: [Vec<AtomicU64>; 2],
        what: [Vec<AtomicU32>; 2],
    }

    impl Meeting {
        fn new(first: u32, parties: u32) -> Self {
            let words = || (0..parties).map(|_| AtomicU64::new(0)).collect();
            let what = || (0..parties).map(|_| AtomicU32::new(0)).collect();
            Meeting {
                first,
                parties,
                arrived: AtomicU32::new(0),
                generation: AtomicU64::new(0),
                words: [words(), words()],
                what: [what(), what()],
            }
        }

        /// Publishes `word` as thread `thread`'s, waits for every party, and returns the
        /// words' parity. Every party must meet for the same `what`.
        fn meet(&self, th: &CpuThread<'_>, what: u32, word: u64) -> usize {
            let party = (th.thread - self.first) as usize;
            let generation = self.generation.load(Ordering::Acquire);
            let parity = (generation % 2) as usize;
            self.words[parity][party].store(word, Ordering::Relaxed);
            self.what[parity][party].store(what, Ordering::Relaxed);
            // AcqRel: the last to arrive sees every party's word, and hands them on with the
            // generation.
            if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
                if let Some(other) = (0..self.parties as usize)
                    .map(|p| self.what[parity][p].load(Ordering::Relaxed))
                    .find(|&w| w != what)
                {
                    panic!(
                        "divergence: threads {} .. {} meet at {what:#x} and at {other:#x}",
                        self.first,
                        self.first + self.parties
                    );
                }
                self.arrived.store(0, Ordering::Relaxed);
                self.generation.store(generation + 1, Ordering::Release);
                for p in (0..self.parties).filter(|&p| p as usize != party) {
                    th.block.threads[(self.first + p) as usize]
                        .get()
                        .expect("a party that arrived runs")
                        .unpark();
                }
            } else {
                while self.generation.load(Ordering::Acquire) == generation {
                    if th.launch.abandoned.load(Ordering::SeqCst) {
                        abandon();
                    }
                    std::thread::park();
                }
            }
            parity
        }

        /// Party `party`'s word of the meeting of `parity`.
        fn word(&self, parity: usize, party: u32) -> u64 {
            self.words[parity][party as usize].load(Ordering::Relaxed)
        }
    }

    /// The emulated warp primitives, as [`Meeting::what`].
    const SYNC_WARP: u32 = 1;
    const MATCH: u32 = 2;
    const SHFL_IDX: u32 = 3;
    const SHFL_UP: u32 = 4;

    /// A block's shared memory: its bytes, whether each has been written (the GPU's hold
    /// garbage at a block's start), and who touched each in the current phase.
    struct SharedMemory {
        bytes: Vec<u8>,
        written: Vec<bool>,
        access: Vec<Access>,
    }

    /// The accesses to one byte in the phase of its latest: by one thread, or several
    /// (`several`), of one warp or several (`warp == SEVERAL`), of these `kinds`.
    #[derive(Clone, Copy, Default)]
    struct Access {
        /// The block phase (from 1: a record of phase 0 is stale).
        phase: u32,
        /// The warp phase, where one warp touched it.
        warp_phase: u32,
        warp: u32,
        /// The first thread to touch it in the phase.
        thread: u32,
        several: bool,
        kinds: u8,
    }

    const SEVERAL: u32 = u32::MAX;
    const READ: u8 = 1;
    const WRITE: u8 = 2;
    const ATOMIC: u8 = 4;
    const AGREED: u8 = 8;

    /// The kinds of access that race with an access of `kind` by another thread in its phase.
    fn races_with(kind: u8) -> u8 {
        match kind {
            READ => WRITE | ATOMIC | AGREED,
            WRITE => READ | WRITE | ATOMIC | AGREED,
            ATOMIC => READ | WRITE | AGREED,
            _ => READ | WRITE | ATOMIC,
        }
    }

    /// A GPU thread of a CPU [`launch`].
    pub struct CpuThread<'a> {
        block: &'a Block,
        launch: &'a Launch,
        thread: u32,
        block_idx: u32,
        /// Block barriers passed, from 1.
        block_phase: Cell<u32>,
        /// Warp barriers passed, from 1.
        warp_phase: Cell<u32>,
        /// The address and word of the latest [`load_relaxed`](super::load_relaxed).
        polled: Cell<(usize, u64)>,
        /// Block and warp barriers reached so far.
        barriers: Cell<(u32, u32)>,
        /// The block and warp barrier that do nothing (`u32::MAX`: none), for the tests of the
        /// race check.
        dropped: Cell<(u32, u32)>,
    }

    impl CpuThread<'_> {
        /// The block's shared memory (16-byte aligned), to be accessed through [`load`](super::load),
        /// [`store`](super::store) and the others.
        pub fn shared(&self) -> *mut u8 {
            self.block.addresses.as_ptr() as *mut u8
        }

        /// Makes this thread's block barrier `barrier` and warp barrier `warp_barrier`
        /// (counting from 0; `u32::MAX`: none) do nothing: block code with a barrier missing,
        /// for the tests of the race check. Every thread of the block must drop the same.
        #[cfg(test)]
        pub(crate) fn drop_barriers(&self, barrier: u32, warp_barrier: u32) {
            self.dropped.set((barrier, warp_barrier));
        }

        fn lane(&self) -> u32 {
            self.thread % 32
        }

        /// Meets the warp's other lanes, each publishing `value`; returns lane `lane`'s.
        fn warp_meet(&self, what: u32, value: u64, lane: impl Fn(u32) -> u32) -> u64 {
            let warp = &self.block.warps[(self.thread / 32) as usize];
            warp.word(warp.meet(self, what, value), lane(self.lane()))
        }

        /// Runs `f` on the `len` bytes at `at` of shared memory after checking the access, of
        /// `kind`, against the others of its phase (`new`: the bytes an agreed store writes).
        fn shared_access<R>(
            &self,
            at: *const u8,
            len: usize,
            kind: u8,
            new: &[u8],
            f: impl FnOnce(&mut [u8]) -> R,
        ) -> R {
            let base = self.block.addresses.as_ptr() as usize;
            let offset = (at as usize).wrapping_sub(base);
            let mut shared = lock(&self.block.shared);
            let size = shared.bytes.len();
            if offset >= size || size - offset < len {
                drop(shared);
                self.fault(format_args!(
                    "{len} bytes at {at:p} outside the shared memory ({size} bytes at {base:#x})"
                ));
            }
            let (phase, warp_phase) = (self.block_phase.get(), self.warp_phase.get());
            let (thread, warp) = (self.thread, self.thread / 32);
            let mut race = None;
            let SharedMemory {
                bytes,
                written,
                access,
            } = &mut *shared;
            if kind & (READ | ATOMIC) != 0
                && let Some(i) = (offset..offset + len).find(|&i| !written[i])
            {
                // Where a thread reads before the other's store of the same phase, this is
                // how the race shows, before the garbage it read goes anywhere.
                drop(shared);
                self.fault(format_args!(
                    "shared byte {i}: thread {thread} reads it before any thread wrote it (a race, or \
                     a store missing)"
                ));
            }
            if kind != READ {
                written[offset..offset + len].fill(true);
            }
            for i in 0..len {
                let a = &mut access[offset + i];
                let ordered = a.phase != phase || (a.warp == warp && a.warp_phase != warp_phase);
                if ordered {
                    *a = Access {
                        phase,
                        warp_phase,
                        warp,
                        thread,
                        several: false,
                        kinds: kind,
                    };
                    continue;
                }
                if a.thread != thread || a.several {
                    let mut clash = a.kinds & races_with(kind);
                    if kind == AGREED && a.kinds & AGREED != 0 && bytes[offset + i] != new[i] {
                        clash |= AGREED;
                    }
                    if clash != 0 {
                        race = Some((offset + i, a.thread));
                        break;
                    }
                }
                a.kinds |= kind;
                a.several |= a.thread != thread;
                if a.warp != warp {
                    a.warp = SEVERAL;
                }
            }
            if let Some((byte, other)) = race {
                drop(shared);
                self.fault(format_args!(
                    "shared byte {byte}: thread {thread} and thread {other} in one phase (a race)"
                ));
            }
            f(&mut bytes[offset..offset + len])
        }

        /// Panics with `message`, unless another thread of the launch has reported a fault
        /// already (a race is often found by many threads at once): then gives up.
        fn fault(&self, message: core::fmt::Arguments<'_>) -> ! {
            if self.launch.reported.swap(true, Ordering::SeqCst) {
                abandon();
            }
            panic!("{message}")
        }
    }

    /// The bytes of `value` (`T` without padding).
    fn bytes_of<T: Copy>(value: &T) -> &[u8] {
        // SAFETY: `value` is `size_of::<T>()` initialised bytes (no padding: the callers').
        unsafe { core::slice::from_raw_parts(value as *const T as *const u8, size_of::<T>()) }
    }

    thread_local! {
        /// The GPU thread that this OS thread runs now, if any.
        static CURRENT: Cell<*const CpuThread<'static>> = const { Cell::new(core::ptr::null()) };
    }

    /// Makes `thread` the one this OS thread runs, until dropped.
    struct Running;

    impl Running {
        fn new(thread: &CpuThread<'_>) -> Running {
            let thread = core::ptr::from_ref(thread).cast::<CpuThread<'static>>();
            CURRENT.with(|current| current.set(thread));
            Running
        }
    }

    impl Drop for Running {
        fn drop(&mut self) {
            CURRENT.with(|current| current.set(core::ptr::null()));
        }
    }

    /// `f` of the GPU thread that this OS thread runs.
    pub(super) fn with<R>(f: impl FnOnce(&CpuThread<'_>) -> R) -> R {
        let thread = CURRENT.with(Cell::get);
        assert!(!thread.is_null(), "a GPU primitive outside a CPU launch");
        // SAFETY: `launch` sets it to the thread it runs, for as long as it runs it.
        f(unsafe { &*thread })
    }

    /// The emulator's primitives, which the functions of [`super`] call on the CPU.
    impl CpuThread<'_> {
        pub(super) fn thread_idx(&self) -> u32 {
            self.thread
        }
        pub(super) fn block_idx(&self) -> u32 {
            self.block_idx
        }
        pub(super) fn grid_dim(&self) -> u32 {
            self.launch.grid.blocks
        }
        pub(super) fn sync_threads(&self) {
            let (barriers, warp_barriers) = self.barriers.get();
            self.barriers.set((barriers + 1, warp_barriers));
            if barriers == self.dropped.get().0 {
                return;
            }
            self.block.barrier.meet(self, 0, 0);
            self.block_phase.set(self.block_phase.get() + 1);
        }
        pub(super) fn sync_warp(&self) {
            let (barriers, warp_barriers) = self.barriers.get();
            self.barriers.set((barriers, warp_barriers + 1));
            if warp_barriers == self.dropped.get().1 {
                return;
            }
            let warp = &self.block.warps[(self.thread / 32) as usize];
            warp.meet(self, SYNC_WARP, 0);
            self.warp_phase.set(self.warp_phase.get() + 1);
        }
        pub(super) fn match_bits<const BITS: u32>(&self, value: u32) -> u32 {
            let warp = &self.block.warps[(self.thread / 32) as usize];
            let parity = warp.meet(self, MATCH | BITS << 8, u64::from(value));
            let mask = (1u64 << BITS) - 1;
            (0..32)
                .filter(|&l| (warp.word(parity, l) ^ u64::from(value)) & mask == 0)
                .fold(0, |peers, l| peers | 1 << l)
        }
        pub(super) fn lanemask_lt(&self) -> u32 {
            (1 << self.lane()) - 1
        }
        pub(super) fn shfl_idx(&self, value: u32, lane: u32) -> u32 {
            self.warp_meet(SHFL_IDX, u64::from(value), |_| lane % 32) as u32
        }
        pub(super) fn shfl_up(&self, value: u64, delta: u32) -> u64 {
            self.warp_meet(SHFL_UP, value, |me| me.checked_sub(delta).unwrap_or(me))
        }

        pub(super) fn load<T: Copy>(&self, at: *const T) -> T {
            self.shared_access(at as *const u8, size_of::<T>(), READ, &[], |bytes| {
                // SAFETY: `bytes` holds `size_of::<T>()` bytes, stored as a `T` (a race-free
                // load reads what a store wrote).
                unsafe { (bytes.as_ptr() as *const T).read_unaligned() }
            })
        }
        pub(super) fn store<T: Copy>(&self, at: *mut T, value: T) {
            self.shared_access(at as *const u8, size_of::<T>(), WRITE, &[], |bytes| {
                bytes.copy_from_slice(bytes_of(&value))
            })
        }
        pub(super) fn store_agreed<T: Copy>(&self, at: *mut T, value: T) {
            let new = bytes_of(&value);
            self.shared_access(at as *const u8, new.len(), AGREED, new, |bytes| {
                bytes.copy_from_slice(new)
            })
        }
        pub(super) fn shared_atomic_add(&self, at: *mut u32, value: u32) -> u32 {
            self.shared_access(at as *const u8, 4, ATOMIC, &[], |bytes| {
                let old = u32::from_ne_bytes(bytes.try_into().unwrap());
                bytes.copy_from_slice(&old.wrapping_add(value).to_ne_bytes());
                old
            })
        }
        pub(super) fn shared_window<T>(&self, at: *mut T) -> u32 {
            (at as usize).wrapping_sub(self.block.addresses.as_ptr() as usize) as u32
        }

        pub(super) unsafe fn atomic_add(&self, at: *mut u32, value: u32) -> u32 {
            // SAFETY: the caller's contract: a valid word, touched only through atomics.
            unsafe { AtomicU32::from_ptr(at) }.fetch_add(value, Ordering::Relaxed)
        }
        pub(super) unsafe fn reduce_add(&self, at: *mut u64, value: u64) {
            // SAFETY: as above.
            unsafe { AtomicU64::from_ptr(at) }.fetch_add(value, Ordering::Relaxed);
        }
        pub(super) unsafe fn load_relaxed(&self, at: *const u64) -> u64 {
            // SAFETY: as above.
            let word = unsafe { AtomicU64::from_ptr(at as *mut u64) };
            let mut loaded = word.load(Ordering::Relaxed);
            if self.polled.get() == (at as usize, loaded) {
                // The same word as the last load: a loop waiting on another block, which
                // steps aside for a while rather than take the cores from those it waits on,
                // and gives up if the launch has ended.
                if self.launch.abandoned.load(Ordering::SeqCst) {
                    abandon();
                }
                std::thread::sleep(std::time::Duration::from_micros(20));
                loaded = word.load(Ordering::Relaxed);
            }
            self.polled.set((at as usize, loaded));
            loaded
        }
        pub(super) unsafe fn store_relaxed(&self, at: *mut u64, value: u64) {
            // SAFETY: as above.
            unsafe { AtomicU64::from_ptr(at) }.store(value, Ordering::Relaxed)
        }
    }
}

/// Whether `f` panics with a shared-memory race (or a read before any store, which is how a
/// race shows where the load comes first).
#[cfg(test)]
pub(crate) fn races(f: impl FnOnce()) -> bool {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(()) => false,
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            assert!(message.contains("a race"), "not a race: {message}");
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One block of `threads` threads running `body`, each thread's result in `out[thread]`.
    fn run(threads: u32, shared_bytes: u32, body: impl Fn(&CpuThread<'_>) -> u64) -> Vec<u64> {
        let mut out = vec![0u64; threads as usize];
        let at = out.as_mut_ptr();
        let grid = Grid {
            blocks: 1,
            threads,
            shared_bytes,
            together: 1,
        };
        // SAFETY: each thread writes its own word of `out`.
        unsafe { launch(grid, |th| *at.add(thread_idx_x() as usize) = body(th)) };
        out
    }

    #[test]
    fn the_warp_primitives_are_the_gpus() {
        let value = |t: u32| t.wrapping_mul(2654435761) >> 7;
        let matched = run(64, 0, |_| u64::from(match_bits::<3>(value(thread_idx_x()))));
        let indexed = run(64, 0, |_| {
            let t = thread_idx_x();
            u64::from(shfl_idx(value(t), (t * 7) % 32))
        });
        let up = run(64, 0, |_| {
            let t = thread_idx_x();
            shfl_up(u64::from(value(t)) << 32 | u64::from(t), 5)
        });
        let below = run(64, 0, |_| u64::from(lanemask_lt()));
        for t in 0..64u32 {
            let (lane, warp) = (t % 32, t / 32 * 32);
            let peers = (0..32)
                .filter(|&l| (value(warp + l) ^ value(t)) & 7 == 0)
                .fold(0u64, |m, l| m | 1 << l);
            assert_eq!(matched[t as usize], peers, "match, thread {t}");
            let from = warp + (t * 7) % 32;
            assert_eq!(indexed[t as usize], u64::from(value(from)), "shfl_idx, {t}");
            let from = if lane >= 5 { t - 5 } else { t };
            let want = u64::from(value(from)) << 32 | u64::from(from);
            assert_eq!(up[t as usize], want, "shfl_up, thread {t}");
            assert_eq!(
                below[t as usize],
                (1 << lane) - 1,
                "lanemask_lt, thread {t}"
            );
        }
    }

    #[test]
    #[should_panic(expected = "a race")]
    fn the_emulator_catches_a_missing_barrier() {
        run(64, 256, |th| unsafe {
            let shared = th.shared() as *mut u32;
            let t = thread_idx_x();
            store(shared.add(t as usize), t);
            // No sync_threads() here: thread t ^ 32, of the other warp, wrote it.
            u64::from(load(shared.add((t ^ 32) as usize)))
        });
    }

    #[test]
    #[should_panic(expected = "before any thread wrote it")]
    fn the_emulator_catches_a_load_of_shared_memory_never_stored() {
        run(32, 256, |th| unsafe {
            let shared = th.shared() as *mut u32;
            store(shared.add(thread_idx_x() as usize), 1);
            sync_threads();
            u64::from(load(shared.add(32 + thread_idx_x() as usize)))
        });
    }

    #[test]
    fn a_barrier_orders_the_blocks_accesses_and_a_warp_barrier_its_warps() {
        let shared_bytes = 64 * 4;
        // Whether a race is caught; where none is, every thread read its partner's word.
        let exchange = |partner: u32, barrier: fn(&CpuThread<'_>)| {
            races(|| {
                let read = run(64, shared_bytes, |th| unsafe {
                    let shared = th.shared() as *mut u32;
                    let t = thread_idx_x();
                    store(shared.add(t as usize), t);
                    barrier(th);
                    u64::from(load(shared.add((t ^ partner) as usize)))
                });
                let want: Vec<u64> = (0..64).map(|t| u64::from(t ^ partner)).collect();
                assert_eq!(read, want);
            })
        };
        assert!(!exchange(32, |_| sync_threads()));
        assert!(!exchange(1, |_| sync_threads()));
        assert!(!exchange(1, |_| sync_warp()));
        assert!(
            exchange(32, |_| sync_warp()),
            "a warp barrier orders its warp only"
        );
        assert!(exchange(1, |_| ()));
    }

    #[test]
    fn atomics_and_agreed_stores_share_a_phase_but_not_with_plain_accesses() {
        let counts = run(64, 16, |th| unsafe {
            let shared = th.shared() as *mut u32;
            if thread_idx_x() == 0 {
                store(shared, 0);
            }
            sync_threads();
            shared_atomic_add(shared, 1);
            shared_reduce_add(shared, 2);
            sync_threads();
            // Every lane of a warp stores the same value at the warp's word.
            let warp = shared.add(1 + (thread_idx_x() / 32) as usize);
            store_agreed(warp, load(shared) + thread_idx_x() / 32);
            sync_threads();
            u64::from(load(warp))
        });
        assert!(
            counts
                .iter()
                .enumerate()
                .all(|(t, &c)| c == 192 + t as u64 / 32)
        );
        let mixed = |plain_after: bool, agreed: fn(u32) -> u32| {
            races(|| {
                run(64, 16, |th| unsafe {
                    let shared = th.shared() as *mut u32;
                    if thread_idx_x() == 0 {
                        store(shared.add(1), 0);
                    }
                    sync_threads();
                    store_agreed(shared, agreed(thread_idx_x()));
                    shared_atomic_add(shared.add(1), 1);
                    if plain_after && thread_idx_x() == 5 {
                        load(shared.add(1));
                    }
                    0
                });
            })
        };
        assert!(!mixed(false, |_| 7));
        assert!(mixed(false, |t| t % 2), "agreed stores of different values");
        assert!(
            mixed(true, |_| 7),
            "a plain load beside other threads' atomics"
        );
    }

    #[test]
    fn blocks_together_see_each_others_device_memory() {
        // Each block waits for the one before it to publish: a valid schedule only because the
        // blocks run at once (or in order).
        for together in [1, 4] {
            let mut words = vec![0u64; 4];
            let at = words.as_mut_ptr();
            let grid = Grid {
                blocks: 4,
                threads: 32,
                shared_bytes: 0,
                together,
            };
            // SAFETY: the words are touched only through the atomics.
            unsafe {
                launch(grid, |_| {
                    let b = block_idx_x() as usize;
                    if thread_idx_x() == 0 {
                        let before = if b == 0 {
                            0
                        } else {
                            loop {
                                let word = load_relaxed(at.add(b - 1));
                                if word != 0 {
                                    break word;
                                }
                            }
                        };
                        store_relaxed(at.add(b), before + 1);
                    }
                })
            };
            assert_eq!(words, [1, 2, 3, 4]);
        }
    }
}
