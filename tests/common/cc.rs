//! The system C compiler as an independent reader of what secopt writes (its headers, its
//! raw filters through the kernel's `struct sock_filter`).

use std::path::Path;
use std::process::Command;

/// Builds `dir/NAME.c` with the system C compiler (warnings are errors; headers beside it),
/// runs it, checks that it exited 0, and returns what it printed.
pub fn run_c(dir: &Path, name: &str) -> Vec<u8> {
    let exe = dir.join(name);
    let cc = Command::new("cc")
        .args(["-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(dir.join(format!("{name}.c")))
        .output()
        .expect("run cc");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success(), "{name}");
    out.stdout
}
