//! Random valid programs and inputs, for property tests, the kernel-oracle differential test
//! and fuzzing.
//!
//! Programs are valid by construction: the generator runs the kernel's own linear
//! scratch-memory check (see [`super::validate`]) while it emits instructions, so a load of
//! `M[i]` is only generated where the kernel would accept it. Callers still validate, which
//! tests the validator too.

use super::data::{SeccompData, OFF_ARCH, OFF_NR};
use super::insn::*;

/// A small deterministic PRNG (SplitMix64), so a failing case is reproducible from its seed
/// without pulling a random-number crate into the library.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// True with probability `num/den`.
    pub fn chance(&mut self, num: u32, den: u32) -> bool {
        (self.next_u32() % den) < num
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// What the random program generator may use.
#[derive(Debug, Clone)]
pub struct GenConfig {
    /// Most instructions (at least 1).
    pub max_len: usize,
    /// ALU instructions other than `AND K`.
    pub alu: bool,
    /// The X register (`LDX`, `TAX`, `TXA`, `STX`, `… X` operands).
    pub x_register: bool,
    /// Scratch memory.
    pub scratch: bool,
    /// `RET A`.
    pub ret_a: bool,
    /// Interesting constants for comparisons (arch tokens, syscall numbers, …).
    pub constants: Vec<u32>,
    /// Return values for `RET K`.
    pub returns: Vec<u32>,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            max_len: 40,
            alu: true,
            x_register: true,
            scratch: true,
            ret_a: true,
            constants: vec![
                0,
                1,
                2,
                39,
                59,
                0x4000_0000,
                0xc000_003e,
                0x4000_0003,
                0xffff_ffff,
                0x8000_0000,
            ],
            returns: vec![
                0x7fff_0000,
                0x0005_0001,
                0x0005_0026,
                0x8000_0000,
                0x0000_0000,
                0x0003_0000,
                0x7ffc_0000,
                0x7ff0_0000,
            ],
        }
    }
}

impl GenConfig {
    /// Only what the kernel's allow-cache emulator understands (`LD` of nr/arch, `JA`,
    /// `JEQ/JGE/JGT/JSET K`, `AND K`, `RET K`) plus, rarely, other loads.
    pub fn cache_friendly() -> Self {
        GenConfig {
            alu: false,
            x_register: false,
            scratch: false,
            ret_a: false,
            ..GenConfig::default()
        }
    }
}

/// A random program that the kernel accepts as a seccomp filter.
pub fn random_program(rng: &mut Rng, cfg: &GenConfig) -> Program {
    let n = 1 + rng.below(cfg.max_len.clamp(1, BPF_MAXINSNS));
    let mut insns = Vec::with_capacity(n);
    // The kernel's check_load_and_stores state, carried along as we emit.
    let mut masks = vec![u16::MAX; n];
    let mut memvalid: u16 = 0;
    for pc in 0..n {
        memvalid &= masks[pc];
        let remaining = n - pc - 1; // instructions after this one
        let insn = if remaining == 0 {
            random_ret(rng, cfg)
        } else {
            random_insn(rng, cfg, remaining, memvalid)
        };
        if insn.code == BPF_ST || insn.code == BPF_STX {
            memvalid |= 1 << insn.k;
        } else if insn.is_conditional_jump() || insn.is_ja() {
            let (t, f) = if insn.is_ja() {
                let t = pc + 1 + insn.k as usize;
                (t, t)
            } else {
                (pc + 1 + insn.jt as usize, pc + 1 + insn.jf as usize)
            };
            masks[t] &= memvalid;
            masks[f] &= memvalid;
            memvalid = u16::MAX;
        }
        insns.push(insn);
    }
    Program::new(insns)
}

fn random_ret(rng: &mut Rng, cfg: &GenConfig) -> Insn {
    if cfg.ret_a && rng.chance(1, 6) {
        Insn::stmt(BPF_RET | BPF_A, 0)
    } else if rng.chance(1, 10) {
        Insn::ret(rng.next_u32())
    } else {
        Insn::ret(rng.pick(&cfg.returns))
    }
}

fn random_constant(rng: &mut Rng, cfg: &GenConfig) -> u32 {
    match rng.below(4) {
        0 => rng.next_u32(),
        1 => rng.below(512) as u32,
        _ => {
            let c = rng.pick(&cfg.constants);
            c.wrapping_add(rng.pick(&[0u32, 0, 0, 1, u32::MAX]))
        }
    }
}

fn random_offset(rng: &mut Rng) -> u8 {
    // Mostly short jumps, sometimes long ones.
    if rng.chance(3, 4) {
        rng.below(4) as u8
    } else {
        rng.next_u32() as u8
    }
}

