//! Where a syscall name goes in the generated tables' index (`build.rs` builds the index with
//! it, [`super::tables`] looks names up with it): a multiplicative hash of the name eight bytes
//! at a time, its top bits the slot. Small, and the same at build and at run time, which a
//! seeded or platform-dependent hash would not be.

/// Bits of a slot number.
const INDEX_BITS: u32 = 10;

/// Slots in each table's index: a power of two, over twice the most names any arch has, so
/// that a lookup probes one or two slots.
pub const INDEX_SLOTS: usize = 1 << INDEX_BITS;

/// The first slot to look for `name` in.
pub fn name_slot(name: &str) -> usize {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = name.len() as u64;
    for chunk in name.as_bytes().chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    (h >> (64 - INDEX_BITS)) as usize
}
