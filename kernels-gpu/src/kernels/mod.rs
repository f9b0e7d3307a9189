//! Every kernel, declared once (`kernel_list!`): its name, its [`Family`] (the CUDA module the
//! host loads it in), the type of its one argument, its register cap and the window program it
//! runs, with the macro that defines its entry point. The rest follows from the list: the entry
//! points (nvptx64 only, thin `extern "gpu-kernel"` wrappers around `block`), the host's typed
//! handles (a `Kernel` constant per kernel, named as the kernel, which the host launches with
//! an argument of the kernel's type and no other), the host's module split ([`Family::of`]), the
//! `.maxnreg` caps that `cargo xtask ptx` writes into the PTX, and the window kernels by program
//! ([`window_programs`]).
//!
//! # The contract between host and kernel
//! Each kernel takes one argument: a `#[repr(C)]` struct of its family
//! ([`KernelArgs`](crate::args::KernelArgs)), defined once beside the family's index math with
//! `kernel_args!` ([`crate::args`]; for example [`crate::radix::PassArgs`]) and built for both
//! sides, so the host fills exactly the fields the
//! kernel reads. The entry point takes the struct's fields as its parameters, in order (device
//! addresses as pointers, so that the compiler knows them to be global memory), and the host
//! passes the address of each field at the launch.

