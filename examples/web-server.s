; A small allow-list for a web server on x86_64, written the way people write filters by hand:
; check the arch, refuse x32, allow a few syscalls, allow socket() only for AF_INET/AF_INET6,
; and fail everything else with EPERM.
;
;   secopt asm examples/web-server.s -o web-server.bpf
;   secopt analyze examples/web-server.s
;   secopt emu examples/web-server.s --arch x86_64 --nr socket --arg 0=2
    ld [arch]
    jeq #AUDIT_ARCH_X86_64, next, kill
    ld [nr]
    jge #0x40000000, deny              ; x32 syscalls share the x86_64 token
    jeq #x86_64.read, allow
    jeq #x86_64.write, allow
    jeq #x86_64.close, allow
    jeq #x86_64.epoll_wait, allow
    jeq #x86_64.accept4, allow
    jeq #x86_64.writev, allow
    jeq #x86_64.recvfrom, allow
    jeq #x86_64.openat, allow
    jeq #x86_64.exit_group, allow
    jeq #x86_64.socket, next, deny
    ld [args[0].lo]                    ; socket(domain, ...): AF_INET (2) or AF_INET6 (10)
    jeq #2, allow
    jeq #10, allow, deny
deny:
    ret ERRNO(1)
kill:
    ret KILL_PROCESS
allow:
    ret ALLOW
