//! The assembler and disassembler: exact round trips, names, and error positions.
//!
//! Expected encodings are computed by hand from the opcode constants of
//! `include/uapi/linux/filter.h` (e.g. `BPF_LD|BPF_W|BPF_ABS` = 0x00|0x00|0x20), syscall
//! numbers from the kernel's syscall tables or from the system libseccomp's resolver, arch
//! tokens from `include/uapi/linux/audit.h`, return values from `include/uapi/linux/seccomp.h`.

use libseccomp::{scmp_cmp, ScmpAction, ScmpArch, ScmpFilterContext, ScmpSyscall};
use proptest::prelude::*;
use secopt::arch::{Arch, Endian};
use secopt::bpf::asm::{assemble, AsmError};
use secopt::bpf::disasm::{disassemble, DisasmOptions};
use secopt::bpf::testing::{random_program, GenConfig, Rng};
use secopt::bpf::validate::validate;
use secopt::bpf::{interp, Insn, Program, SeccompData};
use std::io::{Read, Seek};
use std::os::fd::FromRawFd;

const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const AUDIT_ARCH_S390X: u32 = 0x8000_0016;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;

fn insn(code: u16, jt: u8, jf: u8, k: u32) -> Insn {
    Insn::new(code, jt, jf, k)
}

fn asm_ok(src: &str) -> Vec<Insn> {
    match assemble(src) {
        Ok(p) => p.insns,
        Err(e) => panic!("{e}\n--- source ---\n{src}"),
    }
}

fn asm_err(src: &str) -> AsmError {
    match assemble(src) {
        Ok(p) => panic!("expected an error, got {p:?}\n--- source ---\n{src}"),
        Err(e) => e,
    }
}

fn opts(index_comments: bool, arch: Option<Arch>) -> DisasmOptions {
    DisasmOptions {
        index_comments,
        arch,
    }
}

