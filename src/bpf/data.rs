//! `struct seccomp_data`, the input of every seccomp filter, and its 16 32-bit words.
//!
//! ```text
//! offset  0: int   nr
//! offset  4: u32   arch                  (AUDIT_ARCH_* token)
//! offset  8: u64   instruction_pointer
//! offset 16: u64   args[6]               (args[i] at 16 + 8*i)
//! ```
//! A filter can only read aligned 32-bit words (`LD W ABS k`, `k % 4 == 0`, `k < 64`), so the
//! input is exactly 16 words. For the 64-bit fields, which half sits at the lower offset depends
//! on the byte order of the machine: on little-endian machines the low half comes first. The
//! byte order of a `seccomp_data` is that of the kernel that filled it in, which is encoded in
//! its own `arch` token (`__AUDIT_ARCH_LE`, bit 30), so [`SeccompData::words`] needs no extra
//! parameter.

use serde::{Deserialize, Serialize};

/// Size of `struct seccomp_data` in bytes.
pub const SECCOMP_DATA_SIZE: u32 = 64;
/// Number of 32-bit words a filter can load.
pub const NUM_WORDS: usize = 16;
/// Byte offset of `nr`.
pub const OFF_NR: u32 = 0;
/// Byte offset of `arch`.
pub const OFF_ARCH: u32 = 4;
/// Byte offset of `instruction_pointer`.
pub const OFF_IP: u32 = 8;
/// Byte offset of `args[0]`.
pub const OFF_ARGS: u32 = 16;
use crate::arch::AUDIT_ARCH_LE;

pub use crate::arch::Endian;

impl Endian {
    /// The byte order an `AUDIT_ARCH_*` token declares.
    pub const fn of_arch_token(token: u32) -> Endian {
        if token & AUDIT_ARCH_LE != 0 {
            Endian::Little
        } else {
            Endian::Big
        }
    }
}

/// The input of a seccomp filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct SeccompData {
    pub nr: i32,
    pub arch: u32,
    pub instruction_pointer: u64,
    pub args: [u64; 6],
}

/// The 16 words of a `seccomp_data` as a filter sees them (word `i` is at byte offset `4*i`).
pub type Words = [u32; NUM_WORDS];

impl SeccompData {
    /// A `seccomp_data` for the syscall `name` of `arch` (its arch token, and its number
    /// there, x32's with bit 30 set) with the given arguments and IP 0; `None` when `arch`
    /// has no such syscall.
    ///
    /// ```
    /// use secopt::arch::Arch;
    /// use secopt::bpf::SeccompData;
    /// let write = SeccompData::syscall(Arch::X32, "write", [1, 0, 0, 0, 0, 0]).unwrap();
    /// assert_eq!((write.arch, write.nr), (Arch::X86_64.token(), 0x4000_0001));
    /// assert!(SeccompData::syscall(Arch::Aarch64, "open", [0; 6]).is_none());
    /// ```
    pub fn syscall(arch: crate::arch::Arch, name: &str, args: [u64; 6]) -> Option<Self> {
        let nr = arch.syscalls().nr(name)?;
        Some(SeccompData::new(arch.token(), nr as i32, args))
    }

    /// A `seccomp_data` for syscall `nr` on `arch` with the given arguments and IP 0.
    pub fn new(arch: u32, nr: i32, args: [u64; 6]) -> Self {
        SeccompData {
            nr,
            arch,
            instruction_pointer: 0,
            args,
        }
    }

    /// The byte order this data was laid out in (from its arch token).
    pub fn endian(&self) -> Endian {
        Endian::of_arch_token(self.arch)
    }

    /// The 16 32-bit words a filter loads, laid out in this data's own byte order.
    pub fn words(&self) -> Words {
        let mut w = [0u32; NUM_WORDS];
        w[0] = self.nr as u32;
        w[1] = self.arch;
        let endian = self.endian();
        let mut put64 = |word: usize, v: u64| {
            let (first, second) = match endian {
                Endian::Little => (v as u32, (v >> 32) as u32),
                Endian::Big => ((v >> 32) as u32, v as u32),
            };
            w[word] = first;
            w[word + 1] = second;
        };
        put64(2, self.instruction_pointer);
        for (i, a) in self.args.iter().enumerate() {
            put64(4 + 2 * i, *a);
        }
        w
    }

