//! The running kernel as an independent oracle for the reference interpreter and the
//! validator.
//!
//! - Thousands of random valid programs run on the kernel (through `secopt::kernel::Oracle`,
//!   which rewrites every return into a distinct errno so no syscall ever runs) and in
//!   `bpf::interp`, on the `seccomp_data` the kernel actually saw, through all three x86_64
//!   entries: both must take the same return instruction and return the same value.
//! - Hand-written cases pin the corners: division by `X == 0`, shifts by `X >= 32`, `LEN`,
//!   `RET A` with large values, `nr == -1`, IP loads, i386 upper argument halves, more
//!   returns than one child can tell apart.
//! - Mutated programs check that the validator accepts exactly what `seccomp(2)` accepts.
//!
//! Where seccomp cannot be used (other OS or architecture, or a kernel that refuses the
//! trivial filter) the tests print a loud SKIPPED banner; set `SECOPT_REQUIRE_KERNEL_ORACLE=1`
//! (as CI does) to make that a failure instead.

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
#[test]
fn kernel_oracle_needs_linux_x86_64() {
    let msg = "the kernel oracle needs Linux on x86_64; the kernel differential tests did not run";
    assert!(
        std::env::var_os("SECOPT_REQUIRE_KERNEL_ORACLE").is_none(),
        "{msg}"
    );
    eprintln!("\n******** SKIPPED: {msg} ********\n");
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod x86_64 {
    use secopt::bpf::insn::*;
    use secopt::bpf::testing::{random_data, random_program, GenConfig, Rng};
    use secopt::bpf::validate::validate;
    use secopt::bpf::{interp, RetVal};
    use secopt::kernel::oracle::NATIVE_PASSTHROUGH_NRS;
    use secopt::kernel::{Answer, Call, Entry, Oracle, OracleError};
    use std::fmt::Write as _;
    use std::time::Instant;

    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e; // EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
    const AUDIT_ARCH_I386: u32 = 0x4000_0003; // EM_386 | __AUDIT_ARCH_LE
    const RET_A: Insn = Insn::stmt(BPF_RET | BPF_A, 0);

    /// The oracle, or `None` after a loud skip message when seccomp cannot be used here.
    fn oracle() -> Option<Oracle> {
        match Oracle::new() {
            Ok(o) => Some(o),
            Err(OracleError::Unavailable(why)) => {
                let msg = format!(
                    "kernel oracle unavailable: {why}; kernel differential test did not run"
                );
                assert!(
                    std::env::var_os("SECOPT_REQUIRE_KERNEL_ORACLE").is_none(),
                    "{msg}"
                );
                eprintln!("\n******** SKIPPED: {msg} ********\n");
                None
            }
            Err(e) => panic!("kernel oracle failed to start: {e}"),
        }
    }

    fn entries(o: &Oracle) -> Vec<Entry> {
        let e: Vec<Entry> = Entry::ALL.into_iter().filter(|e| o.supports(*e)).collect();
        if !e.contains(&Entry::I386) {
            eprintln!("\n******** NOTE: int $0x80 does not work here (no IA32 emulation); i386 entry not tested ********\n");
        }
        e
    }

    fn prog(insns: Vec<Insn>) -> Program {
        let p = Program::new(insns);
        validate(&p).expect("hand-written test program must be valid");
        p
    }

    /// Runs `p` on the kernel, checks every answer against the interpreter too, and returns
    /// the answers.
    fn run_checked(o: &Oracle, p: &Program, calls: &[Call]) -> Vec<Answer> {
        let answers = o.run(p, calls).unwrap();
        for (c, a) in calls.iter().zip(&answers) {
            if let Err(why) = check(p, a) {
                panic!(
                    "{why}\n  program: {p:?}\n  call: {c:?}\n  seen: {:?}",
                    a.data
                );
            }
        }
        answers
    }

    /// The values a program ending in `RET A` returns for `calls` (kernel and interpreter).
    fn ret_a_values(o: &Oracle, p: &Program, calls: &[Call]) -> Vec<u32> {
        run_checked(o, p, calls)
            .iter()
            .map(|a| {
                assert_eq!(a.ret_index, Some(p.len() - 1), "{a:?}");
                a.value.0
            })
            .collect()
    }

    /// What the interpreter says about the kernel's answer, or a description of the
    /// disagreement.
    fn check(p: &Program, a: &Answer) -> Result<(), String> {
        let t = interp::trace_words(p, &a.data.words())
            .map_err(|e| format!("interpreter error: {e}"))?;
        let index = if t.div_by_zero {
            None
        } else {
            t.path.last().copied()
        };
        if index == a.ret_index && t.ret == a.value {
            Ok(())
        } else {
            Err(format!(
                "kernel: return index {:?}, value {:?}; interpreter: return index {index:?}, value {:?}, path {:?}",
                a.ret_index, a.value, t.ret, t.path
            ))
        }
    }

    /// A random call through `entry`, with words drawn from the program's constants.
    fn random_call(rng: &mut Rng, p: &Program, entry: Entry) -> Call {
        let d = random_data(rng, p, &[entry.arch_token()]);
        let mut nr = d.nr;
        if entry == Entry::Native && NATIVE_PASSTHROUGH_NRS.contains(&nr) {
            // The kernel would run these instead of the filter (see kernel::oracle).
            nr += 2;
        }
        Call::new(entry, nr, d.args)
    }

    #[test]
    fn kernel_and_interpreter_agree_on_random_programs() {
        const PROGRAMS: u64 = 10_000;
        const CALLS_PER_PROGRAM: usize = 9;
        const BASE_SEED: u64 = 0x5ec0_0000;
        let Some(o) = oracle() else { return };
        let entries = entries(&o);
        let configs = [
            ("default", GenConfig::default()),
            ("cache_friendly", GenConfig::cache_friendly()),
        ];
        let started = Instant::now();
        let (mut calls_run, mut killed, mut via_ret_a) = (0usize, 0usize, 0usize);
        let mut per_entry = [0usize; 3];
        let mut failures = Vec::new();
        for n in 0..PROGRAMS {
            let seed = BASE_SEED + n;
            let mut rng = Rng::new(seed);
            // One program in four avoids ALU, X, scratch memory and RET A.
            let (cfg_name, cfg) = &configs[(n % 4 == 3) as usize];
            let p = random_program(&mut rng, cfg);
            if let Err(e) = validate(&p) {
                failures.push(format!("seed {seed:#x} ({cfg_name}): validator rejects a generated program: {e}\n  program: {p:?}"));
                continue;
            }
            let calls: Vec<Call> = (0..CALLS_PER_PROGRAM)
                .map(|i| random_call(&mut rng, &p, entries[i % entries.len()]))
                .collect();
            let answers = match o.run(&p, &calls) {
                Ok(a) => a,
                Err(e) => {
                    failures.push(format!("seed {seed:#x} ({cfg_name}): oracle error: {e}\n  program: {p:?}\n  calls: {calls:?}"));
                    continue;
                }
            };
            for (c, a) in calls.iter().zip(&answers) {
                calls_run += 1;
                per_entry[Entry::ALL.iter().position(|e| *e == c.entry).unwrap()] += 1;
                killed += a.ret_index.is_none() as usize;
                via_ret_a += a
                    .ret_index
                    .is_some_and(|i| p.insns[i].code == BPF_RET | BPF_A)
                    as usize;
                if let Err(why) = check(&p, a) {
                    failures.push(format!(
                        "seed {seed:#x} ({cfg_name}): {why}\n  program: {p:?}\n  call: {c:?}\n  seccomp_data seen: {:?}",
                        a.data
                    ));
                }
            }
        }
        eprintln!(
            "kernel oracle: {PROGRAMS} programs, {calls_run} calls (native {}, i386 {}, x32 {}), {killed} killed by DIV X==0, {via_ret_a} via RET A, {:.1} s",
            per_entry[0],
            per_entry[1],
            per_entry[2],
            started.elapsed().as_secs_f64()
        );
        if !failures.is_empty() {
            let mut msg = format!(
                "{} disagreements between the kernel and the interpreter:\n",
                failures.len()
            );
            for f in failures.iter().take(20) {
                let _ = writeln!(msg, "{f}");
            }
            panic!("{msg}");
        }
        // The run must have exercised the paths the oracle handles specially.
        assert!(
            killed > 0 && via_ret_a > 0,
            "killed {killed}, via RET A {via_ret_a}"
        );
    }

    #[test]
    fn division_by_x_zero_kills_and_the_batch_goes_on() {
        let Some(o) = oracle() else { return };
        // A = 100 / args[0].lo
        let p = prog(vec![
            Insn::ld_abs(16),
            Insn::stmt(BPF_MISC | BPF_TAX, 0),
            Insn::stmt(BPF_LD | BPF_IMM, 100),
            Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
            RET_A,
        ]);
        let mut calls = Vec::new();
        let mut expect = Vec::new();
        for e in entries(&o) {
            for (arg, want) in [
                (7u64, Some(14)),
                (0, None),
                (0x1_0000_0000, None), // only the low word is loaded
                (0x1_0000_0003, Some(33)),
                (0, None),
                (200, Some(0)),
            ] {
                calls.push(Call::new(e, 1, [arg, 0, 0, 0, 0, 0]));
                expect.push(want);
            }
        }
        let answers = run_checked(&o, &p, &calls);
        for ((c, a), want) in calls.iter().zip(&answers).zip(expect) {
            match want {
                None => assert_eq!((a.ret_index, a.value), (None, RetVal(0)), "{c:?}"),
                Some(v) => assert_eq!((a.ret_index, a.value), (Some(4), RetVal(v)), "{c:?}"),
            }
        }
    }

    #[test]
    fn shifts_by_x_use_only_the_low_five_bits() {
        let Some(o) = oracle() else { return };
        let shift = |op: u16, start: u32| {
            prog(vec![
                Insn::ld_abs(16),
                Insn::stmt(BPF_MISC | BPF_TAX, 0),
                Insn::stmt(BPF_LD | BPF_IMM, start),
                Insn::stmt(BPF_ALU | op | BPF_X, 0),
                RET_A,
            ])
        };
        let amounts = [0u64, 1, 31, 32, 33, 63, 0xffff_ffff];
        let calls: Vec<Call> = amounts
            .iter()
            .map(|&s| Call::new(Entry::Native, 0, [s, 0, 0, 0, 0, 0]))
            .collect();
        // (x & 31) for the amounts: 0, 1, 31, 0, 1, 31, 31.
        assert_eq!(
            ret_a_values(&o, &shift(BPF_LSH, 1), &calls),
            [1, 2, 0x8000_0000, 1, 2, 0x8000_0000, 0x8000_0000]
        );
        assert_eq!(
            ret_a_values(&o, &shift(BPF_RSH, 0x8000_0000), &calls),
            [0x8000_0000, 0x4000_0000, 1, 0x8000_0000, 0x4000_0000, 1, 1]
        );
    }

    #[test]
    fn len_loads_are_the_size_of_seccomp_data() {
        let Some(o) = oracle() else { return };
        let calls: Vec<Call> = entries(&o)
            .into_iter()
            .map(|e| Call::new(e, 0, [0; 6]))
            .collect();
        let ld = prog(vec![Insn::stmt(BPF_LD | BPF_W | BPF_LEN, 0), RET_A]);
        let ldx = prog(vec![
            Insn::stmt(BPF_LDX | BPF_W | BPF_LEN, 0),
            Insn::stmt(BPF_MISC | BPF_TXA, 0),
            RET_A,
        ]);
        for p in [ld, ldx] {
            assert!(ret_a_values(&o, &p, &calls).iter().all(|&v| v == 64));
        }
    }

    #[test]
    fn ret_a_returns_all_32_bits() {
        let Some(o) = oracle() else { return };
        let p = prog(vec![Insn::ld_abs(16), RET_A]);
        // Values straddling the 11-bit chunks the oracle reads A in.
        let values = [
            0u32,
            0x7ff,
            0x800,
            0x3f_ffff,
            0x40_0000,
            0x7fff_0000,
            0x8000_0000,
            0xdead_beef,
            0xffff_ffff,
        ];
        let calls: Vec<Call> = values
            .iter()
            .map(|&v| {
                Call::new(
                    Entry::Native,
                    0,
                    [0xaaaa_0000_0000_0000 | v as u64, 0, 0, 0, 0, 0],
                )
            })
            .collect();
        assert_eq!(ret_a_values(&o, &p, &calls), values);
        // Through int $0x80 only the low 32 bits of a 64-bit argument arrive.
        if o.supports(Entry::I386) {
            let c = Call::new(Entry::I386, 0, [0xffff_ffff_1234_5678, 0, 0, 0, 0, 0]);
            assert_eq!(ret_a_values(&o, &p, &[c]), [0x1234_5678]);
        }
        // A constant RET A and a RET K side by side.
        let p = prog(vec![
            Insn::ld_abs(16),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 2),
            Insn::stmt(BPF_LD | BPF_IMM, 0x7fff_1234),
            RET_A,
            Insn::ret(0x0003_0007),
        ]);
        let calls = [
            Call::new(Entry::Native, 0, [1, 0, 0, 0, 0, 0]),
            Call::new(Entry::Native, 0, [2, 0, 0, 0, 0, 0]),
        ];
        let a = run_checked(&o, &p, &calls);
        assert_eq!((a[0].ret_index, a[0].value), (Some(3), RetVal(0x7fff_1234)));
        assert_eq!((a[1].ret_index, a[1].value), (Some(4), RetVal(0x0003_0007)));
    }

    #[test]
    fn nr_minus_one_and_the_x32_bit_reach_the_filter() {
        let Some(o) = oracle() else { return };
        let p = prog(vec![
            Insn::ld_abs(0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0xffff_ffff, 0, 1),
            Insn::ret(0x0005_0001),
            Insn::ret(0x7fff_0000),
        ]);
        for e in entries(&o) {
            let a = run_checked(&o, &p, &[Call::new(e, -1, [0; 6]), Call::new(e, 0, [0; 6])]);
            assert_eq!(
                (a[0].ret_index, a[0].value),
                (Some(2), RetVal(0x0005_0001)),
                "{e:?}"
            );
            assert_eq!(
                (a[1].ret_index, a[1].value),
                (Some(3), RetVal(0x7fff_0000)),
                "{e:?}"
            );
        }
        let nr = prog(vec![Insn::ld_abs(0), RET_A]);
        let mut calls = vec![
            Call::new(Entry::Native, 5, [0; 6]),
            Call::new(Entry::X32, 5, [0; 6]),
            Call::new(Entry::X32, -1, [0; 6]),
            Call::new(Entry::Native, i32::MIN, [0; 6]),
        ];
        let mut want = vec![5, 0x4000_0005, 0xffff_ffff, 0x8000_0000];
        if o.supports(Entry::I386) {
            calls.push(Call::new(Entry::I386, -1, [0; 6]));
            want.push(0xffff_ffff);
        }
        assert_eq!(ret_a_values(&o, &nr, &calls), want);
    }

    #[test]
    fn arch_and_instruction_pointer_are_what_each_entry_reports() {
        let Some(o) = oracle() else { return };
        let load = |off| prog(vec![Insn::ld_abs(off), RET_A]);
        let es = entries(&o);
        let calls: Vec<Call> = es.iter().map(|&e| Call::new(e, 0, [0; 6])).collect();
        let arch = ret_a_values(&o, &load(4), &calls);
        let ip_lo = ret_a_values(&o, &load(8), &calls);
        let ip_hi = ret_a_values(&o, &load(12), &calls);
        // Where the syscall instructions are: inside secopt::kernel::entry::issue.
        let issue = secopt::kernel::entry::issue as *const () as usize as u64;
        for (i, e) in es.iter().enumerate() {
            let token = if *e == Entry::I386 {
                AUDIT_ARCH_I386
            } else {
                AUDIT_ARCH_X86_64
            };
            assert_eq!(arch[i], token, "{e:?}");
            let ip = (ip_hi[i] as u64) << 32 | ip_lo[i] as u64;
            assert_eq!(Some(ip), o.ip(*e), "{e:?}");
            assert!(
                (issue..issue + 512).contains(&ip),
                "{e:?}: ip {ip:#x} not right after a syscall instruction in issue() at {issue:#x}"
            );
        }
        // Native and x32 share the `syscall` instruction; int $0x80 is another one.
        assert_eq!(o.ip(Entry::Native), o.ip(Entry::X32));
        if o.supports(Entry::I386) {
            assert_ne!(o.ip(Entry::Native), o.ip(Entry::I386));
        }
    }

    #[test]
    fn i386_arguments_have_zero_upper_halves() {
        let Some(o) = oracle() else { return };
        let all_ones = [u64::MAX; 6];
        for arg in 0..6u32 {
            let lo = prog(vec![Insn::ld_abs(16 + 8 * arg), RET_A]);
            let hi = prog(vec![Insn::ld_abs(20 + 8 * arg), RET_A]);
            let mut calls = vec![Call::new(Entry::Native, 0, all_ones)];
            let mut want_hi = vec![0xffff_ffff];
            if o.supports(Entry::I386) {
                calls.push(Call::new(Entry::I386, 0, all_ones));
                want_hi.push(0);
            }
            assert!(ret_a_values(&o, &lo, &calls)
                .iter()
                .all(|&v| v == 0xffff_ffff));
            assert_eq!(ret_a_values(&o, &hi, &calls), want_hi, "args[{arg}].hi");
        }
    }

    #[test]
    fn more_returns_than_one_child_can_tell_apart() {
        let Some(o) = oracle() else { return };
        // 4096 instructions: a dispatch on args[0].lo, then 4094 distinct returns.
        let mut insns = vec![
            Insn::ld_abs(16),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
            Insn::ja(4092), // to the last return, index 4095
        ];
        for i in 3..4096u32 {
            insns.push(Insn::ret(0x0005_0000 | (i & 0xfff)));
        }
        let p = prog(insns);
        let calls = [
            Call::new(Entry::Native, 0, [1, 0, 0, 0, 0, 0]),
            Call::new(Entry::Native, 0, [2, 0, 0, 0, 0, 0]),
        ];
        let a = run_checked(&o, &p, &calls);
        assert_eq!(
            (a[0].ret_index, a[0].value),
            (Some(4095), RetVal(0x0005_0fff))
        );
        assert_eq!((a[1].ret_index, a[1].value), (Some(3), RetVal(0x0005_0003)));
    }

    #[test]
    fn ret_a_needs_room_for_the_epilogue() {
        let Some(o) = oracle() else { return };
        let long = |len: usize| {
            let mut insns = vec![Insn::stmt(BPF_LD | BPF_IMM, 0x7ffc_0000); len - 1];
            insns.push(RET_A);
            prog(insns)
        };
        let c = [Call::new(Entry::Native, 0, [0; 6])];
        assert_eq!(ret_a_values(&o, &long(4092), &c), [0x7ffc_0000]);
        assert!(matches!(
            o.run(&long(4093), &c),
            Err(OracleError::NoRoomForEpilogue {
                index: 0,
                len: 4093
            })
        ));
    }

    #[test]
    fn passthrough_numbers_are_refused_natively_only() {
        let Some(o) = oracle() else { return };
        let p = prog(vec![Insn::ret(0x7fff_0000)]);
        for nr in NATIVE_PASSTHROUGH_NRS {
            assert!(matches!(
                o.run(&p, &[Call::new(Entry::Native, nr, [0; 6])]),
                Err(OracleError::Passthrough { index: 0, .. })
            ));
            let others: Vec<Call> = entries(&o)
                .into_iter()
                .filter(|e| *e != Entry::Native)
                .map(|e| Call::new(e, nr, [0; 6]))
                .collect();
            for a in run_checked(&o, &p, &others) {
                assert_eq!((a.ret_index, a.value), (Some(0), RetVal(0x7fff_0000)));
            }
        }
    }

    /// A program with one random change that may or may not keep it valid.
    fn mutate(rng: &mut Rng, p: &Program) -> Program {
        let mut insns = p.insns.clone();
        let i = rng.below(insns.len());
        let interesting_k = [
            0u32,
            1,
            2,
            3,
            4,
            15,
            16,
            17,
            31,
            32,
            33,
            60,
            62,
            63,
            64,
            68,
            0xffff_f000,
            0xffff_ffff,
        ];
        match rng.below(7) {
            // Any opcode of the low byte: classic opcodes seccomp rejects, unknown ones, …
            0 => insns[i].code = rng.below(256) as u16,
            1 => insns[i].code = rng.next_u32() as u16,
            2 => {
                insns[i].k = if rng.chance(1, 2) {
                    rng.pick(&interesting_k)
                } else {
                    rng.next_u32()
                }
            }
            3 => {
                insns[i].jt = rng.next_u32() as u8;
                insns[i].jf = rng.below(4) as u8;
            }
            4 => {
                let j = rng.below(insns.len());
                insns.swap(i, j);
            }
            5 => {
                let code = rng.pick(&[BPF_LD | BPF_MEM, BPF_LDX | BPF_MEM, BPF_ST, BPF_STX]);
                insns[i] = Insn::stmt(code, rng.below(17) as u32);
            }
            _ => {
                if rng.chance(1, 2) || insns.len() == 1 {
                    insns.push(Insn::ret(0));
                } else {
                    insns.pop();
                }
            }
        }
        Program::new(insns)
    }

    #[test]
    fn validator_accepts_exactly_what_the_kernel_accepts() {
        let Some(o) = oracle() else { return };
        // Hand-picked programs on either side of each rule.
        let mut cases = vec![
            (vec![Insn::ld_abs(60), Insn::ret(0)], true),
            (vec![Insn::ld_abs(64), Insn::ret(0)], false),
            (vec![Insn::ld_abs(2), Insn::ret(0)], false),
            (
                vec![Insn::stmt(BPF_ALU | BPF_DIV | BPF_K, 0), Insn::ret(0)],
                false,
            ),
            (
                vec![Insn::stmt(BPF_ALU | BPF_LSH | BPF_K, 31), Insn::ret(0)],
                true,
            ),
            (
                vec![Insn::stmt(BPF_ALU | BPF_LSH | BPF_K, 32), Insn::ret(0)],
                false,
            ),
            (
                vec![Insn::stmt(BPF_ALU | BPF_MOD | BPF_K, 3), Insn::ret(0)],
                false,
            ),
            (vec![Insn::stmt(BPF_LD | BPF_MEM, 0), Insn::ret(0)], false),
            (
                vec![
                    Insn::stmt(BPF_ST, 15),
                    Insn::stmt(BPF_LD | BPF_MEM, 15),
                    Insn::ret(0),
                ],
                true,
            ),
            (vec![Insn::stmt(BPF_ST, 16), Insn::ret(0)], false),
            (vec![Insn::stmt(BPF_RET | BPF_X, 0)], false),
            (vec![Insn::ja(0), Insn::ret(0)], true),
            (vec![Insn::ja(1), Insn::ret(0)], false),
            (vec![Insn::ld_abs(0)], false),
            (vec![], false),
        ];
        cases.push((vec![Insn::ret(0); 4096], true));
        cases.push((vec![Insn::ret(0); 4097], false));
        let mut failures = Vec::new();
        for (insns, want) in cases {
            let p = Program::new(insns);
            let kernel = o.accepts(&p).unwrap();
            assert_eq!(kernel, want, "kernel on {p:?}");
            if validate(&p).is_ok() != kernel {
                failures.push(format!("hand-written: kernel accepts = {kernel}, validator says {:?}\n  program: {p:?}", validate(&p)));
            }
        }
        // Random valid programs with one random change each.
        const MUTANTS: u64 = 5000;
        let started = Instant::now();
        let (mut accepted, mut rejected) = (0, 0);
        for n in 0..MUTANTS {
            let seed = 0x7a11_0000 + n;
            let mut rng = Rng::new(seed);
            let base = random_program(&mut rng, &GenConfig::default());
            let p = mutate(&mut rng, &base);
            let kernel = o.accepts(&p).unwrap();
            if kernel {
                accepted += 1;
            } else {
                rejected += 1;
            }
            let ours = validate(&p);
            if ours.is_ok() != kernel {
                failures.push(format!("seed {seed:#x}: kernel accepts = {kernel}, validator says {ours:?}\n  program: {p:?}"));
            }
        }
        eprintln!(
            "validator vs kernel: {MUTANTS} mutated programs ({accepted} accepted, {rejected} rejected), {:.1} s",
            started.elapsed().as_secs_f64()
        );
        assert!(
            failures.is_empty(),
            "{} disagreements:\n{}",
            failures.len(),
            failures.join("\n")
        );
        assert!(
            accepted > 100 && rejected > 100,
            "mutations too one-sided: {accepted}/{rejected}"
        );
    }

    /// A filter `compile` laid out to fit the kernel's limit (3 000 scattered `ioctl`
    /// requests: 4 000-odd instructions of value trees of short chains) is accepted by
    /// `seccomp(2)` and decides on the kernel as the profile says: ALLOW for every listed
    /// request of a native `ioctl`, EPERM for its neighbours and for other syscalls; and the
    /// interpreter took the same return instruction on every call.
    #[test]
    fn a_filter_laid_out_to_fit_decides_as_its_profile_on_the_kernel() {
        let Some(o) = oracle() else { return };
        let mut rng = Rng::new(3000);
        let mut requests: Vec<u32> = (0..3000).map(|_| rng.next_u32()).collect();
        requests.sort_unstable();
        requests.dedup();
        let rules: Vec<String> = requests
            .iter()
            .map(|v| {
                format!(
                    r#"{{"names": ["ioctl"], "action": "SCMP_ACT_ALLOW",
                         "args": [{{"index": 1, "value": {v}, "op": "SCMP_CMP_EQ"}}]}}"#
                )
            })
            .collect();
        let profile = format!(
            r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{}]}}"#,
            rules.join(",")
        );
        let resolve = secopt::policy::ResolveOptions {
            native: Some(secopt::arch::Arch::X86_64),
            arches: Some(vec![secopt::arch::Arch::X86_64]),
            ..Default::default()
        };
        // The self-check's default budget counts work, not time (a 10 s clock it once had ran
        // out here in the thirty-first session, with the other kernel tests beside it).
        let options = secopt::compile::CompileOptions {
            optimize: Some(secopt::optimize::OptimizeOptions {
                report: false,
                ..Default::default()
            }),
            ..Default::default()
        };
        let filter =
            secopt::compile::compile_oci(profile.as_bytes(), "ioctls.json", &resolve, &options)
                .unwrap();
        let notes = &filter.info().optimization.as_ref().unwrap().notes;
        assert!(
            notes
                .iter()
                .any(|n| n.kind == secopt::optimize::note::NoteKind::LaidOutToFit),
            "{notes:?}"
        );
        let p = filter.program();
        assert!(p.len() > 3000 && p.len() <= BPF_MAXINSNS);
        const IOCTL: i32 = 16;
        let mut calls: Vec<(Call, RetVal)> = Vec::new();
        for &v in &requests {
            for probe in [v, v.wrapping_add(1), v.wrapping_sub(1)] {
                let listed = requests.binary_search(&probe).is_ok();
                let expected = if listed {
                    RetVal::ALLOW
                } else {
                    RetVal::errno(1)
                };
                // The upper half set: not the listed request.
                let args = [3, u64::from(probe), 0, 0, 0, 0];
                calls.push((Call::new(Entry::Native, IOCTL, args), expected));
                let high = [3, u64::from(probe) | 1 << 32, 0, 0, 0, 0];
                calls.push((Call::new(Entry::Native, IOCTL, high), RetVal::errno(1)));
            }
        }
        for nr in [0, 1, 17, 300] {
            calls.push((
                Call::new(Entry::Native, nr, [3, u64::from(requests[0]), 0, 0, 0, 0]),
                RetVal::errno(1),
            ));
        }
        let only_calls: Vec<Call> = calls.iter().map(|c| c.0).collect();
        let answers = o.run(p, &only_calls).unwrap();
        for ((call, expected), answer) in calls.iter().zip(&answers) {
            assert_eq!(answer.value, *expected, "{call:?}");
            if let Err(why) = check(p, answer) {
                panic!("{why}\n  call: {call:?}");
            }
        }
    }
}
