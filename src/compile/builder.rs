//! A tiny assembler for generated code: instructions with symbolic forward jump targets,
//! resolved into a [`Program`] with the kernel's jump-range limits honoured.
//!
//! Conditional jumps reach at most 255 instructions ahead; `JA` reaches anywhere. When a
//! conditional branch is too far, it is routed through a `JA` placed right after the jump
//! (a "trampoline"). Inserting trampolines moves code, which can push other branches out
//! of range, so resolution repeats until nothing changes (it only ever adds trampolines,
//! so it terminates).

use crate::bpf::insn::*;
use crate::bpf::Program;

/// A position in the code, defined by [`Builder::place`]. Jumps may only go forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Label(usize);

#[derive(Debug, Clone)]
enum Item {
    /// An instruction without jump targets.
    Plain(Insn),
    /// A conditional jump (`code` is `BPF_JMP | op | BPF_K`).
    Cond {
        code: u16,
        k: u32,
        jt: Label,
        jf: Label,
    },
    /// `JA`.
    Always(Label),
}

/// Why generated code could not be laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LayoutError {
    /// A label was used but never placed, or a jump goes backwards (a bug in the generator).
    Unresolved(&'static str),
}

/// Collects code with symbolic jumps.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    items: Vec<Item>,
    /// Item index each label stands before, once placed.
    labels: Vec<Option<usize>>,
}

impl Builder {
    pub fn new() -> Self {
        Builder::default()
    }

    /// A fresh label, to be placed later.
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Places `label` before the next instruction emitted.
    pub fn place(&mut self, label: Label) {
        debug_assert!(self.labels[label.0].is_none(), "label placed twice");
        self.labels[label.0] = Some(self.items.len());
    }

    pub fn insn(&mut self, insn: Insn) {
        self.items.push(Item::Plain(insn));
    }

    /// `LD W ABS offset`.
    pub fn load(&mut self, offset: u32) {
        self.insn(Insn::ld_abs(offset));
    }

    /// `AND #mask`.
    pub fn and(&mut self, mask: u32) {
        self.insn(Insn::stmt(BPF_ALU | BPF_AND | BPF_K, mask));
    }

    /// `RET #value`.
    pub fn ret(&mut self, value: u32) {
        self.insn(Insn::ret(value));
    }

    /// A conditional jump `op` (`BPF_JEQ`, `BPF_JGT`, `BPF_JGE` or `BPF_JSET`) against `k`.
    pub fn cond(&mut self, op: u16, k: u32, jt: Label, jf: Label) {
        self.items.push(Item::Cond {
            code: BPF_JMP | op | BPF_K,
            k,
            jt,
            jf,
        });
    }

    /// `JA label`.
    pub fn jump(&mut self, target: Label) {
        self.items.push(Item::Always(target));
    }

    /// Resolves every jump and returns the program.
    pub fn finish(self) -> Result<Program, LayoutError> {
        let targets: Vec<usize> = self
            .labels
            .iter()
            .map(|l| l.ok_or(LayoutError::Unresolved("a label was never placed")))
            .collect::<Result<_, _>>()?;
        // far[i] = (jt needs a trampoline, jf needs a trampoline) for conditional items.
        let mut far = vec![(false, false); self.items.len()];
        loop {
            // Address of each item, and of the position each label stands for.
            let mut address = Vec::with_capacity(self.items.len() + 1);
            let mut pc = 0usize;
            for (i, item) in self.items.iter().enumerate() {
                address.push(pc);
                pc += 1 + usize::from(far[i].0) + usize::from(far[i].1);
                if let Item::Always(_) | Item::Plain(_) = item {
                    debug_assert!(far[i] == (false, false));
                }
            }
            address.push(pc);
            let mut changed = false;
            for (i, item) in self.items.iter().enumerate() {
                let Item::Cond { jt, jf, .. } = item else {
                    continue;
                };
                // The jump's own trampolines sit between it and any near target.
                let after = address[i] + 1 + usize::from(far[i].0) + usize::from(far[i].1);
                for (is_jt, label) in [(true, jt), (false, jf)] {
                    let target = address[targets[label.0]];
                    if target < address[i] + 1 {
                        return Err(LayoutError::Unresolved("a jump goes backwards"));
                    }
                    let already = if is_jt { far[i].0 } else { far[i].1 };
                    if !already && target - after > 255 {
                        if is_jt {
                            far[i].0 = true;
                        } else {
                            far[i].1 = true;
                        }
                        changed = true;
                    }
                }
            }
            if changed {
                continue;
            }
            return Ok(self.emit(&address, &targets, &far));
        }
    }