fn assert_round_trip(p: &Program, o: &DisasmOptions) {
    let text = disassemble(p, o);
    match assemble(&text) {
        Ok(q) => assert_eq!(&q, p, "round trip changed the program\n{text}"),
        Err(e) => panic!("disassembly does not assemble: {e}\n{text}\n{p:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Hand-written sources with hand-computed encodings

#[test]
fn typical_filter_encodes_as_computed_by_hand() {
    let src = "\
; allow read and openat on x86_64, kill everything else
    ld [arch]
    jeq #AUDIT_ARCH_X86_64, next, kill
    ld [nr]
    jge #0x40000000, kill           ; x32
    jeq #x86_64.read, allow
    jeq #x86_64.openat, check_flags, kill
check_flags:
    ld [args[2].lo]
    jset #0x3, kill, allow          # is not a comment: `#` starts a constant
kill:   ret KILL_PROCESS
allow:  ret ALLOW
";
    // Line 10 carries a `#` after the targets, which is an error; fix it and check the
    // encoding of the rest.
    let e = asm_err(src);
    assert_eq!((e.line, e.column), (10, 37), "{e}");
    let src = src.replace("# is not a comment: `#` starts a constant", "");
    let got = asm_ok(&src);
    let expected = vec![
        insn(0x20, 0, 0, 4),                 // LD|W|ABS, offsetof(seccomp_data, arch)
        insn(0x15, 0, 6, AUDIT_ARCH_X86_64), // JMP|JEQ|K, kill is 8 = 1 + 1 + 6
        insn(0x20, 0, 0, 0),                 // nr
        insn(0x35, 4, 0, 0x4000_0000),       // JMP|JGE|K
        insn(0x15, 4, 0, 0),                 // read is 0 in syscall_64.tbl; allow = 9
        insn(0x15, 0, 2, 257),               // openat is 257 on x86_64
        insn(0x20, 0, 0, 32),                // args[2] at 16 + 8*2, low half first (LE)
        insn(0x45, 0, 1, 3),                 // JMP|JSET|K
        insn(0x06, 0, 0, SECCOMP_RET_KILL_PROCESS),
        insn(0x06, 0, 0, SECCOMP_RET_ALLOW),
    ];
    assert_eq!(got, expected);
}

#[test]
fn every_opcode_form_encodes_as_computed_by_hand() {
    let src = "\
    ld #5
    ldx #7
    ld len
    ldx len
    st M[3]
    stx M[4]
    ld M[3]
    ldx M[4]
    add #1
    sub x
    mul #3
    div x
    or #0x10
    and #0xff
    lsh #2
    rsh x
    neg
    xor #1
    tax
    txa
    jmp next
    ja +0
    jgt x, next, +1
    jge #9, next
    jset x, +1, next
    ld [ip.lo]
    ld [ip.hi]
    ld [args[5].hi]
    ld [60]
    ret a
";
    let expected = vec![
        insn(0x00, 0, 0, 5), // LD|IMM
        insn(0x01, 0, 0, 7), // LDX|IMM
        insn(0x80, 0, 0, 0), // LD|W|LEN
        insn(0x81, 0, 0, 0), // LDX|W|LEN
        insn(0x02, 0, 0, 3), // ST
        insn(0x03, 0, 0, 4), // STX
        insn(0x60, 0, 0, 3), // LD|MEM
        insn(0x61, 0, 0, 4), // LDX|MEM
        insn(0x04, 0, 0, 1), // ALU|ADD|K
        insn(0x1c, 0, 0, 0), // ALU|SUB|X
        insn(0x24, 0, 0, 3), // ALU|MUL|K
        insn(0x3c, 0, 0, 0), // ALU|DIV|X
        insn(0x44, 0, 0, 0x10),
        insn(0x54, 0, 0, 0xff),
        insn(0x64, 0, 0, 2), // ALU|LSH|K
        insn(0x7c, 0, 0, 0), // ALU|RSH|X
        insn(0x84, 0, 0, 0), // ALU|NEG
        insn(0xa4, 0, 0, 1), // ALU|XOR|K
        insn(0x07, 0, 0, 0), // MISC|TAX
        insn(0x87, 0, 0, 0), // MISC|TXA
        insn(0x05, 0, 0, 0), // JMP|JA
        insn(0x05, 0, 0, 0),
        insn(0x2d, 0, 1, 0), // JMP|JGT|X
        insn(0x35, 0, 0, 9), // JMP|JGE|K
        insn(0x4d, 1, 0, 0), // JMP|JSET|X
        insn(0x20, 0, 0, 8),
        insn(0x20, 0, 0, 12),
        insn(0x20, 0, 0, 60), // args[5] at 56, high half second on LE
        insn(0x20, 0, 0, 60),
        insn(0x16, 0, 0, 0), // RET|A
    ];
    assert_eq!(asm_ok(src), expected);
}

#[test]
fn actions_and_numbers_have_several_input_spellings() {
    let got = asm_ok(
        "ret ERRNO(1)\nret #0x00050001\nret errno(1)\nret SCMP_ACT_KILL\nret TRACE(0x10)\nret 0x12340000\nret ALLOW(5)\n",
    );
    let ks: Vec<u32> = got.iter().map(|i| i.k).collect();
    assert_eq!(
        ks,
        [
            SECCOMP_RET_ERRNO | 1,
            SECCOMP_RET_ERRNO | 1,
            SECCOMP_RET_ERRNO | 1,
            0,
            0x7ff0_0010,
            0x1234_0000,
            SECCOMP_RET_ALLOW | 5
        ]
    );
    // Constants: negative numbers wrap, actions fit where a constant does.
    let got = asm_ok("ld #-1\nldx #ERRNO(13)\nld #0b101\nld #0o17\nld #1_000\nld #ALLOW\nret a");
    let ks: Vec<u32> = got.iter().map(|i| i.k).collect();
    assert_eq!(
        ks[..6],
        [
            0xffff_ffff,
            SECCOMP_RET_ERRNO | 13,
            5,
            15,
            1000,
            SECCOMP_RET_ALLOW
        ]
    );
    // `ret #-1` reads as `#-1` does everywhere (an audit found it refused): 0xffffffff is
    // SECCOMP_RET_KILL_PROCESS (0x80000000) with all data bits set; -2^31 is the smallest.
    let got = asm_ok("ret #-1\nret #-2147483648\nret #0xffffffff");
    assert_eq!(got[0], got[2]);
    assert_eq!(got[0].k, 0xffff_ffff);
    assert_eq!(got[1].k, 0x8000_0000);
    let e = asm_err("ret #-2147483649");
    assert!(e.to_string().contains("does not fit in 32 bits"), "{e}");
}

#[test]
fn jump_targets_by_label_offset_index_and_sugar() {
    let got = asm_ok(
        "\
    ld [nr]
    jeq #1, a, b        ; 1
    jne #2, b           ; 2: = jeq #2, next, b
    jlt #3, a, b        ; 3: = jge #3, b, a
    jle #4, 7           ; 4: = jgt #4, next, 7 (absolute index)
    jgt #5, +1, next    ; 5
a:  ret ALLOW           ; 6
b:  ret KILL_PROCESS    ; 7
",
    );
    assert_eq!(got[1], insn(0x15, 4, 5, 1));
    assert_eq!(got[2], insn(0x15, 0, 4, 2));
    assert_eq!(got[3], insn(0x35, 3, 2, 3));
    assert_eq!(got[4], insn(0x25, 0, 2, 4));
    assert_eq!(got[5], insn(0x25, 1, 0, 5));
}

#[test]
fn ignored_fields_have_an_explicit_spelling() {
    let got =
        asm_ok("tax {jt=3, jf=4, k=0x99}\nld [nr] {jf=1}\njeq x, next, next {k=7}\nret a {k=5}");
    assert_eq!(
        got,
        vec![
            insn(0x07, 3, 4, 0x99),
            insn(0x20, 0, 1, 0),
            insn(0x1d, 0, 0, 7),
            insn(0x16, 0, 0, 5)
        ]
    );
    // The disassembler prints them only when nonzero, and reads them back.
    let p = Program::new(got);
    let text = disassemble(&p, &DisasmOptions::default());
    assert!(text.contains("tax {jt=3, jf=4, k=153}"), "{text}");
    assert!(text.contains("ld [nr] {jf=1}"), "{text}");
    assert!(text.contains("ret a {k=5}"), "{text}");
    assert_round_trip(&p, &DisasmOptions::default());
}

#[test]
fn byte_order_decides_which_half_is_lo() {
    // Little-endian (default): args[0].lo at 16, .hi at 20; big-endian the other way round.
    assert_eq!(asm_ok("ld [args[0].lo]\nret a")[0].k, 16);
    assert_eq!(asm_ok("ld [args[0].hi]\nret a")[0].k, 20);
    assert_eq!(asm_ok(".endian big\nld [args[0].lo]\nret a")[0].k, 20);
    assert_eq!(asm_ok(".arch s390x\nld [args[0].hi]\nret a")[0].k, 16);
    assert_eq!(
        asm_ok(".arch s390x\n.endian little\nld [args[0].hi]\nret a")[0].k,
        20
    );
    assert_eq!(asm_ok(".endian big\nld [ip.lo]\nret a")[0].k, 12);
    // Raw offsets do not depend on it.
    assert_eq!(asm_ok(".endian big\nld [20]\nret a")[0].k, 20);
}

#[test]
fn disassembly_names_big_endian_fields_and_says_so() {
    // ld [arch]; jeq s390x; ld [20] (args[0] low half on big-endian); ret a; ret KILL.
    let p = Program::new(vec![
        insn(0x20, 0, 0, 4),
        insn(0x15, 0, 2, AUDIT_ARCH_S390X),
        insn(0x20, 0, 0, 20),
        insn(0x16, 0, 0, 0),
        insn(0x06, 0, 0, 0),
    ]);
    let text = disassemble(&p, &DisasmOptions::default());
    let expected = "\
.endian big
    ld [arch]
    jeq #AUDIT_ARCH_S390X, next, kill_thread
    ld [args[0].lo]
    ret a
kill_thread:
    ret KILL_THREAD
";
    assert_eq!(text, expected);
    assert_round_trip(&p, &DisasmOptions::default());
}

#[test]
fn disassembly_of_a_small_filter_reads_as_documented() {
    let p = Program::new(vec![
        insn(0x20, 0, 0, 4),
        insn(0x15, 0, 5, AUDIT_ARCH_X86_64),
        insn(0x20, 0, 0, 0),
        insn(0x15, 4, 0, 1),           // write
        insn(0x15, 0, 2, 0x4000_0001), // x32 write
        insn(0x20, 0, 0, 16),
        insn(0x15, 1, 0, 2),
        insn(0x06, 0, 0, SECCOMP_RET_ERRNO | 1),
        insn(0x06, 0, 0, SECCOMP_RET_ALLOW),
    ]);
    let expected = "    ld [arch]                                   ; 0
    jeq #AUDIT_ARCH_X86_64, next, errno_1       ; 1
    ld [nr]                                     ; 2
    jeq #x86_64.write, allow, next              ; 3
    jeq #x32.write, next, errno_1               ; 4
    ld [args[0].lo]                             ; 5
    jeq #2, allow, next                         ; 6
errno_1:
    ret ERRNO(1)                                ; 7
allow:
    ret ALLOW                                   ; 8
";
    assert_eq!(disassemble(&p, &opts(true, None)), expected);
    assert_round_trip(&p, &opts(true, None));
}

#[test]
fn duplicate_returns_get_indexed_labels_and_invalid_programs_still_print() {
    let p = Program::new(vec![
        insn(0x15, 1, 2, 0),
        insn(0x06, 0, 0, 0),
        insn(0x06, 0, 0, SECCOMP_RET_ALLOW),
        insn(0x06, 0, 0, SECCOMP_RET_ALLOW),
    ]);
    let text = disassemble(&p, &DisasmOptions::default());
    assert!(text.contains("jeq #0, allow.2, allow.3"), "{text}");
    assert_round_trip(&p, &DisasmOptions::default());

    // LD|H|ABS (0x28) is classic BPF but not seccomp; a jump past the end.
    let bad = Program::new(vec![
        insn(0x28, 0, 0, 4),
        insn(0x15, 0, 9, 1),
        insn(0x06, 0, 0, 0),
    ]);
    let text = disassemble(&bad, &DisasmOptions::default());
    assert!(text.contains(".insn 0x28, 0, 0, 4"), "{text}");
    assert!(text.contains("jeq #1, next, +9"), "{text}");
    let e = asm_err(&text);
    assert!(e.message.contains("kernel would reject"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Syscall names

#[test]
fn unqualified_names_follow_the_arch_checks() {
    let src = "\
    ld [arch]
    jeq #AUDIT_ARCH_X86_64, x86_64, next
    jeq #AUDIT_ARCH_I386, x86, next
    jeq #AUDIT_ARCH_AARCH64, arm64, kill
x86_64:
    ld [nr]
    jge #0x40000000, x32, next
    jeq #openat, allow, kill         ; x86_64 wins over x32 where both are possible
x32:
    jeq #openat, allow, kill         ; only x32 reaches here
x86:
    ld [nr]
    jeq #socketcall, allow, kill
arm64:
    ld [nr]
    jeq #openat, allow, kill
kill: ret KILL_PROCESS
allow: ret ALLOW
";
    let got = asm_ok(src);
    // Numbers from the kernel's tables: syscall_64.tbl (openat 257), x32 is 257 + bit 30,
    // syscall_32.tbl (socketcall 102), asm-generic/unistd.h (openat 56).
    assert_eq!(got[6].k, 257);
    assert_eq!(got[7].k, 0x4000_0000 | 257);
    assert_eq!(got[9].k, 102);
    assert_eq!(got[11].k, 56);
    // `.arch` gives the entry arch when the program has no arch check.
    assert_eq!(
        asm_ok(".arch aarch64\nld [nr]\njeq #openat, next\nret a")[1].k,
        56
    );
    assert_eq!(
        asm_ok(".arch x32\nld [nr]\njeq #read, next\nret a")[1].k,
        0x4000_0000
    );
}

#[test]
fn qualified_names_resolve_anywhere() {
    let got = asm_ok(
        "ld [nr]\njeq #x86.socketcall, next\njeq #amd64.read, next\njeq #arm.openat, next\nret a",
    );
    // syscall_32.tbl: socketcall 102; arm's calls.S: openat 322.
    assert_eq!((got[1].k, got[2].k, got[3].k), (102, 0, 322));
}

// ---------------------------------------------------------------------------------------
// Errors

#[test]
fn errors_say_where_and_what() {
    let check = |src: &str, line: usize, column: usize, needle: &str| {
        let e = asm_err(src);
        assert_eq!((e.line, e.column), (line, column), "{e}\n{src}");
        assert!(e.message.contains(needle), "`{needle}` not in: {e}");
        assert!(
            e.to_string().starts_with(&format!("{line}:{column}: ")),
            "{e}"
        );
    };
    let prologue = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\n";
    // Classic BPF that seccomp refuses (kernel/seccomp.c `seccomp_check_filter`: no MOD, only
    // 32-bit absolute loads) is named as such.
    check("mod #3\nret ALLOW", 1, 1, "seccomp filters may not use it");
    check("ldh [0]\nret ALLOW", 1, 1, "32-bit words only");
    check("ld [x + 4]\nret ALLOW", 1, 5, "indirect loads");
    // A non-ASCII name is one bad word, not `l` followed by junk.
    check("lábel: ret ALLOW", 1, 1, "`lábel` (names are ASCII");
    check(
        &format!("{prologue}jeq #reed, allow, kill\nkill: ret KILL_PROCESS\nallow: ret ALLOW"),
        4,
        6,
        "unknown syscall `reed` for x86_64; did you mean `read`?",
    );
    check(
        &format!("{prologue}jeq #x86.reed, allow, kill\nkill: ret KILL_PROCESS\nallow: ret ALLOW"),
        4,
        10,
        "unknown syscall `reed` for x86",
    );
    check(
        "ld [nr]\njeq #read, a, next\na: ret ALLOW",
        2,
        6,
        "cannot tell which architecture",
    );
    check(
        "ld [nr]\njeq #x86_64.read, alow\nallow: ret ALLOW",
        2,
        19,
        "undefined label `alow`; did you mean `allow`?",
    );
    check(
        "a: ret ALLOW\n  a: ret ALLOW",
        2,
        3,
        "label `a` is already defined at line 1",
    );
    check(
        "ld [nr]\nb: jeq #1, a, next\nret a\na: ja b\nret a",
        4,
        7,
        "only go forward",
    );
    check("ld M[16]\nret a", 1, 6, "scratch index 16");
    check("lsh #32\nret a", 1, 5, "below 32");
    check("div #0\nret a", 1, 5, "division by the constant 0");
    check("ld [args[6].lo]\nret a", 1, 10, "argument index 6");
    check("ld [args[1]]\nret a", 1, 12, "`.lo` or `.hi`");
    check("ld [foo]\nret a", 1, 5, "unknown field `foo`");
    check("ldd [nr]\nret a", 1, 1, "did you mean `ld`?");
    check("ret ERRNO(70000)", 1, 11, "16 data bits");
    check("ret FOO", 1, 5, "unknown action name");
    check("ret x", 1, 5, "`ret x` is not allowed");
    check("ldx [nr]\nret a", 1, 5, "`ldx` cannot load");
    check("ld [nr] $\nret a", 1, 9, "unexpected character `$`");
    check(
        "ld [nr] nr\nret a",
        1,
        9,
        "unexpected `nr` after the instruction",
    );
    check(
        "jeq #1\nret a",
        1,
        7,
        "expected `,` and a jump target, found end of line",
    );
    check(
        "jeq #1, end\nret a\nend:",
        1,
        9,
        "past the last instruction",
    );
    check("ld #99999999999\nret a", 1, 5, "not a 32-bit number");
    check("ld #-2147483649\nret a", 1, 5, "does not fit in 32 bits");
    check(
        "ld #1 {k=3}\nret a",
        1,
        8,
        "`k` is given by this instruction's operand",
    );
    check(
        "jeq #1, next, next {jt=1}\nret a",
        1,
        21,
        "given by the jump targets",
    );
    check("ret a\n.arch x86_64", 2, 1, "before the first instruction");
    check(".arch vax\nret a", 1, 7, "unknown architecture `vax`");
    check(
        ".arch x86_64, s390x\nld [args[0].lo]\nret a",
        2,
        5,
        ".endian",
    );
    check(".frobnicate\nret a", 1, 1, "unknown directive");
    check(
        "ld [arch]\njeq #AUDIT_ARCH_VAX, next\nret a",
        2,
        6,
        "unknown architecture in",
    );
    check("next: ret a", 1, 1, "reserved");
    // Program-level rules point at the offending instruction's line.
    check(
        "ld [nr]\n\n  ld M[3]\nret a",
        3,
        3,
        "M[3] is read before it is written",
    );
    check(
        "ld [nr]\n; no return",
        1,
        1,
        "the last instruction must be RET",
    );
    check("ld [17]\nret a", 1, 1, "multiple of 4");
    check("; nothing\n", 1, 1, "program is empty");
}

#[test]
fn conditional_jumps_that_are_too_far_name_the_label_and_distance() {
    // `jump` at index 1, then `skipped` loads, then `far`.
    let source = |jump: &str, skipped: usize| {
        format!(
            "ld [nr]\n{jump}\n{}far: ret ALLOW\n",
            "ld [nr]\n".repeat(skipped)
        )
    };
    let e = asm_err(&source("jeq #1, far, next", 256));
    assert_eq!((e.line, e.column), (2, 9), "{e}");
    assert!(
        e.message.contains("`far`") && e.message.contains("256"),
        "{e}"
    );
    let e = asm_err(&source("jeq #1, next, far", 300));
    assert_eq!((e.line, e.column), (2, 15), "{e}");
    assert!(e.message.contains("300"), "{e}");
    // 255 fits in jt, and `ja` reaches any distance.
    assert_eq!(
        asm_ok(&source("jeq #1, far, next", 255))[1],
        insn(0x15, 255, 0, 1)
    );
    assert_eq!(asm_ok(&source("ja far", 1000))[1], insn(0x05, 0, 0, 1000));
}

#[test]
fn too_many_instructions_points_at_the_first_one_over() {
    let src = "ld [nr]\n".repeat(4096) + "ret a\n";
    let e = asm_err(&src);
    assert_eq!((e.line, e.column), (4097, 1), "{e}");
    assert!(e.message.contains("4097 instructions"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Round trips over random valid programs

/// Arch tokens (both byte orders) and syscall numbers, so the names get exercised.
fn naming_config() -> GenConfig {
    let mut cfg = GenConfig::default();
    cfg.constants.extend(Arch::ALL.iter().map(|a| a.token()));
    cfg.constants.extend([
        0,
        1,
        3,
        56,
        102,
        257,
        435,
        0x4000_0000,
        0x4000_0101,
        4003,
        5000,
        6001,
    ]);
    cfg
}

/// Sets, at random, the fields the kernel ignores (jt/jf of non-jumps, k where unused).
fn scribble_ignored_fields(p: &mut Program, rng: &mut Rng) {
    for i in &mut p.insns {
        if !i.is_conditional_jump() && rng.chance(1, 4) {
            i.jt = rng.next_u32() as u8;
            i.jf = rng.next_u32() as u8;
        }
        let k_unused = [0x80, 0x81, 0x84, 0x07, 0x87, 0x16].contains(&i.code)
            || ((i.code & 0x07 == 0x04 || i.code & 0x07 == 0x05) && i.code & 0x08 != 0);
        if k_unused && rng.chance(1, 3) {
            i.k = rng.next_u32();
        }
    }
}

fn random_case(seed: u64, cfg: &GenConfig) -> (Program, DisasmOptions) {
    let mut rng = Rng::new(seed);
    let mut p = random_program(&mut rng, cfg);
    if rng.chance(1, 3) {
        scribble_ignored_fields(&mut p, &mut rng);
    }
    assert!(validate(&p).is_ok(), "generator gave an invalid program");
    let arch = rng.chance(1, 2).then(|| rng.pick(&Arch::ALL));
    (p, opts(rng.chance(1, 2), arch))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn round_trip_default_config(seed in any::<u64>()) {
        let (p, o) = random_case(seed, &GenConfig::default());
        assert_round_trip(&p, &o);
    }

    #[test]
    fn round_trip_cache_friendly_config(seed in any::<u64>()) {
        let (p, o) = random_case(seed, &GenConfig::cache_friendly());
        assert_round_trip(&p, &o);
    }

    #[test]
    fn round_trip_with_arch_tokens_and_syscall_numbers(seed in any::<u64>()) {
        let (p, o) = random_case(seed, &naming_config());
        assert_round_trip(&p, &o);
    }

    #[test]
    fn round_trip_long_programs(seed in any::<u64>()) {
        let cfg = GenConfig { max_len: 600, ..naming_config() };
        let (p, o) = random_case(seed, &cfg);
        assert_round_trip(&p, &o);
    }
}

// ---------------------------------------------------------------------------------------
// Round trips and names over filters the system libseccomp builds

/// The filter libseccomp exports. It writes `struct sock_filter` in the byte order of the
/// filter's arches, so a big-endian filter comes out big-endian even on this x86_64 host.
fn export(ctx: &ScmpFilterContext, big_endian: bool) -> Program {
    // SAFETY: memfd_create with a valid NUL-terminated name; the fd is owned by the File.
    let fd = unsafe { libc::memfd_create(c"secopt-asm-test".as_ptr(), 0) };
    assert!(fd >= 0, "memfd_create failed");
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    ctx.export_bpf(&file).expect("export_bpf");
    file.rewind().unwrap();
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    if big_endian {
        for chunk in bytes.chunks_exact_mut(8) {
            chunk[0..2].reverse(); // code
            chunk[4..8].reverse(); // k
        }
    }
    Program::from_raw(&bytes).expect("libseccomp output decodes")
}

/// (libseccomp arch, secopt's spelling of it).
type ArchPair = (ScmpArch, &'static str);

const RULE_SYSCALLS: [&str; 7] = [
    "read", "write", "openat", "close", "socket", "ioctl", "mmap",
];

fn build(arches: &[ArchPair], optimize: u32) -> ScmpFilterContext {
    let mut ctx = ScmpFilterContext::new(ScmpAction::Errno(38)).unwrap();
    // libseccomp keeps one byte order per filter: drop the native arch before adding others.
    if !arches.iter().any(|(a, _)| *a == ScmpArch::X8664) {
        ctx.remove_arch(ScmpArch::X8664).unwrap();
    }
    for (a, _) in arches {
        if !ctx.is_arch_present(*a).unwrap() {
            ctx.add_arch(*a).unwrap();
        }
    }
    if optimize == 2 {
        ctx.set_ctl_optimize(2).unwrap();
    }
    let sys = |n: &str| ScmpSyscall::from_name(n).unwrap();
    for s in ["read", "write", "close"] {
        ctx.add_rule(ScmpAction::Allow, sys(s)).unwrap();
    }
    ctx.add_rule_conditional(
        ScmpAction::Allow,
        sys("ioctl"),
        &[scmp_cmp!($arg1 == 0x5401)],
    )
    .unwrap();
    ctx.add_rule_conditional(
        ScmpAction::Errno(1),
        sys("openat"),
        &[
            scmp_cmp!($arg2 & 0x3 == 0x1),
            scmp_cmp!($arg0 >= 0x1_0000_0000),
        ],
    )
    .unwrap();
    ctx.add_rule_conditional(ScmpAction::Allow, sys("socket"), &[scmp_cmp!($arg0 == 1)])
        .unwrap();
    ctx.add_rule(ScmpAction::KillProcess, sys("mmap")).unwrap();
    ctx
}

/// For every `#arch.name` in the disassembly: libseccomp's resolver names that number `name`
/// on that arch (and maps the name back to it, where it does not substitute a pseudo-number
/// as it does for multiplexed calls such as x86's `socket`), and the interpreter running
/// `(arch token, nr)` passes through that instruction (so the name sits in the right arch
/// block). Returns the names seen.
fn check_names(p: &Program, arches: &[ArchPair]) -> Vec<String> {
    let text = disassemble(p, &opts(true, None));
    let mut seen = Vec::new();
    for line in text.lines() {
        let Some((code, index)) = line.split_once(';') else {
            continue;
        };
        let Some(hash) = code.find('#') else { continue };
        let constant: String = code[hash + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        let Some((arch_name, name)) = constant.split_once('.') else {
            continue;
        };
        let index: usize = index.trim().parse().unwrap();
        let &(scmp_arch, _) = arches
            .iter()
            .find(|(_, n)| *n == arch_name)
            .unwrap_or_else(|| panic!("`{constant}` names an arch not in the filter\n{text}"));
        let nr = p.insns[index].k as i32;
        let libseccomp_name = ScmpSyscall::from(nr).get_name_by_arch(scmp_arch).unwrap();
        assert_eq!(libseccomp_name, name, "`{constant}` at {index}\n{text}");
        let forward = ScmpSyscall::from_name_by_arch(name, scmp_arch).map_or(-1, i32::from);
        if forward >= 0 {
            assert_eq!(forward, nr, "`{constant}` at {index}\n{text}");
        }
        let token = Arch::from_name(arch_name).unwrap().token();
        let data = SeccompData::new(token, nr, [0; 6]);
        let trace = interp::trace(p, &data).unwrap();
        assert!(
            trace.path.contains(&index),
            "`{constant}` at {index} is not on the path of ({token:#x}, {nr})\n{text}"
        );
        seen.push(constant);
    }
    seen
}

fn check_libseccomp_filter(arches: &[ArchPair], optimize: u32) -> (Program, Vec<String>) {
    let big_endian = arches
        .iter()
        .any(|(_, name)| Arch::from_name(name).unwrap().endian() == Endian::Big);
    let p = export(&build(arches, optimize), big_endian);
    validate(&p).unwrap();
    assert_round_trip(&p, &opts(true, None));
    assert_round_trip(&p, &opts(false, Some(Arch::Ppc)));
    let seen = check_names(&p, arches);
    // Every rule syscall that exists on an arch is named in that arch's block.
    for &(scmp_arch, arch_name) in arches {
        for s in RULE_SYSCALLS {
            let nr = ScmpSyscall::from_name_by_arch(s, scmp_arch).map_or(-1, i32::from);
            if nr >= 0 {
                let q = format!("{arch_name}.{s}");
                assert!(
                    seen.contains(&q),
                    "`{q}` missing from\n{}",
                    disassemble(&p, &opts(true, None))
                );
            }
        }
    }
    (p, seen)
}

#[test]
fn libseccomp_x86_family_filters_round_trip_with_per_arch_names() {
    let arches = [
        (ScmpArch::X8664, "x86_64"),
        (ScmpArch::X86, "x86"),
        (ScmpArch::X32, "x32"),
    ];
    for optimize in [1, 2] {
        let (_, seen) = check_libseccomp_filter(&arches, optimize);
        // socket on x86 is also reachable through socketcall (libseccomp adds it).
        assert!(seen.iter().any(|s| s == "x86.socketcall"), "{seen:?}");
        assert!(seen.iter().any(|s| s == "x86_64.read"), "{seen:?}");
        assert!(seen.iter().any(|s| s == "x32.read"), "{seen:?}");
    }
}

#[test]
fn libseccomp_arm_family_filters_round_trip_with_per_arch_names() {
    let arches = [(ScmpArch::Aarch64, "aarch64"), (ScmpArch::Arm, "arm")];
    for optimize in [1, 2] {
        let (p, seen) = check_libseccomp_filter(&arches, optimize);
        assert!(seen.iter().any(|s| s == "aarch64.openat"), "{seen:?}");
        assert!(seen.iter().any(|s| s == "arm.openat"), "{seen:?}");
        let text = disassemble(&p, &DisasmOptions::default());
        assert!(text.contains("#AUDIT_ARCH_AARCH64"), "{text}");
        assert!(text.contains("#AUDIT_ARCH_ARM"), "{text}");
        assert!(!text.contains(".endian"), "{text}");
    }
}

#[test]
fn libseccomp_big_endian_filters_say_so_and_name_halves_right() {
    let arches = [(ScmpArch::S390X, "s390x"), (ScmpArch::Ppc64, "ppc64")];
    let (p, _) = check_libseccomp_filter(&arches, 1);
    let text = disassemble(&p, &opts(true, None));
    assert!(text.starts_with(".endian big\n"), "{text}");
    // On big-endian machines the low half of args[1] is the second word: 16 + 8 + 4.
    let lo_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("ld [args[1].lo]"))
        .collect();
    assert!(!lo_lines.is_empty(), "{text}");
    for l in lo_lines {
        let index: usize = l.split(';').nth(1).unwrap().trim().parse().unwrap();
        assert_eq!(p.insns[index].k, 28, "{l}");
    }
}

#[test]
fn arch_hint_names_syscalls_in_programs_without_arch_checks() {
    // ld [nr]; jeq 59; ret ALLOW; ret KILL — no arch check, so names need the hint.
    let p = Program::new(vec![
        insn(0x20, 0, 0, 0),
        insn(0x15, 0, 1, 59),
        insn(0x06, 0, 0, SECCOMP_RET_ALLOW),
        insn(0x06, 0, 0, 0),
    ]);
    let plain = disassemble(&p, &DisasmOptions::default());
    assert!(plain.contains("jeq #59, next, kill_thread"), "{plain}");
    let hinted = disassemble(&p, &opts(false, Some(Arch::X86_64)));
    assert!(hinted.starts_with(".arch x86_64\n"), "{hinted}");
    assert!(
        hinted.contains("jeq #x86_64.execve, next, kill_thread"),
        "{hinted}"
    ); // 59
    assert_round_trip(&p, &opts(false, Some(Arch::X86_64)));
    let i386 = disassemble(&p, &opts(false, Some(Arch::X86)));
    let name = ScmpSyscall::from(59)
        .get_name_by_arch(ScmpArch::X86)
        .unwrap();
    assert!(i386.contains(&format!("#x86.{name},")), "{i386}");
}

// ---------------------------------------------------------------------------------------
// Never panic on arbitrary input

/// Characters the syntax uses, so random strings get past the tokenizer often.
const SYNTAX_CHARS: &[char] = &[
    'l', 'd', 'x', 'j', 'e', 'q', 'r', 't', 'a', 'n', 's', 'M', '#', '[', ']', ',', ':', '(', ')',
    '{', '}', '=', '+', '-', '.', ';', '\n', ' ', '0', '1', '9', 'k', 'f', '_', 'A', 'L', 'O', 'W',
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn assembling_arbitrary_text_never_panics(text in any::<String>()) {
        let _ = assemble(&text);
    }

    #[test]
    fn assembling_syntax_soup_never_panics(chars in proptest::collection::vec(proptest::sample::select(SYNTAX_CHARS), 0..200)) {
        let text: String = chars.into_iter().collect();
        let _ = assemble(&text);
    }

    #[test]
    fn assembling_mutated_disassembly_never_panics(seed in any::<u64>(), edits in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<char>()), 1..6)) {
        let (p, o) = random_case(seed, &naming_config());
        let mut chars: Vec<char> = disassemble(&p, &o).chars().collect();
        for (at, len, c) in edits {
            let at = at % (chars.len() + 1);
            let end = (at + len % 8).min(chars.len());
            match len % 3 {
                0 => { chars.drain(at..end); }
                1 => chars.insert(at, c),
                _ => { let piece: Vec<char> = chars[at..end].to_vec(); chars.splice(at..at, piece); }
            }
        }
        let text: String = chars.into_iter().collect();
        if let Ok(q) = assemble(&text) {
            // Whatever assembles is something the kernel accepts.
            prop_assert!(validate(&q).is_ok());
        }
    }

    #[test]
    fn disassembling_arbitrary_bytes_never_panics_and_reassembles_exactly_or_errs(words in proptest::collection::vec(any::<u64>(), 1..40)) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let p = Program::from_raw(&bytes).unwrap();
        let text = disassemble(&p, &DisasmOptions::default());
        if let Ok(q) = assemble(&text) {
            prop_assert_eq!(q, p);
        }
    }
}

#[test]
fn examples_in_the_syntax_reference_assemble() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/asm.md")).unwrap();
    let blocks: Vec<&str> = doc.split("```").skip(1).step_by(2).collect();
    let mut assembled = 0;
    for block in blocks {
        // The block of error messages starts with `line:column:`.
        if block.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        asm_ok(block);
        assembled += 1;
    }
    assert_eq!(assembled, 3);
    // The name-resolution example, by hand: x86_64 openat 257, x32 257 | bit 30, aarch64 56.
    let example = doc.split("```").nth(5).unwrap();
    let ks: Vec<u32> = asm_ok(example).iter().map(|i| i.k).collect();
    assert_eq!((ks[4], ks[5], ks[8]), (257, 0x4000_0101, 56), "{example}");
}
