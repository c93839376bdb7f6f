//! The part of the input space a verification covers: every `seccomp_data` by default, or only
//! some architectures and syscall numbers when the user asks.

use crate::arch::Arch;
use crate::bpf::symbolic::bdd::{Bdd, Node, OutOfNodes, FALSE, TRUE};
use crate::bpf::symbolic::{bitvec, x32_numbers, WORD_ARCH, WORD_NR};
use std::fmt;

/// One architecture of a [`Domain`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArchSel {
    /// A known ABI: its token, and for x86_64/x32 (which share one) its half of the numbers
    /// (x32's numbers are 0x40000000..=0x7fffffff, [`crate::arch::is_x32_nr`]).
    Arch(Arch),
    /// Any `seccomp_data.arch` value, with every number.
    Token(u32),
}

impl fmt::Display for ArchSel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchSel::Arch(a) => f.write_str(a.name()),
            ArchSel::Token(t) => write!(f, "arch 0x{t:08x}"),
        }
    }
}

/// Syscall numbers of a [`Domain`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NrSel {
    /// Raw `seccomp_data.nr` values `first..=last` (as unsigned numbers; x32 numbers include
    /// bit 30).
    Range(u32, u32),
    /// A syscall name, resolved in each architecture of the domain.
    Name(String),
}

impl fmt::Display for NrSel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NrSel::Range(a, b) if a == b => write!(f, "{}", show_u32(*a)),
            NrSel::Range(a, b) => write!(f, "{}..={}", show_u32(*a), show_u32(*b)),
            NrSel::Name(n) => f.write_str(n),
        }
    }
}

/// Decimal for small numbers, hex for the rest (as the reports print values).
pub(crate) fn show_u32(v: u32) -> String {
    show_u64(v as u64)
}

/// See [`show_u32`].
pub(crate) fn show_u64(v: u64) -> String {
    if v <= 0xffff {
        v.to_string()
    } else {
        format!("{v:#x}")
    }
}

/// The inputs a verification covers. Empty lists mean "no restriction": the default domain is
/// all of `seccomp_data` (every arch token, all 2^32 numbers, any IP and arguments).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Domain {
    /// Architectures covered (empty: every arch token).
    pub arches: Vec<ArchSel>,
    /// Numbers covered (empty: every number).
    pub nrs: Vec<NrSel>,
}

/// A domain that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DomainError {
    /// A name selects a number only on a named architecture ([`Domain::arches`]).
    #[error("syscall name `{0}` needs an architecture to resolve it: the domain names none")]
    NameWithoutArch(String),
    #[error("syscall `{name}` is not known on {arches}")]
    UnknownName { name: String, arches: String },
    #[error("empty number range {0}..={1} (the first number is above the last)")]
    EmptyRange(u32, u32),
    /// Every selected number lies outside its ABI's part of the numbers (x32's are
    /// 0x40000000..=0x7fffffff, x86_64's all others): nothing would be compared, and "equal"
    /// would say nothing.
    #[error("no input is in the domain ({0}): x32's numbers are 0x40000000..=0x7fffffff (0x40000000 + n; a syscall name resolves it) and x86_64's all others")]
    Empty(String),
}

impl Domain {
    /// Everything.
    pub fn all() -> Self {
        Domain::default()
    }

    /// Whether this is the whole input space.
    pub fn is_all(&self) -> bool {
        self.arches.is_empty() && self.nrs.is_empty()
    }