    fn emit(&self, address: &[usize], targets: &[usize], far: &[(bool, bool)]) -> Program {
        let mut insns = Vec::with_capacity(address[self.items.len()]);
        let at = |label: &Label| address[targets[label.0]];
        for (i, item) in self.items.iter().enumerate() {
            match item {
                Item::Plain(insn) => insns.push(*insn),
                Item::Always(label) => {
                    let offset = at(label) - (address[i] + 1);
                    insns.push(Insn::ja(offset as u32));
                }
                Item::Cond { code, k, jt, jf } => {
                    let (jt_far, jf_far) = far[i];
                    let tramps = usize::from(jt_far) + usize::from(jf_far);
                    let after = address[i] + 1 + tramps;
                    // Trampolines in order: jt's first (at +0), then jf's.
                    let jt_off = if jt_far { 0 } else { at(jt) - address[i] - 1 };
                    let jf_off = if jf_far {
                        usize::from(jt_far)
                    } else {
                        at(jf) - address[i] - 1
                    };
                    debug_assert!(jt_off <= 255 && jf_off <= 255);
                    insns.push(Insn::jump(*code, *k, jt_off as u8, jf_off as u8));
                    let mut pos = address[i] + 1;
                    for (is_far, label) in [(jt_far, jt), (jf_far, jf)] {
                        if is_far {
                            let offset = at(label) - (pos + 1);
                            insns.push(Insn::ja(offset as u32));
                            pos += 1;
                        }
                    }
                    debug_assert_eq!(pos, after);
                }
            }
        }
        Program::new(insns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::{interp, validate, SeccompData};

    #[test]
    fn near_jumps_resolve_to_offsets() {
        let mut b = Builder::new();
        let (yes, no) = (b.label(), b.label());
        b.load(0);
        b.cond(BPF_JEQ, 7, yes, no);
        b.place(no);
        b.ret(1);
        b.place(yes);
        b.ret(2);
        let p = b.finish().unwrap();
        // ld; jeq 7, jt=1, jf=0; ret 1; ret 2 — offsets by hand.
        assert_eq!(p.insns[1], Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 7, 1, 0));
        assert_eq!(p.len(), 4);
    }

    #[test]
    fn far_branches_get_trampolines() {
        // jeq 7 → far (past 300 filler RETs); else → next.
        let mut b = Builder::new();
        let (far_target, near) = (b.label(), b.label());
        b.load(0);
        b.cond(BPF_JEQ, 7, far_target, near);
        b.place(near);
        for _ in 0..300 {
            b.ret(0x5_0001);
        }
        b.place(far_target);
        b.ret(0x7fff_0000);
        let p = b.finish().unwrap();
        validate::validate(&p).unwrap();
        // jt → trampoline at +0, jf skips it (+1).
        assert_eq!(p.insns[1], Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1));
        assert_eq!(p.insns[2], Insn::ja(300));
        let run = |nr| {
            interp::eval(&p, &SeccompData::new(0, nr, [0; 6]))
                .unwrap()
                .0
        };
        assert_eq!(run(7), 0x7fff_0000);
        assert_eq!(run(8), 0x5_0001);
    }

    #[test]
    fn both_branches_far() {
        let mut b = Builder::new();
        let (t, f) = (b.label(), b.label());
        b.load(0);
        b.cond(BPF_JGT, 10, t, f);
        for _ in 0..256 {
            b.ret(3);
        }
        b.place(f);
        for _ in 0..256 {
            b.ret(4);
        }
        b.place(t);
        b.ret(5);
        let p = b.finish().unwrap();
        validate::validate(&p).unwrap();
        let run = |nr| {
            interp::eval(&p, &SeccompData::new(0, nr, [0; 6]))
                .unwrap()
                .0
        };
        assert_eq!(run(11), 5);
        assert_eq!(run(10), 4);
    }

    #[test]
    fn unplaced_labels_are_an_error() {
        let mut b = Builder::new();
        let l = b.label();
        b.jump(l);
        assert!(b.finish().is_err());
    }
}
