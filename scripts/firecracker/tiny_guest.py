#!/usr/bin/env python3
"""Write a tiny x86_64 guest "kernel" for Firecracker (an ELF with one PT_LOAD segment).

Firecracker starts an ELF vmlinux in 64-bit mode at its entry point. This guest writes "Hi"
to the serial port, spins for ITERATIONS loop turns (so Firecracker's threads can be looked
at while it runs), writes "Bye" and resets through the i8042 controller, which makes
Firecracker stop the microVM and exit. It exercises all three of Firecracker's filtered
threads: the API thread (the requests that configure and start it), the vCPU thread
(KVM_RUN, port I/O to the serial console, the reset) and the VMM thread (start and teardown).

Usage: tiny_guest.py OUT.elf [ITERATIONS]   (default 0x100000: about a second when KVM is
nested, far less on bare metal)
"""
import struct
import sys


def serial(text):
    """mov al, c; out dx, al for each byte (dx holds the port)."""
    return b"".join(bytes([0xB0, c, 0xEE]) for c in text)


def guest(iterations):
    code = bytes([0x66, 0xBA, 0xF8, 0x03])  # mov dx, 0x3f8 (COM1)
    code += serial(b"Hi\n")
    code += bytes([0xB9]) + struct.pack("<I", iterations)  # mov ecx, iterations
    code += bytes([0xFF, 0xC9, 0x75, 0xFC])  # 1: dec ecx; jnz 1b
    code += serial(b"Bye\n")
    code += bytes([0xB0, 0xFE, 0xE6, 0x64])  # mov al, 0xfe; out 0x64, al (i8042 reset)
    code += bytes([0xF4, 0xEB, 0xFD])  # hlt; jmp back to hlt
    return code


def elf(code, base=0x1000000):
    ehsize, phsize = 64, 56
    entry = base + ehsize + phsize
    total = ehsize + phsize + len(code)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\x00" * 8  # 64-bit, little-endian
    header = ident + struct.pack(
        "<HHIQQQIHHHHHH", 2, 62, 1, entry, ehsize, 0, 0, ehsize, phsize, 1, 64, 0, 0
    )  # ET_EXEC, EM_X86_64, one program header
    load = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, total, total, 0x1000)  # PT_LOAD, R+X
    return header + load + code


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    n = int(sys.argv[2], 0) if len(sys.argv) == 3 else 0x100000
    with open(sys.argv[1], "wb") as f:
        f.write(elf(guest(n)))
