//! Sorting across several GPUs: [`MultiGpuSorter`].
//!
//! The keys are split into one part per GPU. Each GPU sorts its part with the stable merge
//! sort (keys left in their order-preserving encoding); the host then finds the exact cuts of
//! the sorted parts that give GPU `j` the keys of global ranks `[Σ_{i<j} n_i, Σ_{i≤j} n_i)`
//! (a regular sample of each part, ranked on every GPU, then a span of at most one sample
//! stride per part: `select`); every GPU pulls its ranges from all the others with
//! peer-to-peer copies (or through pinned host memory where the driver allows no peer
//! access), and merges the runs it received with merge-path merges of two runs (`plan`),
//! decoding the keys in the last pass.
//!
//! This is the exact-splitting multiway scheme of parallel sample sorts rather than the
//! recursive pairwise pivot exchange of Tanasic et al. (2013): for two GPUs the two are the
//! same (one pivot, one swap of the ranges across it); for more, each key crosses the
//! interconnect at most once instead of once per level of the recursion, and G need not be a
//! power of two. Ties go to the earlier part, then the earlier position, so the result is the
//! stable sort of the parts laid end to end.

mod device;
#[cfg(any(test, feature = "testing"))]
mod inputs;
#[cfg(any(test, feature = "testing"))]
pub use inputs::PartsCheck;
mod plan;
mod select;

use crate::error::{Error, Result, driver};
use crate::gpu::{ContextKind, DeviceProfile, GpuSorter, merge};
use crate::keys::{Order, SortKey};
use cust::memory::{CopyDestination, DeviceBuffer, LockedBuffer};
use cust::stream::{Stream, StreamFlags};
use cust::sys as cuda;
use kernels_gpu::keys::IDENTITY;
use kernels_gpu::merge::MergeTwoArgs;
use kernels_gpu::tuning::{MAX_KEYS, MERGE_TILE, MULTI_SAMPLES};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Mutex;
use std::time::Instant;

/// How keys travel between GPUs in the exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Exchange {
    /// Peer-to-peer copies where the driver allows them, else through pinned host memory.
    Auto,
    /// Always through pinned host memory (device → host → device).
    Host,
}

/// How one GPU's keys reach another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Link {
    /// A part to itself: a device-to-device copy in its own context.
    Local,
    /// A copy between two parts' contexts, `cuMemcpyPeerAsync`: GPU to GPU over NVLink or PCIe
    /// where the devices have peer access, or within one device between two contexts.
    Peer,
    /// Staged through pinned host memory.
    Host,
}

/// The link in words: `local`, `peer-to-peer` or `host-staged`.
impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Link::Local => "local",
            Link::Peer => "peer-to-peer",
            Link::Host => "host-staged",
        })
    }
}

/// What a multi-GPU sort did and how long each phase took (host clock, each phase ending with
/// every GPU synchronised).
#[derive(Clone, Debug, PartialEq)]
pub struct MultiStats {
    /// GPUs used.
    pub gpus: usize,
    /// Keys sorted.
    pub n: u64,
    /// The links the exchange used (in first-use order, each once).
    pub links: Vec<Link>,
    /// Bytes that moved between different GPUs.
    pub exchanged_bytes: u64,
    /// Sorting the parts.
    pub sort_ms: f64,
    /// Finding the cuts.
    pub select_ms: f64,
    /// Copying the ranges between GPUs.
    pub exchange_ms: f64,
    /// Merging the received runs.
    pub merge_ms: f64,
    /// The whole sort: the four phases.
    pub total_ms: f64,
}

impl MultiStats {
    /// The exchange's path in words: the links used ("peer-to-peer", "host-staged", or both),
    /// or why there were none.
    fn path(&self) -> String {
        match self.links.as_slice() {
            [] if self.gpus == 1 => "none (one GPU)".into(),
            [] => "none (no key changed GPU)".into(),
            links => {
                let names: Vec<String> = links.iter().map(Link::to_string).collect();
                names.join(" + ")
            }
        }
    }
}

