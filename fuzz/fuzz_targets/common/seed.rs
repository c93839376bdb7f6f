//! The random generator of the targets that build programs from a seed rather than decode
//! them: the whole input hashed (FNV-1a), so every byte changes the programs.
use secopt::bpf::testing::Rng;

pub fn rng_from(data: &[u8]) -> Rng {
    let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    Rng::new(seed)
}
