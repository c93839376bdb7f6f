//! `secopt verify`/`diff` take profiles as well as filters: a profile is compiled on the fly
//! exactly as `secopt compile` compiles it.

use std::process::Command;

fn secopt(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_profile_verifies_equal_to_its_compiled_filter_and_different_from_an_edit() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    let compiled = dir.join("ws.bpf");
    let (code, _) = secopt(&["compile", profile, "-o", compiled.to_str().unwrap()]);
    assert_eq!(code, 0);
    let (code, out) = secopt(&["verify", profile, compiled.to_str().unwrap()]);
    assert_eq!((code, out.starts_with("equal")), (0, true), "{out}");

    // The same profile without `getpid` in its allow-list.
    let mut edited: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(profile).unwrap()).unwrap();
    let names = edited["syscalls"][0]["names"].as_array_mut().unwrap();
    names.retain(|n| n != "getpid");
    let edited_path = dir.join("ws2.json");
    std::fs::write(&edited_path, edited.to_string()).unwrap();
    let (code, out) = secopt(&["diff", profile, edited_path.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("x86_64 getpid: ALLOW -> ERRNO(1)"), "{out}");
    let (code, out) = secopt(&[
        "verify",
        compiled.to_str().unwrap(),
        edited_path.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("(getpid)"), "{out}");
}

/// `--profile-arch` compiles a profile input for that architecture, whatever the host: a
/// filter compiled for aarch64 is equal to the profile compiled so, on every input, and
/// unlike the profile compiled for another host.
#[test]
fn a_profile_is_compiled_for_the_arch_verify_is_given() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-arch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    let compiled = dir.join("ws-aarch64.bpf");
    let compiled = compiled.to_str().unwrap();
    let (code, _) = secopt(&["compile", profile, "--arch", "aarch64", "-o", compiled]);
    assert_eq!(code, 0);
    let (code, out) = secopt(&["verify", profile, compiled, "--profile-arch", "aarch64"]);
    assert_eq!((code, out.starts_with("equal")), (0, true), "{out}");
    assert!(out.contains("every arch token"), "the whole domain: {out}");
    if secopt::arch::Arch::host() != Some(secopt::arch::Arch::Aarch64) {
        let (code, out) = secopt(&["verify", profile, compiled]);
        assert_eq!(code, 1, "{out}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