impl fmt::Display for MultiStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} keys on {} GPU(s) in {:.3} ms (sort {:.3}, cuts {:.3}, exchange {:.3} ms for {:.1} MB {}, merge {:.3})",
            self.n,
            self.gpus,
            self.total_ms,
            self.sort_ms,
            self.select_ms,
            self.exchange_ms,
            self.exchanged_bytes as f64 / 1e6,
            self.path(),
            self.merge_ms
        )
    }
}

/// Per GPU, the device workspace of the cuts and the pinned host memory their reads go through.
type Workspaces = (Vec<DeviceBuffer<u64>>, Vec<LockedBuffer<u8>>);

/// Sorts keys spread over several GPUs of one host (see the [module](self) documentation).
///
/// # Examples
///
/// ```no_run
/// use gpusort::{MultiGpuSorter, Order};
///
/// let gpus = MultiGpuSorter::new(None)?; // every visible GPU
/// let mut keys: Vec<u32> = (0..10_000_000u32).map(|i| i.wrapping_mul(2654435761)).collect();
/// gpus.sort(&mut keys, Order::Ascending)?;
/// assert!(keys.is_sorted());
///
/// // Keys already on the GPUs, one part per GPU: sorted across the parts, in place.
/// let mut parts = gpus.upload(&keys)?;
/// let stats = gpus.sort_device(&mut parts, Order::Descending)?;
/// println!("{stats}"); // the phases' times and the exchange's path
/// # Ok::<(), gpusort::Error>(())
/// ```
pub struct MultiGpuSorter {
    // Field order is drop order: the workspaces go before the contexts that hold them.
    /// Per GPU, the device workspace of the cuts ([`device::WORKSPACE_WORDS`]); locked while a
    /// sort finds its cuts.
    workspaces: Mutex<Workspaces>,
    /// `copy_streams[to]`: the exchange's copies into GPU `to` from the other GPUs (one after
    /// another: a stream per source made the exchange slower, docs/decisions.md, "A stream per
    /// source GPU; host threads per GPU for the cuts"), and from its own part, which overlaps
    /// them.
    copy_streams: Vec<[Stream; 2]>,
    gpus: Vec<GpuSorter>,
    /// `links[from][to]`.
    links: Vec<Vec<Link>>,
}

impl fmt::Debug for MultiGpuSorter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MultiGpuSorter")
            .field("gpus", &self.gpus)
            .field("links", &self.links)
            .finish_non_exhaustive()
    }
}

impl MultiGpuSorter {
    /// A sorter on the first `gpus` CUDA devices, or on all of them for `None`, with peer
    /// access enabled between every pair that allows it.
    ///
    /// # Errors
    /// As [`GpuSorter::new`]; [`Error::InvalidDevice`] if fewer than `gpus` devices are
    /// present (or `gpus` is 0).
    pub fn new(gpus: Option<usize>) -> Result<Self> {
        let count = match gpus {
            Some(g) => g,
            None => {
                crate::gpu::init_driver()?;
                cust::device::Device::num_devices()
                    .map_err(|source| Error::Cuda {
                        context: "counting CUDA devices".into(),
                        source,
                    })?
                    .max(1) as usize
            }
        };
        if count == 0 {
            return Err(Error::InvalidDevice {
                ordinal: 0,
                count: 0,
            });
        }
        let ordinals: Vec<u32> = (0..count as u32).collect();
        Self::with_devices(&ordinals, Exchange::Auto)
    }

    /// A sorter on the devices `ordinals`, part `i` on device `ordinals[i]`. An ordinal may
    /// repeat: the first part on a device works in its primary context, each further one in a
    /// CUDA context of its own, so that parts sharing a GPU are as separate as parts on
    /// different GPUs (their modules, streams and buffers belong to different contexts, and
    /// their keys move by peer copies between the contexts). That is how the multi-GPU code
    /// runs, and is tested, on one GPU. `Exchange::Host` stages every copy between different
    /// parts through host memory.
    ///
    /// # Errors
    /// As [`GpuSorter::with_device`].
    pub fn with_devices(ordinals: &[u32], exchange: Exchange) -> Result<Self> {
        Self::with_limits(ordinals, exchange, None)
    }

