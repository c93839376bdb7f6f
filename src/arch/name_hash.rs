//! The hash of a syscall name in the generated tables' index (`build.rs` builds the index with
//! it, [`super::tables`] looks names up with it): 64-bit FNV-1a, small and the same at build
//! and at run time, which a seeded or platform-dependent hash would not be.

/// FNV-1a of `name`'s bytes.
pub fn name_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Slots in each table's index: a power of two, over twice the most names any arch has, so
/// that a lookup probes one or two slots.
pub const INDEX_SLOTS: usize = 1024;