    /// Rebuilds a `seccomp_data` from 16 words, reading the 64-bit fields in the byte order of
    /// the arch token in word 1. Inverse of [`SeccompData::words`].
    pub fn from_words(w: &Words) -> Self {
        let endian = Endian::of_arch_token(w[1]);
        let get64 = |word: usize| -> u64 {
            let (first, second) = (w[word] as u64, w[word + 1] as u64);
            match endian {
                Endian::Little => first | (second << 32),
                Endian::Big => (first << 32) | second,
            }
        };
        let mut args = [0u64; 6];
        for (i, a) in args.iter_mut().enumerate() {
            *a = get64(4 + 2 * i);
        }
        SeccompData {
            nr: w[0] as i32,
            arch: w[1],
            instruction_pointer: get64(2),
            args,
        }
    }
}

/// What a word offset of `seccomp_data` means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "field")]
pub enum Field {
    Nr,
    Arch,
    /// Low or high half of the instruction pointer.
    Ip {
        high: bool,
    },
    /// Low or high half of `args[index]`.
    Arg {
        index: u8,
        high: bool,
    },
}

impl Field {
    /// The field at byte offset `off` (a multiple of 4 below 64) for a machine of byte order
    /// `endian`; `None` for any other offset.
    pub fn at_offset(off: u32, endian: Endian) -> Option<Field> {
        if !off.is_multiple_of(4) || off >= SECCOMP_DATA_SIZE {
            return None;
        }
        let word = off / 4;
        let second_half = word % 2 == 1;
        let high = match endian {
            Endian::Little => second_half,
            Endian::Big => !second_half,
        };
        Some(match word {
            0 => Field::Nr,
            1 => Field::Arch,
            2 | 3 => Field::Ip { high },
            _ => Field::Arg {
                index: ((word - 4) / 2) as u8,
                high,
            },
        })
    }

    /// Byte offset of this field on a machine of byte order `endian`.
    pub fn offset(self, endian: Endian) -> u32 {
        let half = |high: bool| -> u32 {
            match (endian, high) {
                (Endian::Little, false) | (Endian::Big, true) => 0,
                _ => 4,
            }
        };
        match self {
            Field::Nr => OFF_NR,
            Field::Arch => OFF_ARCH,
            Field::Ip { high } => OFF_IP + half(high),
            Field::Arg { index, high } => OFF_ARGS + 8 * index as u32 + half(high),
        }
    }

    /// Conventional name: `nr`, `arch`, `ip.lo`, `args[2].hi`, …
    pub fn name(self) -> String {
        let half = |h: bool| if h { "hi" } else { "lo" };
        match self {
            Field::Nr => "nr".into(),
            Field::Arch => "arch".into(),
            Field::Ip { high } => format!("ip.{}", half(high)),
            Field::Arg { index, high } => format!("args[{index}].{}", half(high)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn little_endian_layout() {
        let d = SeccompData {
            nr: -1,
            arch: 0xc000_003e,
            instruction_pointer: 0x1122_3344_5566_7788,
            args: [0xaaaa_bbbb_cccc_dddd, 1, 2, 3, 4, 0xffff_ffff_0000_0005],
        };
        let w = d.words();
        assert_eq!(w[0], 0xffff_ffff);
        assert_eq!(w[1], 0xc000_003e);
        assert_eq!((w[2], w[3]), (0x5566_7788, 0x1122_3344));
        assert_eq!((w[4], w[5]), (0xcccc_dddd, 0xaaaa_bbbb));
        assert_eq!((w[14], w[15]), (5, 0xffff_ffff));
        assert_eq!(SeccompData::from_words(&w), d);
        assert_eq!(
            Field::at_offset(20, Endian::Little),
            Some(Field::Arg {
                index: 0,
                high: true
            })
        );
    }

    #[test]
    fn big_endian_layout_puts_high_half_first() {
        // AUDIT_ARCH_S390X = EM_S390 (22) | __AUDIT_ARCH_64BIT, big-endian.
        let d = SeccompData::new(0x8000_0016, 1, [0x1_0000_0002, 0, 0, 0, 0, 0]);
        let w = d.words();
        assert_eq!((w[4], w[5]), (1, 2));
        assert_eq!(SeccompData::from_words(&w), d);
        let hi = Field::Arg {
            index: 0,
            high: true,
        };
        assert_eq!(hi.offset(Endian::Big), 16);
        assert_eq!(Field::at_offset(16, Endian::Big), Some(hi));
    }
}
