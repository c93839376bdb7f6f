; The `optimize` fuzz target's input 0xa6: a product of words derived from the arguments
; (`mul x` at 4), whose equivalence proof the decision diagrams cannot finish. Used by
; tests/optimize_cli.rs and benches/compile.rs.
    ldx len
    ld [nr]
    ldx #38
    ld [args[2].hi]
    mul x
    or #194
    tax
    add #0xffffffff
    jset #0xffffffff, next, L11
    and #0xfb3a912a
    jeq x, L13, next {k=206}
L11:
    rsh #5
    ld [nr]
L13:
    ja L26
    ja L27
    ld M[14]
    txa
    add #219
    jeq #223, next, next
    and #0xf7423f04
    jset x, L23, L22 {k=0x80000000}
    jge #0xbe1fb0f7, L25, L25
L22:
    jset #0xd6a57be8, L24, L26
L23:
    ld M[10]
L24:
    jeq #298, next, L28
L25:
    ldx #55
L26:
    ld [nr]
L27:
    xor x
L28:
    rsh #4
    rsh x
    ja L34
    ld [nr]
    tax
    jgt #0xedc7d774, errno_38, L36
L34:
    jge #0xfffffffe, L37, L36
    or #267
L36:
    or x
L37:
    jgt #382, errno_38, next
    jgt #224, next, next
errno_38:
    ret ERRNO(38)