    /// Checks names and ranges without building anything.
    pub fn check(&self) -> Result<(), DomainError> {
        for n in &self.nrs {
            match n {
                NrSel::Range(a, b) if a > b => return Err(DomainError::EmptyRange(*a, *b)),
                NrSel::Name(name) => {
                    let arches: Vec<Arch> = self
                        .arches
                        .iter()
                        .filter_map(|a| match a {
                            ArchSel::Arch(a) => Some(*a),
                            ArchSel::Token(_) => None,
                        })
                        .collect();
                    if arches.is_empty() {
                        return Err(DomainError::NameWithoutArch(name.clone()));
                    }
                    if !arches.iter().any(|a| a.syscalls().nr(name).is_some()) {
                        let list: Vec<&str> = arches.iter().map(|a| a.name()).collect();
                        return Err(DomainError::UnknownName {
                            name: name.clone(),
                            arches: list.join(", "),
                        });
                    }
                }
                _ => {}
            }
        }
        // Only the two ABIs that split x86_64's token by nr can select nothing.
        let mut bdd = Bdd::new(1 << 16);
        if let Ok(FALSE) = self.to_bdd(&mut bdd) {
            return Err(DomainError::Empty(self.to_string()));
        }
        Ok(())
    }

    /// The domain as a condition on `arch` and `nr` (call [`Domain::check`] first: names that
    /// resolve nowhere are ignored here).
    pub fn to_bdd(&self, bdd: &mut Bdd) -> Result<Node, OutOfNodes> {
        let mut ranges = FALSE;
        for n in &self.nrs {
            if let NrSel::Range(a, b) = n {
                let r = bitvec::value_range(bdd, WORD_NR, *a, *b)?;
                ranges = bdd.or(ranges, r)?;
            }
        }
        let numbers_of = |bdd: &mut Bdd, arch: Option<Arch>| -> Result<Node, OutOfNodes> {
            if self.nrs.is_empty() {
                return Ok(TRUE);
            }
            let named: Vec<u32> = match arch {
                Some(a) => self
                    .nrs
                    .iter()
                    .filter_map(|n| match n {
                        NrSel::Name(name) => a.syscalls().nr(name),
                        NrSel::Range(..) => None,
                    })
                    .collect(),
                None => Vec::new(),
            };
            let names = bitvec::value_set(bdd, WORD_NR, &named)?;
            bdd.or(ranges, names)
        };
        if self.arches.is_empty() {
            return numbers_of(bdd, None);
        }
        let mut domain = FALSE;
        for sel in &self.arches {
            let arch_cond = arch_condition(bdd, *sel)?;
            let arch = match sel {
                ArchSel::Arch(a) => Some(*a),
                ArchSel::Token(_) => None,
            };
            let nrs = numbers_of(bdd, arch)?;
            let part = bdd.and(arch_cond, nrs)?;
            domain = bdd.or(domain, part)?;
        }
        Ok(domain)
    }
}

/// The inputs of one architecture selection: its token, and for the two ABIs that share
/// x86_64's token, their part of the numbers ([`crate::arch::is_x32_nr`]).
pub fn arch_condition(bdd: &mut Bdd, sel: ArchSel) -> Result<Node, OutOfNodes> {
    match sel {
        ArchSel::Token(t) => bitvec::value_set(bdd, WORD_ARCH, &[t]),
        ArchSel::Arch(a) => {
            let token = bitvec::value_set(bdd, WORD_ARCH, &[a.token()])?;
            if Arch::from_token(a.token()).len() < 2 {
                return Ok(token);
            }
            let x32 = x32_numbers(bdd)?;
            let side = if a == Arch::X32 { x32 } else { bdd.not(x32)? };
            bdd.and(token, side)
        }
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_all() {
            return f.write_str(
                "all of seccomp_data (every arch token, all 2^32 syscall numbers, any instruction pointer and arguments)",
            );
        }
        let mut parts = Vec::new();
        if !self.arches.is_empty() {
            let list: Vec<String> = self.arches.iter().map(|a| a.to_string()).collect();
            parts.push(format!("arch in {{{}}}", list.join(", ")));
        }
        if !self.nrs.is_empty() {
            let list: Vec<String> = self.nrs.iter().map(|n| n.to_string()).collect();
            parts.push(format!("nr in {{{}}}", list.join(", ")));
        }
        write!(
            f,
            "only {} (any instruction pointer and arguments)",
            parts.join(" and ")
        )
    }
}