/// Every kernel, by the module whose macros define their entry points: `kernel_list!(module,
/// then)` hands `then!` that module's kernels, one a line:
///
/// `name: Family(Args)[, registers cap][, program i] => maker!(Key[, arguments]);`
///
/// The kernel `name` is defined by `maker!(name(Args), Key[, arguments][, i])`, a macro of that
/// module, as a kernel that takes one `Args` ([`KernelArgs`](crate::args::KernelArgs)); `Key` is
/// the type of its keys. `registers`: its `.maxnreg`. `program i`: a window
/// pass that runs [`PROGRAMS`](crate::bitonic::window::PROGRAMS)`[i]` as a constant.
macro_rules! kernel_list {
    (bitonic, $then:ident) => {
        $then! {
            bitonic_tiny_u32: Small(crate::bitonic::small::TinyArgs), registers TINY_MAX_REGISTERS
                => bitonic_tiny!(u32);
            bitonic_tiny_u64: Small(crate::bitonic::small::TinyArgs), registers TINY_MAX_REGISTERS
                => bitonic_tiny!(u64);
            bitonic_small_u32: Small(crate::bitonic::small::SmallArgs), registers SMALL_MAX_REGISTERS
                => bitonic_small!(u32);
            bitonic_small_u64: Small(crate::bitonic::small::SmallArgs), registers SMALL_MAX_REGISTERS
                => bitonic_small!(u64);
            bitonic_window_tiles_u32: Tiles(crate::bitonic::window::WindowTilesArgs),
                registers WINDOW_TILES_MAX_REGISTERS_32
                => bitonic_window_tiles!(u32, WINDOW_LOG2);
            bitonic_row_tiles_u32: Tiles(crate::bitonic::window::RowTilesArgs),
                registers WINDOW_TILES_MAX_REGISTERS_32
                => bitonic_row_tiles!(u32, ROW_TILE_LOG2);
            bitonic_window_u32: GenericWindows(crate::bitonic::window::WindowArgs),
                registers WINDOW_MAX_REGISTERS_32
                => bitonic_window!(u32, WINDOW_LOG2, u32);
            bitonic_window_wide_u32: GenericWindows(crate::bitonic::window::WindowArgs),
                registers WINDOW_MAX_REGISTERS_32
                => bitonic_window!(u32, WINDOW_LOG2, u64);
            bitonic_window_tiles_u64: Tiles(crate::bitonic::window::WindowTilesArgs),
                registers WINDOW_MAX_REGISTERS_64
                => bitonic_window_tiles!(u64, WINDOW_LOG2);
            bitonic_window_u64: GenericWindows(crate::bitonic::window::WindowArgs),
                registers WINDOW_MAX_REGISTERS_64
                => bitonic_window!(u64, WINDOW_LOG2, u32);
            bitonic_window_wide_u64: GenericWindows(crate::bitonic::window::WindowArgs),
                registers WINDOW_MAX_REGISTERS_64
                => bitonic_window!(u64, WINDOW_LOG2, u64);
            // 8-byte keys on devices whose blocks cannot hold a 2^WINDOW_LOG2-key tile of them
            // (`tuning::window_log2`); their windows run on the kernels that read their program.
            bitonic_window_tiles_compact_u64: Tiles(crate::bitonic::window::WindowTilesArgs),
                registers WINDOW_MAX_REGISTERS_64
                => bitonic_window_tiles!(u64, COMPACT_WINDOW_LOG2);
            bitonic_window_compact_u64: GenericWindows(crate::bitonic::window::WindowArgs),
                registers WINDOW_MAX_REGISTERS_64
                => bitonic_window!(u64, COMPACT_WINDOW_LOG2, u32);
            bitonic_window_wide_compact_u64: GenericWindows(crate::bitonic::window::WindowArgs),
                registers WINDOW_MAX_REGISTERS_64
                => bitonic_window!(u64, COMPACT_WINDOW_LOG2, u64);
            bitonic_window_u32_p0: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 0
                => bitonic_window_program!(u32);
            bitonic_window_u32_p1: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 1
                => bitonic_window_program!(u32);
            bitonic_window_u32_p2: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 2
                => bitonic_window_program!(u32);
            bitonic_window_u32_p3: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 3
                => bitonic_window_program!(u32);
            bitonic_window_u32_p4: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 4
                => bitonic_window_program!(u32);
            bitonic_window_u32_p5: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 5
                => bitonic_window_program!(u32);
            bitonic_window_u32_p6: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 6
                => bitonic_window_program!(u32);
            bitonic_window_u32_p7: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 7
                => bitonic_window_program!(u32);
            bitonic_window_u32_p8: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 8
                => bitonic_window_program!(u32);
            bitonic_window_u32_p9: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 9
                => bitonic_window_program!(u32);
            bitonic_window_u32_p10: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 10
                => bitonic_window_program!(u32);
            bitonic_window_u32_p11: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 11
                => bitonic_window_program!(u32);
            bitonic_window_u32_p12: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 12
                => bitonic_window_program!(u32);
            bitonic_window_u32_p13: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 13
                => bitonic_window_program!(u32);
            bitonic_window_u32_p14: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 14
                => bitonic_window_program!(u32);
            bitonic_window_u32_p15: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 15
                => bitonic_window_program!(u32);
            bitonic_window_u32_p16: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_PROGRAM_MAX_REGISTERS_32, program 16
                => bitonic_window_program!(u32);
            bitonic_window_u64_p0: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 0
                => bitonic_window_program!(u64);
            bitonic_window_u64_p1: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 1
                => bitonic_window_program!(u64);
            bitonic_window_u64_p2: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 2
                => bitonic_window_program!(u64);
            bitonic_window_u64_p3: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 3
                => bitonic_window_program!(u64);
            bitonic_window_u64_p4: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 4
                => bitonic_window_program!(u64);
            bitonic_window_u64_p5: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 5
                => bitonic_window_program!(u64);
            bitonic_window_u64_p6: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 6
                => bitonic_window_program!(u64);
            bitonic_window_u64_p7: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 7
                => bitonic_window_program!(u64);
            bitonic_window_u64_p8: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 8
                => bitonic_window_program!(u64);
            bitonic_window_u64_p9: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 9
                => bitonic_window_program!(u64);
            bitonic_window_u64_p10: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 10
                => bitonic_window_program!(u64);
            bitonic_window_u64_p11: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 11
                => bitonic_window_program!(u64);
            bitonic_window_u64_p12: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 12
                => bitonic_window_program!(u64);
            bitonic_window_u64_p13: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 13
                => bitonic_window_program!(u64);
            bitonic_window_u64_p14: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 14
                => bitonic_window_program!(u64);
            bitonic_window_u64_p15: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 15
                => bitonic_window_program!(u64);
            bitonic_window_u64_p16: Windows(crate::bitonic::window::WindowProgramArgs),
                registers WINDOW_MAX_REGISTERS_64, program 16
                => bitonic_window_program!(u64);
        }
    };
    (merge, $then:ident) => {
        $then! {
            // Devices whose blocks cannot hold the tile sort's tiles
            // (`tuning::merge_sort_compact`). 4-byte keys alone need none: their tile sort
            // (35,072 bytes) fits every device.
            merge_sort_tiles_compact_u32_u32: Merge(crate::merge::SortTilesArgs),
                registers COMPACT_MERGE_SORT_MAX_REGISTERS
                => merge_sort_tiles_compact!(u32, u32);
            merge_sort_tiles_compact_u32_u64: Merge(crate::merge::SortTilesArgs),
                registers COMPACT_MERGE_SORT_MAX_REGISTERS
                => merge_sort_tiles_compact!(u32, u64);
            merge_sort_tiles_compact_u32_u128: Merge(crate::merge::SortTilesArgs),
                registers COMPACT_MERGE_SORT_MAX_REGISTERS
                => merge_sort_tiles_compact!(u32, u128);
            merge_sort_tiles_compact_u64: Merge(crate::merge::SortTilesArgs),
                registers COMPACT_MERGE_SORT_MAX_REGISTERS
                => merge_sort_tiles_compact!(u64, ());
            merge_sort_tiles_compact_u64_u32: Merge(crate::merge::SortTilesArgs),
                registers COMPACT_MERGE_SORT_MAX_REGISTERS
                => merge_sort_tiles_compact!(u64, u32);
            merge_sort_tiles_compact_u64_u64: Merge(crate::merge::SortTilesArgs),
                registers COMPACT_MERGE_SORT_MAX_REGISTERS
                => merge_sort_tiles_compact!(u64, u64);
            merge_sort_tiles_compact_u64_u128: Merge(crate::merge::SortTilesArgs),
                registers COMPACT_MERGE_SORT_MAX_REGISTERS
                => merge_sort_tiles_compact!(u64, u128);
            merge_pass_network_u32: Merge(crate::merge::NetworkMergeArgs)
                => merge_pass_network!(u32);
            merge_pass_network_u64: Merge(crate::merge::NetworkMergeArgs)
                => merge_pass_network!(u64);
            merge_partition_u32: Merge(crate::merge::PartitionArgs) => merge_partition!(u32);
            merge_partition_u64: Merge(crate::merge::PartitionArgs) => merge_partition!(u64);
            merge_sort_tiles_u32: Merge(crate::merge::SortTilesArgs),
                registers merge_sort_registers(4, 0)
                => merge_sort_tiles!(u32, ());
            merge_pass_u32: Merge(crate::merge::MergePassArgs) => merge_pass!(u32, ());
            merge_sort_tiles_u32_u32: Merge(crate::merge::SortTilesArgs),
                registers merge_sort_registers(4, 4)
                => merge_sort_tiles!(u32, u32);
            merge_pass_u32_u32: Merge(crate::merge::MergePassArgs) => merge_pass!(u32, u32);
            merge_sort_tiles_u32_u64: Merge(crate::merge::SortTilesArgs),
                registers merge_sort_registers(4, 8)
                => merge_sort_tiles!(u32, u64);
            merge_pass_u32_u64: Merge(crate::merge::MergePassArgs) => merge_pass!(u32, u64);
            merge_sort_tiles_u64: Merge(crate::merge::SortTilesArgs),
                registers merge_sort_registers(8, 0)
                => merge_sort_tiles!(u64, ());
            merge_pass_u64: Merge(crate::merge::MergePassArgs) => merge_pass!(u64, ());
            merge_sort_tiles_u64_u32: Merge(crate::merge::SortTilesArgs),
                registers merge_sort_registers(8, 4)
                => merge_sort_tiles!(u64, u32);
            merge_pass_u64_u32: Merge(crate::merge::MergePassArgs) => merge_pass!(u64, u32);
            merge_sort_tiles_u64_u64: Merge(crate::merge::SortTilesArgs),
                registers merge_sort_registers(8, 8)
                => merge_sort_tiles!(u64, u64);
            merge_pass_u64_u64: Merge(crate::merge::MergePassArgs) => merge_pass!(u64, u64);
            merge_sort_tiles_u32_u128: Merge(crate::merge::SortTilesArgs),
                registers merge_sort_registers(4, 16)
                => merge_sort_tiles!(u32, u128);
            merge_pass_u32_u128: Merge(crate::merge::MergePassArgs) => merge_pass!(u32, u128);
            // Blocks of 256 threads (its 8704-key tile does not fit): the architecture's 255
            // registers per thread always fit, so no cap.
            merge_sort_tiles_u64_u128: Merge(crate::merge::SortTilesArgs)
                => merge_sort_tiles!(u64, u128);
            merge_pass_u64_u128: Merge(crate::merge::MergePassArgs) => merge_pass!(u64, u128);
            merge_two_partition_u32: Merge(crate::merge::TwoPartitionArgs)
                => merge_two_partition!(u32);
            merge_two_u32: Merge(crate::merge::MergeTwoArgs) => merge_two!(u32);
            merge_two_partition_u64: Merge(crate::merge::TwoPartitionArgs)
                => merge_two_partition!(u64);
            merge_two_u64: Merge(crate::merge::MergeTwoArgs) => merge_two!(u64);
        }
    };
    (multi, $then:ident) => {
        $then! {
            multi_sample_u32: Multi(crate::multi::SampleArgs) => multi_sample!(u32);
            multi_ranks_u32: Multi(crate::multi::RanksArgs) => multi_ranks!(u32);
            multi_fill_u32: Multi(crate::multi::FillArgs) => multi_fill!(u32);
            multi_check_u32: Multi(crate::multi::CheckArgs) => multi_check!(u32);
            multi_sample_u64: Multi(crate::multi::SampleArgs) => multi_sample!(u64);
            multi_ranks_u64: Multi(crate::multi::RanksArgs) => multi_ranks!(u64);
            multi_fill_u64: Multi(crate::multi::FillArgs) => multi_fill!(u64);
            multi_check_u64: Multi(crate::multi::CheckArgs) => multi_check!(u64);
        }
    };
    (radix, $then:ident) => {
        $then! {
            radix_histogram_u32: Radix(crate::radix::HistogramArgs),
                registers RADIX_HISTOGRAM_MAX_REGISTERS
                => radix_histogram!(u32);
            radix_pass_u32: Radix(crate::radix::PassArgs),
                registers radix_pass_max_registers(4, 0)
                => radix_pass!(u32, ());
            radix_pass_u32_u32: Radix(crate::radix::PassArgs),
                registers radix_pass_max_registers(4, 4)
                => radix_pass!(u32, u32);
            radix_pass_u32_u64: Radix(crate::radix::PassArgs),
                registers radix_pass_max_registers(4, 8)
                => radix_pass!(u32, u64);
            radix_pass_u32_u128: Radix(crate::radix::PassArgs),
                registers radix_pass_max_registers(4, 16)
                => radix_pass!(u32, u128);
            radix_histogram_u64: Radix(crate::radix::HistogramArgs),
                registers RADIX_HISTOGRAM_MAX_REGISTERS
                => radix_histogram!(u64);
            radix_pass_u64: Radix(crate::radix::PassArgs),
                registers radix_pass_max_registers(8, 0)
                => radix_pass!(u64, ());
            radix_pass_u64_u32: Radix(crate::radix::PassArgs),
                registers radix_pass_max_registers(8, 4)
                => radix_pass!(u64, u32);
            radix_pass_u64_u64: Radix(crate::radix::PassArgs),
                registers radix_pass_max_registers(8, 8)
                => radix_pass!(u64, u64);
            radix_pass_u64_u128: Radix(crate::radix::PassArgs),
                registers radix_pass_max_registers(8, 16)
                => radix_pass!(u64, u128);
            radix_gather_pass_u32: Radix(crate::radix::GatherPassArgs),
                registers radix_pass_max_registers(4, 4)
                => radix_gather_pass!(u32);
            radix_gather_pass_u64: Radix(crate::radix::GatherPassArgs),
                registers radix_pass_max_registers(8, 4)
                => radix_gather_pass!(u64);
        }
    };
    (segments, $then:ident) => {
        $then! {
            segments_sort_u32: Segments(crate::segments::SortArgs),
                registers SEGMENTS_MAX_REGISTERS
                => segments_sort!(u32, u32, u32);
            segments_sort_u64: Segments(crate::segments::SortArgs),
                registers SEGMENTS_MAX_REGISTERS
                => segments_sort!(u64, u64, u32);
            segments_indexed_u32_u32: Segments(crate::segments::SortArgs),
                registers SEGMENTS_MAX_REGISTERS
                => segments_sort!(u32, Indexed32, u32);
            segments_indexed_u32_u64: Segments(crate::segments::SortArgs),
                registers SEGMENTS_MAX_REGISTERS
                => segments_sort!(u32, Indexed32, u64);
            segments_indexed_u32_u128: Segments(crate::segments::SortArgs),
                registers SEGMENTS_MAX_REGISTERS
                => segments_sort!(u32, Indexed32, u128);
            segments_indexed_u64_u32: Segments(crate::segments::SortArgs),
                registers SEGMENTS_MAX_REGISTERS
                => segments_sort!(u64, Indexed64, u32);
            segments_indexed_u64_u64: Segments(crate::segments::SortArgs),
                registers SEGMENTS_MAX_REGISTERS
                => segments_sort!(u64, Indexed64, u64);
            segments_indexed_u64_u128: Segments(crate::segments::SortArgs),
                registers SEGMENTS_MAX_REGISTERS
                => segments_sort!(u64, Indexed64, u128);
            segments_radix_u32: Segments(crate::segments::RadixArgs),
                registers SEGMENTS_RADIX_MAX_REGISTERS
                => segments_radix!(u32, true);
            segments_radix_u64: Segments(crate::segments::RadixArgs),
                registers SEGMENTS_RADIX_MAX_REGISTERS
                => segments_radix!(u64, true);
            segments_radix_keys_u32: Segments(crate::segments::RadixArgs),
                registers SEGMENTS_RADIX_MAX_REGISTERS
                => segments_radix!(u32, false);
            segments_radix_keys_u64: Segments(crate::segments::RadixArgs),
                registers SEGMENTS_RADIX_MAX_REGISTERS
                => segments_radix!(u64, false);
            segments_short_u32: ShortSegments(crate::segments::ShortArgs)
                => segments_short!(u32, u32);
            segments_short_u64: ShortSegments(crate::segments::ShortArgs)
                => segments_short!(u64, u64);
            segments_short_indexed_u32: ShortSegments(crate::segments::ShortArgs)
                => segments_short!(u32, Indexed32);
            segments_short_indexed_u64: ShortSegments(crate::segments::ShortArgs)
                => segments_short!(u64, Indexed64);
            segments_group: ShortSegments(crate::segments::GroupArgs) => segments_group!(u32);
            segments_pack_u32: Segments(crate::segments::PackArgs)
                => segments_pack!(u32, u64, packed_item);
            segments_unpack_u32_u32: Segments(crate::segments::UnpackArgs)
                => segments_unpack!(u32, u32);
            segments_unpack_u32_u64: Segments(crate::segments::UnpackArgs)
                => segments_unpack!(u32, u64);
            segments_unpack_u32_u128: Segments(crate::segments::UnpackArgs)
                => segments_unpack!(u32, u128);
            segments_pack_keys_u32: Segments(crate::segments::PackArgs)
                => segments_pack!(u32, u32, packed_key);
            segments_pack_keys_u64: Segments(crate::segments::PackArgs)
                => segments_pack!(u64, u64, packed_key);
            segments_unpack_keys_u32: Segments(crate::segments::PackArgs)
                => segments_unpack_keys!(u32);
            segments_unpack_keys_u64: Segments(crate::segments::PackArgs)
                => segments_unpack_keys!(u64);
            segments_long_collect_u64: Segments(crate::segments::LongCollectArgs)
                => segments_long_collect!(u64);
            segments_long_ids: Segments(crate::segments::LongIdsArgs)
                => segments_long_ids!(u32);
            segments_long_gather_u64: Segments(crate::segments::LongGatherArgs)
                => segments_long_gather!(u64);
            segments_long_scatter_u64: Segments(crate::segments::LongScatterArgs)
                => segments_long_scatter!(u64);
        }
    };
    (topk, $then:ident) => {
        $then! {
            topk_round_u32: TopK(crate::topk::RoundArgs), registers TOPK_MAX_REGISTERS_32
                => topk_round!(u32, streaming);
            topk_round_u64: TopK(crate::topk::RoundArgs), registers TOPK_MAX_REGISTERS_64
                => topk_round!(u64, streaming);
            topk_rows_u32: TopK(crate::topk::RoundArgs), registers TOPK_ROWS_MAX_REGISTERS_32
                => topk_round!(u32, registers);
            topk_rows_u64: TopK(crate::topk::RoundArgs), registers TOPK_ROWS_MAX_REGISTERS_64
                => topk_round!(u64, registers);
            topk_digits_u32: TopK(crate::topk::digits::StepArgs),
                registers TOPK_DIGITS_MAX_REGISTERS
                => topk_digits!(u32);
            topk_digits_u64: TopK(crate::topk::digits::StepArgs),
                registers TOPK_DIGITS_MAX_REGISTERS
                => topk_digits!(u64);
        }
    };
}
#[cfg(target_arch = "nvptx64")]
pub(crate) use kernel_list;

/// Defines the kernels of a module's part of `kernel_list!`, each with its maker.
#[cfg(target_arch = "nvptx64")]
macro_rules! define {
    ($(
        $name:ident: $family:ident $(($args:path))? $(, registers $registers:expr)?
            $(, program $program:literal)? => $maker:ident!($key:ty $(, $arg:tt)*);
    )*) => {
        $( $maker!($name $(($args))?, $key $(, $arg)* $(, $program)?); )*
    };
}
#[cfg(target_arch = "nvptx64")]
pub(crate) use define;

#[cfg(not(target_arch = "nvptx64"))]
mod table;
#[cfg(not(target_arch = "nvptx64"))]
pub use table::*;