    /// As [`MultiGpuSorter::with_devices`], every part's sorter with `profile`'s limits
    /// ([`GpuSorter::with_profile`]): for tests (feature `testing`).
    ///
    /// # Errors
    /// As [`GpuSorter::with_device`].
    #[cfg(any(test, feature = "testing"))]
    pub fn with_profile(
        ordinals: &[u32],
        exchange: Exchange,
        profile: Option<DeviceProfile>,
    ) -> Result<Self> {
        Self::with_limits(ordinals, exchange, profile)
    }

    /// A sorter of parts on `ordinals`, each sorter's limits capped by `profile`.
    fn with_limits(
        ordinals: &[u32],
        exchange: Exchange,
        profile: Option<DeviceProfile>,
    ) -> Result<Self> {
        let gpus: Vec<GpuSorter> = ordinals
            .iter()
            .enumerate()
            .map(|(i, &o)| {
                let kind = if ordinals[..i].contains(&o) {
                    ContextKind::Own
                } else {
                    ContextKind::Primary
                };
                GpuSorter::with_context(o, kind, profile)
            })
            .collect::<Result<_>>()?;
        let mut links = vec![vec![Link::Local; gpus.len()]; gpus.len()];
        for (from, a) in gpus.iter().enumerate() {
            for (to, b) in gpus.iter().enumerate() {
                if from != to {
                    links[from][to] = match exchange {
                        Exchange::Host => Link::Host,
                        // Two contexts of one device: a peer copy needs no peer access.
                        Exchange::Auto if a.device() == b.device() => Link::Peer,
                        Exchange::Auto if enable_peer_access(b, a)? => Link::Peer,
                        Exchange::Auto => Link::Host,
                    };
                }
            }
        }
        let workspaces = gpus
            .iter()
            .map(|gpu| gpu.alloc::<u64>(device::WORKSPACE_WORDS, "the multi-GPU workspace"))
            .collect::<Result<_>>()?;
        // Each GPU's stage in its own context, where its copies into it run.
        let stages = gpus
            .iter()
            .map(|gpu| {
                gpu.bind()?;
                LockedBuffer::new(&0u8, device::STAGE_BYTES).map_err(|source| Error::Cuda {
                    context: "allocating pinned memory for the multi-GPU cuts".into(),
                    source,
                })
            })
            .collect::<Result<_>>()?;
        let copy_streams = gpus
            .iter()
            .map(|to| {
                to.bind()?;
                let stream = || {
                    Stream::new(StreamFlags::NON_BLOCKING, None).map_err(|source| Error::Cuda {
                        context: "creating a copy stream".into(),
                        source,
                    })
                };
                Ok([stream()?, stream()?])
            })
            .collect::<Result<_>>()?;
        Ok(MultiGpuSorter {
            workspaces: Mutex::new((workspaces, stages)),
            copy_streams,
            gpus,
            links,
        })
    }

    /// The sorters, one per part.
    pub fn gpus(&self) -> &[GpuSorter] {
        &self.gpus
    }

    /// How keys go from part `from` to part `to`, for tests of the set-up (feature `testing`;
    /// a sort's [`MultiStats::links`] says which links it used).
    #[cfg(any(test, feature = "testing"))]
    pub fn link(&self, from: usize, to: usize) -> Link {
        self.links[from][to]
    }

    /// The lengths of the parts that split `n` keys evenly (the first `n % G` one longer).
    pub(crate) fn part_lens(&self, n: u64) -> Vec<u64> {
        let g = self.gpus.len() as u64;
        (0..g).map(|i| n / g + u64::from(i < n % g)).collect()
    }