fn random_insn(rng: &mut Rng, cfg: &GenConfig, remaining: usize, memvalid: u16) -> Insn {
    let max_off = remaining - 1; // a jump may land on any later instruction
    loop {
        let insn = match rng.below(16) {
            0..=3 => {
                // Loads of seccomp_data, biased to nr and arch.
                let off = match rng.below(4) {
                    0 => OFF_NR,
                    1 => OFF_ARCH,
                    _ => 4 * rng.below(16) as u32,
                };
                Insn::ld_abs(off)
            }
            4..=7 => {
                let ops = [BPF_JEQ, BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET];
                let o = rng.pick(&ops);
                let s = if cfg.x_register && rng.chance(1, 5) {
                    BPF_X
                } else {
                    BPF_K
                };
                let jt = (random_offset(rng) as usize).min(max_off) as u8;
                let jf = (random_offset(rng) as usize).min(max_off) as u8;
                Insn::jump(BPF_JMP | o | s, random_constant(rng, cfg), jt, jf)
            }
            8 => Insn::ja(rng.below(max_off.min(300) + 1) as u32),
            9 if rng.chance(1, 3) => random_ret(rng, cfg),
            9 => Insn::stmt(BPF_ALU | BPF_AND | BPF_K, random_constant(rng, cfg)),
            10 | 11 if cfg.alu => {
                let ops = [
                    BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_XOR, BPF_LSH, BPF_RSH,
                    BPF_NEG,
                ];
                let o = rng.pick(&ops);
                if o == BPF_NEG {
                    Insn::stmt(BPF_ALU | BPF_NEG, 0)
                } else if cfg.x_register && rng.chance(1, 3) {
                    Insn::stmt(BPF_ALU | o | BPF_X, 0)
                } else {
                    let k = match o {
                        BPF_LSH | BPF_RSH => rng.below(32) as u32,
                        BPF_DIV => random_constant(rng, cfg).max(1),
                        _ => random_constant(rng, cfg),
                    };
                    Insn::stmt(BPF_ALU | o | BPF_K, k)
                }
            }
            12 if cfg.x_register => match rng.below(5) {
                0 => Insn::stmt(BPF_MISC | BPF_TAX, 0),
                1 => Insn::stmt(BPF_MISC | BPF_TXA, 0),
                2 => Insn::stmt(BPF_LDX | BPF_W | BPF_LEN, 0),
                // Shift counts of 32 and more (taken `& 31` by the kernel) need X >= 32.
                3 => Insn::stmt(BPF_LDX | BPF_IMM, 28 + rng.below(40) as u32),
                _ => Insn::stmt(BPF_LDX | BPF_IMM, random_constant(rng, cfg)),
            },
            13 if cfg.alu => match rng.below(3) {
                0 => Insn::stmt(BPF_LD | BPF_W | BPF_LEN, 0),
                _ => Insn::stmt(BPF_LD | BPF_IMM, random_constant(rng, cfg)),
            },
            14 | 15 if cfg.scratch => {
                let valid: Vec<u32> = (0..16).filter(|i| memvalid & (1 << i) != 0).collect();
                if !valid.is_empty() && rng.chance(1, 2) {
                    let slot = rng.pick(&valid);
                    let code = if cfg.x_register && rng.chance(1, 3) {
                        BPF_LDX | BPF_MEM
                    } else {
                        BPF_LD | BPF_MEM
                    };
                    Insn::stmt(code, slot)
                } else {
                    let code = if cfg.x_register && rng.chance(1, 3) {
                        BPF_STX
                    } else {
                        BPF_ST
                    };
                    Insn::stmt(code, rng.below(16) as u32)
                }
            }
            _ => continue,
        };
        return insn;
    }
}

/// A random input that drives `prog` down varied paths: word values are drawn from the
/// program's own constants (±1) as often as from arbitrary values.
pub fn random_data(rng: &mut Rng, prog: &Program, arch_tokens: &[u32]) -> SeccompData {
    let mut consts: Vec<u32> = prog
        .insns
        .iter()
        .filter(|i| i.is_conditional_jump() || i.code == BPF_ALU | BPF_AND | BPF_K)
        .map(|i| i.k)
        .collect();
    consts.extend([0, 1, u32::MAX, 0x8000_0000]);
    let word = |rng: &mut Rng| -> u32 {
        match rng.below(3) {
            0 => rng.next_u32(),
            _ => rng
                .pick(&consts)
                .wrapping_add(rng.pick(&[0u32, 0, 1, u32::MAX])),
        }
    };
    let half = |rng: &mut Rng| -> u64 { word(rng) as u64 };
    let u64v = |rng: &mut Rng| -> u64 { (half(rng) << 32) | half(rng) };
    let arch = if arch_tokens.is_empty() || rng.chance(1, 8) {
        u64v(rng) as u32
    } else {
        rng.pick(arch_tokens)
    };
    let nr = u64v(rng) as u32 as i32;
    let mut args = [0u64; 6];
    for a in &mut args {
        *a = u64v(rng);
    }
    SeccompData {
        nr,
        arch,
        instruction_pointer: u64v(rng),
        args,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::{interp, validate::validate};

    #[test]
    fn generated_programs_are_valid_and_run() {
        let mut rng = Rng::new(1);
        let cfg = GenConfig::default();
        for _ in 0..5000 {
            let p = random_program(&mut rng, &cfg);
            if let Err(e) = validate(&p) {
                panic!("generator produced an invalid program: {e}\n{p:?}");
            }
            let d = random_data(&mut rng, &p, &[0xc000_003e]);
            interp::eval(&p, &d).expect("valid programs run to a return");
        }
    }
}
