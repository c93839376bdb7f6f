//! The system C compiler as an independent reader of what secopt writes (its headers, its
//! raw filters through the kernel's `struct sock_filter`).

use std::path::Path;
use std::process::Command;

/// Builds `dir/NAME.c` with the system C compiler (warnings are errors; headers beside it),
/// runs it, checks that it exited 0, and returns what it printed.
pub fn run_c(dir: &Path, name: &str) -> Vec<u8> {
    let exe = dir.join(name);
    build_c(&dir.join(format!("{name}.c")), &exe, &["-Wall", "-Werror"]);
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success(), "{name}");
    out.stdout
}

/// Builds `source` as `exe` with the system C compiler, `flags` before the output and
/// `libraries` after the source (`-lseccomp`), and checks that it built.
pub fn build_c_with(source: &Path, exe: &Path, flags: &[&str], libraries: &[&str]) {
    let cc = Command::new("cc")
        .args(flags)
        .arg("-o")
        .arg(exe)
        .arg(source)
        .args(libraries)
        .output()
        .expect("run cc");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
}

/// [`build_c_with`] without libraries.
pub fn build_c(source: &Path, exe: &Path, flags: &[&str]) {
    build_c_with(source, exe, flags, &[]);
}