    /// Copies host keys into parts split evenly over the GPUs.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`] or [`Error::Cuda`].
    pub fn upload<K: SortKey>(&self, keys: &[K]) -> Result<Vec<DeviceBuffer<K>>> {
        let mut start = 0;
        self.gpus
            .iter()
            .zip(self.part_lens(keys.len() as u64))
            .map(|(gpu, len)| {
                let part = &keys[start..start + len as usize];
                start += len as usize;
                gpu.upload(part)
            })
            .collect()
    }

    /// Sorts host keys across the GPUs: [`MultiGpuSorter::upload`], [`MultiGpuSorter::sort_device`],
    /// and back. Stable.
    ///
    /// # Errors
    /// As [`MultiGpuSorter::sort_device`]; on error `keys` is unchanged unless a copy back
    /// failed.
    pub fn sort<K: SortKey>(&self, keys: &mut [K], order: Order) -> Result<MultiStats> {
        let mut parts = self.upload(keys)?;
        let stats = self.sort_device(&mut parts, order)?;
        let mut start = 0;
        for (gpu, part) in self.gpus.iter().zip(&parts) {
            gpu.bind()?;
            let end = start + part.len();
            part.copy_to(&mut keys[start..end])
                .map_err(|source| Error::Cuda {
                    context: format!("copying sorted keys back from {}", gpu.device_name()),
                    source,
                })?;
            start = end;
        }
        Ok(stats)
    }

    /// Sorts keys spread over the GPUs, part `i` on GPU `i`, stably: afterwards the parts,
    /// laid end to end, hold the sorted keys, each part as many as before. Needs as much free
    /// memory again on each GPU as its part (plus 4 bytes per 2048 keys).
    ///
    /// # Errors
    /// [`Error::PartCount`] if there is not one part per GPU, [`Error::TooLong`],
    /// [`Error::OutOfDeviceMemory`], [`Error::Cuda`] or [`Error::DriverCall`].
    pub fn sort_device<K: SortKey>(
        &self,
        parts: &mut [DeviceBuffer<K>],
        order: Order,
    ) -> Result<MultiStats> {
        self.check_parts(parts.len())?;
        let kb = size_of::<K>();
        let lens: Vec<u64> = parts.iter().map(|p| p.len() as u64).collect();
        let n: u64 = lens.iter().sum();
        if n > MAX_KEYS {
            return Err(Error::TooLong {
                len: n,
                max: MAX_KEYS,
            });
        }
        let ptrs: Vec<u64> = parts.iter().map(|p| p.as_device_ptr().as_raw()).collect();
        let map = K::key_map(order);
        let scratch: Vec<DeviceBuffer<u64>> = self
            .gpus
            .iter()
            .zip(&lens)
            .map(|(gpu, &len)| {
                let bytes = scratch_bytes(len, kb);
                gpu.alloc::<u64>(bytes.div_ceil(8) as usize, "the multi-GPU sort's scratch")
            })
            .collect::<Result<_>>()?;
        let scratch_ptrs: Vec<u64> = scratch.iter().map(|s| s.as_device_ptr().as_raw()).collect();
        // With 3 or more GPUs a GPU may receive 3 or 4 runs: two merge passes, which from the
        // scratch would end there and need a third to move the result into the part. A third
        // buffer to receive into, where memory allows, saves that pass.
        let receive: Vec<Option<DeviceBuffer<u8>>> = self
            .gpus
            .iter()
            .zip(&lens)
            .map(|(gpu, &len)| {
                let bytes = (len * kb as u64) as usize;
                if self.gpus.len() < 3 || bytes == 0 {
                    return Ok(None);
                }
                match gpu.alloc::<u8>(bytes, "the multi-GPU receive buffer") {
                    Ok(buffer) => Ok(Some(buffer)),
                    Err(Error::OutOfDeviceMemory { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .collect::<Result<_>>()?;
        let mut stats = MultiStats {
            gpus: self.gpus.len(),
            n,
            links: Vec::new(),
            exchanged_bytes: 0,
            sort_ms: 0.0,
            select_ms: 0.0,
            exchange_ms: 0.0,
            merge_ms: 0.0,
            total_ms: 0.0,
        };
        let single = self.gpus.len() == 1;
        // With one GPU the part's sort is the whole sort: it decodes at its end.
        let local_decode = if single { map } else { IDENTITY };
        let mut clock = Instant::now();
        let lap = |clock: &mut Instant| {
            let ms = clock.elapsed().as_secs_f64() * 1e3;
            *clock = Instant::now();
            ms
        };
        for (i, gpu) in self.gpus.iter().enumerate() {
            gpu.enqueue_merge_sort_raw(ptrs[i], lens[i], kb, (map, local_decode), scratch_ptrs[i])?;
        }
        self.synchronize("sorting the parts")?;
        stats.sort_ms = lap(&mut clock);
        if single {
            stats.total_ms = stats.sort_ms;
            return Ok(stats);
        }

        let cuts = {
            let mut guard = self.workspaces.lock().unwrap_or_else(|e| e.into_inner());
            let (workspaces, stages) = &mut *guard;
            let mut sorted = device::GpuParts::<K::Bits> {
                gpus: &self.gpus,
                ptrs: ptrs.clone(),
                lens: lens.clone(),
                workspaces: workspaces
                    .iter()
                    .map(|w| w.as_device_ptr().as_raw())
                    .collect(),
                stages,
                bits: PhantomData,
            };
            let stride = lens
                .iter()
                .max()
                .map_or(1, |&m| m.div_ceil(MULTI_SAMPLES).max(1));
            select::cuts(&mut sorted, stride)?
        };
        stats.select_ms = lap(&mut clock);

        // Per GPU: its merge passes and the buffers they go through, first the one it receives
        // into ([`merge_buffers`]).
        let copies: Vec<Vec<plan::Copy>> = (0..self.gpus.len())
            .map(|to| plan::copies_to(&cuts, to))
            .collect();
        let plans: Vec<(Vec<Vec<plan::Merge>>, Vec<u64>)> = (0..self.gpus.len())
            .map(|to| {
                let runs: Vec<u64> = copies[to].iter().map(|c| c.len).collect();
                let merges = plan::merge_passes(&runs, false);
                match &receive[to] {
                    Some(r) if merges.len() >= 2 && merges.len() % 2 == 0 => {
                        let r = r.as_device_ptr().as_raw();
                        let buffers =
                            merge_buffers(Some(r), scratch_ptrs[to], ptrs[to], merges.len());
                        (merges, buffers)
                    }
                    _ => {
                        let passes = plan::merge_passes(&runs, true);
                        let buffers = merge_buffers(None, scratch_ptrs[to], ptrs[to], passes.len());
                        (passes, buffers)
                    }
                }
            })
            .collect();
        // The host-staged copies' pinned buffer: as large as the largest of them, at most
        // STAGE_CHUNK (pinning memory costs time in proportion to its size).
        let staged = (0..self.gpus.len())
            .flat_map(|to| copies[to].iter().map(move |c| (c, to)))
            .filter(|(c, to)| self.links[c.from][*to] == Link::Host)
            .map(|(c, _)| c.len * kb as u64)
            .max();
        let mut staging = match staged {
            Some(bytes) if bytes > 0 => {
                let len = bytes.min(STAGE_CHUNK) as usize;
                // SAFETY: bytes have no invalid values; every byte read was first written.
                Some(
                    unsafe { LockedBuffer::<u8>::uninitialized(len) }.map_err(|source| {
                        Error::Cuda {
                            context: "allocating pinned staging memory".into(),
                            source,
                        }
                    })?,
                )
            }
            _ => None,
        };
        for to in 0..self.gpus.len() {
            for c in &copies[to] {
                let link = self.links[c.from][to];
                if !stats.links.contains(&link) && c.from != to {
                    stats.links.push(link);
                }
                if self.gpus[c.from].device() != self.gpus[to].device() {
                    stats.exchanged_bytes += c.len * kb as u64;
                }
                let src = ptrs[c.from] + c.src * kb as u64;
                let dst = plans[to].1[0] + c.dst * kb as u64;
                self.copy(c.from, to, src, dst, c.len * kb as u64, staging.as_mut())?;
            }
        }
        for (gpu, streams) in self.gpus.iter().zip(&self.copy_streams) {
            gpu.bind()?;
            for stream in streams {
                stream.synchronize().map_err(|source| Error::Cuda {
                    context: "exchanging keys between GPUs".into(),
                    source,
                })?;
            }
        }
        self.synchronize("exchanging keys between GPUs")?;
        stats.exchange_ms = lap(&mut clock);

        for (to, gpu) in self.gpus.iter().enumerate() {
            if lens[to] == 0 {
                continue;
            }
            let splits = scratch_ptrs[to] + keys_bytes(lens[to], kb);
            let (passes, buffers) = &plans[to];
            let last = passes.len() - 1;
            for (p, pass) in passes.iter().enumerate() {
                let (src, dst) = (buffers[p], buffers[p + 1]);
                let decode = if p == last { map } else { IDENTITY };
                for m in pass {
                    let at = m.offset * kb as u64;
                    let args = MergeTwoArgs {
                        src: src + at,
                        dst: dst + at,
                        splits,
                        n: m.len,
                        a_len: m.a_len,
                        decode,
                    };
                    merge::enqueue_merge_two(&gpu.on_own_stream(), kb, args)?;
                }
            }
        }
        self.synchronize("merging the received runs")?;
        stats.merge_ms = lap(&mut clock);
        stats.total_ms = stats.sort_ms + stats.select_ms + stats.exchange_ms + stats.merge_ms;
        Ok(stats)
    }

    /// Queues (or, through the host, makes) the copy of `bytes` from `src` on GPU `from` to
    /// `dst` on GPU `to`; a host-staged copy goes through `staging` in pieces of its size.
    fn copy(
        &self,
        from: usize,
        to: usize,
        src: u64,
        dst: u64,
        bytes: u64,
        staging: Option<&mut LockedBuffer<u8>>,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let (a, b) = (&self.gpus[from], &self.gpus[to]);
        let what = || format!("copying {bytes} bytes from GPU part {from} to part {to}");
        let stream = self.copy_streams[to][usize::from(from == to)].as_inner();
        match self.links[from][to] {
            Link::Local => {
                b.bind()?;
                // SAFETY: both ranges lie in live device buffers of this context.
                let status =
                    unsafe { cuda::cuMemcpyDtoDAsync_v2(dst, src, bytes as usize, stream) };
                driver(status, "cuMemcpyDtoDAsync", what)
            }
            Link::Peer => {
                b.bind()?;
                let (to_ctx, from_ctx) = (b.raw_context(), a.raw_context());
                // SAFETY: both ranges lie in live device buffers of these contexts.
                let status = unsafe {
                    cuda::cuMemcpyPeerAsync(dst, to_ctx, src, from_ctx, bytes as usize, stream)
                };
                driver(status, "cuMemcpyPeerAsync", what)
            }
            Link::Host => {
                let buffer = staging.expect("sort_device stages every host-staged copy");
                let chunk = buffer.len() as u64;
                let mut done = 0;
                while done < bytes {
                    let len = (bytes - done).min(chunk) as usize;
                    a.bind()?;
                    // SAFETY: the pinned buffer holds `chunk` bytes; the device ranges are live.
                    // The synchronous copies wait for the queued sorts (blocking streams).
                    let status = unsafe {
                        cuda::cuMemcpyDtoH_v2(buffer.as_mut_ptr().cast(), src + done, len)
                    };
                    driver(status, "cuMemcpyDtoH", what)?;
                    b.bind()?;
                    // SAFETY: as above.
                    let status =
                        unsafe { cuda::cuMemcpyHtoD_v2(dst + done, buffer.as_ptr().cast(), len) };
                    driver(status, "cuMemcpyHtoD", what)?;
                    done += len as u64;
                }
                Ok(())
            }
        }
    }

    fn check_parts(&self, parts: usize) -> Result<()> {
        if parts != self.gpus.len() {
            return Err(Error::PartCount {
                parts,
                gpus: self.gpus.len(),
            });
        }
        Ok(())
    }

    /// Waits for every GPU.
    fn synchronize(&self, what: &str) -> Result<()> {
        for gpu in &self.gpus {
            gpu.bind()?;
            gpu.synchronize(what)?;
        }
        Ok(())
    }
}

/// The multi-GPU scheme run on the CPU, parts as vectors: its reference. Sorts each part,
/// finds the cuts, gives part `j` its ranges of every part and merges them with the same merge
/// passes as the GPUs; afterwards the parts, laid end to end, are sorted, each as long as
/// before.
///
/// # Examples
///
/// ```
/// let mut parts = vec![vec![9, 1, 5], vec![], vec![4, 4, 0, 7]];
/// gpusort::multi::sort_parts_cpu(&mut parts);
/// assert_eq!(parts, [vec![0, 1, 4], vec![], vec![4, 5, 7, 9]]);
/// ```
#[cfg(any(test, feature = "testing"))]
pub fn sort_parts_cpu<K: Ord + Copy>(parts: &mut [Vec<K>]) {
    parts.iter_mut().for_each(|p| p.sort());
    let mut sorted = select::HostParts {
        parts: parts.to_vec(),
        span_keys: 0,
        ranked: 0,
    };
    let longest = parts.iter().map(Vec::len).max().unwrap_or(0) as u64;
    let stride = longest.div_ceil(MULTI_SAMPLES).max(1);
    let cuts = select::cuts(&mut sorted, stride).expect("parts in host memory cannot fail");
    for (to, part) in parts.iter_mut().enumerate() {
        let copies = plan::copies_to(&cuts, to);
        let mut src: Vec<K> = copies
            .iter()
            .flat_map(|c| &sorted.parts[c.from][c.src as usize..(c.src + c.len) as usize])
            .copied()
            .collect();
        let mut dst = src.clone();
        let runs: Vec<u64> = copies.iter().map(|c| c.len).collect();
        for pass in plan::merge_passes(&runs, true) {
            for m in pass {
                let (o, a, l) = (m.offset as usize, m.a_len as usize, m.len as usize);
                merge_into(&src[o..o + a], &src[o + a..o + l], &mut dst[o..o + l]);
            }
            std::mem::swap(&mut src, &mut dst);
        }
        *part = src;
    }
}

/// The stable merge of sorted `a` and `b` (ties to `a`) into `out`.
#[cfg(any(test, feature = "testing"))]
fn merge_into<K: Ord + Copy>(a: &[K], b: &[K], out: &mut [K]) {
    let (mut i, mut j) = (0, 0);
    for slot in out {
        if j == b.len() || (i < a.len() && a[i] <= b[j]) {
            *slot = a[i];
            i += 1;
        } else {
            *slot = b[j];
            j += 1;
        }
    }
}

/// The buffers `passes` merge passes go through, the receive buffer first: pass `p` reads
/// `buffers[p]` and writes `buffers[p + 1]`, alternating between scratch and part so that the
/// last writes the part (`passes` is even with a receive buffer, odd without).
fn merge_buffers(receive: Option<u64>, scratch: u64, part: u64, passes: usize) -> Vec<u64> {
    let alternating = (0..).map(|i| if i % 2 == 0 { scratch } else { part });
    let buffers: Vec<u64> = receive
        .into_iter()
        .chain(alternating)
        .take(passes + 1)
        .collect();
    debug_assert_eq!(buffers.last(), Some(&part), "the last pass writes the part");
    buffers
}

/// Bytes of `n` keys of `key_bytes`, rounded up to 8.
fn keys_bytes(n: u64, key_bytes: usize) -> u64 {
    (n * key_bytes as u64).next_multiple_of(8)
}

/// Scratch per GPU: the part's merge sort scratch, which afterwards receives the exchanged
/// keys (the same `n` keys) and holds the merges' splits.
fn scratch_bytes(n: u64, key_bytes: usize) -> u64 {
    let receive = keys_bytes(n, key_bytes) + n.div_ceil(u64::from(MERGE_TILE)) * 8;
    merge::scratch_bytes(n, key_bytes, 0).max(receive)
}

/// The largest piece a host-staged copy moves at once.
const STAGE_CHUNK: u64 = 64 << 20;

/// Lets `to` read `from`'s memory if the devices allow it; whether it is enabled.
fn enable_peer_access(to: &GpuSorter, from: &GpuSorter) -> Result<bool> {
    let mut can = 0;
    // SAFETY: valid device handles and an out pointer.
    let status = unsafe {
        cuda::cuDeviceCanAccessPeer(&mut can, to.device().as_raw(), from.device().as_raw())
    };
    driver(status, "cuDeviceCanAccessPeer", || {
        "asking whether two GPUs can reach each other".into()
    })?;
    if can == 0 {
        return Ok(false);
    }
    to.bind()?;
    // SAFETY: `from`'s context is live; flags must be 0.
    let status = unsafe { cuda::cuCtxEnablePeerAccess(from.raw_context(), 0) };
    Ok(matches!(
        status,
        cuda::CUresult::CUDA_SUCCESS | cuda::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_holds_the_received_keys_and_the_splits() {
        let t = u64::from(MERGE_TILE);
        for n in [0, 1, t, t + 1, 5 * t + 3] {
            for kb in [4, 8] {
                assert!(scratch_bytes(n, kb) >= keys_bytes(n, kb) + n.div_ceil(t) * 8);
                assert!(scratch_bytes(n, kb) >= merge::scratch_bytes(n, kb, 0));
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_cpu_reference_sorts_across_parts(
            parts in proptest::collection::vec(proptest::collection::vec(0u16..300, 0..200), 1..6),
        ) {
            let mut expected = parts.concat();
            expected.sort();
            let lens: Vec<usize> = parts.iter().map(Vec::len).collect();
            let mut parts = parts;
            sort_parts_cpu(&mut parts);
            proptest::prop_assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), lens);
            proptest::prop_assert_eq!(parts.concat(), expected);
        }
    }

    #[test]
    fn merge_buffers_end_in_the_part() {
        let (r, s, a) = (1, 2, 3);
        assert_eq!(merge_buffers(Some(r), s, a, 2), [r, s, a]);
        assert_eq!(merge_buffers(Some(r), s, a, 4), [r, s, a, s, a]);
        assert_eq!(merge_buffers(None, s, a, 1), [s, a]);
        assert_eq!(merge_buffers(None, s, a, 3), [s, a, s, a]);
    }

    #[test]
    fn stats_name_their_path() {
        let mut stats = MultiStats {
            gpus: 2,
            n: 10,
            links: vec![Link::Peer],
            exchanged_bytes: 0,
            sort_ms: 1.0,
            select_ms: 0.5,
            exchange_ms: 0.25,
            merge_ms: 0.25,
            total_ms: 2.0,
        };
        assert_eq!(stats.path(), "peer-to-peer");
        assert!(stats.to_string().contains("in 2.000 ms"), "{stats}");
        stats.links.push(Link::Host);
        assert_eq!(stats.path(), "peer-to-peer + host-staged");
        assert!(stats.to_string().contains("peer-to-peer"));
        stats.links.clear();
        assert_eq!(stats.path(), "none (no key changed GPU)");
        stats.gpus = 1;
        assert_eq!(stats.path(), "none (one GPU)");
    }
}
